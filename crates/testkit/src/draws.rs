//! Latencies drawn from known distributions, with their true quantiles and means: what the
//! coverage benchmark and tests hold sloscope's intervals to.

use sloscope_core::measure::normal_quantile;
use sloscope_core::measure::Rng;

/// A distribution of latencies, ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    /// Normal (mean, standard deviation).
    Normal(f64, f64),
    /// Log-normal: `scale · exp(σ·Z)`.
    LogNormal { scale: f64, sigma: f64 },
    /// Exponential with this mean.
    Exponential(f64),
    /// Pareto with shape α and minimum `xm` (α = 3: a finite variance, an unbounded third
    /// moment).
    Pareto { alpha: f64, xm: f64 },
    /// 80% N(100, 10) and 20% N(300, 30): a fast path and a slow one.
    Bimodal,
}

impl Dist {
    /// The shapes the coverage benchmark reports on.
    pub const SHAPES: [Dist; 6] = [
        Dist::Normal(100.0, 10.0),
        Dist::LogNormal {
            scale: 100.0,
            sigma: 0.5,
        },
        Dist::LogNormal {
            scale: 100.0,
            sigma: 1.0,
        },
        Dist::Exponential(100.0),
        Dist::Bimodal,
        Dist::Pareto {
            alpha: 3.0,
            xm: 50.0,
        },
    ];

    /// Its name in a table.
    pub fn name(self) -> String {
        match self {
            Dist::Normal(m, s) => format!("normal({m}, {s})"),
            Dist::LogNormal { sigma, .. } => format!("log-normal σ {sigma}"),
            Dist::Exponential(_) => "exponential".into(),
            Dist::Pareto { alpha, .. } => format!("Pareto α {alpha}"),
            Dist::Bimodal => "bimodal 80/20".into(),
        }
    }

    /// One draw.
    pub fn sample(self, rng: &mut Rng) -> f64 {
        let z = |rng: &mut Rng| normal_quantile(rng.unit_open());
        match self {
            Dist::Normal(m, s) => m + s * z(rng),
            Dist::LogNormal { scale, sigma } => scale * (sigma * z(rng)).exp(),
            Dist::Exponential(m) => -m * rng.unit_open().ln(),
            Dist::Pareto { alpha, xm } => xm / rng.unit_open().powf(1.0 / alpha),
            Dist::Bimodal => {
                if rng.unit_open() < 0.8 {
                    100.0 + 10.0 * z(rng)
                } else {
                    300.0 + 30.0 * z(rng)
                }
            }
        }
    }

    /// The true quantile `q` (in (0, 1)).
    pub fn quantile(self, q: f64) -> f64 {
        match self {
            Dist::Normal(m, s) => m + s * normal_quantile(q),
            Dist::LogNormal { scale, sigma } => scale * (sigma * normal_quantile(q)).exp(),
            Dist::Exponential(m) => -m * (1.0 - q).ln(),
            Dist::Pareto { alpha, xm } => xm / (1.0 - q).powf(1.0 / alpha),
            Dist::Bimodal => {
                let cdf = |x: f64| {
                    let phi = sloscope_core::measure::normal_cdf;
                    0.8 * phi((x - 100.0) / 10.0) + 0.2 * phi((x - 300.0) / 30.0)
                };
                let (mut lo, mut hi) = (0.0, 600.0);
                for _ in 0..100 {
                    let mid = 0.5 * (lo + hi);
                    if cdf(mid) < q {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                0.5 * (lo + hi)
            }
        }
    }

    /// The true mean.
    pub fn mean(self) -> f64 {
        match self {
            Dist::Normal(m, _) | Dist::Exponential(m) => m,
            Dist::LogNormal { scale, sigma } => scale * (sigma * sigma / 2.0).exp(),
            Dist::Pareto { alpha, xm } => alpha * xm / (alpha - 1.0),
            Dist::Bimodal => 0.8 * 100.0 + 0.2 * 300.0,
        }
    }

    /// `n` draws in `repeats` clusters (as even as they divide).
    pub fn clusters(self, n: usize, repeats: usize, rng: &mut Rng) -> Vec<Vec<f64>> {
        (0..repeats)
            .map(|k| {
                let size = n / repeats + usize::from(k < n % repeats);
                (0..size).map(|_| self.sample(rng)).collect()
            })
            .collect()
    }
}
