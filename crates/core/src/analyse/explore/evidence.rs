//! What one configuration's measurement showed for one profile, and what follows from it with
//! confidence: an SLO missed (its whole 95 % interval on the wrong side of the limit), every
//! SLO met (every interval on the right side), or a configuration beaten on the primary metric
//! (its interval entirely worse than another's that meets every SLO).

use serde::{Deserialize, Serialize};

use crate::analyse::evidence::SloOutcome;
use crate::base::confidence::quantile_ranks;
use crate::base::metric::{Direction, Metric};

/// A metric's value with its two-sided 95 % interval (`null` bounds: the data cannot bound it
/// on that side).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Estimate {
    /// The point estimate.
    pub value: f64,
    /// Lower end of the 95 % interval.
    pub lo: Option<f64>,
    /// Upper end of the 95 % interval.
    pub hi: Option<f64>,
}

impl Estimate {
    /// The `q` quantile (in (0, 1)) of values sorted ascending, linearly interpolated, with the
    /// order-statistic 95 % interval (2.5 % each side; the values taken as independent).
    pub fn quantile(sorted: &[f64], q: f64) -> Option<Estimate> {
        let value = crate::base::stats::percentile_sorted(sorted, q * 100.0)?;
        let (l, u) = quantile_ranks(sorted.len() as f64, q, 0.025, 0.025);
        Some(Estimate {
            value,
            lo: l.map(|r| sorted[r as usize - 1]),
            hi: u.map(|r| sorted[r as usize - 1]),
        })
    }

    /// The sd of the estimate on a log scale, from its 95 % interval taken as normal there:
    /// the mean of its two sides' widths, or the one side it has (`None`: neither, or a value
    /// that is not positive).
    pub(crate) fn log_sd(&self) -> Option<f64> {
        if !(self.value > 0.0 && self.value.is_finite()) {
            return None;
        }
        let side = |b: Option<f64>| {
            b.filter(|b| *b > 0.0 && b.is_finite())
                .map(|b| (b.ln() - self.value.ln()).abs() / 1.96)
        };
        match (side(self.lo), side(self.hi)) {
            (Some(a), Some(b)) => Some((a + b) / 2.0),
            (Some(a), None) | (None, Some(a)) => Some(a),
            (None, None) => None,
        }
    }

    /// Oriented so that lower is better: (value, lo, hi) for a lower-is-better metric, the
    /// negated ones swapped for a higher-is-better one.
    pub(crate) fn score(&self, m: Metric) -> (f64, Option<f64>, Option<f64>) {
        match m.direction() {
            Direction::LowerIsBetter => (self.value, self.lo, self.hi),
            Direction::HigherIsBetter => (-self.value, self.hi.map(|v| -v), self.lo.map(|v| -v)),
        }
    }
}

/// One SLO as a configuration's measurement meets it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SloEstimate {
    /// The metric.
    pub metric: Metric,
    /// Its limit (a ceiling or a floor by the metric's direction).
    pub limit: f64,
    /// What was measured (`null`: not measured).
    pub estimate: Option<Estimate>,
    /// The verdict's own decision of the limit from the run's data, when it was judged as a
    /// verdict judges it (its bounds, its rules for a figure with no sampling bound); it then
    /// decides met and missed. `null`: decided from `estimate`'s interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided: Option<SloOutcome>,
}

impl SloEstimate {
    /// Missed with confidence: the whole interval on the wrong side of the limit.
    pub fn missed(&self) -> bool {
        if let Some(d) = self.decided {
            return d == SloOutcome::Fail;
        }
        let Some(e) = &self.estimate else {
            return false;
        };
        match self.metric.direction() {
            Direction::LowerIsBetter => e.lo.is_some_and(|lo| lo > self.limit),
            Direction::HigherIsBetter => e.hi.is_some_and(|hi| hi < self.limit),
        }
    }

    /// Met with confidence: the whole interval on the right side of the limit.
    pub fn met(&self) -> bool {
        if let Some(d) = self.decided {
            return d == SloOutcome::Pass;
        }
        let Some(e) = &self.estimate else {
            return false;
        };
        match self.metric.direction() {
            Direction::LowerIsBetter => e.hi.is_some_and(|hi| hi <= self.limit),
            Direction::HigherIsBetter => e.lo.is_some_and(|lo| lo >= self.limit),
        }
    }

    /// Met with a chance of at least `p` by the estimate's interval taken as normal on a log
    /// scale (the sd from its width, the side it has, or 0.3 with neither); met with
    /// confidence is certain, missed with confidence no chance.
    pub fn likely_met(&self, p: f64) -> bool {
        if self.met() {
            return true;
        }
        if self.missed() {
            return false;
        }
        let Some(e) = &self.estimate else {
            return false;
        };
        if !(e.value > 0.0 && self.limit > 0.0) {
            return self.met_by_value();
        }
        let sd = e.log_sd().unwrap_or(0.3).max(1e-9);
        let margin = match self.metric.direction() {
            Direction::LowerIsBetter => (self.limit / e.value).ln(),
            Direction::HigherIsBetter => (e.value / self.limit).ln(),
        };
        crate::base::special::normal_cdf(margin / sd) >= p
    }

    /// Met by the point estimate.
    pub fn met_by_value(&self) -> bool {
        self.estimate
            .as_ref()
            .is_some_and(|e| self.metric.meets(e.value, self.limit))
    }
}

/// A configuration's measurement for one profile (pooled over its trials so far).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Evidence {
    /// Measured requests.
    pub requests: u64,
    /// The profile's primary metric (`null`: not measured).
    pub primary: Option<Estimate>,
    /// Every SLO of the profile.
    pub slo: Vec<SloEstimate>,
}

/// What a trial of a configuration came to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Outcome {
    /// Measured.
    Measured {
        /// What was measured.
        evidence: Evidence,
    },
    /// The server could not serve it (a bad flag combination, out of memory, never healthy).
    Infeasible {
        /// Why, as the launch said.
        reason: String,
    },
}

impl Evidence {
    /// The first SLO missed with confidence.
    pub fn missed(&self) -> Option<&SloEstimate> {
        self.slo.iter().find(|s| s.missed())
    }

    /// Every SLO met with confidence.
    pub fn meets_all(&self) -> bool {
        self.slo.iter().all(SloEstimate::met)
    }

    /// Every SLO met with a chance of at least `p` ([`SloEstimate::likely_met`]).
    pub fn likely_meets_all(&self, p: f64) -> bool {
        self.slo.iter().all(|s| s.likely_met(p))
    }

    /// Every SLO met by its point estimate.
    pub fn meets_all_by_value(&self) -> bool {
        self.slo.iter().all(SloEstimate::met_by_value)
    }
}
