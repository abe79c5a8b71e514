//! `sloscope run`: collect every profile × candidate of a plan against a real endpoint.
//!
//! Exit codes: see [`exit`].

use std::path::PathBuf;
use std::process::ExitCode;

use crate::exit::Run;
use sloscope_collector::cancel::Cancel;
use sloscope_collector::error::CollectError;
use sloscope_collector::failure::{Signal, StopReason};
use sloscope_collector::load::runner::{self, Options};
use sloscope_collector::plan::config::{load_plan, Overrides, RunPlan};
use sloscope_collector::shard::{self, Attempt, Prepared, ShardError, Which};
use sloscope_collector::wire::secret::{Redactor, Secret};

/// Arguments of `sloscope run`.
#[derive(clap::Args)]
#[command(
    after_help = Run::help()
)]
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
    /// Read the API key from this environment variable: sent with every request (streams,
    /// /tokenize, /metrics, health), `{api_key}` in server commands, `***` in every output.
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
    /// Run this external benchmark per profile instead. Placeholders: `{profile}`,
    /// `{workload_id}`, `{concurrency}`, `{requests}` (per repeat), `{prompt_tokens}`,
    /// `{max_output_tokens}` and `{out}` (the output directory), e.g.
    /// `vllm bench serve … --max-concurrency {concurrency} --num-prompts {requests}
    /// --save-result --result-filename {out}/vllm.{profile}.json`.
    #[arg(long, value_name = "CMD", requires = "result_template")]
    command_template: Option<String>,
    /// The result file the external benchmark writes (the same placeholders); imported in any
    /// format `sloscope import` reads (vLLM, SGLang, GuideLLM, AIPerf, llmperf).
    #[arg(long, value_name = "PATH", requires = "command_template")]
    result_template: Option<String>,
    /// Which plan candidate the external benchmark measures (default: the first).
    #[arg(long, value_name = "NAME")]
    import_candidate: Option<String>,
    /// Run only shard K of N (`0 ≤ K < N`): the plan's cells (a candidate with every profile,
    /// or the baseline) are assigned longest first onto the least loaded shard, the same on
    /// every host. Results go to `OUT/<plan sha256>/shard-K-of-N/attempt-<id>/`; analyse OUT.
    #[arg(long, value_name = "K/N", conflicts_with_all = ["shard_from_env", "command_template"])]
    shard: Option<String>,
    /// Run the shard a Kubernetes Indexed Job's pod is given: `JOB_COMPLETION_INDEX` of
    /// `--shards N`.
    #[arg(long, requires = "shards", conflicts_with = "command_template")]
    shard_from_env: bool,
    /// How many shards, with `--shard-from-env`.
    #[arg(long, value_name = "N", requires = "shard_from_env")]
    shards: Option<u32>,
    /// Print which cells each shard runs, and run nothing.
    #[arg(long)]
    dry_run: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,
}

/// Ctrl-C, SIGTERM (`timeout`, a pod's stop) and SIGHUP (a closed terminal) all stop the
/// collection the same way: finished requests are written, the server is stopped. A second
/// signal exits at once (the server's watchdog still stops it).
fn watch_signals(cancel: Cancel) -> std::io::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::spawn(async move {
        for round in 0.. {
            let signal = tokio::select! {
                _ = int.recv() => Signal::Interrupt,
                _ = term.recv() => Signal::Terminate,
                _ = hup.recv() => Signal::Hangup,
            };
            let name = signal.name();
            if round > 0 {
                std::process::exit(i32::from(signal.exit_code()));
            }
            cancel.cancel_all(StopReason::Interrupted(signal));
            eprintln!(
                "\nsloscope: interrupted by {name}; writing what was collected and stopping the server ({name} again to abort)"
            );
        }
    });
    Ok(())
}

/// The credentials to keep out of every output: the key and the plan's secret vars.
fn redactor(plan: &RunPlan, key: Option<&Secret>) -> Redactor {
    let mut r = Redactor::default();
    if let Some(k) = key {
        r.add(k.expose());
    }
    for name in &plan.raw.secret_vars {
        if let Some(v) = plan.raw.vars.get(name) {
            r.add(v);
        }
    }
    r
}

/// What the plan's request counts cannot decide, said before anything runs: a listed
/// candidate's SLOs against the requests it gets; a searched profile's contenders are sized by
/// the search itself, but its verdict is drawn on the confirmation launch alone, so its SLOs
/// against the confirmation's requests.
fn undecidable(plan: &RunPlan) -> Vec<String> {
    let mut out = Vec::new();
    for p in &plan.profiles {
        match (&plan.space, &plan.raw.plan.space) {
            (Some(space), Some(spec)) if runner::searched(plan, p) => {
                let s = sloscope_core::search::settings_for(space, spec, p);
                // Whole repeats of the profile's (a screen is several from walk 4).
                let per = p.workload.requests_per_repeat.unwrap_or(1).max(1) as u64;
                let repeats = s.confirm_requests / per;
                out.extend(sloscope_core::checks::undecidable_confirmation(
                    p,
                    s.confirm_requests,
                    repeats,
                ));
            }
            _ => out.extend(sloscope_core::checks::undecidable(p)),
        }
    }
    out
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
            return Ok(ExitCode::from(Run::BadPlan.code()));
        }
    };
    if let (false, Some(space), Some(spec)) = (args.quiet, &plan.space, &plan.raw.plan.space) {
        eprintln!(
            "sloscope: {}",
            sloscope_core::search::budget_line(space, &spec.budget)
        );
        eprintln!(
            "sloscope: the space is searched for {}; the listed candidates are run for the other profiles",
            spec.profiles.join(", ")
        );
    }
    if !args.quiet {
        for w in undecidable(&plan) {
            eprintln!("sloscope: warning: {w}");
        }
    }
    let api_key = match &args.api_key_env {
        Some(name) => match Secret::from_env(name) {
            Ok(k) => Some(k),
            Err(e) => {
                eprintln!("sloscope: --api-key-env: {e}");
                return Ok(ExitCode::from(Run::BadPlan.code()));
            }
        },
        None => None,
    };
    if let (Some(cmd), Some(res)) = (&args.command_template, &args.result_template) {
        return external(&args, &plan, cmd, res);
    }
    let redactor = redactor(&plan, api_key.as_ref());
    let mut plan = plan;
    let attempt = match sharded(&args, &mut plan, &redactor) {
        Ok(Some(a)) => Some(a),
        Ok(None) if args.dry_run => return Ok(ExitCode::SUCCESS),
        Ok(None) => None,
        Err(code) => return Ok(ExitCode::from(code)),
    };
    let out = attempt
        .as_ref()
        .map_or_else(|| args.out.clone(), |a| a.dir.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let cancel = Cancel::default();
    let result = rt.block_on(async {
        watch_signals(cancel.clone())?;
        let opts = Options {
            out,
            api_key,
            redactor,
            quiet: args.quiet,
        };
        anyhow::Ok(runner::run(plan, opts, cancel.clone()).await)
    })?;
    let outcome = match result {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sloscope: {e}");
            let code = match e {
                CollectError::Plan(_) => Run::BadPlan.code(),
                CollectError::Write { .. } | CollectError::RunFile { .. } => Run::Output.code(),
                _ => Run::Incomplete.code(),
            };
            return Ok(ExitCode::from(code));
        }
    };
    let stop = cancel.reason();
    let code = report(&args, &outcome, stop.clone());
    Ok(ExitCode::from(finish_shard(
        attempt,
        &outcome,
        stop.as_ref(),
        code,
    )))
}

/// With `--shard` or `--shard-from-env`: the collector's shard door starts this shard's
/// attempt and narrows the plan. `Ok(None)` without a shard (or after `--dry-run`);
/// `Err(exit code)` on bad arguments or an unwritable output.
fn sharded(args: &Args, plan: &mut RunPlan, redactor: &Redactor) -> Result<Option<Attempt>, u8> {
    let which = match (&args.shard, args.shards) {
        (Some(s), _) => Which::Given(s.clone()),
        (None, Some(n)) => Which::FromEnv(n),
        (None, None) => Which::Whole,
    };
    match shard::prepare(plan, &args.out, &which, args.dry_run, redactor) {
        Ok(Prepared::Whole) => Ok(None),
        Ok(Prepared::DryRun(table)) => {
            print!("{table}");
            Ok(None)
        }
        Ok(Prepared::Attempt(a)) => {
            if !args.quiet {
                let split = a.split();
                eprintln!(
                    "sloscope: shard {} of {}: {} cells, writing to {}",
                    split.index,
                    split.count,
                    a.mine().len(),
                    a.dir.display()
                );
            }
            Ok(Some(*a))
        }
        Err(e) => {
            eprintln!("sloscope: {e}");
            Err(match e {
                ShardError::Arguments(_) => Run::BadPlan.code(),
                ShardError::Output(_) => Run::Output.code(),
            })
        }
    }
}

/// A shard's attempt that ran to its end is closed (its end and completion marker written).
fn finish_shard(
    attempt: Option<Attempt>,
    outcome: &runner::Outcome,
    stop: Option<&StopReason>,
    code: u8,
) -> u8 {
    let Some(a) = attempt.filter(|_| shard::ran_to_end(stop)) else {
        return code;
    };
    let dir = a.dir.clone();
    match a.close(outcome) {
        Ok(()) => code,
        Err(e) => {
            eprintln!(
                "sloscope: {}: cannot write the completion marker: {e}",
                dir.display()
            );
            Run::Output.code()
        }
    }
}

/// The closing lines on stderr and the exit code.
fn report(args: &Args, outcome: &runner::Outcome, stop: Option<StopReason>) -> u8 {
    if !args.quiet {
        eprintln!(
            "sloscope: wrote {} run files to {} (analyse with: sloscope analyze {})",
            outcome.runs.len(),
            args.out.display(),
            args.out.display()
        );
    }
    for r in &outcome.incomplete {
        eprintln!("sloscope: incomplete run: {r}");
    }
    for r in &outcome.not_run {
        eprintln!("sloscope: {r}");
    }
    match stop {
        Some(StopReason::Interrupted(signal)) => signal.exit_code(),
        Some(r) if r.is_output_failure() => {
            eprintln!("sloscope: {}", r.message());
            Run::Output.code()
        }
        _ if !outcome.incomplete.is_empty() || !outcome.not_run.is_empty() => {
            Run::Incomplete.code()
        }
        _ => Run::Ok.code(),
    }
}

/// `--command-template`: an external benchmark per profile, imported.
fn external(args: &Args, plan: &RunPlan, cmd: &str, res: &str) -> anyhow::Result<ExitCode> {
    let ext = sloscope_collector::external::External {
        command_template: cmd.to_string(),
        result_template: res.to_string(),
        candidate: args.import_candidate.clone(),
    };
    let written = sloscope_collector::external::run(plan, &ext, &args.out, args.quiet)?;
    let failed: Vec<String> = written
        .iter()
        .filter(|(_, s)| *s != sloscope_core::schema::RunStatus::Ok)
        .map(|(p, _)| p.display().to_string())
        .collect();
    if !failed.is_empty() {
        eprintln!("sloscope: incomplete runs: {}", failed.join(", "));
        return Ok(ExitCode::from(Run::Incomplete.code()));
    }
    Ok(ExitCode::SUCCESS)
}
