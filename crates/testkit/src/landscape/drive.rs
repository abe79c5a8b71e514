//! Three ways to find a landscape's best configuration, each returning what it picked and what
//! it spent: the search ([`search`]), the full grid and random search with a given number of
//! launches (both measuring each configuration once and picking the best point estimate that
//! meets the SLO by its point estimate).

use std::collections::BTreeMap;

use sloscope_core::measure::{Metric, Rng};
use sloscope_core::schema::SpaceBudget;
use sloscope_core::search::{Config, Explorer, Outcome, Purpose, Settings, Step};

use super::Landscape;

/// What a method picked and spent.
#[derive(Debug, Clone)]
pub struct Spent {
    /// The configuration picked (`None`: nothing met the SLO).
    pub picked: Option<Config>,
    /// Server launches.
    pub launches: u64,
    /// Measured requests.
    pub requests: u64,
    /// The search only: whether the fresh launches upheld the pick.
    pub confirmed: Option<bool>,
    /// The search only: whether the pick met every SLO with confidence.
    pub sure: bool,
    /// The search only: each configuration measured, and why those out of the running are out.
    pub trace: Option<Trace>,
}

/// What a search measured and dropped.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// Configurations launched.
    pub measured: Vec<Config>,
    /// Configuration name → why it is out.
    pub dropped: BTreeMap<String, String>,
}

/// Runs the search on a landscape with `repeat` requests per repeat and `budget`.
pub fn search(l: &Landscape, repeat: u64, budget: &SpaceBudget) -> Spent {
    search_walk(l, repeat, budget, sloscope_core::search::WALK)
}

/// [`search`] by walk revision `walk`.
pub fn search_walk(l: &Landscape, repeat: u64, budget: &SpaceBudget, walk: u32) -> Spent {
    let settings = Settings::new(&l.space, budget, repeat, 7).at_walk(walk);
    let mut e = Explorer::new(l.space.clone(), Metric::TPOT_P95, settings);
    let mut pooled: BTreeMap<Config, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    let (mut launch, mut part) = (0u64, 0u64);
    while let Step::Launch {
        config,
        requests,
        purpose,
    } = e.next()
    {
        // An extension measures on the launch before it: its slowdown, no new launch.
        if purpose == Purpose::Extend {
            part += 1;
        } else {
            (launch, part) = (launch + 1, 0);
        }
        let samples = l.measure_part(&config, requests, launch, part);
        let outcome = match (&samples, purpose) {
            (Ok((a, b)), Purpose::Screen | Purpose::Refine | Purpose::More | Purpose::Extend) => {
                let p = pooled.entry(config.clone()).or_default();
                p.0.extend(a);
                p.1.extend(b);
                Outcome::Measured {
                    evidence: l.evidence(&p.0, &p.1),
                }
            }
            _ => l.outcome(samples),
        };
        e.record(config, purpose, requests, outcome);
        assert!(launch < 10_000, "the search does not end");
    }
    let r = e.result();
    let trace = Trace {
        measured: e.trials().iter().map(|t| t.config.clone()).collect(),
        dropped: r.dropped.into_iter().map(|d| (d.name, d.reason)).collect(),
    };
    Spent {
        picked: r.chosen,
        launches: u64::from(e.launches_used()),
        requests: e.requests_spent(),
        confirmed: r.confirmed,
        sure: r.chosen_meets_all,
        trace: Some(trace),
    }
}

/// Measures `configs` once each with `requests` requests and picks the best point estimate
/// meeting the SLO by its point estimate.
fn measure_all(l: &Landscape, configs: &[Config], requests: u64) -> Spent {
    let mut best: Option<(f64, Config)> = None;
    for (k, c) in configs.iter().enumerate() {
        let Outcome::Measured { evidence } = l.outcome(l.measure(c, requests, 1000 + k as u64))
        else {
            continue;
        };
        let Some(p) = evidence.primary else { continue };
        if evidence.meets_all_by_value() && best.as_ref().is_none_or(|b| p.value < b.0) {
            best = Some((p.value, c.clone()));
        }
    }
    Spent {
        picked: best.map(|b| b.1),
        launches: configs.len() as u64,
        requests: configs.len() as u64 * requests,
        confirmed: None,
        sure: false,
        trace: None,
    }
}

/// The full grid, each configuration measured once with `requests` requests.
pub fn grid(l: &Landscape, requests: u64) -> Spent {
    measure_all(l, &l.space.configs, requests)
}

/// `launches` configurations drawn at random (without repeats), measured once each.
pub fn random(l: &Landscape, launches: u64, requests: u64, seed: u64) -> Spent {
    let mut rng = Rng::new(seed);
    let mut pool = l.space.configs.clone();
    let mut drawn = Vec::new();
    while (drawn.len() as u64) < launches && !pool.is_empty() {
        let i = rng.below(pool.len() as u64) as usize;
        drawn.push(pool.swap_remove(i));
    }
    measure_all(l, &drawn, requests)
}
