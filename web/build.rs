//! Lists the example result set (`static/examples/`, written by `scripts/update-examples.sh`)
//! for the page as `EXAMPLES`: every `.json` file under it, by its path relative to that
//! folder, in name order, so trial files of a capacity search (whose names carry the loads
//! measured) need no hand-kept list. The page fetches them from its `examples/` folder when
//! asked (Trunk copies the folder into `dist/`), so they are not part of its payload; the
//! browser tests include their text (`example_texts.rs`).

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

fn main() {
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
