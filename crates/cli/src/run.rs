//! `sloscope run`: collect every profile × candidate of a plan against a real endpoint.
//!
//! Exit codes: 0 every run finished; 2 bad plan or arguments; 3 a run is partial or failed (its
//! file is written and marked so); 130 interrupted by Ctrl-C (partial results written).

use std::path::PathBuf;
use std::process::ExitCode;

use sloscope_collector::cancel::Cancel;
use sloscope_collector::config::{load_plan, Overrides};
use sloscope_collector::failure::StopReason;
use sloscope_collector::runner::{self, Options};
use sloscope_collector::secret::Secret;

/// Arguments of `sloscope run`.
#[derive(clap::Args)]
pub struct Args {
    /// The plan (TOML or JSON).
    #[arg(long, value_name = "PLAN")]
    plan: PathBuf,
    /// Output directory (created).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Use this running endpoint instead of the plan's target.
    #[arg(long, value_name = "URL")]
    endpoint: Option<String>,
    /// Read the API key from this environment variable (never written anywhere).
    #[arg(long, value_name = "NAME")]
    api_key_env: Option<String>,
    /// Only these profiles (comma-separated).
    #[arg(long, value_delimiter = ',')]
    profiles: Option<Vec<String>>,
    /// Only these candidates (comma-separated).
    #[arg(long, value_delimiter = ',')]
    candidates: Option<Vec<String>>,
    /// Do not run the float baseline.
    #[arg(long)]
    no_baseline: bool,
    /// Run this external benchmark per profile instead (`{profile}` is replaced), e.g.
    /// `vllm bench serve … --save-result --result-filename r.{profile}.json`.
    #[arg(long, value_name = "CMD", requires = "result_template")]
    command_template: Option<String>,
    /// The result file the external benchmark writes (`{profile}` is replaced); imported as a
    /// vLLM `--save-result` JSON.
    #[arg(long, value_name = "PATH", requires = "command_template")]
    result_template: Option<String>,
    /// Which plan candidate the external benchmark measures (default: the first).
    #[arg(long, value_name = "NAME")]
    import_candidate: Option<String>,
    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let overrides = Overrides {
        endpoint: args.endpoint.clone(),
        profiles: args.profiles.clone(),
        candidates: args.candidates.clone(),
        no_baseline: args.no_baseline,
        external: args.command_template.is_some(),
    };
    let plan = match load_plan(&args.plan, &overrides) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("sloscope: bad plan: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let api_key = match &args.api_key_env {
        Some(name) => match Secret::from_env(name) {
            Ok(k) => Some(k),
            Err(e) => {
                eprintln!("sloscope: --api-key-env: {e}");
                return Ok(ExitCode::from(2));
            }
        },
        None => None,
    };
    if let (Some(cmd), Some(res)) = (&args.command_template, &args.result_template) {
        let ext = sloscope_collector::external::External {
            command_template: cmd.clone(),
            result_template: res.clone(),
            candidate: args.import_candidate.clone(),
        };
        let written = sloscope_collector::external::run(&plan, &ext, &args.out, args.quiet)?;
        let failed: Vec<String> = written
            .iter()
            .filter(|(_, s)| *s != sloscope_core::schema::RunStatus::Ok)
            .map(|(p, _)| p.display().to_string())
            .collect();
        if !failed.is_empty() {
            eprintln!("sloscope: incomplete runs: {}", failed.join(", "));
            return Ok(ExitCode::from(3));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let cancel = Cancel::default();
    let outcome = rt.block_on(async {
        let c = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                c.cancel(StopReason::Interrupted("Ctrl-C".into()));
                eprintln!(
                    "\nsloscope: interrupted; writing what was collected (Ctrl-C again to abort)"
                );
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            }
        });
        runner::run(
            plan,
            Options {
                out: args.out.clone(),
                api_key,
                quiet: args.quiet,
            },
            cancel.clone(),
        )
        .await
    })?;
    if !args.quiet {
        eprintln!(
            "sloscope: wrote {} run files to {} (analyse with: sloscope analyze {})",
            outcome.runs.len(),
            args.out.display(),
            args.out.display()
        );
    }
    if matches!(cancel.reason(), Some(StopReason::Interrupted(_))) {
        return Ok(ExitCode::from(130));
    }
    if !outcome.incomplete.is_empty() {
        eprintln!(
            "sloscope: incomplete runs: {}",
            outcome.incomplete.join(", ")
        );
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}
