//! `sloscope analyze`: find the files (I/O only), read each through the core's one read path,
//! analyse them together, print the report.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use sloscope_collector::record::write;
use sloscope_core::schema::RunStatus;
use sloscope_core::view;
use sloscope_core::view::AnalysisOutput;
use sloscope_core::{analyze_all, AnalyzeOptions, Document, LoadedFile};

/// Output formats.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// Aligned tables for a terminal.
    Text,
    /// The full analysis and its view-model as JSON (the page shows the same cells).
    Json,
    /// A Markdown verdict table for a review.
    Markdown,
    /// The short Markdown for a pull-request comment: what is judged, the answer per
    /// profile with its decisive figure and next step, the lineage in one line.
    Summary,
}

/// Arguments of `sloscope analyze`.
#[derive(clap::Args)]
#[command(
    after_help = crate::exit::Analyze::help()
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

/// Reads and parses every file through the core's read path (a large run file in chunks);
/// bad files are returned as messages, good ones as documents.
pub fn load_all(files: &[PathBuf]) -> (Vec<LoadedFile>, Vec<String>) {
    let mut loaded = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        let name = f.display().to_string();
        match crate::files::read_file(f, &name) {
            Ok(doc) => {
                if let Document::Run(r) = &doc {
                    if r.status == RunStatus::Partial {
                        let why = r.failure.as_deref().unwrap_or("no reason recorded");
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
    let found = crate::files::find_files(&args.paths);
    if let Some(line) = found.passed_over_line() {
        eprintln!("sloscope: {}", sloscope_core::view::escaped(&line));
    }
    for d in &found.duplicates {
        eprintln!("sloscope: {d}: already read through another path; read once");
    }
    let (loaded, mut errors) = load_all(&found.files);
    errors.splice(0..0, found.errors);
    for e in &errors {
        eprintln!("sloscope: bad input: {}", sloscope_core::view::escaped(e));
    }
    let analysis = analyze_all(
        &loaded,
        &errors,
        AnalyzeOptions {
            pool_reruns: args.pool_reruns,
        },
    );
    let all_accept = analysis.all_accept();
    let text = match args.format {
        Format::Text => view::text(&analysis),
        Format::Markdown => view::markdown(&analysis),
        Format::Summary => view::summary_markdown(&analysis),
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
        return Ok(ExitCode::from(crate::exit::Analyze::BadInput));
    }
    if args.check && !all_accept {
        return Ok(ExitCode::from(crate::exit::Analyze::NotAccepted));
    }
    Ok(ExitCode::SUCCESS)
}
