//! Synthetic serving landscapes for the configuration search: a server whose per-request
//! latency, SLO metric and memory depend on its launch flags, with noise per request and per
//! launch, interactions between knobs, categorical knobs, an infeasible corner (out of memory)
//! and a known optimum. Seeded: landscape `n` is the same on every machine.
//!
//! The primary metric is a p95 latency (lower is better, `tpot_p95_ms`); one SLO holds another
//! p95 latency (`ttft_p95_ms`) under a limit that a share of the space misses. A configuration's
//! true p95s are known; each launch draws a slowdown (launch-to-launch variance) and each
//! request a log-normal time around it.

pub mod drive;

use sloscope_core::measure::{normal_quantile, Metric, Rng};
use sloscope_core::schema::{KnobSpec, KnobValue, SpaceSpec};
use sloscope_core::search::{Config, Estimate, Evidence, Outcome, SloEstimate, Space};

/// Spread of one request's time around its configuration's median (log-normal σ).
const REQUEST_SIGMA: f64 = 0.3;
/// Spread of one launch's slowdown (log-normal σ).
const LAUNCH_SIGMA: f64 = 0.03;

/// The shape of a landscape's primary metric: the benchmark's, and two it was not tuned on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One bowl (in log time) with a little roughness per configuration.
    Bowl,
    /// The bowl with seven times the roughness (σ 0.15 in log time per configuration).
    Rough,
    /// Two bowls, the second mirrored through the space's centre and 5 % worse at its floor.
    TwoBowls,
}

/// One landscape.
#[derive(Debug, Clone)]
pub struct Landscape {
    /// The space (3 or 4 knobs, 3–5 values each, one of them categorical).
    pub space: Space,
    /// True p95 of the primary metric per configuration (ms), in `space.configs` order.
    pub primary_p95: Vec<f64>,
    /// True p95 of the SLO metric per configuration (ms).
    pub slo_p95: Vec<f64>,
    /// Whether the configuration launches (false: out of memory).
    pub launches: Vec<bool>,
    /// The SLO metric's limit.
    pub slo_limit: f64,
    seed: u64,
}

fn normal(rng: &mut Rng) -> f64 {
    normal_quantile(rng.unit_open())
}

/// The space of landscape `seed`: knob `k0`..`k3` numeric (a power-of-two range or a list), one
/// categorical knob `kind`.
fn space_of(rng: &mut Rng) -> Result<Space, String> {
    let mut spec = SpaceSpec::default();
    let numeric = 2 + rng.below(2) as usize;
    for k in 0..numeric {
        let n = 3 + rng.below(3) as i64;
        let knob = KnobSpec {
            min: Some(1),
            max: Some(1 << (n - 1)),
            powers_of_two: Some(true),
            ..KnobSpec::default()
        };
        spec.knobs.insert(format!("k{k}"), knob);
    }
    let kinds = 2 + rng.below(2) as usize;
    let values = ["a", "b", "c"][..kinds]
        .iter()
        .map(|v| KnobValue::Text(v.to_string()))
        .collect();
    spec.knobs.insert(
        "kind".into(),
        KnobSpec {
            values: Some(values),
            ..KnobSpec::default()
        },
    );
    Space::new(&spec).map_err(|e| e.join("; "))
}

impl Landscape {
    /// Landscape number `seed` (an error only if its space were invalid).
    pub fn new(seed: u64) -> Result<Landscape, String> {
        Landscape::shaped(seed, Shape::Bowl)
    }

    /// Landscape number `seed` with its primary metric of `shape`.
    pub fn shaped(seed: u64, shape: Shape) -> Result<Landscape, String> {
        let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5eed);
        let space = space_of(&mut rng)?;
        let dims = space.knobs.len();
        // A bowl in log time around an optimum, with interactions, per categorical value an
        // offset, and a little roughness per configuration.
        let centre: Vec<f64> = (0..dims).map(|_| rng.unit_open()).collect();
        let curve: Vec<f64> = (0..dims).map(|_| 0.6 + 1.6 * rng.unit_open()).collect();
        let twist = 0.5 * (rng.unit_open() - 0.5);
        let offsets: Vec<f64> = (0..3).map(|_| 0.15 * rng.unit_open()).collect();
        let slope: Vec<f64> = (0..dims).map(|_| 1.2 * (rng.unit_open() - 0.3)).collect();
        let weight: Vec<f64> = (0..dims).map(|_| rng.unit_open()).collect();
        let (mut primary_p95, mut slo_p95, mut memory) = (Vec::new(), Vec::new(), Vec::new());
        let cat = dims - 1;
        for c in &space.configs {
            let u = space.position(c);
            let d: Vec<f64> = (0..cat).map(|i| u[i] - centre[i]).collect();
            let mut log = (0..cat).map(|i| curve[i] * d[i] * d[i]).sum::<f64>();
            if shape == Shape::TwoBowls {
                let mirrored = (0..cat).map(|i| curve[i] * (u[i] - 1.0 + centre[i]).powi(2));
                log = log.min(mirrored.sum::<f64>() + 0.05);
            }
            log += twist * d[0] * d.get(1).copied().unwrap_or(0.0) + offsets[c[cat]];
            let rough = if shape == Shape::Rough { 0.15 } else { 0.02 };
            log += rough * normal(&mut rng);
            primary_p95.push(40.0 * log.exp());
            let s: f64 = (0..dims).map(|i| slope[i] * u[i]).sum();
            slo_p95.push(200.0 * (s + 0.05 * normal(&mut rng)).exp());
            memory.push((0..cat).map(|i| weight[i] * u[i]).sum::<f64>());
        }
        let limit = quantile(&slo_p95, 0.7);
        let oom = quantile(&memory, 0.9);
        let launches = memory.iter().map(|m| *m <= oom).collect();
        Ok(Landscape {
            space,
            primary_p95,
            slo_p95,
            launches,
            slo_limit: limit,
            seed,
        })
    }

    /// Whether `c` truly misses the SLO.
    pub fn misses_slo(&self, c: &Config) -> bool {
        self.index(c)
            .is_none_or(|i| self.slo_p95[i] > self.slo_limit)
    }

    /// A configuration's position in `space.configs`.
    pub fn index(&self, c: &Config) -> Option<usize> {
        self.space.configs.iter().position(|x| x == c)
    }

    /// The best configuration that launches and meets the SLO, by the true values (`None`:
    /// none does).
    pub fn optimum(&self) -> Option<usize> {
        (0..self.space.configs.len())
            .filter(|&i| self.launches[i] && self.slo_p95[i] <= self.slo_limit)
            .min_by(|&a, &b| self.primary_p95[a].total_cmp(&self.primary_p95[b]))
    }

    /// What a measurement of `n` requests resolves of a p95 here: the half-width of its 95 %
    /// order-statistic interval relative to the p95 (for this landscape's request noise). Two
    /// configurations closer than this cannot be told apart by measurements of that size.
    pub fn resolution(n: u64) -> f64 {
        let mut rng = Rng::new(n ^ 0x7e50);
        let (mut sum, trials) = (0.0, 400);
        for _ in 0..trials {
            let mut v: Vec<f64> = (0..n)
                .map(|_| (REQUEST_SIGMA * normal(&mut rng)).exp())
                .collect();
            v.sort_by(f64::total_cmp);
            let e = Estimate::quantile(&v, 0.95);
            if let Some(Estimate {
                value,
                lo: Some(lo),
                hi: Some(hi),
            }) = e
            {
                sum += (hi - lo) / 2.0 / value;
            } else {
                return f64::INFINITY;
            }
        }
        sum / f64::from(trials)
    }

    /// Whether `c` is the optimum or within `tie` (relative) of it by the true values, and
    /// truly meets the SLO.
    pub fn hits(&self, c: &Config, tie: f64) -> bool {
        let (Some(o), Some(i)) = (self.optimum(), self.index(c)) else {
            return false;
        };
        self.launches[i]
            && self.slo_p95[i] <= self.slo_limit
            && self.primary_p95[i] <= self.primary_p95[o] * (1.0 + tie)
    }

    /// One launch of `c` measuring `n` requests: the samples of both metrics (ms), or why it
    /// did not launch. `launch` numbers the launches (each draws its own slowdown).
    pub fn measure(&self, c: &Config, n: u64, launch: u64) -> Result<(Vec<f64>, Vec<f64>), String> {
        self.measure_part(c, n, launch, 0)
    }

    /// Part `part` of launch `launch` of `c` (part 0: [`Landscape::measure`]): further requests
    /// on the same launch, with its slowdown and requests of their own.
    pub fn measure_part(
        &self,
        c: &Config,
        n: u64,
        launch: u64,
        part: u64,
    ) -> Result<(Vec<f64>, Vec<f64>), String> {
        let i = self.index(c).ok_or("not a configuration of the space")?;
        if !self.launches[i] {
            return Err("out of memory: the KV cache does not fit (simulated)".into());
        }
        let seed = self.seed ^ launch.wrapping_mul(0xa076_1d64_78bd_642f) ^ i as u64;
        let mut rng = Rng::new(seed);
        let slow = (LAUNCH_SIGMA * normal(&mut rng)).exp();
        if part > 0 {
            rng = Rng::new(seed ^ part.wrapping_mul(0xe703_7ed1_a0b4_28db));
        }
        let median = |p95: f64| p95 / (1.645 * REQUEST_SIGMA).exp() * slow;
        let (m1, m2) = (median(self.primary_p95[i]), median(self.slo_p95[i]));
        let a = (0..n)
            .map(|_| m1 * (REQUEST_SIGMA * normal(&mut rng)).exp())
            .collect();
        let b = (0..n)
            .map(|_| m2 * (REQUEST_SIGMA * normal(&mut rng)).exp())
            .collect();
        Ok((a, b))
    }

    /// The evidence of pooled samples.
    pub fn evidence(&self, primary: &[f64], slo: &[f64]) -> Evidence {
        let sorted = |v: &[f64]| {
            let mut s = v.to_vec();
            s.sort_by(f64::total_cmp);
            s
        };
        Evidence {
            requests: primary.len() as u64,
            primary: Estimate::quantile(&sorted(primary), 0.95),
            slo: vec![SloEstimate {
                metric: Metric::TTFT_P95,
                limit: self.slo_limit,
                estimate: Estimate::quantile(&sorted(slo), 0.95),
                decided: None,
            }],
        }
    }

    /// A trial's outcome from a launch's samples.
    pub fn outcome(&self, samples: Result<(Vec<f64>, Vec<f64>), String>) -> Outcome {
        match samples {
            Ok((a, b)) => Outcome::Measured {
                evidence: self.evidence(&a, &b),
            },
            Err(reason) => Outcome::Infeasible { reason },
        }
    }
}

fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    sloscope_core::measure::percentile_sorted(&s, q * 100.0).unwrap_or(0.0)
}
