//! Multi-turn sessions by turn: the TTFT, prompt length and prefix-cache hit rate of each turn
//! number over a run's successful requests. With a prefix cache a later turn's TTFT should fall
//! (its conversation so far is cached) although its prompt grows; without one it grows with
//! the prompt.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::base::stats::Distribution;
use crate::schema::Repeat;

/// One turn number's requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TurnSignals {
    /// The turn, from 1.
    pub turn: u32,
    /// Their TTFT (its `count` is the successful requests of this turn).
    pub ttft: Distribution,
    /// Mean prompt tokens (the conversation so far), over those that report it.
    pub prompt_tokens_mean: Option<f64>,
    /// Σ prompt tokens served from cache ÷ Σ prompt tokens, over those the server reported.
    pub prefix_cache_hit_rate: Option<f64>,
}

#[derive(Default)]
struct Sums {
    ttft: Vec<u64>,
    prompt: u64,
    prompted: u64,
    cached: u64,
    cache_prompt: u64,
}

/// Each turn's figures over `reps`' successful requests; empty when no request has a turn.
pub fn by_turn(reps: &[&Repeat]) -> Vec<TurnSignals> {
    let mut turns: BTreeMap<u32, Sums> = BTreeMap::new();
    for rep in reps {
        let r = &rep.requests;
        let Some(turn) = &r.turn else { continue };
        for (i, t) in turn.iter().enumerate() {
            let (Some(t), Some(ttft), None) = (t, r.ttft_us[i], &r.error[i]) else {
                continue;
            };
            let s = turns.entry(*t).or_default();
            s.ttft.push(ttft);
            if let Some(p) = r.prompt_tokens[i] {
                s.prompt += u64::from(p);
                s.prompted += 1;
                let cached = r.cached_prompt_tokens.as_ref().and_then(|c| c[i]);
                if let Some(c) = cached {
                    s.cached += u64::from(c);
                    s.cache_prompt += u64::from(p);
                }
            }
        }
    }
    turns
        .into_iter()
        .map(|(turn, mut s)| TurnSignals {
            turn,
            ttft: Distribution::from_us(&mut s.ttft),
            prompt_tokens_mean: (s.prompted > 0).then(|| s.prompt as f64 / s.prompted as f64),
            prefix_cache_hit_rate: (s.cache_prompt > 0)
                .then(|| s.cached as f64 / s.cache_prompt as f64),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{RequestColumns, RequestRow, ServerCounts, SessionTurn};

    #[test]
    fn each_turn_has_its_ttft_prompt_and_hit_rate() {
        // Two sessions of two turns; the second turns hit the cache; one failure.
        let rows = [
            (0, 1, 9_000, 100, 0, None),
            (0, 2, 3_000, 200, 150, None),
            (1, 1, 7_000, 100, 0, None),
            (1, 2, 5_000, 300, 0, Some("boom")),
        ]
        .iter()
        .enumerate()
        .map(
            |(i, &(session, turn, ttft, prompt, cached, err))| RequestRow {
                send_offset_us: i as u64,
                ttft_us: Some(ttft),
                e2e_us: Some(ttft + 10),
                prompt_tokens: Some(prompt),
                output_tokens: Some(2),
                itl_us: vec![5],
                error: err.map(String::from),
                server: ServerCounts {
                    cached_prompt_tokens: Some(cached),
                    ..ServerCounts::default()
                },
                turn: SessionTurn {
                    session: Some(session),
                    turn: Some(turn),
                },
                ..RequestRow::default()
            },
        )
        .collect();
        let rep = Repeat {
            requests: RequestColumns::from_rows(rows),
            ..Repeat::default()
        };
        let t = by_turn(&[&rep]);
        assert_eq!(t.len(), 2);
        assert_eq!(
            (t[0].turn, t[0].ttft.count, t[0].ttft.max_ms),
            (1, 2, Some(9.0))
        );
        assert_eq!(t[0].prefix_cache_hit_rate, Some(0.0));
        assert_eq!((t[1].turn, t[1].ttft.count), (2, 1));
        assert_eq!(t[1].prompt_tokens_mean, Some(200.0));
        assert_eq!(t[1].prefix_cache_hit_rate, Some(0.75));
        let plain = Repeat::default();
        assert!(by_turn(&[&plain]).is_empty());
    }
}
