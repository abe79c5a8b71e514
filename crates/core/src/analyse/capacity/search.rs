//! The next load to try: bracket by doubling, then bisect.

use super::{LoadAxis, Search};

/// The load of the next trial, from the outcomes `(load, pass)` so far; `None` when the search
/// is done (bracket within tolerance, `min` failed, `max` passed, or `max_trials` used).
pub fn next_load(search: &Search, trials: &[(f64, bool)]) -> Option<f64> {
    if trials.len() >= search.max_trials as usize {
        return None;
    }
    if trials.is_empty() {
        return Some(search.min);
    }
    let (last_pass, first_fail) = bracket(trials);
    let integer = search.over == LoadAxis::Concurrency;
    let tried = |x: f64| trials.iter().any(|t| (t.0 - x).abs() < 1e-9);
    let next = match (last_pass, first_fail) {
        (None, Some(ff)) if ff <= search.min => return None,
        (None, _) => search.min,
        (Some(lp), None) if lp >= search.max => return None,
        (Some(lp), None) => {
            let grown = (lp * 2.0).max(lp + search.tolerance).min(search.max);
            if integer {
                grown.round()
            } else {
                grown
            }
        }
        (Some(lp), Some(ff)) => {
            if ff - lp <= search.tolerance + 1e-9 {
                return None;
            }
            let mid = (lp + ff) / 2.0;
            if integer {
                mid.floor().max(lp + 1.0)
            } else {
                mid
            }
        }
    };
    (!tried(next)).then_some(next)
}

/// The lowest failing load, and the highest passing load below it.
pub(super) fn bracket(trials: &[(f64, bool)]) -> (Option<f64>, Option<f64>) {
    let first_fail = trials
        .iter()
        .filter(|t| !t.1)
        .map(|t| t.0)
        .min_by(f64::total_cmp);
    let last_pass = trials
        .iter()
        .filter(|t| t.1 && first_fail.is_none_or(|ff| t.0 < ff))
        .map(|t| t.0)
        .max_by(f64::total_cmp);
    (last_pass, first_fail)
}
