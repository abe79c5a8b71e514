//! What another tool's run file states of itself — its summaries under known names, its request
//! counts, its duration and its rates — against the records it holds and its own totals.

use crate::base::fmt::format_number;
use crate::check::invariant::{Invariant, Violation};
use crate::schema::Run;

type Checked = Result<(), Violation>;

/// The first refusal-level invariant the run's statements break.
pub(crate) fn check(run: &Run) -> Checked {
    reported(run)?;
    super::signals::reported(run)?;
    stated(run)
}

fn reported(run: &Run) -> Checked {
    let Some(rep) = &run.reported else {
        return Ok(());
    };
    for (k, v) in rep {
        if crate::base::metric::Metric::parse(k).is_none()
            && !crate::base::metric::is_reported_extra(k)
        {
            return Err(Violation::new(
                Invariant::ValuesNonNegative,
                format!("$.reported.{k}"),
                "unknown metric name; see the guide's metric list (docs/src/reference/metrics.md)",
            ));
        }
        if v.is_some_and(|v| v < 0.0 || !v.is_finite()) {
            return Err(Violation::new(
                Invariant::ValuesNonNegative,
                format!("$.reported.{k}"),
                format!("{v:?}: expected a non-negative value"),
            ));
        }
    }
    rates_fit_totals(rep)
}

/// A tool's rates are its totals over its duration (vLLM and SGLang write exactly that): a rate
/// more than 1 % off the file's own totals is a file that contradicts itself, whether or not it
/// holds per-request data to recompute from.
fn rates_fit_totals(rep: &std::collections::BTreeMap<String, Option<f64>>) -> Checked {
    let get = |k: &str| rep.get(k).copied().flatten();
    let Some(d) = get("duration_s").filter(|d| *d > 0.0) else {
        return Ok(());
    };
    let completed = match (get("requests_sent"), get("requests_failed")) {
        (Some(s), Some(f)) => Some(s - f),
        _ => get("requests_ok"),
    };
    for (key, total, what) in [
        (
            "throughput_tps",
            get("output_tokens_total"),
            "output tokens",
        ),
        ("request_throughput_rps", completed, "completed requests"),
    ] {
        let (Some(rate), Some(total)) = (get(key), total) else {
            continue;
        };
        let implied = total / d;
        if (rate - implied).abs() > 0.01 * rate.max(implied) {
            return Err(Violation::new(
                Invariant::StatedCountsMatch,
                format!("$.reported.{key}"),
                format!(
                    "the tool states {} per second, but its own totals give {} ({total} {what} \
                     in {d} s): a file that contradicts itself",
                    format_number(rate),
                    format_number(implied)
                ),
            ));
        }
    }
    Ok(())
}

/// What another tool states about its own requests (counts, duration) against the records it
/// holds.
fn stated(run: &Run) -> Checked {
    let Some(rep) = run.reported.as_ref().filter(|_| !run.repeats.is_empty()) else {
        return Ok(());
    };
    let get = |k: &str| rep.get(k).copied().flatten();
    let rows: usize = run.repeats.iter().map(|r| r.requests.len()).sum();
    let failed: usize = run
        .repeats
        .iter()
        .map(|r| r.requests.error.iter().filter(|e| e.is_some()).count())
        .sum();
    for (key, stated, held) in [
        ("requests_sent", get("requests_sent"), rows),
        ("requests_failed", get("requests_failed"), failed),
    ] {
        if let Some(n) = stated.filter(|n| (*n - held as f64).abs() > 0.5) {
            return Err(Violation::new(
                Invariant::StatedCountsMatch,
                format!("$.reported.{key}"),
                format!(
                    "the tool states {n} but its file holds {held} such request records: a file \
                     that contradicts itself"
                ),
            ));
        }
    }
    let Some(duration_s) = get("duration_s") else {
        return Ok(());
    };
    let longest = run
        .repeats
        .iter()
        .flat_map(|r| r.requests.e2e_us.iter().flatten())
        .copied()
        .max()
        .unwrap_or(0);
    if duration_s * 1e6 + 1_000.0 < longest as f64 {
        return Err(Violation::new(
            Invariant::StatedDurationCovers,
            "$.reported.duration_s",
            format!(
                "the tool states a benchmark of {duration_s} s, shorter than its longest request \
                 ({} s): a file that contradicts itself",
                longest as f64 / 1e6
            ),
        ));
    }
    Ok(())
}
