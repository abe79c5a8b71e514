//! Door: the configuration search — a plan's `[space]` checked into a [`Space`] (knobs,
//! constraints, the configurations they allow, neighbours, names), and the search of one
//! profile as a deterministic state machine ([`Explorer`]: `next` says what to launch,
//! `record` takes what it measured, `result` answers), which the collector drives and the
//! analysis replays from the trial files.

pub use crate::analyse::explore::replay::{
    explorer_for, measured, pooled_with, replay, settings_for, trial_outcome, FrontPoint,
    SearchReport, SearchStatus, TrialRow, DEFAULT_SEED,
};
pub use crate::analyse::explore::{
    budget_line, default_launches, Dropped, Estimate, Evidence, Explorer, Outcome, Purpose,
    SearchResult, Settings, SloEstimate, Step, Trial, WALK,
};
pub use crate::check::space::{Config, Knob, Space, MAX_CONFIGURATIONS};
