//! Lists the example result set (`static/examples/`, written by `scripts/update-examples.sh`)
//! for the page as `EXAMPLES`: every `.json` file under it, by its path relative to that
//! folder, in name order, so trial files of a capacity search (whose names carry the loads
//! measured) need no hand-kept list. The page fetches them from its `examples/` folder when
//! asked (Trunk copies the folder into `dist/`), so they are not part of its payload; the
//! browser tests include their text (`example_texts.rs`).
//!
//! Also: the reader worker's optimized build leaves out the function-name section at link time
//! (see [`strip_worker_names`]).

use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

/// The reader worker is not passed through `wasm-opt` (`data-wasm-opt="0"` in `index.html`):
/// its passes made the reader a fifth slower — node, the reader alone, a 1,000,000-request run,
/// the best of four runs each: column parse 0.343 s without, 0.430 s after `-Oz` (0.428 after
/// `-O3`), analysis 0.477 against 0.537 s, gap parse 0.372 against 0.437 s — for no smaller
/// file (593 KB gzipped without, 595 KB after `-Oz`: the compiler's `opt-level = "z"` already
/// did what they do). `wasm-opt` dropped the function names (280 KB); the linker does instead.
fn strip_worker_names() {
    let wasm = std::env::var("TARGET").is_ok_and(|t| t.starts_with("wasm32"));
    // SLOSCOPE_KEEP_NAMES=1 keeps them, for `twiggy` (what the payload is made of).
    println!("cargo:rerun-if-env-changed=SLOSCOPE_KEEP_NAMES");
    let keep = std::env::var_os("SLOSCOPE_KEEP_NAMES").is_some();
    if wasm && !keep && std::env::var("PROFILE").is_ok_and(|p| p == "release") {
        println!("cargo:rustc-link-arg-bin=sloscope-worker=--strip-all");
        println!("cargo:rustc-link-arg-bin=sloscope-lean-worker=--strip-all");
    }
}

fn main() {
    strip_worker_names();
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("../static/examples");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    let mut names = String::from("&[\n");
    let mut texts = String::from("&[\n");
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap_or(f)
            .to_string_lossy()
            .replace('\\', "/");
        names.push_str(&format!("    {rel:?},\n"));
        texts.push_str(&format!(
            "    ({rel:?}, include_str!({:?})),\n",
            f.display().to_string()
        ));
        println!("cargo:rerun-if-changed={}", f.display());
    }
    names.push_str("]\n");
    texts.push_str("]\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    for (file, code) in [("examples.rs", names), ("example_texts.rs", texts)] {
        let path = out.join(file);
        if let Err(e) = std::fs::write(&path, code) {
            panic!("cannot write {}: {e}", path.display());
        }
    }
}
