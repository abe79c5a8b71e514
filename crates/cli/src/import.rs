//! `sloscope import`: other tools' result files (vLLM, SGLang, GuideLLM, AIPerf, llmperf) as
//! sloscope run files, one per benchmark found, ready for `analyze`.

use std::path::PathBuf;
use std::process::ExitCode;

use sloscope_collector::plan::config::{load_plan, Overrides};
use sloscope_collector::record::write;

use crate::exit::Import;

/// Arguments of `sloscope import`.
#[derive(clap::Args)]
#[command(
    after_help = after_help()
)]
pub struct Args {
    /// The result files.
    #[arg(required = true, value_name = "FILES")]
    files: Vec<PathBuf>,
    /// Output directory (created).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The plan whose profile the files measured.
    #[arg(long, value_name = "PLAN", requires = "profile")]
    plan: Option<PathBuf>,
    /// The profile (latency, balanced or throughput) the files measured: with --plan, one of
    /// its profiles; with --slo, the profile the SLOs are stated for.
    #[arg(long, value_name = "NAME")]
    profile: Option<String>,
    /// The candidate the files measured: with --plan, one of its candidates (required when it
    /// has several); with --slo, every file's (default: each file its own, named after it).
    #[arg(long, value_name = "NAME")]
    candidate: Option<String>,
    /// Without a plan: an SLO of the profile, METRIC=LIMIT (a ceiling, or a floor for
    /// throughput metrics), e.g. ttft_p95_ms=200; repeat for several. The files' stated
    /// workload becomes the profile's, as the page's "state the SLOs" makes it.
    #[arg(
        long,
        value_name = "METRIC=LIMIT",
        conflicts_with = "plan",
        requires = "profile"
    )]
    slo: Vec<String>,
    /// With --slo: the metric candidates are ranked by (default: ttft_p95_ms for latency,
    /// tpot_p95_ms for balanced, throughput_tps for throughput).
    #[arg(long, value_name = "METRIC", requires = "slo")]
    primary_metric: Option<String>,
    /// With --slo: a folder holding the lineage records (deployment.json, gate.json,
    /// baseline.json), copied beside the runs; the runs are judged as the deployment's artifact.
    #[arg(long, value_name = "DIR", requires = "slo")]
    lineage: Option<PathBuf>,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut skipped = Vec::new();
    if !args.slo.is_empty() {
        return crate::import_stated::run(&args.stated());
    }
    if args.plan.is_none() && (args.profile.is_some() || args.candidate.is_some()) {
        eprintln!("sloscope: --profile and --candidate need --plan, or --slo to state the SLOs");
        return Ok(ExitCode::from(Import::Bad));
    }
    let (written, failed) = match (&args.plan, &args.profile) {
        (Some(plan), Some(profile)) => {
            let overrides = Overrides {
                external: true,
                ..Default::default()
            };
            let plan = match load_plan(plan, &overrides) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("sloscope: bad plan: {e}");
                    return Ok(ExitCode::from(Import::Bad));
                }
            };
            match sloscope_collector::external::import_files(
                &plan,
                &args.files,
                profile,
                args.candidate.as_deref(),
                &args.out,
            ) {
                Ok(x) => {
                    skipped = x.skipped;
                    (x.written, x.failed)
                }
                Err(e) => {
                    eprintln!("sloscope: {e}");
                    return Ok(ExitCode::from(match e {
                        sloscope_collector::error::CollectError::Write { .. } => Import::Output,
                        _ => Import::Bad,
                    }));
                }
            }
        }
        _ => match standalone(&args) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("sloscope: {e}");
                return Ok(ExitCode::from(Import::Output));
            }
        },
    };
    for f in &failed {
        eprintln!("sloscope: not imported: {f}");
    }
    for s in &skipped {
        eprintln!("sloscope: skipped: {s}");
    }
    eprintln!(
        "sloscope: wrote {} run files to {} (analyse with: sloscope analyze {})",
        written.len(),
        args.out.display(),
        args.out.display()
    );
    Ok(ExitCode::from(if failed.is_empty() {
        Import::Ok
    } else {
        Import::Bad
    }))
}

impl Args {
    fn stated(&self) -> crate::import_stated::Stated {
        crate::import_stated::Stated {
            files: self.files.clone(),
            out: self.out.clone(),
            profile: self.profile.clone().unwrap_or_default(),
            candidate: self.candidate.clone(),
            slo: self.slo.clone(),
            primary_metric: self.primary_metric.clone(),
            lineage: self.lineage.clone(),
        }
    }
}

/// Without a plan: the runs `analyze` would make of the files, written as run files.
fn standalone(args: &Args) -> std::io::Result<(Vec<PathBuf>, Vec<String>)> {
    let dir = args.out.join("runs");
    std::fs::create_dir_all(&dir)?;
    let mut written = Vec::new();
    let mut failed = Vec::new();
    for (n, file) in args.files.iter().enumerate() {
        let name = file.display().to_string();
        let bytes = match std::fs::read(file) {
            Ok(b) => b,
            Err(e) => {
                failed.push(format!("{name}: cannot read: {e}"));
                continue;
            }
        };
        match sloscope_core::input::standalone_runs(&name, &bytes) {
            Err(e) => failed.push(e.to_string()),
            Ok(runs) => {
                for (i, (_, run)) in runs.iter().enumerate() {
                    let tool = run
                        .import
                        .as_ref()
                        .map_or("imported", |s| s.tool.as_str())
                        .to_lowercase();
                    let path = dir.join(format!("{}--{tool}-{n:02}-{i:02}.json", run.profile));
                    write::json_compact(&path, run)?;
                    written.push(path);
                }
            }
        }
    }
    Ok((written, failed))
}

/// The import help: the formats from the core's registry, then how runs are made.
fn after_help() -> String {
    format!(
        "Formats (recognised by content, never by file name): {}.\n\n\
With --plan and --profile, each benchmark becomes a run of the plan's candidate under that \
profile, its workload checked against the profile's when analysed, and the plan and lineage \
copies are written beside it: `sloscope analyze DIR` then gives a verdict. With --profile and \
--slo instead of a plan, the page's \"state the SLOs\": a plan of that profile is made (its workload \
the files' own), each file its own candidate unless --candidate names one, and with --lineage DIR \
the records beside them. Without either, each benchmark is shown under a profile guessed from its \
load, with summaries only.\n\n{}",
        sloscope_core::input::importable(),
        Import::help()
    )
}
