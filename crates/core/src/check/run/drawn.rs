//! A run's output caps against the ones its workload draws. Under an output length
//! distribution the collector draws request `j` of repeat `r` from the profile's seed (the same
//! for every candidate: [`ProfileName::request_salt`]) at index `r · 2³² + j`, so the caps a
//! measured run records are known before it runs. A run whose caps are not that sequence was
//! sent other requests than the profile's, or its caps were edited (a cap raised with its
//! output counts lowers every time per token).

use crate::check::invariant::{Invariant, Violation};
use crate::schema::{ProfileName, ProfileSpec, Run, RunSource, RunStatus};

/// Mixed into the profile's seed for output caps (the collector's `Bodies`).
const OUTPUT_SALT: u64 = 0x6F75_7470;

pub(crate) fn check(spec: &ProfileSpec, run: &Run, out: &mut Vec<Violation>) {
    let Some(w) = spec.workload.as_ref() else {
        return;
    };
    // Replayed lengths, sessions (turns interleave by timing) and other tools' runs draw
    // otherwise; a run cut short holds an unknown subset of the sequence.
    let drawn_here = w.trace.is_none() && w.dataset.is_none() && w.sessions.is_none();
    let (Some(d), Some(profile), true, true, true) = (
        w.output_length.as_ref(),
        ProfileName::parse(&run.profile),
        drawn_here,
        run.source == RunSource::Measured,
        run.status == RunStatus::Ok,
    ) else {
        return;
    };
    let salt = profile.request_salt() ^ OUTPUT_SALT;
    for (ri, rep) in run.repeats.iter().enumerate() {
        let Some(caps) = rep.requests.max_output_tokens.as_ref() else {
            continue;
        };
        let base = u64::from(rep.index) << 32;
        // Requests are recorded in send order; two streams taking consecutive indices may send
        // them in either order, so the repeat's caps are compared as a multiset.
        let mut want: Vec<u32> = (0..caps.len() as u64)
            .map(|j| d.sample(salt, base + j))
            .collect();
        let mut got: Vec<u32> = caps.iter().flatten().copied().collect();
        if got.len() != caps.len() {
            continue;
        }
        want.sort_unstable();
        got.sort_unstable();
        if let Some(k) = (0..want.len()).find(|&k| want[k] != got[k]) {
            out.push(Violation::new(
                Invariant::WorkloadMatches,
                format!("$.repeats[{ri}].requests.max_output_tokens"),
                format!(
                    "repeat {}'s output caps are not the ones the profile's {} draws for its {} \
                     requests (sorted, the {}th: {} where it draws {}): other requests than the \
                     profile's, or caps edited",
                    rep.index,
                    d.label(),
                    caps.len(),
                    k + 1,
                    got[k],
                    want[k]
                ),
            ));
            return;
        }
    }
}
