//! `sloscope compare`: did it get worse? Reads two collections (I/O only), compares them in the
//! core, prints the comparison; the exit code is the gate's answer.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::exit::Compare;
use std::process::ExitCode;

use sloscope_collector::record::write;
use sloscope_core::comparison;
use sloscope_core::comparison::{compare, CompareOptions};
use sloscope_core::comparison::{Comparison, Outcome, Threshold};
use sloscope_core::measure::Metric;
use sloscope_core::view::escaped;

/// Output formats.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// Plain text for a terminal.
    Text,
    /// The comparison as JSON, with stable codes (`outcome`, each `label`).
    Json,
    /// A Markdown pull-request comment.
    Markdown,
}

/// Arguments of `sloscope compare`.
#[derive(clap::Args)]
#[command(
    after_help = format!("Examples:\n  sloscope compare results/v0.8 results/v0.9\n  \
sloscope compare --before a/ b.json --after c/ --format markdown --out comment.md\n  \
sloscope compare old/ new/ --threshold ttft_p95_ms=10%,5 --threshold failure_rate=0%,0.01\n\n\
Cells are matched by profile and candidate (knob value), and compared only under the same \
workload. A metric is a regression when its whole 95% interval is worse than its threshold: \
beyond both the relative and the absolute part. Only worse fails.\n\n{}",
    Compare::help()
))]
pub struct Args {
    /// BEFORE and AFTER: two files or directories (or use --before/--after for several each).
    #[arg(value_name = "BEFORE AFTER", num_args = 0..=2)]
    paths: Vec<PathBuf>,
    /// Files or directories of the collection before the change.
    #[arg(long, num_args = 1.., value_name = "PATHS")]
    before: Vec<PathBuf>,
    /// Files or directories of the collection after the change.
    #[arg(long, num_args = 1.., value_name = "PATHS")]
    after: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Write the comparison here instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// A metric's threshold, `METRIC=REL%,ABS` (the absolute part in the metric's unit), e.g.
    /// `ttft_p95_ms=5%,2`. Repeatable; replaces the default of that metric.
    #[arg(long = "threshold", value_name = "METRIC=REL%,ABS")]
    thresholds: Vec<String>,
    /// Thresholds from a JSON file: `{"ttft_p95_ms": {"relative": 0.05, "absolute": 2}}`
    /// (the command line's win).
    #[arg(long, value_name = "FILE")]
    thresholds_file: Option<PathBuf>,
    /// Pool reruns of one candidate on each side (as `analyze --pool-reruns`).
    #[arg(long)]
    pool_reruns: bool,
}

/// Parses `METRIC=REL%,ABS`.
fn parse_threshold(s: &str) -> Result<(Metric, Threshold), String> {
    let expected = "expected METRIC=REL%,ABS, e.g. ttft_p95_ms=5%,2";
    let (name, rest) = s
        .split_once('=')
        .ok_or(format!("--threshold {s:?}: {expected}"))?;
    let metric = Metric::parse(name.trim()).ok_or(format!(
        "--threshold {s:?}: unknown metric {name:?}; known: {}",
        Metric::all_names().join(", ")
    ))?;
    let (rel, abs) = rest
        .split_once(',')
        .ok_or(format!("--threshold {s:?}: {expected}"))?;
    let rel = rel
        .trim()
        .strip_suffix('%')
        .and_then(|r| r.parse::<f64>().ok());
    let abs = abs.trim().parse::<f64>().ok();
    match (rel, abs) {
        (Some(r), Some(a)) if r.is_finite() && a.is_finite() && r >= 0.0 && a >= 0.0 => Ok((
            metric,
            Threshold {
                relative: r / 100.0,
                absolute: a,
            },
        )),
        _ => Err(format!(
            "--threshold {s:?}: {expected} (both parts non-negative numbers, the first with %)"
        )),
    }
}

fn thresholds_file(path: &Path) -> Result<BTreeMap<Metric, Threshold>, String> {
    let name = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    let expected = "expected {\"METRIC\": {\"relative\": R, \"absolute\": A}}";
    // The core's strict parser: a key given twice is an error, not the last one silently.
    let value = sloscope_core::input::strict_value(&bytes)
        .map_err(|e| format!("{name}: {expected}: {}", e.message))?;
    let map: BTreeMap<String, Threshold> =
        serde_json::from_value(value).map_err(|e| format!("{name}: {expected}: {e}"))?;
    let mut out = BTreeMap::new();
    for (k, t) in map {
        let m = Metric::parse(&k).ok_or(format!("{name}: unknown metric {k:?}"))?;
        if !(t.relative >= 0.0 && t.absolute >= 0.0) {
            return Err(format!(
                "{name}: {k}: thresholds must be non-negative numbers"
            ));
        }
        out.insert(m, t);
    }
    Ok(out)
}

fn options(args: &Args) -> Result<CompareOptions, String> {
    let mut thresholds = match &args.thresholds_file {
        Some(p) => thresholds_file(p)?,
        None => BTreeMap::new(),
    };
    for s in &args.thresholds {
        let (m, t) = parse_threshold(s)?;
        thresholds.insert(m, t);
    }
    Ok(CompareOptions {
        pool_reruns: args.pool_reruns,
        thresholds,
    })
}

/// The two sides' paths.
fn sides(args: &Args) -> Result<(Vec<PathBuf>, Vec<PathBuf>), String> {
    match (
        args.paths.as_slice(),
        args.before.is_empty(),
        args.after.is_empty(),
    ) {
        ([b, a], true, true) => Ok((vec![b.clone()], vec![a.clone()])),
        ([], false, false) => Ok((args.before.clone(), args.after.clone())),
        _ => {
            Err("give BEFORE AFTER (two paths), or --before PATHS… --after PATHS…, not both".into())
        }
    }
}

/// Reads one side; bad files are named and make the exit code 2.
fn load(side: &str, paths: &[PathBuf]) -> (Vec<sloscope_core::LoadedFile>, Vec<String>) {
    let found = crate::files::find_files(paths);
    if let Some(line) = found.passed_over_line() {
        eprintln!("sloscope: {side}: {}", escaped(&line));
    }
    for d in &found.duplicates {
        eprintln!("sloscope: {side}: {d}: already read through another path; read once");
    }
    let (loaded, mut errors) = crate::analyze::load_all(&found.files);
    errors.splice(0..0, found.errors);
    for e in &errors {
        eprintln!("sloscope: bad input ({side}): {}", escaped(e));
    }
    let errors = errors.into_iter().map(|e| format!("{side}: {e}")).collect();
    (loaded, errors)
}

fn emit(args: &Args, c: &Comparison) -> anyhow::Result<()> {
    let text = match args.format {
        Format::Text => comparison::text(c),
        Format::Markdown => comparison::markdown(c),
        Format::Json => serde_json::to_string_pretty(c)? + "\n",
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
    Ok(())
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (options, (before, after)) = match options(&args).and_then(|o| Ok((o, sides(&args)?))) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("sloscope: error: {e}");
            return Ok(ExitCode::from(Compare::Bad));
        }
    };
    let (b, eb) = load("before", &before);
    let (a, ea) = load("after", &after);
    let mut c = compare(&b, &a, &options);
    // A file that could not be read leaves its side unknown: the comparison says so itself,
    // in every format, as its exit code does.
    if !eb.is_empty() || !ea.is_empty() {
        c.refused.extend(
            eb.into_iter().chain(ea).map(|e| {
                format!("a file could not be read, so its side is not what was given: {e}")
            }),
        );
        c.outcome = Outcome::Refused;
    }
    emit(&args, &c)?;
    eprintln!("sloscope: {}", escaped(&comparison::headline(&c)));
    Ok(ExitCode::from(match c.outcome {
        Outcome::Regression => Compare::Regression,
        Outcome::NoRegression => Compare::NoRegression,
        Outcome::NothingComparable
        | Outcome::Incomplete
        | Outcome::Inconclusive
        | Outcome::Refused => Compare::Bad,
    }))
}
