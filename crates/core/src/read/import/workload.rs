//! Another tool's workload, as it described it: a label, the profile it is shown under without
//! a plan, and where it differs from a profile's.

use crate::schema::ForeignWorkload;

/// The profile a foreign benchmark is shown under when no plan assigns one: concurrency 1
/// without a rate is `latency`; 256 or more output tokens is `throughput`; anything else
/// `balanced`.
pub fn guess_profile(w: &ForeignWorkload) -> &'static str {
    if w.concurrency == Some(1) && w.request_rate_rps.is_none() {
        "latency"
    } else if w.max_output_tokens.is_some_and(|n| n >= 256) {
        "throughput"
    } else {
        "balanced"
    }
}

/// A short label of a foreign workload: `c4 64→32`, `4.0 rps 64→32`; empty when the tool
/// states none of it.
pub fn workload_label(w: &ForeignWorkload) -> String {
    if w.concurrency.is_none()
        && w.request_rate_rps.is_none()
        && w.prompt_tokens.is_none()
        && w.max_output_tokens.is_none()
    {
        return String::new();
    }
    // A rate as people write it (a sweep's 2.3027270349547733 reads 2.3027).
    let rate = |r: f64| {
        let s = format!("{r:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    let load = match (w.request_rate_rps, w.concurrency) {
        (Some(r), Some(c)) => format!("{} rps ≤{c}", rate(r)),
        (Some(r), None) => format!("{} rps", rate(r)),
        (None, Some(c)) => format!("c{c}"),
        (None, None) => "load ?".into(),
    };
    let n = |x: Option<u32>| x.map_or("?".to_string(), |x| x.to_string());
    match (w.prompt_tokens, w.max_output_tokens) {
        (None, None) => format!("{load}, lengths not stated"),
        (p, o) => format!("{load} {}→{}", n(p), n(o)),
    }
}
