//! The committed JSON Schemas under static/schema/ match the types, and the committed examples
//! validate against them. Needs the `schema` feature (on in a workspace build).
#![cfg(feature = "schema")]

use std::path::PathBuf;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn committed_json_schemas_are_current() {
    let dir = repo_root().join("static/schema");
    let update = std::env::var_os("SLOSCOPE_UPDATE_SCHEMAS").is_some();
    let mut stale = Vec::new();
    for (name, text) in sloscope_core::schema_export::all() {
        let path = dir.join(name);
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(old) if old == text => {}
            _ => stale.push(name),
        }
    }
    assert!(
        stale.is_empty(),
        "stale JSON Schemas {stale:?}: run `SLOSCOPE_UPDATE_SCHEMAS=1 cargo test -p sloscope-core --features schema` and commit static/schema/"
    );
}
