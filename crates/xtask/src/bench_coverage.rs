//! `cargo run -p xtask --release -- coverage [TRIALS]`: how often the intervals sloscope prints
//! cover the true value, by simulation. Values are drawn from distributions whose quantiles and
//! means are known (`sloscope_testkit::draws`), split into 3 repeats as a run's requests are,
//! and handed to the very functions the analysis runs (`sloscope_core::analysis`).
//! Each cell: the share of 95% intervals that cover the truth, among the trials where the
//! interval was printed, and (in parentheses) the share of trials where it was — elsewhere the
//! output says "not enough data" and how many values would be enough. Then the one-sided SLO
//! bounds, the failure rate's interval, and `compare`: its false alarms when nothing changed,
//! its power on changes of known size, and the coverage of the difference it prints.

use sloscope_core::analysis;
use sloscope_core::comparison::default_threshold;
use sloscope_core::comparison::Label;
use sloscope_core::measure::Rng;
use sloscope_core::measure::{Metric, Quantity, Stat};
use sloscope_core::schema::{EvidenceLevel, Run};
use sloscope_testkit::draws::Dist;
use sloscope_testkit::synth;

const SIZES: [usize; 8] = [10, 18, 30, 60, 100, 300, 1000, 2000];
const STATS: [(Stat, f64); 5] = [
    (Stat::P50, 0.5),
    (Stat::P90, 0.9),
    (Stat::P95, 0.95),
    (Stat::P99, 0.99),
    (Stat::Mean, f64::NAN),
];

/// Coverage of one statistic at one size: covered, printed, trials.
#[derive(Default, Clone, Copy)]
pub struct Tally {
    pub covered: u32,
    pub printed: u32,
    pub trials: u32,
}

impl Tally {
    fn cell(self) -> String {
        if self.printed == 0 {
            return "– (0%)".into();
        }
        format!(
            "{:.1}% ({:.0}%)",
            100.0 * f64::from(self.covered) / f64::from(self.printed),
            100.0 * f64::from(self.printed) / f64::from(self.trials)
        )
    }
}

/// The coverage of `stat` of `dist` from `n` values in 3 repeats, each repeat's values scaled
/// by `exp(τ·Z)` (a repeat-to-repeat shift; the truth is then the mixture's, measured from a
/// large sample).
pub fn coverage(dist: Dist, n: usize, stat: (Stat, f64), trials: u32, seed: u64) -> Tally {
    let m = Metric::Latency(Quantity::Ttft, stat.0);
    let truth = if stat.0 == Stat::Mean {
        dist.mean()
    } else {
        dist.quantile(stat.1)
    };
    let mut rng = Rng::new(seed ^ (n as u64) << 8);
    let mut t = Tally::default();
    for _ in 0..trials {
        t.trials += 1;
        let clusters = dist.clusters(n, 3, &mut rng);
        let Some(iv) = analysis::values_interval(&clusters, m) else {
            continue;
        };
        let Some((lo, hi)) = iv.ends() else {
            continue;
        };
        t.printed += 1;
        t.covered += u32::from(lo <= truth && truth <= hi);
    }
    t
}

/// How often the one-sided 95% upper bound of `q` (the one an SLO `≤` is decided by) lies at
/// or above the truth, among the trials that gave one.
fn upper_bound(dist: Dist, n: usize, q: (Stat, f64), trials: u32) -> Tally {
    let m = Metric::Latency(Quantity::Ttft, q.0);
    let truth = dist.quantile(q.1);
    let mut rng = Rng::new(0xb0 ^ n as u64 ^ dist.mean().to_bits());
    let mut t = Tally::default();
    for _ in 0..trials {
        t.trials += 1;
        let clusters = dist.clusters(n, 3, &mut rng);
        if let Some((_, [_, Some(hi)])) = analysis::values_decision(&clusters, m, truth) {
            t.printed += 1;
            t.covered += u32::from(hi >= truth);
        }
    }
    t
}

fn failure_rate(p: f64, n: usize, trials: u32) -> Tally {
    let mut rng = Rng::new(0xfa ^ n as u64 ^ p.to_bits());
    let mut t = Tally::default();
    for _ in 0..trials {
        t.trials += 1;
        let clusters: Vec<Vec<bool>> = (0..3)
            .map(|k| {
                (0..n / 3 + usize::from(k < n % 3))
                    .map(|_| rng.unit_open() < p)
                    .collect()
            })
            .collect();
        let Some(iv) = analysis::proportion_interval(&clusters) else {
            continue;
        };
        if let Some((lo, hi)) = iv.ends() {
            t.printed += 1;
            t.covered += u32::from(lo <= p && p <= hi);
        }
    }
    t
}

/// A run of `n` requests in 3 repeats whose TTFTs are `ttft(i)` (ms), `i` the request's index
/// in its run: two runs of the same `n` send the same sequence and pair by index.
fn run_of(n: usize, ttft: impl FnMut(usize) -> f64) -> Run {
    let spec = synth::profile("latency", "w", 1, "ttft_p95_ms", serde_json::json!({}));
    let shape = synth::Shape {
        requests: 1,
        repeats: 1,
        ..synth::Shape::default()
    };
    let mut run = synth::run(
        "q",
        &spec,
        "a",
        1,
        EvidenceLevel::RealBackendProfile,
        &shape,
    );
    let mut ttft = ttft;
    let mut i = 0;
    let clusters: Vec<Vec<f64>> = (0..3)
        .map(|k| {
            (0..n / 3 + usize::from(k < n % 3))
                .map(|_| {
                    i += 1;
                    ttft(i - 1)
                })
                .collect()
        })
        .collect();
    synth::with_ttfts(&mut run, &clusters);
    run
}

/// A change scenario: each request `i` has its own latency `base[i]` (its prompt), measured
/// with noise before and after the change `after(base)`.
#[derive(Clone, Copy)]
pub enum Scenario {
    /// Nothing changed.
    Same,
    /// Every request this many ms slower.
    Shift(f64),
    /// Every request this share slower.
    Scale(f64),
    /// The slowest tenth of requests (by their own latency) this share slower.
    Tail(f64),
}

impl Scenario {
    fn apply(self, base: f64, q90: f64) -> f64 {
        match self {
            Scenario::Same => base,
            Scenario::Shift(d) => base + d,
            Scenario::Scale(r) => base * (1.0 + r),
            Scenario::Tail(r) if base >= q90 => base * (1.0 + r),
            Scenario::Tail(_) => base,
        }
    }

    fn name(self) -> String {
        match self {
            Scenario::Same => "no change".into(),
            Scenario::Shift(d) => format!("every request +{d} ms"),
            Scenario::Scale(r) => format!("every request +{}%", r * 100.0),
            Scenario::Tail(r) => format!("slowest 10% +{}%", r * 100.0),
        }
    }
}

/// What `compare` says of `scenario` over `trials` pairs of runs of `n` requests (TTFT
/// log-normal around 90 ms, σ 0.3, measurement noise 3 ms): the share labelled regression on
/// TTFT p95, on any TTFT row (p50, p95, p99), and the coverage of the printed p95 difference.
pub fn compare_power(scenario: Scenario, n: usize, paired: bool, trials: u32) -> (f64, f64, Tally) {
    let dist = Dist::LogNormal {
        scale: 90.0,
        sigma: 0.3,
    };
    let q90 = dist.quantile(0.9);
    let noise = Dist::Normal(0.0, 3.0);
    let truth_p95 = true_p95_change(scenario, dist, q90, noise);
    let mut rng = Rng::new(0xc0 ^ n as u64);
    let (mut p95, mut any) = (0u32, 0u32);
    let mut cover = Tally::default();
    let rows = [Stat::P50, Stat::P95, Stat::P99];
    for _ in 0..trials {
        let bases: Vec<f64> = (0..n).map(|_| dist.sample(&mut rng)).collect();
        let other: Vec<f64> = (0..n).map(|_| dist.sample(&mut rng)).collect();
        let before = run_of(n, |i| bases[i] + noise.sample(&mut rng));
        let after_base = if paired { &bases } else { &other };
        let after = run_of(n, |i| {
            scenario.apply(after_base[i], q90) + noise.sample(&mut rng)
        });
        let mut hit_any = false;
        for s in rows {
            let m = Metric::Latency(Quantity::Ttft, s);
            let Some(c) = analysis::calibrated_change(&before, &after, m, default_threshold(m))
            else {
                continue;
            };
            let regressed = c.label == Label::Regression;
            hit_any |= regressed;
            if s == Stat::P95 {
                p95 += u32::from(regressed);
                cover.trials += 1;
                if let Some((lo, hi)) = c.difference_interval.and_then(|iv| iv.ends()) {
                    cover.printed += 1;
                    cover.covered += u32::from(lo <= truth_p95 && truth_p95 <= hi);
                }
            }
        }
        any += u32::from(hit_any);
    }
    let share = |k: u32| f64::from(k) / f64::from(trials);
    (share(p95), share(any), cover)
}

/// The true change of the p95 under a scenario, from a large sample.
fn true_p95_change(s: Scenario, dist: Dist, q90: f64, noise: Dist) -> f64 {
    let mut rng = Rng::new(7);
    let (mut b, mut a): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    for _ in 0..400_000 {
        let base = dist.sample(&mut rng);
        b.push(base + noise.sample(&mut rng));
        a.push(s.apply(base, q90) + noise.sample(&mut rng));
    }
    let p = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        sloscope_core::measure::percentile_sorted(v, 95.0).unwrap_or(f64::NAN)
    };
    p(&mut a) - p(&mut b)
}

/// Prints every table.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let trials: u32 = args.first().map_or(Ok(1000), |a| a.parse())?;
    println!("## Coverage of sloscope's 95% intervals ({trials} runs a cell, 3 repeats a run)\n");
    println!("Cell: share of printed intervals that cover the true value (share of runs given one; elsewhere \"not enough data\").\n");
    for (k, dist) in Dist::SHAPES.into_iter().enumerate() {
        println!("### {}\n", dist.name());
        println!("| requests | p50 | p90 | p95 | p99 | mean |");
        println!("|---:|---|---|---|---|---|");
        for n in SIZES {
            let cells: Vec<String> = STATS
                .iter()
                .map(|&s| coverage(dist, n, s, trials, 1 + k as u64).cell())
                .collect();
            println!("| {n} | {} |", cells.join(" | "));
        }
        println!();
    }
    slo_bounds(trials);
    rates(trials);
    compare_tables(trials / 4);
    Ok(())
}

fn slo_bounds(trials: u32) {
    println!("### One-sided 95% upper bounds (what an SLO `≤ limit` is decided by)\n");
    println!("| shape | requests | p95 bound ≥ truth | p99 bound ≥ truth |");
    println!("|---|---:|---|---|");
    for dist in Dist::SHAPES {
        for n in [60, 300, 2000] {
            let a = upper_bound(dist, n, (Stat::P95, 0.95), trials);
            let b = upper_bound(dist, n, (Stat::P99, 0.99), trials);
            println!("| {} | {n} | {} | {} |", dist.name(), a.cell(), b.cell());
        }
    }
    println!();
}

fn rates(trials: u32) {
    println!("### Failure rate (Clopper–Pearson)\n");
    println!("| true rate | 18 | 72 | 300 | 2000 |");
    println!("|---:|---|---|---|---|");
    for p in [0.0, 0.01, 0.05, 0.2] {
        let cells: Vec<String> = [18, 72, 300, 2000]
            .iter()
            .map(|&n| failure_rate(p, n, trials).cell())
            .collect();
        println!("| {p} | {} |", cells.join(" | "));
    }
    println!();
}

fn compare_tables(trials: u32) {
    println!("### compare: regressions called on TTFT ({trials} pairs of runs a cell)\n");
    println!("TTFT log-normal around 90 ms (σ 0.3) per request, measured with 3 ms noise; the default threshold (5% and 2 ms). Cell: share labelled regression on TTFT p95 / on any of p50, p95, p99; coverage of the printed p95 difference (share printed).\n");
    println!("| change | pairing | requests a side | p95 regression | any regression | p95 difference covers |");
    println!("|---|---|---:|---|---|---|");
    let scenarios = [
        Scenario::Same,
        Scenario::Shift(40.0),
        Scenario::Shift(10.0),
        Scenario::Scale(0.05),
        Scenario::Tail(0.5),
    ];
    for s in scenarios {
        for paired in [true, false] {
            for n in [18, 72, 300] {
                let (p95, any, cover) = compare_power(s, n, paired, trials);
                println!(
                    "| {} | {} | {n} | {:.1}% | {:.1}% | {} |",
                    s.name(),
                    if paired { "paired" } else { "unpaired" },
                    100.0 * p95,
                    100.0 * any,
                    cover.cell()
                );
            }
        }
    }
    println!();
}
