//! Multi-turn sessions as a reader sees them: per candidate, TTFT by turn (with the prompt the
//! conversation has grown to and the prefix-cache hit rate), and the turns on which a TTFT
//! limit of the profile is missed — the turn, not the average, is what a chat user waits on.

use crate::analyse::report::{CandidateReport, ProfileReport};
use crate::analyse::summary::turns::TurnSignals;
use crate::base::fmt::format_number;
use crate::base::metric::{Direction, Metric, Quantity, Stat};

/// Turns listed at most; the rest are summed up as "…".
const SHOWN_TURNS: usize = 8;

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{} ms", format_number(v)))
}

/// `prompt 120 → 480 tokens; prefix-cache hit rate 0 % → 85 %` from the first to the last turn.
fn growth(t: &[TurnSignals]) -> String {
    let (first, last) = (&t[0], &t[t.len() - 1]);
    let n = |v: Option<f64>| v.map_or_else(|| "–".into(), |v| format_number(v.round()));
    let pct = |v: Option<f64>| {
        v.map_or_else(|| "–".into(), |v| format!("{} %", format_number(v * 100.0)))
    };
    let mut out = format!(
        "prompt {} → {} tokens",
        n(first.prompt_tokens_mean),
        n(last.prompt_tokens_mean)
    );
    if first.prefix_cache_hit_rate.is_some() || last.prefix_cache_hit_rate.is_some() {
        out.push_str(&format!(
            "; prefix-cache hit rate {} → {}",
            pct(first.prefix_cache_hit_rate),
            pct(last.prefix_cache_hit_rate)
        ));
    }
    out
}

/// The turns whose TTFT statistic is above the profile's limit on it: `turns ≥ 3`, or a list.
fn misses(t: &[TurnSignals], stat: Stat, limit: f64) -> Option<String> {
    let over: Vec<u32> = t
        .iter()
        .filter(|x| x.ttft.stat(stat).is_some_and(|v| v > limit))
        .map(|x| x.turn)
        .collect();
    let first = *over.first()?;
    let tail = t.iter().filter(|x| x.turn >= first).count() == over.len();
    Some(match (tail, over.len()) {
        (true, 1) if first == t[t.len() - 1].turn => format!("turn {first}"),
        (true, _) => format!("turns ≥ {first}"),
        _ => format!(
            "turns {}",
            over.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

fn line(c: &CandidateReport, p: &ProfileReport) -> Option<String> {
    let t = &c.summary.as_ref()?.signals.by_turn;
    if t.is_empty() {
        return None;
    }
    let listed: Vec<String> = t
        .iter()
        .take(SHOWN_TURNS)
        .map(|x| format!("{}: {}", x.turn, ms(x.ttft.p95_ms)))
        .collect();
    let more = if t.len() > SHOWN_TURNS { " · …" } else { "" };
    let mut out = format!(
        "{}: TTFT p95 by turn {}{more}; {}",
        c.name,
        listed.join(" · "),
        growth(t)
    );
    for s in &p.slo {
        let (Metric::Latency(Quantity::Ttft, stat), Direction::LowerIsBetter) =
            (s.metric, s.direction)
        else {
            continue;
        };
        if let Some(turns) = misses(t, stat, s.limit) {
            out.push_str(&format!(
                "; {} is above its {} ms limit on {turns}",
                s.metric.name(),
                format_number(s.limit)
            ));
        }
    }
    Some(out)
}

/// One line per candidate whose runs had sessions.
pub(super) fn lines(p: &ProfileReport) -> Vec<String> {
    p.candidates.iter().filter_map(|c| line(c, p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::stats::Distribution;

    fn turn(turn: u32, p95: f64) -> TurnSignals {
        TurnSignals {
            turn,
            ttft: Distribution {
                count: 3,
                p95_ms: Some(p95),
                ..Distribution::default()
            },
            prompt_tokens_mean: Some(f64::from(turn) * 100.0),
            prefix_cache_hit_rate: None,
        }
    }

    #[test]
    fn the_turns_above_a_limit_are_named() {
        let t = [turn(1, 50.0), turn(2, 90.0), turn(3, 120.0), turn(4, 130.0)];
        assert_eq!(misses(&t, Stat::P95, 100.0).as_deref(), Some("turns ≥ 3"));
        assert_eq!(misses(&t, Stat::P95, 125.0).as_deref(), Some("turn 4"));
        let t = [turn(1, 150.0), turn(2, 90.0), turn(3, 120.0)];
        assert_eq!(misses(&t, Stat::P95, 100.0).as_deref(), Some("turns 1, 3"));
        assert_eq!(misses(&t, Stat::P95, 200.0), None);
        assert_eq!(growth(&t), "prompt 100 → 300 tokens");
    }
}
