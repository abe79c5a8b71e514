//! Capacity under the SLO: the highest load on one axis (concurrency, or request rate) at which a
//! candidate still meets every SLO of its profile, found by a search over trials.
//!
//! Every trial is an ordinary run file with `trial` set (its workload is the profile's with the
//! axis set to the trial's load). Nothing here stores a capacity: it is derived from the trial
//! files each time, by the CLI and the page alike, so a reviewer can audit every trial.
//!
//! - **A trial passes** when every SLO holds. Each check is decided from the trial's data as a
//!   profile's SLOs are (`crate::analyse::evidence`): its one-sided 95% bound within the limit
//!   → pass, the other bound past it → fail, neither (or no bound from so few requests) →
//!   *unsure*. The collector gives an unsure trial more requests (up to
//!   `max_requests_per_trial`); an unsure trial at the cap (or interrupted) is decided by its
//!   point estimate and marked **marginal**. Metrics without a per-request interval are judged
//!   by their value.
//! - **The search** ([`next_load`]): start at `min`; while every trial passes, double the load
//!   (capped at `max`); once a load fails, bisect between the highest pass below it and the
//!   lowest fail, until they are within `tolerance` (integers for concurrency). It stops early
//!   at `max_trials`, when `min` fails, or when `max` passes.
//! - **The capacity** ([`derive`]): the lowest failing load (`first_fail`), the highest passing
//!   load below it (`last_pass`), the SLO that failed there, and the trials used. A pass above a
//!   fail (noise, or a non-monotone server) is kept and flagged, never hidden.

mod report;
mod search;
mod trial;
pub mod types;

pub use crate::check::contract::search::{
    load_text, trial_requests, LoadAxis, RankBy, Search, DEFAULT_MAX_REPEATS_PER_TRIAL,
    DEFAULT_MAX_TRIALS, MIN_REQUESTS_PER_STREAM,
};
pub use crate::check::run::timing::in_flight as observed_concurrency;
pub use report::{capacity_report, decide, derive, distinct};
pub use search::next_load;
pub use trial::{evaluate_trial, needs_more_requests, usable};
pub use types::{CandidateCapacity, CapacityReport, CapacityStatus, TrialCheck, TrialReport};
