//! The configuration search of one profile, as a state machine the collector drives (and the
//! analysis replays from the trial files): [`Explorer::next`] says which configuration to
//! launch next and with how many requests, [`Explorer::record`] takes what the trial measured.
//! It is deterministic: the same space, settings and outcomes give the same trials, so a search
//! can be resumed from its journal and recomputed from its trials.
//!
//! The walk: *screen* a spread of the space with few requests each (farthest-point design from
//! the centre); drop configurations that miss an SLO with confidence or that a configuration
//! meeting every SLO beats on the primary metric with confidence; *refine* around the best
//! survivors (their neighbours: one knob moved one value, the one a response surface fitted to
//! the measurements predicts best first), then anywhere unexplored — from walk 4, wherever a
//! Gaussian process of the measurements expects the most improvement within the SLOs; give the
//! *contenders* (the best and those it cannot be told from) more requests — from walk 5 on the
//! launch that just measured them, while its server still runs; then *confirm*: the
//! chosen configuration and its nearest rival launched afresh and measured again (from walk 7,
//! exploring ends early once the best's neighbours are measured and the kriging expects
//! nothing more to gain). A launch that
//! fails is an infeasible trial with its reason, never the end of the search (from walk 8 the
//! kriging models whether a launch starts apart from the SLOs).

mod choose;
pub mod evidence;
mod kriging;
pub mod record;
pub mod replay;
mod surface;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::base::metric::Metric;
use crate::check::space::{Config, Space};
pub use crate::schema::Purpose;
use crate::schema::SpaceBudget;

pub use evidence::{Estimate, Evidence, Outcome, SloEstimate};

/// Launches a budget gives by default to a search of walk revision `walk`: 30 % of the
/// configurations rounded up, at least 6 (from walk 7, at least 8: six launches over a small
/// space leave four to explore it, too few to find its best), never more than the
/// configurations and the confirmation. From walk 7 the search stops exploring early where the
/// kriging expects nothing more to gain, so the launches it spends are fewer.
pub fn default_launches(configs: usize, walk: u32) -> u32 {
    let share = (configs as f64 * 0.3).ceil() as u32;
    let least = if walk >= 7 { 8 } else { 6 };
    share.max(least).min(configs as u32 + 2)
}

/// A space's size against its budget, in one line: `space: 3 knobs (parallel 4, ubatch 4,
/// cache_type_k 2), 24 of a 32-configuration grid allowed by the constraints; budget 8 launches
/// per profile (33 % of the configurations)`.
pub fn budget_line(space: &Space, budget: &SpaceBudget) -> String {
    let knobs: Vec<String> = space
        .knobs
        .iter()
        .map(|k| format!("{} {}", k.name, k.values.len()))
        .collect();
    let launches = budget
        .launches
        .unwrap_or_else(|| default_launches(space.configs.len(), WALK));
    let share = 100.0 * f64::from(launches) / space.configs.len() as f64;
    let mut line = format!(
        "space: {} knob{} ({}), {} of a {}-configuration grid allowed by the constraints; budget {launches} launches per profile ({share:.0} % of the configurations{})",
        space.knobs.len(),
        if space.knobs.len() == 1 { "" } else { "s" },
        knobs.join(", "),
        space.configs.len(),
        space.grid,
        if budget.launches.is_none() { ", the default" } else { "" }
    );
    if let Some(r) = budget.requests {
        line.push_str(&format!(", {r} requests"));
    }
    if let Some(t) = budget.wall_time_s {
        line.push_str(&format!(", {} s", crate::base::fmt::format_number(t)));
    }
    if let Some(n) = budget.confirm_requests {
        line.push_str(&format!(", {n} requests per confirmation launch"));
    }
    line
}

/// What a search may spend and how it measures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Settings {
    /// Server launches in all, the confirmation's included.
    pub launches: u32,
    /// Measured requests in all (`null`: no limit but the launches).
    pub requests: Option<u64>,
    /// Requests of a screening or refining trial.
    pub screen_requests: u64,
    /// Requests a contender's further trial adds.
    pub more_requests: u64,
    /// Most requests pooled for one configuration.
    pub max_requests_per_config: u64,
    /// Requests of each confirmation launch.
    pub confirm_requests: u64,
    /// Seed of the design's tie-breaks.
    pub seed: u64,
    /// The revision of the walk ([`WALK`] for a new search; a replay takes its trials').
    pub walk: u32,
    /// The configurations `launches` is the default budget of, by the walk's rule
    /// ([`default_launches`]; `null`: the plan set the launches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_of: Option<usize>,
}

/// The revision of the search's walk this build runs: 1, the refinement walks to the best
/// survivors' neighbours (downhill first) and then to the unexplored configuration farthest
/// from the measured ones; 2, a response surface fitted to the measured configurations ranks
/// both (the best predicted within the SLOs first); 3, with fewer than 12 launches none is kept
/// for the contenders' further requests while refining (they still get any left over): the
/// configurations explored matter more there, and the confirmation measures the pick afresh;
/// 4, kriging refines (constrained expected improvement), screens measure four repeats, a fifth
/// of the launches screen, and the pick is the best survivor likely (80 %) within the SLOs;
/// 5, a contender just measured gets its further requests on the same launch (an `extend`
/// trial, which costs no launch), up to twelve repeats pooled, and the kriging of the SLOs'
/// margin has a linear trend (a limit is usually crossed going one way along a knob); 6, a
/// pick only likely within the SLOs gives way to a survivor sure to meet them that the
/// measurements cannot tell from it on the primary metric; 7, exploring stops early, once half
/// the launches are spent, the best survivor's neighbours are measured and the kriging expects
/// no unmeasured configuration to gain a tenth of a per cent on the incumbent (the launches
/// left are not spent), and a default budget is at least 8 launches; 8, a launch that failed
/// is no longer a margin past every SLO in the kriging of the SLOs' margin but a process of its
/// own, whether a launch starts, so a failure is put on the knob values it shares with the
/// other failures, not spread over the SLOs of every configuration near it.
pub const WALK: u32 = 8;

/// Requests of a confirmation launch: two repeats, and at least as many as bound a p95 from
/// above on the fresh launch alone (59), so that the verdict drawn on the fresh measurement can
/// decide a p95 limit without the screening data (which chose the pick, and would flatter it).
fn confirm_requests(r: u64) -> u64 {
    let least = crate::base::confidence::needed_for_upper(0.95, 0.05).max(2 * r);
    least.div_ceil(r) * r
}

impl Settings {
    /// The settings of a plan's budget for a space, a profile measuring `repeat_requests`
    /// requests per repeat, for this build's walk: screening and a contender's further trial
    /// at the repeats [`sizes`] gives (four each from walk 4, so that one launch can bound a
    /// p95 on both sides: 72 requests are the fewest that can; from walk 5 a further trial
    /// mostly extends the launch just measured); confirmation at the budget's
    /// `confirm_requests` rounded up to whole repeats, by default two, or as many more as bound
    /// a p95 from above. [`Settings::at_walk`] gives another walk's sizes.
    pub fn new(space: &Space, budget: &SpaceBudget, repeat_requests: u64, seed: u64) -> Settings {
        let r = repeat_requests.max(1);
        Settings {
            launches: budget
                .launches
                .unwrap_or_else(|| default_launches(space.configs.len(), WALK)),
            requests: budget.requests,
            screen_requests: r * sizes(WALK).0,
            more_requests: r * sizes(WALK).1,
            max_requests_per_config: r * sizes(WALK).2,
            confirm_requests: budget
                .confirm_requests
                .map_or_else(|| confirm_requests(r), |n| n.max(1).div_ceil(r) * r),
            seed,
            walk: WALK,
            default_of: budget.launches.is_none().then_some(space.configs.len()),
        }
    }
}

/// A screening trial's requests, a contender's further trial's and the most pooled for one
/// configuration, in repeats, by walk revision: 1, 3 and 4 to walk 3; 4, 4 and 8 in walk 4;
/// from walk 5, 4, 4 and 12 (a further trial mostly extends a launch already up).
/// Launches are what a search spends most (a server's start takes minutes on a GPU host,
/// a repeat seconds), so from walk 4 each launch measures enough to bound a p95 on both sides
/// (four repeats of the benchmark's 24 requests): a screened configuration's SLOs are then
/// decided, or nearly, by its own launch, and fewer launches go to measuring again.
fn sizes(walk: u32) -> (u64, u64, u64) {
    match walk {
        0..=3 => (1, 3, 4),
        4 => (4, 4, 8),
        _ => (4, 4, 12),
    }
}

impl Settings {
    /// The same settings for walk revision `walk` (the sizes its trials measure, and its
    /// default budget where the plan set none).
    pub fn at_walk(mut self, walk: u32) -> Settings {
        if let Some(n) = self.default_of {
            self.launches = default_launches(n, walk);
        }
        let r = self.screen_requests / sizes(self.walk).0;
        let (screen, more, max) = sizes(walk);
        self.screen_requests = r * screen;
        self.more_requests = r * more;
        self.max_requests_per_config = r * max;
        self.walk = walk;
        self
    }
}

/// One trial of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Trial {
    /// The configuration (value index per knob).
    pub config: Config,
    /// Why.
    pub purpose: Purpose,
    /// Requests asked for.
    pub requests: u64,
    /// What it came to (for a `more` trial: the configuration's pooled evidence).
    pub outcome: Outcome,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Launch the server with `config` and measure `requests` requests.
    Launch {
        /// The configuration.
        config: Config,
        /// Requests to measure.
        requests: u64,
        /// Why.
        purpose: Purpose,
    },
    /// The search is over.
    Done,
}

/// The search of one profile.
#[derive(Debug, Clone)]
pub struct Explorer {
    space: Space,
    primary: Metric,
    settings: Settings,
    trials: Vec<Trial>,
    /// Each configuration's latest pooled outcome (confirmations kept apart).
    known: BTreeMap<Config, Outcome>,
    design: Vec<Config>,
    stopped: bool,
}

impl Explorer {
    /// A search of `space` ranked by `primary`.
    pub fn new(space: Space, primary: Metric, settings: Settings) -> Explorer {
        let design = choose::design(&space, &settings);
        Explorer {
            space,
            primary,
            settings,
            trials: Vec::new(),
            known: BTreeMap::new(),
            design,
            stopped: false,
        }
    }

    /// The same search run by walk revision `walk` (a replay of trials that recorded theirs).
    pub fn with_walk(mut self, walk: u32) -> Explorer {
        self.settings = self.settings.at_walk(walk);
        self.design = choose::design(&self.space, &self.settings);
        self
    }

    /// The space searched.
    pub fn space(&self) -> &Space {
        &self.space
    }

    /// The trials so far.
    pub fn trials(&self) -> &[Trial] {
        &self.trials
    }

    /// The metric it ranks by.
    pub fn primary(&self) -> Metric {
        self.primary
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// No more exploring (the wall-clock budget is spent): the next steps confirm.
    pub fn stop_exploring(&mut self) {
        self.stopped = true;
    }

    /// Records what a trial came to; `outcome` of a `more` trial is the configuration's
    /// evidence pooled over all its trials, of a confirmation only the fresh launch's.
    pub fn record(&mut self, config: Config, purpose: Purpose, requests: u64, outcome: Outcome) {
        if purpose != Purpose::Confirm {
            self.known.insert(config.clone(), outcome.clone());
        }
        self.trials.push(Trial {
            config,
            purpose,
            requests,
            outcome,
        });
    }

    /// Server launches so far: every trial but an `extend`, which measures on the launch
    /// before it.
    pub fn launches_used(&self) -> u32 {
        self.trials
            .iter()
            .filter(|t| t.purpose != Purpose::Extend)
            .count() as u32
    }

    /// Requests measured so far.
    pub fn requests_spent(&self) -> u64 {
        self.trials.iter().map(|t| t.requests).sum()
    }

    /// What to do next.
    pub fn next(&self) -> Step {
        choose::next(self)
    }

    /// The search's answer so far.
    pub fn result(&self) -> SearchResult {
        choose::result(self)
    }
}

/// Why a measured configuration is out of the running.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Dropped {
    /// The configuration's name.
    pub name: String,
    /// Why, with the intervals that decided it.
    pub reason: String,
}

/// The answer of a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SearchResult {
    /// The configuration chosen (`null`: none is left).
    pub chosen: Option<Config>,
    /// Its name.
    pub chosen_name: Option<String>,
    /// Whether it meets every SLO with confidence (else only by its point estimates).
    pub chosen_meets_all: bool,
    /// The nearest rival.
    pub rival: Option<Config>,
    /// Whether the fresh launches upheld the pick (`null`: not confirmed yet).
    pub confirmed: Option<bool>,
    /// What the confirmation showed, in words.
    pub confirmation: Option<String>,
    /// Every measured configuration but the pick, with why: out of the running (infeasible,
    /// an SLO missed or beaten with confidence), or still in it but not the pick (its reason
    /// begins `not chosen:`, with both intervals).
    pub dropped: Vec<Dropped>,
    /// Launches used.
    pub launches: u32,
    /// Requests measured.
    pub requests: u64,
    /// Configurations the space holds.
    pub configurations: usize,
}
