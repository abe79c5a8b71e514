//! What the browser test binaries share: the embedded example set, analysed in wasm.

use sloscope_core::{analyze, LoadedFile};
use sloscope_web::load;

/// The page's embedded example set, read and analysed by the same code the page runs.
pub fn example_analysis() -> sloscope_core::Analysis {
    let files: Vec<LoadedFile> = load::EXAMPLES
        .iter()
        .map(|(n, t)| LoadedFile {
            name: n.to_string(),
            doc: load::parse(n, t.as_bytes().to_vec()).unwrap(),
        })
        .collect();
    analyze(&files)
}
