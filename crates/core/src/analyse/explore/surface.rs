//! A response surface over the measured configurations, to say where an unmeasured one may
//! beat them: the primary metric's logarithm and the SLOs' worst margin, each fitted by ridge
//! least squares on each numeric knob's position and its square, the numeric knobs' pairwise
//! products, and one indicator per value of each named (categorical) knob. A guide for where
//! to look next, never evidence: every configuration it points at is measured before it counts.

use super::{Explorer, Outcome};
use crate::base::metric::Direction;
use crate::check::space::{Config, Space};
use crate::schema::KnobValue;

/// The ridge penalty: keeps the fit defined with fewer measurements than terms.
const RIDGE: f64 = 1e-2;
/// The margin a launch that failed counts as (well past every limit).
const FAILED_MARGIN: f64 = 1.0;

/// The terms of configuration `c`.
fn terms(space: &Space, c: &Config) -> Vec<f64> {
    let pos = space.position(c);
    let mut out = vec![1.0];
    let mut numeric = Vec::new();
    for (k, knob) in space.knobs.iter().enumerate() {
        let named = knob.values.iter().any(|v| matches!(v, KnobValue::Text(_)));
        if named {
            out.extend((1..knob.values.len()).map(|v| f64::from(u8::from(c[k] == v))));
        } else if knob.values.len() > 1 {
            let u = pos[k] - 0.5;
            out.push(u);
            if knob.values.len() > 2 {
                out.push(u * u);
            }
            numeric.push(u);
        }
    }
    for i in 0..numeric.len() {
        for j in i + 1..numeric.len() {
            out.push(numeric[i] * numeric[j]);
        }
    }
    out
}

/// Ridge least squares: the coefficients minimising |Xb − y|² + RIDGE·|b|² (the intercept
/// unpenalised), or `None` when there is nothing to fit.
fn fit(x: &[Vec<f64>], y: &[f64]) -> Option<Vec<f64>> {
    let p = x.first()?.len();
    let mut a = vec![vec![0.0; p + 1]; p];
    for (row, &v) in x.iter().zip(y) {
        for i in 0..p {
            for j in 0..p {
                a[i][j] += row[i] * row[j];
            }
            a[i][p] += row[i] * v;
        }
    }
    for (i, r) in a.iter_mut().enumerate().skip(1) {
        r[i] += RIDGE;
    }
    solve(a)
}

/// Gaussian elimination with partial pivoting on an augmented matrix.
fn solve(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let p = a.len();
    for col in 0..p {
        let pivot = (col..p).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        let pivot_row = a[col].clone();
        for (_, row) in a.iter_mut().enumerate().filter(|(r, _)| *r != col) {
            let f = row[col] / pivot_row[col];
            for (x, y) in row.iter_mut().zip(&pivot_row).skip(col) {
                *x -= f * y;
            }
        }
    }
    Some((0..p).map(|i| a[i][p] / a[i][i]).collect())
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The primary metric of a measurement on a log scale, lower better.
fn log_primary(e: &Explorer, o: &Outcome) -> Option<f64> {
    let Outcome::Measured { evidence } = o else {
        return None;
    };
    let v = evidence.primary?.value;
    (v > 0.0 && v.is_finite()).then(|| match e.primary.direction() {
        Direction::LowerIsBetter => v.ln(),
        Direction::HigherIsBetter => -v.ln(),
    })
}

/// The worst SLO margin of a trial on a log scale (above 0: past a limit).
fn margin(o: &Outcome) -> Option<f64> {
    let evidence = match o {
        Outcome::Infeasible { .. } => return Some(FAILED_MARGIN),
        Outcome::Measured { evidence } => evidence,
    };
    evidence.slo.iter().try_fold(f64::NEG_INFINITY, |worst, s| {
        let v = s.estimate.as_ref()?.value;
        if !(v > 0.0 && s.limit > 0.0 && v.is_finite() && s.limit.is_finite()) {
            return None;
        }
        let m = match s.metric.direction() {
            Direction::LowerIsBetter => (v / s.limit).ln(),
            Direction::HigherIsBetter => (s.limit / v).ln(),
        };
        Some(worst.max(m))
    })
}

/// The unmeasured configuration the surface predicts best among those it predicts within
/// every SLO, or `None` with too few measurements to fit (fewer than the knobs plus two).
pub(super) fn suggest(e: &Explorer, among: &dyn Fn(&Config) -> bool) -> Option<Config> {
    if e.known.len() < e.space.knobs.len() + 2 {
        return None;
    }
    let pairs = |f: &dyn Fn(&Outcome) -> Option<f64>| {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for (c, o) in &e.known {
            if let Some(v) = f(o) {
                x.push(terms(&e.space, c));
                y.push(v);
            }
        }
        fit(&x, &y)
    };
    let primary = pairs(&|o| log_primary(e, o))?;
    let slo = pairs(&margin);
    e.space
        .configs
        .iter()
        .filter(|c| !e.known.contains_key(*c) && among(c))
        .map(|c| (terms(&e.space, c), c))
        .filter(|(t, _)| slo.as_ref().is_none_or(|b| dot(b, t) <= 0.0))
        .map(|(t, c)| (dot(&primary, &t), c))
        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, c)| c.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyse::explore::{Estimate, Evidence, Settings, SloEstimate};
    use crate::base::metric::Metric;
    use crate::schema::{KnobSpec, SpaceBudget, SpaceSpec};

    fn space() -> Space {
        let mut s = SpaceSpec::default();
        for k in ["a", "b"] {
            s.knobs.insert(
                k.into(),
                KnobSpec {
                    values: Some((1..=5).map(KnobValue::Int).collect()),
                    ..KnobSpec::default()
                },
            );
        }
        Space::new(&s).unwrap()
    }

    /// A bowl with its floor at a = 4, b = 2 (positions 0.75, 0.25); the SLO's margin
    /// `a − slo_edge` (past the limit where a's position exceeds `slo_edge`).
    fn measured(space: &Space, c: &Config, slo_edge: f64) -> Outcome {
        let u = space.position(c);
        let p = 40.0 * ((u[0] - 0.75).powi(2) + (u[1] - 0.25).powi(2)).exp();
        let est = |v: f64| {
            Some(Estimate {
                value: v,
                lo: None,
                hi: None,
            })
        };
        Outcome::Measured {
            evidence: Evidence {
                requests: 24,
                primary: est(p),
                slo: vec![SloEstimate {
                    metric: Metric::TTFT_P95,
                    limit: 100.0,
                    estimate: est(100.0 * (u[0] - slo_edge).exp()),
                    decided: None,
                }],
            },
        }
    }

    fn explorer(measure: &[Config], slo_edge: f64) -> Explorer {
        let space = space();
        let settings = Settings::new(&space, &SpaceBudget::default(), 24, 0);
        let mut e = Explorer::new(space.clone(), Metric::TPOT_P95, settings);
        for c in measure {
            e.record(
                c.clone(),
                super::super::Purpose::Screen,
                24,
                measured(&space, c, slo_edge),
            );
        }
        e
    }

    const SPREAD: [[usize; 2]; 6] = [[0, 0], [0, 4], [4, 0], [4, 4], [2, 2], [1, 3]];

    #[test]
    fn the_surface_points_at_the_unmeasured_floor_of_a_bowl() {
        let spread: Vec<Config> = SPREAD.iter().map(|c| c.to_vec()).collect();
        let e = explorer(&spread, 9.0);
        assert_eq!(suggest(&e, &|_| true), Some(vec![3, 1]));
        // Only where it is asked to look.
        let off = suggest(&e, &|c| c[0] <= 1).unwrap();
        assert!(off[0] <= 1, "{off:?}");
        // Too few measurements to fit: no guess.
        assert_eq!(suggest(&explorer(&spread[..3], 9.0), &|_| true), None);
    }

    #[test]
    fn a_measurement_without_a_finite_value_is_left_out_of_the_fit() {
        let spread: Vec<Config> = SPREAD.iter().map(|c| c.to_vec()).collect();
        for bad in [f64::NAN, f64::INFINITY, 0.0, -5.0] {
            let mut e = explorer(&spread, 9.0);
            let Outcome::Measured { mut evidence } = measured(&e.space, &vec![2, 0], 9.0) else {
                unreachable!()
            };
            evidence.primary = Some(Estimate {
                value: bad,
                lo: None,
                hi: None,
            });
            evidence.slo[0].estimate = evidence.primary;
            e.record(
                vec![2, 0],
                super::super::Purpose::Screen,
                24,
                Outcome::Measured { evidence },
            );
            assert_eq!(suggest(&e, &|_| true), Some(vec![3, 1]), "{bad}");
        }
    }

    #[test]
    fn the_surface_keeps_within_the_slos_it_has_seen() {
        // The SLO is missed where a's position passes 0.4 (a ≥ 3): the floor is out of bounds,
        // and the best within is at a = 2, b = 2.
        let spread: Vec<Config> = SPREAD.iter().map(|c| c.to_vec()).collect();
        let e = explorer(&spread, 0.4);
        assert_eq!(suggest(&e, &|_| true), Some(vec![1, 1]));
    }

    #[test]
    fn ridge_least_squares_recovers_a_quadratic() {
        let x: Vec<Vec<f64>> = (0..25)
            .map(|i| {
                let (u, v) = (f64::from(i % 5) / 4.0 - 0.5, f64::from(i / 5) / 4.0 - 0.5);
                vec![1.0, u, u * u, v, v * v, u * v]
            })
            .collect();
        let truth = [1.0, 2.0, 3.0, -1.0, 0.5, 0.25];
        let y: Vec<f64> = x.iter().map(|r| dot(r, &truth)).collect();
        let b = fit(&x, &y).unwrap();
        for (r, want) in x.iter().zip(&y) {
            assert!((dot(&b, r) - want).abs() < 0.02, "{b:?}");
        }
        // Nothing to fit.
        assert_eq!(fit(&[], &[]), None);
    }
}
