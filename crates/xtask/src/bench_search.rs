//! `xtask bench-search [LANDSCAPES] [--from SEED] [--misses] [--shape bowl|rough|two-bowls]
//! [--walk N] [--quick] [--by-size]` (or `--trace SEED`: one landscape's true values and the
//! search's trials): the
//! configuration search on seeded synthetic landscapes (`sloscope_testkit::landscape`; `--shape`
//! picks shapes it was not tuned on: seven times the roughness, or a second bowl) against the full grid and against random search with the
//! same number of launches (both measure each configuration once and pick the best point
//! estimate that meets the SLO by its point estimate). Prints how often each picks the true
//! optimum, a configuration statistically tied with it (its true p95 within what a measurement
//! of 96 requests resolves, fixed whatever the search measures), or one within 5 %; how often the pick truly misses
//! the SLO; and what each spends. `--misses` also says, for each landscape the search missed,
//! what became of the optimum. Two last rows measure the full grid with every configuration at
//! 96 requests and at the search's largest size: what measurements of those sizes can tell. `--quick` measures the search alone (a walk
//! against another on the same landscapes).

use sloscope_core::schema::SpaceBudget;
use sloscope_core::search::{Settings, Space, WALK};
use sloscope_testkit::landscape::{drive, Landscape, Shape};

/// Requests per repeat of the benchmark's profile.
const REPEAT: u64 = 24;

#[derive(Default)]
struct Tally {
    tied: u32,
    within5: u32,
    exact: u32,
    misses: u32,
    launches: u64,
    requests: u64,
    confirmed: u32,
}

impl Tally {
    fn add(&mut self, l: &Landscape, s: &drive::Spent, tie: f64) {
        let opt = l.optimum().map(|i| &l.space.configs[i]);
        let hit = |t: f64| u32::from(s.picked.as_ref().is_some_and(|c| l.hits(c, t)));
        self.tied += hit(tie);
        self.within5 += hit(0.05);
        self.exact += u32::from(s.picked.is_some() && s.picked.as_ref() == opt);
        self.misses += u32::from(s.picked.as_ref().is_some_and(|c| l.misses_slo(c)));
        self.launches += s.launches;
        self.requests += s.requests;
        self.confirmed += u32::from(s.confirmed == Some(true));
    }
}

/// The measurement that defines a tie: four repeats (96 requests), what walks 1 to 3 measured
/// a contender with at most. Fixed, so that a search measuring its contenders more cannot
/// narrow (or widen) the target it is held to.
const TIE_REQUESTS: u64 = 4 * REPEAT;

/// The search's largest measurement of one configuration (requests).
fn largest(space: &Space) -> u64 {
    Settings::new(space, &SpaceBudget::default(), REPEAT, 0).max_requests_per_config
}

/// The resolution a measurement of [`TIE_REQUESTS`] gives.
fn tie() -> f64 {
    Landscape::resolution(TIE_REQUESTS)
}

/// Where the search missed on landscape `seed`, one line: the space, the launches, the
/// optimum's fate (never measured, dropped and why, or measured but not picked) and the pick's
/// true distance from it.
fn explain_miss(seed: u64, l: &Landscape, s: &drive::Spent, tie: f64) {
    if s.picked.as_ref().is_some_and(|c| l.hits(c, tie)) {
        return;
    }
    let Some(o) = l.optimum() else { return };
    let opt = &l.space.configs[o];
    let name = l.space.name(opt);
    let trace = s.trace.clone().unwrap_or_default();
    let fate = if !trace.measured.contains(opt) {
        "never measured".to_string()
    } else if let Some(why) = trace.dropped.get(&name) {
        format!("dropped: {why}")
    } else {
        "measured, not picked".into()
    };
    let pick = s
        .picked
        .as_ref()
        .and_then(|c| l.index(c))
        .map_or("none".into(), |i| {
            format!(
                "{:+.1} % primary{}",
                100.0 * (l.primary_p95[i] / l.primary_p95[o] - 1.0),
                match (l.misses_slo(&l.space.configs[i]), s.sure) {
                    (false, _) => "",
                    (true, true) => ", truly misses the SLO (met with confidence)",
                    (true, false) => ", truly misses the SLO (met by its point estimates)",
                }
            )
        });
    println!(
        "miss: landscape {seed}: {} configurations, {} launches; optimum {name}: {fate}; pick {pick}",
        l.space.configs.len(),
        s.launches
    );
}

/// `--shape bowl|rough|two-bowls` (the benchmark's landscapes by default).
fn shape_of(args: &[String]) -> anyhow::Result<Shape> {
    let Some(i) = args.iter().position(|a| a == "--shape") else {
        return Ok(Shape::Bowl);
    };
    match args.get(i + 1).map(String::as_str) {
        Some("bowl") => Ok(Shape::Bowl),
        Some("rough") => Ok(Shape::Rough),
        Some("two-bowls") => Ok(Shape::TwoBowls),
        other => anyhow::bail!(
            "--shape {}: expected bowl, rough or two-bowls",
            other.unwrap_or("(nothing)")
        ),
    }
}

/// `--from SEED`: the first landscape (0 by default), so that landscapes never looked at while
/// tuning the walk can be measured (`--from 100000`).
fn first_seed(args: &[String]) -> anyhow::Result<u64> {
    let Some(i) = args.iter().position(|a| a == "--from") else {
        return Ok(0);
    };
    args.get(i + 1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("--from: expected a landscape number"))
}

/// `--walk N`: the search's walk revision (this build's, [`WALK`], by default), to measure a
/// change of the walk against the one before on the same landscapes.
fn walk_of(args: &[String]) -> anyhow::Result<u32> {
    let Some(i) = args.iter().position(|a| a == "--walk") else {
        return Ok(WALK);
    };
    args.get(i + 1)
        .and_then(|s| s.parse().ok())
        .filter(|w| (1..=WALK).contains(w))
        .ok_or_else(|| anyhow::anyhow!("--walk: expected a walk revision from 1 to {WALK}"))
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    if let Some(i) = args.iter().position(|a| a == "--trace") {
        let seed = args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(0);
        return trace(seed, shape_of(args)?, walk_of(args)?);
    }
    let verbose = args.iter().any(|a| a == "--misses");
    let quick = args.iter().any(|a| a == "--quick");
    let walk = walk_of(args)?;
    let mut sizes: Vec<(usize, bool)> = Vec::new();
    let mut shares: Vec<f64> = Vec::new();
    let shape = shape_of(args)?;
    let n: u64 = match args.first().filter(|a| !a.starts_with("--")) {
        Some(a) => a.parse()?,
        None => 100,
    };
    let (mut s, mut g, mut r) = (Tally::default(), Tally::default(), Tally::default());
    let (mut ceiling, mut big, mut at_tie) = (Tally::default(), 0, Tally::default());
    let mut w1 = Tally::default();
    let (mut grid_launches, mut ties) = (0u64, 0.0);
    let from = first_seed(args)?;
    for seed in from..from + n {
        let l = Landscape::shaped(seed, shape).map_err(anyhow::Error::msg)?;
        let t = tie();
        ties += t;
        let searched = drive::search_walk(&l, REPEAT, &SpaceBudget::default(), walk);
        s.add(&l, &searched, t);
        shares.push(searched.launches as f64 / l.space.configs.len() as f64);
        sizes.push((
            l.space.configs.len(),
            searched.picked.as_ref().is_some_and(|c| l.hits(c, t)),
        ));
        if verbose {
            explain_miss(seed, &l, &searched, t);
        }
        grid_launches += l.space.configs.len() as u64;
        if quick {
            continue;
        }
        w1.add(
            &l,
            &drive::search_walk(&l, REPEAT, &SpaceBudget::default(), 1),
            t,
        );
        g.add(&l, &drive::grid(&l, REPEAT), t);
        big = largest(&l.space);
        ceiling.add(&l, &drive::grid(&l, big), t);
        at_tie.add(&l, &drive::grid(&l, TIE_REQUESTS), t);
        r.add(&l, &drive::random(&l, searched.launches, REPEAT, seed), t);
    }
    let pct = |x: u32| 100.0 * f64::from(x) / n as f64;
    println!(
        "{n} landscapes, {:.0} configurations on average; {REPEAT} requests per repeat; tied: within {:.1} % of the optimum's true p95 (the resolution of a measurement of {TIE_REQUESTS} requests)",
        grid_launches as f64 / n as f64,
        100.0 * ties / n as f64
    );
    println!("| method | optimum or tied | within 5 % | exact optimum | pick truly misses the SLO | launches (share of grid) | requests | upheld on a fresh launch |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (name, t) in [
        (&*format!("search (walk {walk})"), &s),
        ("search, walk 1 (no response surface)", &w1),
        ("full grid", &g),
        (
            &*format!("full grid, each at {TIE_REQUESTS} requests"),
            &at_tie,
        ),
        (
            &*format!("full grid, each at the search's largest size ({big} requests)"),
            &ceiling,
        ),
        ("random, same launches", &r),
    ]
    .into_iter()
    .take(if quick { 1 } else { 6 })
    {
        println!(
            "| {name} | {:.1} % | {:.0} % | {:.0} % | {:.1} % | {:.1} ({:.1} %) | {:.0} | {} |",
            pct(t.tied),
            pct(t.within5),
            pct(t.exact),
            pct(t.misses),
            t.launches as f64 / n as f64,
            100.0 * t.launches as f64 / grid_launches as f64,
            t.requests as f64 / n as f64,
            if name.starts_with("search") {
                format!("{:.0} %", pct(t.confirmed))
            } else {
                "—".into()
            },
        );
    }
    println!(
        "the search's launches against each landscape's own grid: mean {:.1} %, at most {:.1} %",
        100.0 * shares.iter().sum::<f64>() / shares.len().max(1) as f64,
        100.0 * shares.iter().copied().fold(0.0, f64::max),
    );
    if args.iter().any(|a| a == "--by-size") {
        by_size(&sizes);
    }
    Ok(())
}

/// The search's hit rate by the size of the space (`--by-size`): where the misses are.
fn by_size(sizes: &[(usize, bool)]) {
    println!("| configurations | landscapes | optimum or tied |");
    println!("|---|---:|---:|");
    for (lo, hi) in [(0, 40), (40, 80), (80, 150), (150, usize::MAX)] {
        let inside: Vec<bool> = sizes
            .iter()
            .filter(|(n, _)| (lo..hi).contains(n))
            .map(|(_, hit)| *hit)
            .collect();
        let hits = inside.iter().filter(|h| **h).count();
        let label = if hi == usize::MAX {
            format!("{lo} or more")
        } else {
            format!("{lo}–{}", hi - 1)
        };
        println!(
            "| {label} | {} | {:.1} % |",
            inside.len(),
            100.0 * hits as f64 / inside.len().max(1) as f64
        );
    }
}

/// `--trace SEED`: one landscape's true values and the search's trials, in order.
fn trace(seed: u64, shape: Shape, walk: u32) -> anyhow::Result<()> {
    let l = Landscape::shaped(seed, shape).map_err(anyhow::Error::msg)?;
    let opt = l.optimum();
    for (i, c) in l.space.configs.iter().enumerate() {
        println!(
            "{:40} primary {:7.2} slo {:7.1}/{:.1}{}{}{}",
            l.space.name(c),
            l.primary_p95[i],
            l.slo_p95[i],
            l.slo_limit,
            if l.slo_p95[i] > l.slo_limit {
                " MISS"
            } else {
                ""
            },
            if l.launches[i] { "" } else { " OOM" },
            if Some(i) == opt { " <== optimum" } else { "" },
        );
    }
    let s = drive::search_walk(&l, REPEAT, &SpaceBudget::default(), walk);
    for c in s
        .trace
        .as_ref()
        .map(|t| t.measured.clone())
        .unwrap_or_default()
    {
        let i = l.index(&c).unwrap_or(0);
        println!(
            "trial {:40} true {:7.2}",
            l.space.name(&c),
            l.primary_p95[i]
        );
    }
    println!("picked {:?}", s.picked.as_ref().map(|c| l.space.name(c)));
    Ok(())
}
