//! Traffic shapes: prompt and output length distributions and arrival processes, sampled
//! deterministically from a seed (so every candidate of a profile gets the same request sequence,
//! and the page can show what the plan asked for). Pure: the collector sends, this decides what.
//!
//! Lengths are drawn per request from its own seeded generator (request `i` of repeat `r` gets
//! the same length on every candidate, whatever the order requests finish in); arrivals are a
//! renewal process (Poisson, or gamma with a burstiness factor as vLLM's bench defines it:
//! shape = burstiness, mean gap = 1 / rate; burstiness 1 is Poisson, below 1 burstier).

use serde::{Deserialize, Serialize};

use crate::base::rng::Rng;

/// A distribution of token counts. Every draw is rounded to a whole count and clamped to
/// `[min, max]` (and to at least 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LengthDist {
    /// Every request the same length.
    Fixed {
        /// Tokens.
        tokens: u32,
    },
    /// Uniform over `[min, max]`.
    Uniform {
        /// Smallest.
        min: u32,
        /// Largest.
        max: u32,
    },
    /// Normal with `mean` and `stddev`, clamped.
    Normal {
        /// Mean tokens.
        mean: f64,
        /// Standard deviation in tokens.
        stddev: f64,
        /// Smallest.
        min: u32,
        /// Largest.
        max: u32,
    },
    /// Log-normal whose *lengths* have `mean` and `stddev` (not those of their logarithm),
    /// clamped: the long tail of real prompt and output lengths.
    LogNormal {
        /// Mean tokens.
        mean: f64,
        /// Standard deviation in tokens.
        stddev: f64,
        /// Smallest.
        min: u32,
        /// Largest.
        max: u32,
    },
    /// Drawn from observed lengths (each equally likely), e.g. a dataset's or a trace's.
    Empirical {
        /// The observed lengths.
        values: Vec<u32>,
    },
}

/// How requests arrive under a request rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrival {
    /// Exponential gaps (the default).
    Poisson,
    /// Gamma gaps with shape `burstiness` and mean 1 / rate: below 1 bursts, above 1 evens out.
    Gamma {
        /// The gamma shape; 1 is Poisson.
        burstiness: f64,
    },
}

impl LengthDist {
    /// What is wrong with the parameters, in words (`None`: fine).
    pub fn problem(&self) -> Option<String> {
        let bounds = |min: u32, max: u32| {
            (min == 0 || min > max)
                .then(|| format!("min {min} and max {max}: expected 1 ≤ min ≤ max"))
        };
        match self {
            LengthDist::Fixed { tokens } => {
                (*tokens == 0).then(|| "tokens is 0: expected a positive count".to_string())
            }
            LengthDist::Uniform { min, max } => bounds(*min, *max),
            LengthDist::Normal {
                mean,
                stddev,
                min,
                max,
            }
            | LengthDist::LogNormal {
                mean,
                stddev,
                min,
                max,
            } => {
                if !(mean.is_finite() && *mean > 0.0) {
                    Some(format!("mean {mean}: expected a positive number of tokens"))
                } else if !(stddev.is_finite() && *stddev >= 0.0) {
                    Some(format!("stddev {stddev}: expected 0 or more tokens"))
                } else {
                    bounds(*min, *max)
                }
            }
            LengthDist::Empirical { values } => {
                if values.is_empty() {
                    Some("values is empty: expected observed lengths".into())
                } else if values.contains(&0) {
                    Some("values holds 0: expected positive lengths".into())
                } else {
                    None
                }
            }
        }
    }

    /// The length of request `index` under `seed` (the same on every candidate).
    pub fn sample(&self, seed: u64, index: u64) -> u32 {
        // Each request's generator starts from a well-mixed seed: consecutive indices must not
        // give correlated first draws (xorshift's low bits follow its seed's).
        let mut rng = Rng::new(mix(seed ^ mix(index.wrapping_add(1))));
        // Never a panic on parameters the plan check refuses (min above max, NaN): the
        // bounds are ordered and a NaN draw lands on the smallest.
        let clamp = |x: f64, min: u32, max: u32| {
            let (lo, hi) = (min.max(1), max.max(min).max(1));
            if x.is_nan() {
                return lo;
            }
            x.round().clamp(f64::from(lo), f64::from(hi)) as u32
        };
        match self {
            LengthDist::Fixed { tokens } => (*tokens).max(1),
            LengthDist::Uniform { min, max } => {
                rng.range((*min).max(1) as u64, (*max).max(*min).max(1) as u64) as u32
            }
            LengthDist::Normal {
                mean,
                stddev,
                min,
                max,
            } => clamp(mean + stddev * standard_normal(&mut rng), *min, *max),
            LengthDist::LogNormal {
                mean,
                stddev,
                min,
                max,
            } => {
                // The log's parameters for lengths of this mean and stddev.
                let s2 = (1.0 + (stddev / mean).powi(2)).ln();
                let mu = mean.ln() - s2 / 2.0;
                clamp(
                    (mu + s2.sqrt() * standard_normal(&mut rng)).exp(),
                    *min,
                    *max,
                )
            }
            LengthDist::Empirical { values } => values
                .get(rng.below(values.len() as u64) as usize)
                .copied()
                .unwrap_or(1)
                .max(1),
        }
    }

    /// The mean length this distribution asks for (before clamping, for labels).
    pub fn mean(&self) -> f64 {
        match self {
            LengthDist::Fixed { tokens } => *tokens as f64,
            LengthDist::Uniform { min, max } => (*min as f64 + *max as f64) / 2.0,
            LengthDist::Normal { mean, .. } | LengthDist::LogNormal { mean, .. } => *mean,
            LengthDist::Empirical { values } => {
                values.iter().map(|v| *v as f64).sum::<f64>() / values.len().max(1) as f64
            }
        }
    }

    /// The shortest length a draw can have (every draw is clamped to it).
    pub fn min_tokens(&self) -> u32 {
        match self {
            LengthDist::Fixed { tokens } => (*tokens).max(1),
            LengthDist::Uniform { min, .. } => (*min).max(1),
            LengthDist::Normal { min, max, .. } | LengthDist::LogNormal { min, max, .. } => {
                (*min).max(1).min((*max).max(1))
            }
            LengthDist::Empirical { values } => values.iter().copied().min().unwrap_or(1).max(1),
        }
    }

    /// The longest length a draw can have (every draw is clamped to it).
    pub fn max_tokens(&self) -> u32 {
        match self {
            LengthDist::Fixed { tokens } => (*tokens).max(1),
            LengthDist::Uniform { max, .. }
            | LengthDist::Normal { max, .. }
            | LengthDist::LogNormal { max, .. } => (*max).max(1),
            LengthDist::Empirical { values } => values.iter().copied().max().unwrap_or(1).max(1),
        }
    }

    /// A short label: `uniform 32–256`, `log-normal mean 200 sd 150 [16, 1024]`.
    pub fn label(&self) -> String {
        match self {
            LengthDist::Fixed { tokens } => format!("{tokens}"),
            LengthDist::Uniform { min, max } => format!("uniform {min}–{max}"),
            LengthDist::Normal {
                mean,
                stddev,
                min,
                max,
            } => format!("normal mean {mean} sd {stddev} [{min}, {max}]"),
            LengthDist::LogNormal {
                mean,
                stddev,
                min,
                max,
            } => format!("log-normal mean {mean} sd {stddev} [{min}, {max}]"),
            LengthDist::Empirical { values } => format!(
                "empirical ({} values, mean {:.0})",
                values.len(),
                self.mean()
            ),
        }
    }
}

impl Arrival {
    /// What is wrong with the parameters, in words (`None`: fine).
    pub fn problem(&self) -> Option<String> {
        match self {
            Arrival::Poisson => None,
            Arrival::Gamma { burstiness } => (!(burstiness.is_finite() && *burstiness > 0.0))
                .then(|| format!("burstiness {burstiness}: expected a positive number")),
        }
    }

    /// Send offsets (µs from the first) of `n` requests at `rate` per second, seeded.
    pub fn offsets_us(&self, n: usize, rate: f64, seed: u64) -> Vec<u64> {
        let mut rng = Rng::new(seed);
        let mut t = 0.0f64;
        (0..n)
            .map(|_| {
                let at = t;
                t += match self {
                    Arrival::Poisson => -rng.unit_open().ln() / rate,
                    Arrival::Gamma { burstiness } => {
                        gamma(&mut rng, *burstiness) / (burstiness * rate)
                    }
                };
                (at * 1e6) as u64
            })
            .collect()
    }

    /// The coefficient of variation of the gaps between sends (1 for Poisson; gamma with
    /// burstiness b: 1/√b).
    pub fn gap_cv(&self) -> f64 {
        match self {
            Arrival::Poisson => 1.0,
            Arrival::Gamma { burstiness } => 1.0 / burstiness.max(1e-9).sqrt(),
        }
    }

    /// A short label.
    pub fn label(&self) -> String {
        match self {
            Arrival::Poisson => "Poisson".into(),
            Arrival::Gamma { burstiness } => format!("gamma, burstiness {burstiness}"),
        }
    }
}

/// SplitMix64's finalizer: a bijection that spreads every input bit over the output.
fn mix(x: u64) -> u64 {
    crate::base::rng::finalize(x.wrapping_add(0x9E37_79B9_7F4A_7C15))
}

/// A standard normal draw (Box–Muller).
fn standard_normal(rng: &mut Rng) -> f64 {
    let (u, v) = (rng.unit_open(), rng.unit_open());
    (-2.0 * u.ln()).sqrt() * crate::base::special::cos_turns(v)
}

/// A Gamma(shape, 1) draw (Marsaglia–Tsang; shape < 1 by the boost u^(1/shape)).
fn gamma(rng: &mut Rng, shape: f64) -> f64 {
    if shape < 1.0 {
        let u = rng.unit_open();
        return gamma(rng, shape + 1.0) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = standard_normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = rng.unit_open();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(v: &[f64]) -> (f64, f64) {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var.sqrt())
    }

    #[test]
    fn lengths_have_the_asked_mean_and_spread_within_their_bounds() {
        let cases = [
            (LengthDist::Uniform { min: 32, max: 256 }, 144.0, 64.7),
            (
                LengthDist::Normal {
                    mean: 200.0,
                    stddev: 40.0,
                    min: 1,
                    max: 10_000,
                },
                200.0,
                40.0,
            ),
            (
                LengthDist::LogNormal {
                    mean: 300.0,
                    stddev: 150.0,
                    min: 1,
                    max: 100_000,
                },
                300.0,
                150.0,
            ),
        ];
        for (d, mean, sd) in cases {
            assert_eq!(d.problem(), None);
            let v: Vec<f64> = (0..40_000).map(|i| d.sample(11, i) as f64).collect();
            let (m, s) = stats(&v);
            assert!((m - mean).abs() < mean * 0.02, "{d:?}: mean {m}");
            assert!((s - sd).abs() < sd * 0.05, "{d:?}: sd {s}");
        }
        let clamped = LengthDist::Normal {
            mean: 100.0,
            stddev: 200.0,
            min: 50,
            max: 120,
        };
        assert!((0..5000)
            .map(|i| clamped.sample(3, i))
            .all(|x| (50..=120).contains(&x)));
    }

    #[test]
    fn consecutive_requests_draw_independently() {
        // 8 equally likely caps over 4,000 requests: counts spread like a multinomial's
        // (sd ≈ 21), not stratified to within a few of 500 as correlated seeds made them.
        let d = LengthDist::Uniform { min: 1, max: 8 };
        let mut counts = [0f64; 8];
        for i in 0..4000 {
            counts[d.sample((2 * 0x9E37_79B9) ^ 0x6F75_7470, i) as usize - 1] += 1.0;
        }
        let chi2: f64 = counts.iter().map(|c| (c - 500.0).powi(2) / 500.0).sum();
        // 7 degrees of freedom: 0.1% and 99.9% quantiles are 0.60 and 24.3.
        assert!((0.6..24.3).contains(&chi2), "chi² {chi2}: {counts:?}");
    }

    #[test]
    fn a_request_gets_the_same_length_whatever_else_is_drawn() {
        let d = LengthDist::Empirical {
            values: vec![5, 50, 500],
        };
        let a: Vec<u32> = (0..100).map(|i| d.sample(9, i)).collect();
        let b: Vec<u32> = (0..100)
            .rev()
            .map(|i| d.sample(9, i))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        assert_eq!(a, b);
        assert!(a.iter().all(|x| [5, 50, 500].contains(x)));
        assert_ne!(a, (0..100).map(|i| d.sample(10, i)).collect::<Vec<_>>());
    }

    #[test]
    fn gamma_arrivals_keep_the_rate_and_burst_as_asked() {
        for (arrival, cv) in [
            (Arrival::Poisson, 1.0),
            (Arrival::Gamma { burstiness: 1.0 }, 1.0),
            (Arrival::Gamma { burstiness: 0.25 }, 2.0),
            (Arrival::Gamma { burstiness: 4.0 }, 0.5),
        ] {
            let o = arrival.offsets_us(40_000, 50.0, 5);
            assert_eq!(o, arrival.offsets_us(40_000, 50.0, 5));
            let gaps: Vec<f64> = o.windows(2).map(|w| (w[1] - w[0]) as f64 / 1e6).collect();
            let (m, s) = stats(&gaps);
            assert!(
                (1.0 / m - 50.0).abs() < 2.0,
                "{arrival:?}: rate {}",
                1.0 / m
            );
            // Coefficient of variation of gamma gaps: 1 / sqrt(shape).
            assert!((s / m - cv).abs() < cv * 0.06, "{arrival:?}: cv {}", s / m);
        }
    }

    #[test]
    fn bad_parameters_are_named() {
        assert!(LengthDist::Uniform { min: 10, max: 5 }
            .problem()
            .unwrap()
            .contains("min 10 and max 5"));
        assert!(LengthDist::Empirical { values: vec![] }.problem().is_some());
        assert!(Arrival::Gamma { burstiness: 0.0 }.problem().is_some());
        assert!(LengthDist::LogNormal {
            mean: -1.0,
            stddev: 1.0,
            min: 1,
            max: 2
        }
        .problem()
        .unwrap()
        .contains("mean -1"));
    }
}
