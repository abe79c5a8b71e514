//! `sloscope analyze`: find the files (I/O only), read each through the core's one read path,
//! analyse them together, print the report.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sloscope_collector::write;
use sloscope_core::schema::RunStatus;
use sloscope_core::show::render;
use sloscope_core::show::view::AnalysisOutput;
use sloscope_core::{analyze_with, AnalyzeOptions, Document, LoadedFile};

/// Output formats.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// Aligned tables for a terminal.
    Text,
    /// The full analysis and its view-model as JSON (the page shows the same cells).
    Json,
    /// A Markdown verdict table for a review.
    Markdown,
}

/// Arguments of `sloscope analyze`.
#[derive(clap::Args)]
#[command(
    after_help = "Exit codes: 0 analysed · 1 with --check, some profile is not accept · \
                        2 bad input (each bad file named; the good ones are still analysed)"
)]
pub struct Args {
    /// Result files, or directories searched recursively for `*.json` and `*.jsonl` (symlinks
    /// followed once; loops cut): sloscope's plan, lineage records, runs and journals, and
    /// other tools' result files (vLLM, SGLang, GuideLLM, AIPerf, llmperf; summaries only
    /// without a plan and lineage records — see `sloscope import`).
    #[arg(required = true, value_name = "FILES_OR_DIRS")]
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Exit with status 1 when any profile is not `accept`.
    #[arg(long)]
    check: bool,
    /// Write the report here instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Pool different runs of one candidate under one profile (reruns of the same workload)
    /// into one run with all their repeats, instead of excluding that candidate as a conflict.
    /// The report flags every pooling (`pooled_runs`) with the files.
    #[arg(long)]
    pool_reruns: bool,
}

/// Files found under the given paths, and what could not be read.
#[derive(Debug, Default)]
pub struct Found {
    /// Files to read, each once (by its resolved path), in argument order, sorted per directory.
    pub files: Vec<PathBuf>,
    /// Paths that could not be listed or resolved, with why.
    pub errors: Vec<String>,
    /// Paths seen more than once (an alias, a symlink, a repeated argument), skipped.
    pub duplicates: Vec<String>,
}

/// Whether a directory walk picks up this file. Explicitly named files are always read.
fn wanted(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e == "json" || e == "jsonl")
}

/// Collects files under `paths`. Symlinks are resolved; every file and directory is visited
/// once, so a link to a parent or an alias (`latest -> 2026-11-30`) cannot repeat files;
/// unreadable entries are reported by name and the rest is still collected.
pub fn find_files(paths: &[PathBuf]) -> Found {
    let mut found = Found::default();
    let mut seen_files = BTreeSet::new();
    let mut seen_dirs = BTreeSet::new();
    for p in paths {
        let real = match std::fs::canonicalize(p) {
            Ok(r) => r,
            Err(e) => {
                found
                    .errors
                    .push(format!("{}: cannot read: {e}", p.display()));
                continue;
            }
        };
        if real.is_dir() {
            let (files_before, errors_before) = (found.files.len(), found.errors.len());
            let new = !seen_dirs.contains(&real);
            walk(p, &real, &mut seen_dirs, &mut seen_files, &mut found);
            if new && found.files.len() == files_before && found.errors.len() == errors_before {
                found.errors.push(format!(
                    "{}: no *.json files in this directory",
                    p.display()
                ));
            }
        } else if seen_files.insert(real) {
            found.files.push(p.clone());
        } else {
            found.duplicates.push(p.display().to_string());
        }
    }
    found
}

fn walk(
    shown: &Path,
    real: &Path,
    seen_dirs: &mut BTreeSet<PathBuf>,
    seen_files: &mut BTreeSet<PathBuf>,
    found: &mut Found,
) {
    if !seen_dirs.insert(real.to_path_buf()) {
        found.duplicates.push(shown.display().to_string());
        return;
    }
    let entries = match std::fs::read_dir(real) {
        Ok(e) => e,
        Err(e) => {
            found
                .errors
                .push(format!("{}: cannot list: {e}", shown.display()));
            return;
        }
    };
    let mut names: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    names.sort();
    for name in names {
        let shown_child = shown.join(&name);
        let real_child = match std::fs::canonicalize(real.join(&name)) {
            Ok(r) => r,
            Err(e) => {
                found
                    .errors
                    .push(format!("{}: cannot resolve: {e}", shown_child.display()));
                continue;
            }
        };
        if real_child.is_dir() {
            walk(&shown_child, &real_child, seen_dirs, seen_files, found);
        } else if wanted(&shown_child) {
            if seen_files.insert(real_child) {
                found.files.push(shown_child);
            } else {
                found.duplicates.push(shown_child.display().to_string());
            }
        }
    }
}

/// Reads and parses every file through the core's read path (a large run file in chunks);
/// bad files are returned as messages, good ones as documents.
pub fn load_all(files: &[PathBuf]) -> (Vec<LoadedFile>, Vec<String>) {
    let mut loaded = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        let name = f.display().to_string();
        match sloscope_collector::read_file::read_file(f, &name) {
            Ok(doc) => {
                if let Document::Run(r) = &doc {
                    if r.status == RunStatus::Partial {
                        let why = r.failure.as_deref().unwrap_or("no reason given");
                        eprintln!("sloscope: {name}: partial run, read as partial: {why}");
                    }
                }
                loaded.push(LoadedFile { name, doc })
            }
            Err(e) => errors.push(e),
        }
    }
    (loaded, errors)
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let found = find_files(&args.paths);
    for d in &found.duplicates {
        eprintln!("sloscope: {d}: already read through another path; read once");
    }
    let (loaded, mut errors) = load_all(&found.files);
    errors.splice(0..0, found.errors);
    for e in &errors {
        eprintln!("sloscope: bad input: {e}");
    }
    let analysis = analyze_with(
        &loaded,
        AnalyzeOptions {
            pool_reruns: args.pool_reruns,
        },
    );
    let all_accept = analysis.all_accept();
    let text = match args.format {
        Format::Text => render::text(&analysis),
        Format::Markdown => render::markdown(&analysis),
        Format::Json => serde_json::to_string_pretty(&AnalysisOutput::new(analysis))? + "\n",
    };
    match &args.out {
        Some(path) => write::atomic(path, text.as_bytes())
            .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?,
        None => {
            let mut out = std::io::stdout().lock();
            if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    return Err(e.into());
                }
            }
        }
    }
    if !errors.is_empty() {
        return Ok(ExitCode::from(2));
    }
    if args.check && !all_accept {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
