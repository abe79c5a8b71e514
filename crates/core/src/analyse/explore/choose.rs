//! The search's choices: the screening design, the next trial, the configurations still in
//! the running, the pick and its confirmation.

mod answer;

pub(super) use answer::result;

use super::{kriging, surface, Explorer, Outcome, Purpose, Settings, Step};
use crate::base::fmt::format_number;
use crate::base::rng::finalize;
use crate::check::space::{Config, Space};

/// Most configurations the screening spreads over.
const MAX_DESIGN: usize = 48;
/// How many of the best survivors the refinement walks around.
const REFINE_AROUND: usize = 3;
/// How many contenders may get more requests.
const CONTENDERS: usize = 4;
/// From walk 4, the pick is the best survivor that meets every SLO with at least this chance
/// ([`super::evidence::SloEstimate::likely_met`]).
pub(super) const LIKELY: f64 = 0.8;
/// From walk 7, the expected gain (on the primary metric's logarithm: 0.001, a tenth of a
/// per cent) under which exploring stops ([`settled`]).
const SETTLED_GAIN: f64 = 0.001;
/// From walk 7, the share of the launches spent before exploring may stop early.
const SETTLED_AFTER: f64 = 0.5;
/// Fewer launches than this keep none for the contenders while refining (walk 3).
const FEW_LAUNCHES: u32 = 12;

/// The screening design: the configuration nearest the centre of the space, then each time the
/// one farthest from those already taken (ties broken by the seed); about a third of the
/// launches that the confirmation leaves, at least one per knob plus one (from walk 4, a fifth,
/// at least two: the kriging guides the rest).
pub(super) fn design(space: &Space, s: &Settings) -> Vec<Config> {
    let free = s.launches.saturating_sub(2) as usize;
    // From walk 4 the kriging guides the rest from two points on: a fifth of the launches.
    let (share, least) = if s.walk >= 4 {
        (0.2, 2)
    } else {
        (0.35, space.knobs.len() + 1)
    };
    let want = ((free as f64 * share).ceil() as usize)
        .max(least)
        .min(free.max(1))
        .min(space.configs.len())
        .min(MAX_DESIGN);
    let pos: Vec<Vec<f64>> = space.configs.iter().map(|c| space.position(c)).collect();
    let tie = |i: usize| finalize(s.seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let centre: Vec<f64> = vec![0.5; space.knobs.len()];
    let first = (0..pos.len())
        .min_by(|&a, &b| {
            dist(&pos[a], &centre)
                .total_cmp(&dist(&pos[b], &centre))
                .then(tie(a).cmp(&tie(b)))
        })
        .unwrap_or(0);
    let mut taken = vec![first];
    let mut nearest: Vec<f64> = pos.iter().map(|p| dist(p, &pos[first])).collect();
    while taken.len() < want {
        let Some(next) = (0..pos.len())
            .filter(|i| nearest[*i] > 0.0)
            .max_by(|&a, &b| nearest[a].total_cmp(&nearest[b]).then(tie(b).cmp(&tie(a))))
        else {
            break;
        };
        taken.push(next);
        for (i, p) in pos.iter().enumerate() {
            nearest[i] = nearest[i].min(dist(p, &pos[next]));
        }
    }
    taken
        .into_iter()
        .map(|i| space.configs[i].clone())
        .collect()
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// A measured configuration's standing.
#[derive(Debug, Clone, PartialEq)]
enum Standing {
    /// Still in the running.
    Alive,
    /// Out, with why.
    Out(String),
}

/// A score on the primary metric, lower better: (value, lo, hi).
type Score = (f64, Option<f64>, Option<f64>);

/// The score of a configuration.
fn score(e: &Explorer, c: &Config) -> Option<Score> {
    match e.known.get(c)? {
        Outcome::Measured { evidence } => evidence.primary.map(|p| p.score(e.primary)),
        Outcome::Infeasible { .. } => None,
    }
}

/// The configurations that meet every SLO with confidence, with their scores.
fn meeting(e: &Explorer) -> Vec<(&Config, Score)> {
    e.known
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::Measured { evidence } if evidence.meets_all()))
        .filter_map(|(c, _)| Some((c, score(e, c)?)))
        .collect()
}

fn standing(e: &Explorer, c: &Config) -> Standing {
    let evidence = match e.known.get(c) {
        None => return Standing::Out("not measured".into()),
        Some(Outcome::Infeasible { reason }) => {
            return Standing::Out(format!("infeasible: {reason}"))
        }
        Some(Outcome::Measured { evidence }) => evidence,
    };
    if let Some(s) = evidence.missed() {
        let e95 = s.estimate.as_ref();
        return Standing::Out(format!(
            "misses {} {} with confidence: {} (95 % interval {}–{})",
            s.metric,
            format_number(s.limit),
            e95.map_or("—".into(), |x| format_number(x.value)),
            bound(e95.and_then(|x| x.lo)),
            bound(e95.and_then(|x| x.hi)),
        ));
    }
    let Some((_, lo, _)) = score(e, c) else {
        return Standing::Out(format!("{} not measured", e.primary));
    };
    let beaten = meeting(e)
        .into_iter()
        .find(|(r, (_, _, hi))| *r != c && matches!((*hi, lo), (Some(h), Some(l)) if h < l));
    match beaten {
        Some((r, _)) => Standing::Out(format!(
            "beaten on {} with confidence by {} (their 95 % intervals do not overlap)",
            e.primary,
            e.space.name(r)
        )),
        None => Standing::Alive,
    }
}

fn bound(v: Option<f64>) -> String {
    v.map_or("unbounded".into(), format_number)
}

/// The configurations still in the running, best point estimate first.
fn alive(e: &Explorer) -> Vec<Config> {
    let mut out: Vec<(f64, &Config)> = e
        .known
        .keys()
        .filter(|c| standing(e, c) == Standing::Alive)
        .filter_map(|c| Some((score(e, c)?.0, c)))
        .collect();
    crate::base::order::sort_by(&mut out, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)));
    out.into_iter().map(|(_, c)| c.clone()).collect()
}

/// An unmeasured neighbour of one of the best survivors (from walk revision 2, the one the
/// response surface predicts best within the SLOs once it can be fitted; else the first
/// downhill), else the unmeasured configuration the surface predicts best, else the one
/// farthest from every measured one.
fn refine(e: &Explorer) -> Option<Config> {
    if e.settings.walk >= 4 {
        match kriging::suggest(e) {
            Some((_, Some(gain))) if settled(e, gain) => return None,
            Some((c, _)) => return Some(c),
            None => {}
        }
    }
    let top: Vec<Config> = alive(e).into_iter().take(REFINE_AROUND).collect();
    let near: Vec<Config> = top.iter().flat_map(|c| e.space.neighbours(c)).collect();
    let guided = e.settings.walk >= 2;
    if let Some(c) = guided
        .then(|| surface::suggest(e, &|c| near.contains(c)))
        .flatten()
    {
        return Some(c);
    }
    for c in &top {
        let mut next: Vec<Config> = e
            .space
            .neighbours(c)
            .into_iter()
            .filter(|n| !e.known.contains_key(n))
            .collect();
        crate::base::order::sort_by_key(&mut next, |n| downhill(e, c, n));
        if let Some(n) = next.into_iter().next() {
            return Some(n);
        }
    }
    if let Some(c) = guided.then(|| surface::suggest(e, &|_| true)).flatten() {
        return Some(c);
    }
    let measured: Vec<Vec<f64>> = e.known.keys().map(|c| e.space.position(c)).collect();
    e.space
        .configs
        .iter()
        .filter(|c| !e.known.contains_key(*c))
        .map(|c| {
            let p = e.space.position(c);
            let near = measured
                .iter()
                .map(|m| dist(m, &p))
                .fold(f64::MAX, f64::min);
            (near, c)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(a.1)))
        .map(|(_, c)| c.clone())
}

/// From walk 7, whether exploring is over before the launches are: at least
/// [`SETTLED_AFTER`] of them spent, every neighbour of the best survivor measured, and the best
/// unmeasured configuration's expected gain over the incumbent (kriging's expected improvement
/// times its chance within the SLOs, on the primary metric's logarithm) under
/// [`SETTLED_GAIN`]. The neighbours guard the kriging: alone, it stopped where it was wrong
/// about the space (fewer hits on the benchmark's landscapes). Launches are what a search costs (a
/// server's start takes minutes on a GPU host); spending the rest where nothing is expected
/// buys little, and the launches left unspent are the search's saving. The contenders'
/// further requests and the confirmation still follow.
fn settled(e: &Explorer, gain: f64) -> bool {
    e.settings.walk >= 7
        && gain < SETTLED_GAIN
        && f64::from(e.launches_used()) >= SETTLED_AFTER * f64::from(e.settings.launches)
        && alive(e).first().is_some_and(|best| {
            e.space
                .neighbours(best)
                .iter()
                .all(|n| e.known.contains_key(n))
        })
}

/// How promising the step from `c` to its neighbour `n` looks (lower first): away from a
/// measured worse configuration on the other side (0), into the unknown (1), towards a
/// measured better one on the other side (2: the walk would turn back).
fn downhill(e: &Explorer, c: &Config, n: &Config) -> u8 {
    let Some(k) = (0..c.len()).find(|&k| c[k] != n[k]) else {
        return 1;
    };
    let back = 2 * c[k] as i64 - n[k] as i64;
    if back < 0 {
        return 1;
    }
    let mut mirror = c.clone();
    mirror[k] = back as usize;
    match (score(e, c), score(e, &mirror)) {
        (Some(here), Some(there)) if there.0 > here.0 => 0,
        (Some(_), Some(_)) => 2,
        _ => 1,
    }
}

/// A contender that needs more requests: among the best survivor and those whose primary
/// interval overlaps its interval, or whose SLOs are not yet met with confidence, the one with
/// the fewest requests below the cap.
fn contender(e: &Explorer) -> Option<Config> {
    let alive = alive(e);
    let best = alive.first()?;
    // Requests pooled: as the evidence counts them, and never fewer than the trials asked for
    // (so that a driver whose outcomes do not pool cannot extend a configuration forever).
    let requests = |c: &Config| match e.known.get(c) {
        Some(Outcome::Measured { evidence }) => evidence.requests.max(
            e.trials
                .iter()
                .filter(|t| &t.config == c && t.purpose != Purpose::Confirm)
                .map(|t| t.requests)
                .sum(),
        ),
        _ => u64::MAX,
    };
    let overlaps = |a: &Config, b: &Config| !apart(e, a, b);
    let slo_open = |c: &Config| matches!(e.known.get(c), Some(Outcome::Measured { evidence }) if !evidence.meets_all());
    let top: Vec<&Config> = alive.iter().take(CONTENDERS).collect();
    // The best needs more when its SLOs are open or a rival cannot be told from it; a rival
    // when it cannot be told from the best or its own SLOs are open.
    let unsure = |c: &Config| {
        slo_open(c)
            || if c == best {
                top.iter().any(|r| *r != best && overlaps(best, r))
            } else {
                overlaps(best, c)
            }
    };
    alive
        .iter()
        .take(CONTENDERS)
        .filter(|c| {
            unsure(c)
                && requests(c) + e.settings.more_requests <= e.settings.max_requests_per_config
        })
        .min_by_key(|c| requests(c))
        .cloned()
}

/// Whether two measured configurations are apart on the primary metric with confidence: one's
/// 95 % interval ends before the other's begins (a configuration without an estimate is apart
/// from none).
fn apart(e: &Explorer, a: &Config, b: &Config) -> bool {
    let (Some((_, a_lo, a_hi)), Some((_, b_lo, b_hi))) = (score(e, a), score(e, b)) else {
        return false;
    };
    let before = |hi: Option<f64>, lo: Option<f64>| matches!((hi, lo), (Some(h), Some(l)) if h < l);
    before(a_hi, b_lo) || before(b_hi, a_lo)
}

/// Whether a measured configuration meets every SLO with confidence.
fn sure(e: &Explorer, c: &Config) -> bool {
    matches!(e.known.get(c), Some(Outcome::Measured { evidence }) if evidence.meets_all())
}

/// From walk 6, the pick when the best survivor of its tier meets its SLOs only likely: the
/// best survivor that meets every SLO with confidence and that the best cannot be told from
/// on the primary metric (its 95 % interval overlaps the best's), if any. Between two
/// configurations the measurements cannot rank, the one sure to meet the SLOs is the one to
/// deploy: a likely pick next to the SLO's limit is where a search's picks truly miss it.
fn safer(e: &Explorer, alive: &[Config], best: &Config) -> Option<Config> {
    if e.settings.walk < 6 || sure(e, best) {
        return None;
    }
    alive
        .iter()
        .find(|c| *c != best && sure(e, c) && !apart(e, best, c))
        .cloned()
}

/// How well a measured configuration is known to meet the SLOs, better first: 0, with
/// confidence (from walk 4: with a chance of at least [`LIKELY`], confidence included); 1, by
/// its point estimates; 2, not even by those (or not measured).
pub(super) fn tier(e: &Explorer, c: &Config) -> u8 {
    let Some(Outcome::Measured { evidence }) = e.known.get(c) else {
        return 2;
    };
    let first = if e.settings.walk >= 4 {
        evidence.likely_meets_all(LIKELY)
    } else {
        evidence.meets_all()
    };
    if first {
        0
    } else if evidence.meets_all_by_value() {
        1
    } else {
        2
    }
}

/// The pick: the best survivor of the best [`tier`] but 2 (from walk 6, or a [`safer`] one);
/// its rival, the next survivor; and whether the pick meets every SLO with confidence.
fn pick(e: &Explorer) -> (Option<Config>, Option<Config>, bool) {
    let alive = alive(e);
    let Some(best) = [0, 1]
        .into_iter()
        .find_map(|t| alive.iter().find(|c| tier(e, c) == t))
    else {
        return (None, None, false);
    };
    let chosen = safer(e, &alive, best).unwrap_or_else(|| best.clone());
    let sure = sure(e, &chosen);
    // The rival: the next survivor, else the best of the rest that served and missed no SLO.
    let rival = alive.into_iter().find(|c| *c != chosen).or_else(|| {
        e.known
            .iter()
            .filter(|(c, o)| {
                **c != chosen
                    && matches!(o, Outcome::Measured { evidence } if evidence.missed().is_none())
            })
            .filter_map(|(c, _)| Some((score(e, c)?.0, c)))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)))
            .map(|(_, c)| c.clone())
    });
    (Some(chosen), rival, sure)
}

/// The next trial.
pub(super) fn next(e: &Explorer) -> Step {
    let used = e.launches_used();
    let (chosen, rival, _) = pick(e);
    let reserve = u32::from(chosen.is_some()) + u32::from(rival.is_some());
    let spent = e.requests_spent();
    let fits = |requests: u64, room: u32| {
        !e.stopped
            && used + 1 + room <= e.settings.launches
            && e.settings.requests.is_none_or(|r| {
                spent + requests + reserve as u64 * e.settings.confirm_requests <= r
            })
    };
    let launch = |config: Config, requests: u64, purpose: Purpose| Step::Launch {
        config,
        requests,
        purpose,
    };
    let confirming = e.trials.iter().any(|t| t.purpose == Purpose::Confirm);
    if let Some(c) = extension(e, reserve).filter(|_| !confirming) {
        return launch(c, e.settings.more_requests, Purpose::Extend);
    }
    if !confirming {
        let screen = e.settings.screen_requests;
        if let Some(c) = e.design.iter().find(|c| !e.known.contains_key(*c)) {
            if fits(screen, reserve.max(2)) {
                return launch(c.clone(), screen, Purpose::Screen);
            }
        }
        let more_room = more_room(&e.settings);
        if let Some(c) = refine(e).filter(|_| fits(screen, reserve.max(2) + more_room)) {
            return launch(c, screen, Purpose::Refine);
        }
        if let Some(c) = contender(e).filter(|_| fits(e.settings.more_requests, reserve.max(2))) {
            return launch(c, e.settings.more_requests, Purpose::More);
        }
        if let Some(c) = refine(e).filter(|_| fits(screen, reserve.max(2))) {
            return launch(c, screen, Purpose::Refine);
        }
        // Nothing meets the SLOs yet: the launches kept for a confirmation that cannot happen
        // are better spent looking for a configuration that does (left unconfirmed if found on
        // the last launch).
        if let Some(c) = refine(e).filter(|_| chosen.is_none() && fits(screen, 0)) {
            return launch(c, screen, Purpose::Refine);
        }
    }
    confirm_step(e, chosen, rival)
}

/// From walk 5: the configuration the last trial measured, when it is the contender that needs
/// more requests next and they fit the budget's requests (its server is still up: measuring
/// on it costs no launch, where a `more` trial relaunches it).
fn extension(e: &Explorer, reserve: u32) -> Option<Config> {
    let last = e.trials.last()?;
    let fits = e.settings.requests.is_none_or(|r| {
        e.requests_spent()
            + e.settings.more_requests
            + u64::from(reserve) * e.settings.confirm_requests
            <= r
    });
    (e.settings.walk >= 5
        && !e.stopped
        && fits
        && last.purpose != Purpose::Confirm
        && contender(e).as_ref() == Some(&last.config))
    .then(|| last.config.clone())
}

/// Launches kept for the contenders' further requests while refining: about a sixth of them;
/// from walk revision 3, none when the launches are fewer than [`FEW_LAUNCHES`] (the
/// confirmation measures the pick afresh with enough requests to decide its SLOs, and a
/// launch spent on more requests is one fewer configuration explored).
fn more_room(s: &Settings) -> u32 {
    if s.walk >= 3 && s.launches < FEW_LAUNCHES {
        0
    } else {
        (s.launches / 6).max(1)
    }
}

/// The confirmation launches: the chosen configuration afresh, then its rival. The pick is
/// frozen at the first confirmation (what it confirms is the pick the search made).
fn confirm_step(e: &Explorer, chosen: Option<Config>, rival: Option<Config>) -> Step {
    let confirmed: Vec<&Config> = e
        .trials
        .iter()
        .filter(|t| t.purpose == Purpose::Confirm)
        .map(|t| &t.config)
        .collect();
    let (chosen, rival) = match confirmed.first() {
        Some(_) => frozen(e),
        None => (chosen, rival),
    };
    for c in [chosen, rival].into_iter().flatten() {
        if !confirmed.contains(&&c) {
            return Step::Launch {
                config: c,
                requests: e.settings.confirm_requests,
                purpose: Purpose::Confirm,
            };
        }
    }
    Step::Done
}

/// The pick as it stood when the confirmation began: the trials before the first
/// confirmation, replayed.
fn frozen(e: &Explorer) -> (Option<Config>, Option<Config>) {
    let before = e
        .trials
        .iter()
        .position(|t| t.purpose == Purpose::Confirm)
        .unwrap_or(e.trials.len());
    let mut past = Explorer::new(e.space.clone(), e.primary, e.settings.clone());
    for t in &e.trials[..before] {
        past.record(t.config.clone(), t.purpose, t.requests, t.outcome.clone());
    }
    let (c, r, _) = pick(&past);
    (c, r)
}
