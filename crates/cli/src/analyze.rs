//! `sloscope analyze`: find files by kind, analyse them with the core, print the report.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use sloscope_core::{analyze, parse_document_owned, render, LoadedFile};

/// Output formats.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// Aligned tables for a terminal.
    Text,
    /// The full analysis as JSON (the page shows the same numbers).
    Json,
    /// A Markdown verdict table for a review.
    Markdown,
}

/// Arguments of `sloscope analyze`.
#[derive(clap::Args)]
pub struct Args {
    /// Result files, or directories searched recursively for `*.json`.
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
}

/// Collects `*.json` files under the given paths, sorted, in argument order.
pub fn find_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).with_context(|| format!("{}: cannot read", p.display()))?;
        if meta.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found)?;
            found.sort();
            if found.is_empty() {
                anyhow::bail!("{}: no *.json files in this directory", p.display());
            }
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in
        std::fs::read_dir(dir).with_context(|| format!("{}: cannot list", dir.display()))?
    {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json") || is_journal(&path) {
            out.push(path);
        }
    }
    Ok(())
}

fn is_journal(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".journal.jsonl"))
}

/// Reads and parses every file; bad files are returned as messages, good ones as documents.
/// A collector journal left behind (its run file was never written) is read back as a partial
/// run.
pub fn load_all(files: &[PathBuf]) -> (Vec<LoadedFile>, Vec<String>) {
    let mut loaded = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        let name = f.display().to_string();
        match std::fs::read(f) {
            Err(e) => errors.push(format!("{name}: cannot read: {e}")),
            Ok(bytes) if is_journal(f) => {
                match sloscope_core::schema::journal::recover(&name, &bytes) {
                    Ok(run) => {
                        eprintln!(
                            "sloscope: {name}: journal of an unfinished run, read as partial"
                        );
                        loaded.push(LoadedFile {
                            name,
                            doc: sloscope_core::Document::Run(Box::new(run)),
                        });
                    }
                    Err(e) => errors.push(e),
                }
            }
            Ok(bytes) => match parse_document_owned(&name, bytes) {
                Ok(doc) => loaded.push(LoadedFile { name, doc }),
                Err(e) => errors.push(e.to_string()),
            },
        }
    }
    (loaded, errors)
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let files = find_files(&args.paths)?;
    let (loaded, errors) = load_all(&files);
    for e in &errors {
        eprintln!("sloscope: bad input: {e}");
    }
    let analysis = analyze(&loaded);
    let text = match args.format {
        Format::Text => render::text(&analysis),
        Format::Markdown => render::markdown(&analysis),
        Format::Json => serde_json::to_string_pretty(&analysis)? + "\n",
    };
    match &args.out {
        Some(path) => write_atomic(path, text.as_bytes())?,
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
    if args.check && !analysis.all_accept() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp-sloscope");
    std::fs::write(&tmp, bytes).with_context(|| format!("{}: cannot write", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("{}: cannot rename into place", path.display()))?;
    Ok(())
}
