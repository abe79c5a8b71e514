//! The intervals sloscope prints hold what they say, by simulation (a short version of
//! `cargo run -p xtask --release -- coverage`, whose tables are in the guide's docs/src/concepts/evidence.md): values drawn
//! from known distributions, handed to the functions the analysis runs, and the share of 95%
//! intervals that cover the truth counted.

use serde_json::json;
use sloscope_core::analyse::calibrate;
use sloscope_core::analyse::regression::data::default_threshold;
use sloscope_core::analyse::regression::types::Label;
use sloscope_core::base::metric::{Metric, Quantity, Stat};
use sloscope_core::base::rng::Rng;
use sloscope_core::schema::EvidenceLevel;
use sloscope_testkit::draws::Dist;
use sloscope_testkit::synth;

/// Share of printed intervals covering the truth, and how many were printed, of `trials`.
fn coverage(dist: Dist, n: usize, stat: Stat, q: f64, trials: u32) -> (f64, u32) {
    let m = Metric::Latency(Quantity::Ttft, stat);
    let truth = if stat == Stat::Mean {
        dist.mean()
    } else {
        dist.quantile(q)
    };
    let mut rng = Rng::new(n as u64 * 31 + trials as u64);
    let (mut covered, mut printed) = (0u32, 0u32);
    for _ in 0..trials {
        let c = dist.clusters(n, 3, &mut rng);
        if let Some((lo, hi)) = calibrate::values_interval(&c, m).and_then(|iv| iv.ends()) {
            printed += 1;
            covered += u32::from(lo <= truth && truth <= hi);
        }
    }
    let share = if printed == 0 {
        1.0
    } else {
        f64::from(covered) / f64::from(printed)
    };
    (share, printed)
}

#[test]
fn percentile_intervals_cover_the_truth_at_every_size_they_are_printed_for() {
    // 300 runs a cell: a true 95% coverage falls under 91% by chance about once in a thousand.
    let shapes = [
        Dist::LogNormal {
            scale: 100.0,
            sigma: 1.0,
        },
        Dist::Exponential(100.0),
        Dist::Bimodal,
    ];
    for dist in shapes {
        for n in [18, 72, 300] {
            for (stat, q) in [(Stat::P50, 0.5), (Stat::P95, 0.95)] {
                let (c, printed) = coverage(dist, n, stat, q, 300);
                assert!(c >= 0.91, "{} n {n} {stat:?}: {c}", dist.name());
                // A p95 has both ends from 72 values on, never below.
                if stat == Stat::P95 {
                    assert_eq!(printed > 0, n >= 72, "{} n {n}: {printed}", dist.name());
                }
            }
        }
    }
}

#[test]
fn a_mean_is_bounded_only_from_1000_values_and_then_holds() {
    let dist = Dist::LogNormal {
        scale: 100.0,
        sigma: 0.5,
    };
    assert_eq!(
        coverage(dist, 300, Stat::Mean, 0.0, 50).1,
        0,
        "no mean interval from 300"
    );
    // A run whose repeats differ significantly is worth fewer values, and may fall under 1000.
    let (c, printed) = coverage(dist, 1500, Stat::Mean, 0.0, 200);
    assert!(printed >= 185 && c >= 0.91, "{c} of {printed}");
}

#[test]
fn the_functions_measured_are_the_ones_the_analysis_prints() {
    let spec = synth::profile(
        "latency",
        "short",
        1,
        "ttft_p95_ms",
        json!({"ttft_p95_ms": 500}),
    );
    let run = synth::run(
        "q4",
        &spec,
        "np1",
        1,
        EvidenceLevel::RealBackendProfile,
        &synth::Shape::default(),
    );
    let [g, b, d] = synth::lineage();
    let files = vec![
        crate::analysis::load("gate.json", &g),
        crate::analysis::load("baseline.json", &b),
        crate::analysis::load("deployment.json", &d),
        crate::analysis::run_file("np1.json", &run),
    ];
    let a = sloscope_core::analyze(&files);
    let printed = a.profiles[0].candidates[0].primary_interval.unwrap();
    let clusters: Vec<Vec<f64>> = run
        .repeats
        .iter()
        .map(|r| {
            r.requests
                .ttft_us
                .iter()
                .flatten()
                .map(|&t| t as f64 / 1000.0)
                .collect()
        })
        .collect();
    assert_eq!(
        calibrate::values_interval(&clusters, Metric::TTFT_P95),
        Some(printed)
    );
}

/// Two runs of 18 requests (3 repeats), TTFT log-normal around 90 ms, each request measured
/// again after `change` with 3 ms of noise.
fn pair(change: f64, seed: u64) -> (sloscope_core::schema::Run, sloscope_core::schema::Run) {
    let dist = Dist::LogNormal {
        scale: 90.0,
        sigma: 0.3,
    };
    let mut rng = Rng::new(seed);
    let spec = synth::profile("latency", "short", 1, "ttft_p95_ms", json!({}));
    let shape = synth::Shape {
        requests: 1,
        repeats: 1,
        ..synth::Shape::default()
    };
    let base: Vec<Vec<f64>> = dist.clusters(18, 3, &mut rng);
    let noisy = |rng: &mut Rng, d: f64| -> Vec<Vec<f64>> {
        base.iter()
            .map(|c| {
                c.iter()
                    .map(|v| v + d + Dist::Normal(0.0, 3.0).sample(rng))
                    .collect()
            })
            .collect()
    };
    let mut b = synth::run(
        "q",
        &spec,
        "a",
        1,
        EvidenceLevel::RealBackendProfile,
        &shape,
    );
    let mut a = b.clone();
    synth::with_ttfts(&mut b, &noisy(&mut rng, 0.0));
    synth::with_ttfts(&mut a, &noisy(&mut rng, change));
    (b, a)
}

#[test]
fn forty_ms_on_every_one_of_18_requests_is_a_p95_regression_and_no_change_rarely_is() {
    let m = Metric::TTFT_P95;
    let (b, a) = pair(40.0, 1);
    let c = calibrate::change(&b, &a, m, default_threshold(m)).unwrap();
    assert_eq!(c.label, Label::Regression, "{c:#?}");
    assert!(c.method.contains("moved with it"), "{}", c.method);
    let mut alarms = 0;
    for seed in 0..100 {
        let (b, a) = pair(0.0, 100 + seed);
        for s in [Stat::P50, Stat::P95, Stat::P99] {
            let m = Metric::Latency(Quantity::Ttft, s);
            let c = calibrate::change(&b, &a, m, default_threshold(m)).unwrap();
            alarms += usize::from(c.label == Label::Regression);
        }
    }
    assert!(alarms <= 5, "{alarms} false alarms in 100 unchanged pairs");
}
