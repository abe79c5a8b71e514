//! The invariants of one run, in one pipeline that every run passes whatever its origin
//! (collected, recovered from a journal, imported, pooled from reruns, a capacity trial, a
//! float-baseline run):
//!
//! - [`refusals`] when a file is read: a run that breaks a refusal-level invariant is no run
//!   ([`physical`]).
//! - [`examine`] before anything is pooled, selected or ranked: what the run states against what
//!   its rows show ([`timing`], [`tokens`]), its status and stamps against themselves
//!   ([`record`]), and what it claims against the plan and profile ([`conformance`]). Each
//!   finding is excluded or flagged as the catalogue says.

pub mod conformance;
pub mod drawn;
pub mod fingerprint;
pub mod launch;
pub mod physical;
pub mod record;
pub mod reported;
pub mod sessions;
pub mod signals;
pub mod timing;
pub mod tokens;

pub use physical::{refusals, MAX_TIME_US};

use crate::check::contract::search::Search;
use crate::check::invariant::Violation;
use crate::schema::{ForeignWorkload, Plan, ProfileSpec, Role, Run, WorkloadSpec};

/// What the analysis expects of a run of one profile.
#[derive(Debug, Clone, Copy, Default)]
pub struct Expect<'a> {
    /// The profile as the plan (or, without one, the first run) defines it.
    pub spec: Option<&'a ProfileSpec>,
    /// The plan and its file, when one is loaded.
    pub plan: Option<(&'a str, &'a Plan)>,
    /// The knob the candidates vary.
    pub knob: Option<&'a str>,
    /// The artifacts the lineage records name: the deployed one (candidate runs measure it) and
    /// the float baseline's (baseline runs measure it).
    pub artifacts: [Option<&'a str>; 2],
    /// The profile's capacity search: its trials vary this axis and may hold more requests.
    pub search: Option<&'a Search>,
    /// The weight formats the lineage records state: the deployment's (candidates serve it)
    /// and the float baseline's.
    pub formats: [Option<&'a str>; 2],
    /// The run is reruns pooled (their repeats renumbered): each was held before pooling to
    /// what its own repeat numbers draw.
    pub pooled: bool,
}

/// Every examine-level invariant the run breaks (excluded or flagged, as the catalogue says).
pub fn examine(run: &Run, expect: &Expect<'_>) -> Vec<Violation> {
    let mut out = Vec::new();
    let stated = Stated::of(run, expect.spec);
    // What the run claims against the plan first: a run of another workload is that, before
    // its own statements are weighed.
    conformance::check(run, expect, &mut out);
    record::check(run, &mut out);
    signals::check(run, &mut out);
    timing::check(run, &stated, &mut out);
    tokens::check(run, &stated, &mut out);
    out
}

/// What a run states about the load it sent: its own profile's workload (a trial's with the
/// searched axis at the trial's load), or another tool's description of its workload.
#[derive(Debug, Clone, Default)]
pub struct Stated {
    /// Streams (closed loop) or the cap on requests in flight.
    pub concurrency: Option<u64>,
    /// Open-loop arrival rate.
    pub rate_rps: Option<f64>,
    /// Gap CV of the arrival process (1 for Poisson).
    pub arrival_cv: f64,
    /// The workload replays a trace (its own send times) or a dataset (its own lengths).
    pub replayed: bool,
    /// Prompt tokens asked for on average (with a shared prefix), when synthetic: a session's
    /// first turns (later turns carry the conversation so far).
    pub prompt_tokens_mean: Option<f64>,
    /// How widely the prompts asked for spread, when synthetic: the 10th to 90th percentile
    /// of the workload's own draws (tokens; 0 for one fixed length).
    pub prompt_tokens_spread: Option<f64>,
    /// The largest output cap the workload sends, when known without per-request caps.
    pub output_cap: Option<u32>,
    /// The workload is multi-turn sessions.
    pub sessions: bool,
}

/// The 10th to 90th percentile width of `d`'s draws (2,000 of them, the same every time);
/// `None` for parameters that draw nothing (the plan check names them).
fn spread_of(d: &crate::base::traffic::LengthDist) -> Option<f64> {
    if d.problem().is_some() {
        return None;
    }
    let mut v: Vec<f64> = (0..2000).map(|i| f64::from(d.sample(0x5b7e, i))).collect();
    v.sort_by(f64::total_cmp);
    let at = |q| crate::base::stats::percentile_sorted(&v, q);
    Some(at(90.0)? - at(10.0)?)
}

impl Stated {
    /// The workload a run is held to: the profile's (`profile`, the plan's, or without one
    /// the first run's), else the run's own statement of it, else another tool's description.
    /// Never the run's own where the profile states one: a run that rewrote its copy of the
    /// workload (a prompt distribution the plan never drew) would set its own test.
    pub fn of(run: &Run, profile: Option<&ProfileSpec>) -> Stated {
        let planned = profile.and_then(|s| s.workload.as_ref());
        let own = run.profile_spec.as_ref().and_then(|s| s.workload.as_ref());
        match planned.or(own) {
            Some(w) => Stated::from_spec(w, run),
            None => run
                .import
                .as_ref()
                .map(|i| Stated::from_foreign(&i.workload))
                .unwrap_or_default(),
        }
    }

    fn from_spec(w: &WorkloadSpec, run: &Run) -> Stated {
        let mut concurrency = w.concurrency.and_then(|c| u64::try_from(c).ok());
        let mut rate = w.request_rate_rps;
        if let Some(t) = &run.trial {
            match t.over.as_str() {
                "concurrency" => concurrency = Some(t.load.round().max(0.0) as u64),
                "request_rate_rps" => rate = Some(t.load),
                _ => {}
            }
        }
        let replayed = w.trace.is_some() || w.dataset.is_some();
        let prefix = w.shared_prefix.map_or(0.0, |p| f64::from(p.tokens));
        let (prompt, spread) = match (&w.prompt_length, w.prompt_tokens) {
            (Some(d), _) => (Some(d.mean()), spread_of(d)),
            (None, Some(t)) if t > 0 => (Some(t as f64), Some(0.0)),
            _ => (None, None),
        };
        let output_cap = match (&w.output_length, w.max_output_tokens) {
            _ if w.trace.is_some() => None,
            (Some(d), _) => Some(d.max_tokens()),
            (None, _) if w.dataset.is_some() => None,
            (None, Some(m)) => u32::try_from(m).ok(),
            (None, None) => None,
        };
        Stated {
            concurrency,
            rate_rps: rate,
            arrival_cv: w
                .arrival
                .unwrap_or(crate::base::traffic::Arrival::Poisson)
                .gap_cv(),
            replayed,
            prompt_tokens_mean: prompt.filter(|_| !replayed).map(|p| p + prefix),
            prompt_tokens_spread: spread.filter(|_| !replayed),
            output_cap,
            sessions: w.sessions.is_some(),
        }
    }

    fn from_foreign(w: &ForeignWorkload) -> Stated {
        Stated {
            concurrency: w.concurrency.map(u64::from),
            rate_rps: w.request_rate_rps,
            arrival_cv: 1.0,
            replayed: false,
            // The input length the tool states it asked for (a mean, when it draws lengths
            // around it): held to the same factor of two as sloscope's own runs. Its output
            // length is not a cap (a tool may draw caps around it), so none is taken from it.
            prompt_tokens_mean: w.prompt_tokens.filter(|t| *t > 0).map(f64::from),
            prompt_tokens_spread: None,
            output_cap: None,
            sessions: false,
        }
    }
}

/// Whether a run is a candidate's (fixed load or trial) rather than the float baseline's.
pub(crate) fn is_candidate(run: &Run) -> bool {
    run.role == Role::Candidate
}
