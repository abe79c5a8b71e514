//! Helpers shared by the end-to-end tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Condvar, Mutex, PoisonError};

/// Processor cores the tests that run llama-server share; scripts/test.sh runs this binary with
/// more test threads than that, so the tests that mostly wait (scripted servers, timeouts,
/// signals) overlap with inference instead of queueing behind it.
const LLAMA_CORES: usize = 2;

/// Cores in use, and the tickets of the tests waiting for theirs (served first come, first
/// served: a test that needs both cores is not overtaken by later tests that need one).
struct CoreBook {
    used: usize,
    next_ticket: u64,
    serving: u64,
}

static CORES: Mutex<CoreBook> = Mutex::new(CoreBook {
    used: 0,
    next_ticket: 0,
    serving: 0,
});
static CORES_CHANGED: Condvar = Condvar::new();

/// `n` of the llama-server tests' cores, held until dropped (a failing test's unwinding frees
/// them too).
pub struct Cores(usize);

/// Waits for `n` cores (at most [`LLAMA_CORES`]): every test that starts llama-server takes them
/// first, so inference never runs on more cores than the machine's budget for it, however many
/// test threads run. A test whose timings are compared against each other takes both.
pub fn llama_cores(n: usize) -> Cores {
    let n = n.min(LLAMA_CORES);
    let mut book = CORES.lock().unwrap_or_else(PoisonError::into_inner);
    let ticket = book.next_ticket;
    book.next_ticket += 1;
    while book.serving != ticket || book.used + n > LLAMA_CORES {
        book = CORES_CHANGED
            .wait(book)
            .unwrap_or_else(PoisonError::into_inner);
    }
    book.used += n;
    book.serving += 1;
    CORES_CHANGED.notify_all();
    Cores(n)
}

impl Drop for Cores {
    fn drop(&mut self) {
        CORES.lock().unwrap_or_else(PoisonError::into_inner).used -= self.0;
        CORES_CHANGED.notify_all();
    }
}

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

/// The demo's lineage records for the artifact of `format` (`Q4_1`, `Q8_0`, `Q4_0`) written into
/// `dir`. `scripts/make-lineage.sh` hashes the models (about 6 s on this project's machines), so
/// it runs once per format for the whole test binary; each test gets its own copy to change.
pub(crate) fn lineage_in(dir: &Path, format: &str) {
    std::fs::create_dir_all(dir).unwrap();
    for f in std::fs::read_dir(made_lineage(format)).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
    }
}

/// The records of `format` as `scripts/make-lineage.sh` wrote them once (never to be changed).
pub(crate) fn made_lineage(format: &str) -> PathBuf {
    static MADE: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, d)) = made.iter().find(|(f, _)| f == format) {
        return d.clone();
    }
    for var in ["LLAMA_SERVER", "SLOSCOPE_Q4_GGUF", "SLOSCOPE_F16_GGUF"] {
        assert!(
            std::env::var_os(var).is_some(),
            "{var} is not set: source the output of scripts/setup-llama.sh"
        );
    }
    let d = scratch(&format!("lineage-{}", format.to_lowercase()));
    let st = Command::new("bash")
        .arg(repo().join("scripts/make-lineage.sh"))
        .arg(&d)
        .arg(format)
        .status()
        .unwrap();
    assert!(st.success(), "scripts/make-lineage.sh {format}");
    made.push((format.to_string(), d.clone()));
    d
}
