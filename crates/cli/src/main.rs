//! `sloscope`: a thin command-line front over the sloscope libraries.
//!
//! Exit codes: one enum per command in [`exit`], shown in each command's `--help`; bad
//! arguments are 2 for every command.

mod analyze;
mod compare;
mod exit;
mod files;
mod gate;
mod import;
mod import_stated;
mod k8s;
mod run;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Serving-profile benchmarks of quantized LLMs, judged against SLOs.
#[derive(Parser)]
#[command(name = "sloscope", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Collect: drive each profile's load against the plan's endpoint(s) and write run files.
    Run(run::Args),
    /// Analyse result files: lineage, recomputed summaries and the SLO verdict per profile.
    Analyze(analyze::Args),
    /// Import other tools' result files (vLLM, SGLang, GuideLLM, AIPerf, llmperf) as run files.
    Import(import::Args),
    /// Compare two collections (before and after a change): what changed, verdict flips, and
    /// per cell and metric the change with a 95% interval; exit 1 on a regression.
    Compare(compare::Args),
    /// Measure the quantized artifact against its float baseline through the servers (KL
    /// divergence, top-1 agreement, perplexity) and write the quality-gate record with evidence.
    Gate(gate::Args),
    /// Render a plan as a Kubernetes Indexed Job: one pod per shard (`run --shard-from-env`),
    /// the plan as a ConfigMap, a shared results volume; merge with `analyze RESULTS`.
    K8s(k8s::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Analyze(args) => analyze::run(args),
        Command::Run(args) => run::run(args),
        Command::Import(args) => import::run(args),
        Command::Compare(args) => compare::run(args),
        Command::K8s(args) => k8s::run(args),
        Command::Gate(args) => gate::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("sloscope: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
