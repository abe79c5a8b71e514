//! What the browser test binaries share: the example set (the files the page fetches from
//! `examples/`, included here by `build.rs`'s list), analysed in wasm.

use sloscope_core::{analyze, LoadedFile};
use sloscope_web::load;

/// The example set's files as (path under `examples/`, text).
pub const EXAMPLES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/example_texts.rs"));

/// The page's example set, read and analysed by the same code the page runs.
pub fn example_analysis() -> sloscope_core::Analysis {
    let files: Vec<LoadedFile> = EXAMPLES
        .iter()
        .map(|(n, t)| LoadedFile {
            name: n.to_string(),
            doc: load::parse(
                n,
                t.as_bytes().to_vec(),
                Some(sloscope_core::input::importer()),
            )
            .unwrap(),
        })
        .collect();
    analyze(&files)
}
