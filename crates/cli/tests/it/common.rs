//! Helpers shared by the end-to-end tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh scratch directory under the system temp dir.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sloscope-it-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The sloscope binary under test.
pub fn sloscope_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_sloscope"))
}

/// The test kit's scripted server, built next to sloscope by `cargo test --workspace`.
pub fn scripted_server() -> PathBuf {
    let p = sloscope_bin().with_file_name("scripted-server");
    assert!(
        p.exists(),
        "{} is missing: run the tests with `cargo test --workspace` (or `cargo build -p sloscope-testkit` first)",
        p.display()
    );
    p
}

/// Runs sloscope with `args` and extra environment.
pub fn sloscope(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(sloscope_bin());
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every file under `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Validates every run file under `dir` against the committed JSON Schema.
pub fn validate_runs_against_schema(dir: &Path) -> usize {
    let schema: serde_json::Value = serde_json::from_slice(
        &std::fs::read(repo().join("static/schema/run.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut n = 0;
    for f in files_under(dir) {
        if f.extension().is_some_and(|e| e == "json")
            && f.parent().is_some_and(|p| p.ends_with("runs"))
        {
            let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&v)
                .map(|e| format!("{} at {}", e, e.instance_path))
                .take(5)
                .collect();
            assert!(errors.is_empty(), "{}: {errors:?}", f.display());
            n += 1;
        }
    }
    n
}

/// Request lines in every journal under `out`.
pub fn journal_requests(out: &Path) -> usize {
    files_under(out)
        .iter()
        .filter(|f| f.to_string_lossy().ends_with(".journal.jsonl"))
        .map(|f| {
            std::fs::read_to_string(f)
                .unwrap_or_default()
                .matches("\"line\":\"request\"")
                .count()
        })
        .sum()
}

/// The entry for profile `name` in a `profiles` array of `sloscope analyze --format json` (the
/// analysis's or its view's).
pub fn profile<'a>(profiles: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    profiles
        .as_array()
        .unwrap_or_else(|| panic!("not a profiles array: {profiles}"))
        .iter()
        .find(|p| p["profile"] == name)
        .unwrap_or_else(|| panic!("no {name} profile"))
}
