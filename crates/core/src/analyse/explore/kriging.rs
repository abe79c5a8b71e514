//! Where to look next from walk revision 4: a Gaussian process (kriging) over the measured
//! configurations for the primary metric's logarithm and one for the SLOs' worst margin, and
//! the unmeasured configuration with the largest expected improvement over the best one
//! measured within the SLOs, weighted by the chance that it meets them (constrained expected
//! improvement). Unlike the fitted surface of walks 2 and 3, it says how unsure it is where
//! little was measured, so a few launches go where the answer can still change, not only where
//! a fit of too few points points. A guide for where to look next, never evidence: every
//! configuration it points at is measured before it counts.
//!
//! The kernel is squared-exponential over each numeric knob's position (0 to 1) and each named
//! knob's value (another value at a fixed distance, [`named_distance`]); its length is the one
//! of a few that gives the measurements the highest likelihood; each measurement's noise is
//! the width of its 95 % interval (the two sides' mean, or the one side it has). From walk 5
//! the SLOs' margin has a linear trend across the space as well ([`MARGIN_TREND`]); from walk
//! 6 named values sit closer, and each has an offset of its own in the margin
//! ([`NAMED_OFFSET`]). From walk 8 a launch that failed is left out of the SLOs' margin and
//! a third process, of whether a launch starts (−1 served, +1 failed, with the margin's
//! kernel), weighs each configuration by its chance to start as well: to walk 7 a failure
//! counted as a margin past every limit, which the margin's trend carried along the other
//! knobs (on the test kit's scripted plan, 8 slots failing at 5 ms made the whole 5 ms end
//! look past the SLO, and the search never measured it).

use super::{Explorer, Outcome};
use crate::base::metric::Direction;
use crate::base::special::normal_cdf;
use crate::check::space::{Config, Space};
use crate::schema::KnobValue;

/// Lengths of the kernel tried (in a numeric knob's range).
const LENGTHS: [f64; 4] = [0.2, 0.35, 0.6, 1.0];
/// The distance between two values of a named knob, as a share of a numeric knob's range: to
/// walk 5, half of it; from walk 6, a seventh, with an offset per value in the SLOs' margin
/// ([`NAMED_OFFSET`]).
fn named_distance(walk: u32) -> f64 {
    if walk >= 6 {
        0.15
    } else {
        0.5
    }
}
/// The noise (sd, log scale) of a measurement whose interval is unbounded on both sides.
const UNBOUNDED_NOISE: f64 = 0.3;
/// The least noise of a measurement (sd, log scale): what one configuration varies by between
/// launches.
const LEAST_NOISE: f64 = 0.03;
/// The margin a launch that failed counts as (well past every limit), to walk 7; from walk 8
/// a failed launch is no measurement of the SLOs' margin but of whether a launch succeeds
/// ([`feasible`]).
const FAILED_MARGIN: f64 = 1.0;
/// The noise of a launch's outcome (succeeded −1, failed +1) in the kriging of whether a
/// launch succeeds (from walk 8).
const LAUNCH_NOISE: f64 = 0.3;
/// The weight of the linear trend in the kriging of the SLOs' margin (from walk 5), as a share
/// of the margins' variance per unit of a knob's range: an SLO metric mostly rises or falls
/// along a knob (more slots, more waiting), so a limit crossed at one end is likelier crossed
/// further that way than at the other end; without it, a configuration far from every
/// measured one reverts to the measured margins' mean.
const MARGIN_TREND: f64 = 1.0;
/// Most measured configurations a process is fitted to.
const MOST_POINTS: usize = 60;
/// The weight of a named knob's per-value offset in the kriging of the SLOs' margin (from walk
/// 6), as a share of the margins' variance. A named knob (a cache type, a scheduling policy)
/// mostly shifts a metric the same way wherever the other knobs stand: on the primary metric
/// a little, which the short distance between its values carries; on an SLO's margin often
/// enough to cross a limit, which this offset carries, so one measurement of each value
/// tells the search which side of the limit that value's region lies.
const NAMED_OFFSET: f64 = 1.0;
/// Most unmeasured configurations weighed in one step before they are thinned.
const MOST_CANDIDATES: usize = 4096;

/// One fitted process: the measured points, the weights of the data and the inverse-factor
/// for the predictive variance.
struct Process {
    points: Vec<Point>,
    mean: f64,
    scale: f64,
    kern: Kern,
    chol: Vec<Vec<f64>>,
    alpha: Vec<f64>,
}

/// A configuration where a process sees it: its numeric knobs' positions (centred) and its
/// named knobs' values.
#[derive(Debug, Clone)]
struct Point {
    at: Vec<f64>,
    named: Vec<usize>,
}

/// A configuration's [`Point`].
fn coordinates(space: &Space, c: &Config) -> Point {
    let pos = space.position(c);
    let (mut at, mut named) = (Vec::new(), Vec::new());
    for (k, knob) in space.knobs.iter().enumerate() {
        if knob.values.iter().any(|v| matches!(v, KnobValue::Text(_))) {
            named.push(c[k]);
        } else {
            at.push(pos[k] - 0.5);
        }
    }
    Point { at, named }
}

/// A kernel's settings.
#[derive(Debug, Clone, Copy)]
struct Kern {
    /// Length (in a numeric knob's range).
    length: f64,
    /// The distance between two values of a named knob (in a numeric knob's range).
    named: f64,
    /// Weight of the linear trend (a share of the variance per unit of a knob's range).
    trend: f64,
    /// Weight of a named knob's per-value offset (a share of the variance).
    offset: f64,
}

/// The covariance of two configurations: squared-exponential in their distance (a named knob
/// whose values differ adds `named`), plus `trend` times their coordinates' product (a linear
/// trend across the space, centred in it; a named knob's values as one-hot coordinates half
/// `named` squared apart, an offset per value), plus `offset` per named knob whose values agree.
fn kernel(a: &Point, b: &Point, scale: f64, k: Kern) -> f64 {
    let d: f64 = a.at.iter().zip(&b.at).map(|(x, y)| (x - y) * (x - y)).sum();
    let dot: f64 = a.at.iter().zip(&b.at).map(|(x, y)| x * y).sum();
    let same = a.named.iter().zip(&b.named).filter(|(x, y)| x == y).count() as f64;
    let differ = a.named.len() as f64 - same;
    let d = d + k.named * k.named * differ;
    let dot = dot + k.named * k.named / 2.0 * same;
    scale * ((-d / (2.0 * k.length * k.length)).exp() + k.trend * dot + k.offset * same)
}

/// The lower Cholesky factor of a symmetric positive definite matrix (`None`: not one).
fn cholesky(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
            if i == j {
                if s <= 0.0 || !s.is_finite() {
                    return None;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    Some(l)
}

/// Solves `L x = b` for a lower-triangular `L`.
fn forward(l: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let mut x = vec![0.0; b.len()];
    for i in 0..b.len() {
        x[i] = (b[i] - (0..i).map(|k| l[i][k] * x[k]).sum::<f64>()) / l[i][i];
    }
    x
}

/// Solves `Lᵀ x = b` for a lower-triangular `L`.
fn backward(l: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let n = b.len();
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        x[i] = (b[i] - (i + 1..n).map(|k| l[k][i] * x[k]).sum::<f64>()) / l[i][i];
    }
    x
}

impl Process {
    /// The process of values `y` (with noise sd `noise`) at `points` with one kernel, and its
    /// log marginal likelihood.
    fn with_kern(points: &[Point], y: &[f64], noise: &[f64], kern: Kern) -> Option<(Process, f64)> {
        let n = y.len() as f64;
        let mean = y.iter().sum::<f64>() / n;
        let var = y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        let scale = var.max(0.01);
        let a: Vec<Vec<f64>> = points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                points
                    .iter()
                    .enumerate()
                    .map(|(j, q)| {
                        kernel(p, q, scale, kern) + if i == j { noise[i] * noise[i] } else { 0.0 }
                    })
                    .collect()
            })
            .collect();
        let chol = cholesky(&a)?;
        let centred: Vec<f64> = y.iter().map(|v| v - mean).collect();
        let z = forward(&chol, &centred);
        let alpha = backward(&chol, &z);
        let logdet: f64 = (0..y.len()).map(|i| chol[i][i].ln()).sum();
        let likelihood = -0.5 * z.iter().map(|v| v * v).sum::<f64>() - logdet;
        let process = Process {
            points: points.to_vec(),
            mean,
            scale,
            kern,
            chol,
            alpha,
        };
        Some((process, likelihood))
    }

    /// The process of the most likely kernel length, the kernel otherwise `kern`.
    fn fit(points: &[Point], y: &[f64], noise: &[f64], kern: Kern) -> Option<Process> {
        LENGTHS
            .iter()
            .map(|&length| Kern { length, ..kern })
            .filter_map(|k| Process::with_kern(points, y, noise, k))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(p, _)| p)
    }

    /// The mean and sd of the process (without the measurement noise) at `x`.
    fn predict(&self, x: &Point) -> (f64, f64) {
        let k: Vec<f64> = self
            .points
            .iter()
            .map(|p| kernel(p, x, self.scale, self.kern))
            .collect();
        let mean = self.mean + k.iter().zip(&self.alpha).map(|(a, b)| a * b).sum::<f64>();
        let v = forward(&self.chol, &k);
        let var = self.scale - v.iter().map(|x| x * x).sum::<f64>();
        (mean, var.max(1e-12).sqrt())
    }
}

/// The sd (log scale) of a measurement with 95 % interval `lo`–`hi` around `value`
/// ([`super::Estimate::log_sd`]), kept from the least a launch varies by.
fn noise_of(value: f64, lo: Option<f64>, hi: Option<f64>) -> f64 {
    super::Estimate { value, lo, hi }
        .log_sd()
        .unwrap_or(UNBOUNDED_NOISE)
        .max(LEAST_NOISE)
}

/// The primary metric of a measurement on a log scale, lower better, with its noise.
fn log_primary(e: &Explorer, o: &Outcome) -> Option<(f64, f64)> {
    let Outcome::Measured { evidence } = o else {
        return None;
    };
    let p = evidence.primary?;
    if !(p.value > 0.0 && p.value.is_finite()) {
        return None;
    }
    let sign = match e.primary.direction() {
        Direction::LowerIsBetter => 1.0,
        Direction::HigherIsBetter => -1.0,
    };
    Some((sign * p.value.ln(), noise_of(p.value, p.lo, p.hi)))
}

/// The worst SLO margin of a trial on a log scale (above 0: past a limit), with its noise.
fn margin(o: &Outcome) -> Option<(f64, f64)> {
    let evidence = match o {
        Outcome::Infeasible { .. } => return Some((FAILED_MARGIN, LEAST_NOISE)),
        Outcome::Measured { evidence } => evidence,
    };
    let mut worst: Option<(f64, f64)> = None;
    for s in &evidence.slo {
        let x = s.estimate.as_ref()?;
        if !(x.value > 0.0 && s.limit > 0.0 && x.value.is_finite() && s.limit.is_finite()) {
            return None;
        }
        let m = match s.metric.direction() {
            Direction::LowerIsBetter => (x.value / s.limit).ln(),
            Direction::HigherIsBetter => (s.limit / x.value).ln(),
        };
        if worst.is_none_or(|w| m > w.0) {
            worst = Some((m, noise_of(x.value, x.lo, x.hi)));
        }
    }
    Some(worst.unwrap_or((-FAILED_MARGIN, LEAST_NOISE)))
}

/// Whether a launch failed, as the process of launches sees it (from walk 8): +1 failed, −1
/// started and served.
fn launch(o: &Outcome) -> Option<(f64, f64)> {
    let failed = matches!(o, Outcome::Infeasible { .. });
    Some((if failed { 1.0 } else { -1.0 }, LAUNCH_NOISE))
}

/// The worst SLO margin of a launch that served (from walk 8; a failed one is [`launch`]'s).
fn served_margin(o: &Outcome) -> Option<(f64, f64)> {
    match o {
        Outcome::Infeasible { .. } => None,
        Outcome::Measured { .. } => margin(o),
    }
}

/// The measured configurations the processes are fitted to: every one, or beyond
/// [`MOST_POINTS`] the best on the primary metric (a fit's work grows with the cube of its
/// points, and a replay fits one per step).
fn fitted(e: &Explorer) -> Vec<(&Config, &Outcome)> {
    let mut all: Vec<(Option<f64>, &Config, &Outcome)> = e
        .known
        .iter()
        .map(|(c, o)| (log_primary(e, o).map(|v| v.0), c, o))
        .collect();
    if all.len() > MOST_POINTS {
        crate::base::order::sort_by(&mut all, |a, b| {
            let rank = |v: Option<f64>| v.unwrap_or(f64::INFINITY);
            rank(a.0).total_cmp(&rank(b.0)).then(a.1.cmp(b.1))
        });
        all.truncate(MOST_POINTS);
    }
    all.into_iter().map(|(_, c, o)| (c, o)).collect()
}

/// The process of `f` over the configurations `points`.
fn process(
    space: &Space,
    points: &[(&Config, &Outcome)],
    f: &dyn Fn(&Outcome) -> Option<(f64, f64)>,
    kern: Kern,
) -> Option<Process> {
    let (mut x, mut y, mut noise) = (Vec::new(), Vec::new(), Vec::new());
    for (c, o) in points {
        if let Some((v, s)) = f(o) {
            x.push(coordinates(space, c));
            y.push(v);
            noise.push(s);
        }
    }
    if y.len() < 2 {
        return None;
    }
    Process::fit(&x, &y, &noise, kern)
}

/// The unmeasured configurations weighed: every one, or beyond [`MOST_CANDIDATES`] an even
/// spread of them and the neighbours of those fitted.
fn candidates(e: &Explorer, points: &[(&Config, &Outcome)]) -> Vec<Config> {
    let open: Vec<&Config> = e
        .space
        .configs
        .iter()
        .filter(|c| !e.known.contains_key(*c))
        .collect();
    if open.len() <= MOST_CANDIDATES {
        return open.into_iter().cloned().collect();
    }
    let stride = open.len().div_ceil(MOST_CANDIDATES);
    let mut out: Vec<Config> = open.into_iter().step_by(stride).cloned().collect();
    for (c, _) in points {
        out.extend(
            e.space
                .neighbours(c)
                .into_iter()
                .filter(|n| !e.known.contains_key(n)),
        );
    }
    out.sort();
    out.dedup();
    out
}

/// Expected improvement below `best` of a normal (`mean`, `sd`).
fn improvement(best: f64, mean: f64, sd: f64) -> f64 {
    let z = (best - mean) / sd;
    let density = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
    (best - mean) * normal_cdf(z) + sd * density
}

/// The chance that the quantity of process `p` is below 0 at `x` (1 without a process), with
/// `noise` (sd) of its own added to the process's: a launch's outcome is a noisy label, and
/// from a few of them the process's own sd near one would call its neighbour sure to fail.
fn chance(p: &Option<Process>, x: &Point, noise: f64) -> f64 {
    p.as_ref().map_or(1.0, |p| {
        let (m, s) = p.predict(x);
        normal_cdf(-m / (s * s + noise * noise).sqrt())
    })
}

/// The processes fitted to the measured configurations: the primary metric's, the SLOs'
/// margin's and (from walk 8, once a launch failed) whether a launch starts.
struct Model {
    primary: Process,
    slo: Option<Process>,
    starts: Option<Process>,
}

impl Model {
    /// The processes of `points`, or `None` with fewer than two primary measurements.
    fn fit(e: &Explorer, points: &[(&Config, &Outcome)]) -> Option<Model> {
        let walk = e.settings.walk;
        let kern = Kern {
            length: LENGTHS[0],
            named: named_distance(walk),
            trend: 0.0,
            offset: 0.0,
        };
        let primary = process(&e.space, points, &|o| log_primary(e, o), kern)?;
        let slo_kern = Kern {
            trend: if walk >= 5 { MARGIN_TREND } else { 0.0 },
            offset: if walk >= 6 { NAMED_OFFSET } else { 0.0 },
            ..kern
        };
        let separate = walk >= 8;
        let slo_margin: &dyn Fn(&Outcome) -> Option<(f64, f64)> =
            if separate { &served_margin } else { &margin };
        let slo = process(&e.space, points, slo_margin, slo_kern);
        let failed = points
            .iter()
            .any(|(_, o)| matches!(o, Outcome::Infeasible { .. }));
        let starts = (separate && failed)
            .then(|| process(&e.space, points, &launch, slo_kern))
            .flatten();
        Some(Model {
            primary,
            slo,
            starts,
        })
    }

    /// The chance that a launch at `x` starts and meets every SLO.
    fn within(&self, x: &Point) -> f64 {
        chance(&self.slo, x, 0.0) * chance(&self.starts, x, LAUNCH_NOISE)
    }
}

/// The unmeasured configuration with the largest expected improvement on the primary metric
/// times its chance of meeting every SLO (with nothing measured within the SLOs yet: the
/// likeliest to meet them), or `None` with fewer than two measurements; with its expected
/// gain (that product, on the primary metric's logarithm) when there is an incumbent to
/// improve on.
pub(super) fn suggest(e: &Explorer) -> Option<(Config, Option<f64>)> {
    let points = fitted(e);
    let model = Model::fit(e, &points)?;
    // The incumbent: the best predicted among the measured configurations likely within.
    let best = points
        .iter()
        .map(|(c, _)| coordinates(&e.space, c))
        .filter(|x| model.within(x) >= 0.5)
        .map(|x| model.primary.predict(&x).0)
        .min_by(f64::total_cmp);
    candidates(e, &points)
        .into_iter()
        .map(|c| {
            let x = coordinates(&e.space, &c);
            let p = model.within(&x);
            let gain = match best {
                Some(b) => {
                    let (m, s) = model.primary.predict(&x);
                    improvement(b, m, s) * p
                }
                None => p,
            };
            (gain, c)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
        .map(|(g, c)| (c, best.map(|_| g)))
}

#[cfg(test)]
mod tests;
