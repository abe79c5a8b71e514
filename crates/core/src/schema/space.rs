//! A configuration search space as written in a plan (`[space]`): the server knobs to search,
//! each a list of values or a range, mapped to the `{knob}` placeholders of the server command;
//! constraints between knobs; which profiles the search serves; its budget. Checked into a
//! search space by the core (`sloscope_core::search::Space::new`), which names the field of
//! every problem.
//!
//! ```toml
//! [space]
//! profiles = ["latency", "throughput"]
//! constraints = ["ubatch <= batch"]
//! budget = { launches = 12, requests = 3000, wall_time_s = 1800, confirm_requests = 120 }
//! [space.knobs]
//! parallel = { values = [1, 2, 4, 8] }
//! ubatch = { min = 64, max = 512, powers_of_two = true }
//! cache_type_k = { values = ["f16", "q8_0"] }
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::knob::KnobValue;

/// The search space of a plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SpaceSpec {
    /// Knob name (the server command's `{name}` placeholder) → its values.
    #[serde(default, deserialize_with = "super::unique::map")]
    pub knobs: BTreeMap<String, KnobSpec>,
    /// Relations every configuration tried must satisfy, each `a OP b` with `OP` one of `<`,
    /// `<=`, `>`, `>=`, `==`, `!=` and each side a knob, a number or `number * knob`, e.g.
    /// `max_num_batched_tokens >= 2 * max_num_seqs`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<String>,
    /// The profiles the search serves (default: every profile of the plan).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<String>,
    /// What the search may spend, per profile.
    #[serde(default)]
    pub budget: SpaceBudget,
    /// Seed of the search's own choices (the spread of the first configurations tried).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// One knob's values: a list (any values, in the order given: a neighbour is the value next to
/// it) or an integer range (`min`..=`max` by `step`, or the powers of two within it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct KnobSpec {
    /// The values, listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<KnobValue>>,
    /// A range's lowest value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<i64>,
    /// A range's highest value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
    /// A range's step (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<i64>,
    /// The powers of two between `min` and `max` instead of a step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub powers_of_two: Option<bool>,
}

/// A search's budget per profile; a search stops starting trials when any is spent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SpaceBudget {
    /// Server launches, the confirmation's two included (default: 30 % of the configurations,
    /// at least 8; at least 6 in a search of walk revision 6 or older).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launches: Option<u32>,
    /// Measured requests in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// Wall-clock seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_time_s: Option<f64>,
    /// Requests of each confirmation launch, rounded up to whole repeats (default: two
    /// repeats, and at least the 59 that bound a p95 from above on the fresh launch alone; a
    /// p99 SLO needs 299). The searched profile's verdict is drawn on the chosen
    /// configuration's confirmation alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm_requests: Option<u64>,
}

/// Why a trial of a configuration search was run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// The first spread over the space.
    Screen,
    /// A neighbour of a good configuration, or an unexplored one.
    Refine,
    /// More requests for a contender (pooled with its earlier trials).
    More,
    /// More requests for the configuration of the trial just before, on the same server
    /// launch (pooled with its earlier trials; it costs no launch). From walk revision 5.
    Extend,
    /// A fresh launch of the chosen configuration or its rival.
    Confirm,
}

impl Purpose {
    /// Its name in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Screen => "screen",
            Purpose::Refine => "refine",
            Purpose::More => "more",
            Purpose::Extend => "extend",
            Purpose::Confirm => "confirm",
        }
    }
}

/// Set on a run that is one trial of a profile's configuration search (the plan's `[space]`):
/// where it stands in the search and which configuration it measured. The search is replayed
/// from these by the analysis; a trial the replay does not ask for is refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SearchStep {
    /// 0-based position in the profile's search.
    pub index: u32,
    /// Why it was run.
    pub purpose: Purpose,
    /// The configuration: each knob's value.
    pub config: BTreeMap<String, super::KnobValue>,
    /// Requests the search asked for (repeats of the profile's `requests_per_repeat`).
    pub requests: u64,
    /// The revision of the search's walk that chose it, so that `analyze` replays a search
    /// with the walk that ran it (`null`, in files written before revisions were recorded:
    /// revision 1, the neighbour walk alone; 2 ranks the neighbours and the unexplored by a
    /// response surface fitted to the measured configurations).
    #[serde(default)]
    pub walk: Option<u32>,
}
