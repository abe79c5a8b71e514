//! What the servers report beyond latency, summed over a run's successful requests: prefix-cache
//! hits (prompt tokens served from cache) with TTFT split by hit and miss, and speculative
//! decoding's acceptance. A figure no request reported is `null`, and `not_reported` says why —
//! never 0.

use serde::{Deserialize, Serialize};

use crate::base::blocks::each_range;
use crate::base::stats::Distribution;
use crate::schema::Repeat;

/// The servers' own signals of one run (or repeat).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ServerSignals {
    /// Successful requests whose prefix-cache use the server reported.
    pub cache_reported_requests: u64,
    /// Σ prompt tokens served from cache ÷ Σ prompt tokens, over those requests.
    pub prefix_cache_hit_rate: Option<f64>,
    /// Share of those requests that reused any cached prompt token.
    pub cache_hit_request_share: Option<f64>,
    /// TTFT of the requests that reused cached prompt tokens.
    pub ttft_cache_hit: Distribution,
    /// TTFT of the requests that reused none.
    pub ttft_cache_miss: Distribution,
    /// Draft tokens proposed (speculative decoding), summed.
    pub draft_tokens_total: Option<u64>,
    /// Σ accepted ÷ Σ drafted.
    pub draft_acceptance_rate: Option<f64>,
    /// The server's own prefix-cache counters over the repeats: Σ Δhits ÷ Σ Δqueries (tokens;
    /// vLLM's `prefix_cache_*_total`), `null` without them or when one went backwards.
    #[serde(default)]
    pub server_prefix_cache_hit_rate: Option<f64>,
    /// The server's own speculative-decoding counters: Σ Δaccepted ÷ Σ Δdrafted (vLLM's
    /// `spec_decode_num_*_tokens_total`).
    #[serde(default)]
    pub server_draft_acceptance_rate: Option<f64>,
    /// Multi-turn sessions: TTFT, prompt length and cache hit rate by turn (empty for a run
    /// without sessions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_turn: Vec<super::turns::TurnSignals>,
    /// Why a figure above is `null`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_reported: Vec<String>,
}

/// Prefix-cache hits: the server did not report them.
pub const CACHE_NOT_REPORTED: &str = "prefix-cache hits: not reported by the server (llama-server \
reports `timings.cache_n`; vLLM `usage.prompt_tokens_details.cached_tokens` when started with \
`--enable-prompt-tokens-details`; SGLang and OpenAI-compatible servers the same field)";

/// Speculative decoding: no draft tokens reported.
pub const DRAFT_NOT_REPORTED: &str = "speculative decoding: no draft tokens reported (no draft \
model, or a server that does not say; llama-server reports `timings.draft_n` and \
`draft_n_accepted`)";

#[derive(Default)]
struct Sums {
    cached: u64,
    prompt: u64,
    hit_requests: u64,
    hit_ttft: Vec<u64>,
    miss_ttft: Vec<u64>,
    drafted: Option<u64>,
    accepted: u64,
}

fn add(s: &mut Sums, rep: &Repeat) {
    let r = &rep.requests;
    each_range(r.len(), |range| {
        for i in range {
            let (Some(ttft), None) = (r.ttft_us[i], &r.error[i]) else {
                continue;
            };
            let at =
                |c: &Option<Vec<Option<u32>>>| c.as_ref().and_then(|c| c.get(i).copied().flatten());
            if let (Some(c), Some(p)) = (at(&r.cached_prompt_tokens), r.prompt_tokens[i]) {
                s.cached += u64::from(c);
                s.prompt += u64::from(p);
                if c > 0 {
                    s.hit_requests += 1;
                    s.hit_ttft.push(ttft);
                } else {
                    s.miss_ttft.push(ttft);
                }
            }
            if let Some(d) = at(&r.draft_tokens) {
                *s.drafted.get_or_insert(0) += u64::from(d);
                s.accepted += u64::from(at(&r.draft_accepted_tokens).unwrap_or(0));
            }
        }
    });
}

/// Σ Δnumerator ÷ Σ Δdenominator of a counter pair over the repeats (first and last sample of
/// each); `None` when a repeat lacks either, a counter is negative or went backwards (a
/// restart). A share above 1 (more hits than lookups, more accepted than drafted) is a pair of
/// counters that contradict each other: returned as it is, for [`believed`] to refuse.
fn counter_ratio(reps: &[&Repeat], pairs: &[(&str, &str)]) -> Option<f64> {
    let delta = |r: &Repeat, name: &str| -> Option<f64> {
        let first = *r.server_metrics.first()?.values.get(name)?;
        let last = *r.server_metrics.last()?.values.get(name)?;
        (first >= 0.0 && last >= first).then_some(last - first)
    };
    pairs.iter().find_map(|&(num, den)| {
        let (mut n, mut d) = (0.0, 0.0);
        for r in reps {
            n += delta(r, num)?;
            d += delta(r, den)?;
        }
        (d > 0.0).then(|| n / d)
    })
}

/// A share from the server's counters, when it is one (at most 1); else `None`, with why.
fn believed(ratio: Option<f64>, what: &str, notes: &mut Vec<String>) -> Option<f64> {
    match ratio {
        Some(r) if r > 1.0 + 1e-9 => {
            notes.push(format!(
                "the server's {what} ({} %): not believed",
                crate::base::fmt::format_number(r * 100.0)
            ));
            None
        }
        r => r,
    }
}

/// The signals of `reps`' successful requests.
pub fn signals(reps: &[&Repeat]) -> ServerSignals {
    let mut s = Sums::default();
    for rep in reps {
        add(&mut s, rep);
    }
    let reported = (s.hit_ttft.len() + s.miss_ttft.len()) as u64;
    let mut out = ServerSignals {
        cache_reported_requests: reported,
        prefix_cache_hit_rate: (s.prompt > 0).then(|| s.cached as f64 / s.prompt as f64),
        cache_hit_request_share: (reported > 0).then(|| s.hit_requests as f64 / reported as f64),
        ttft_cache_hit: Distribution::from_us(&mut s.hit_ttft),
        ttft_cache_miss: Distribution::from_us(&mut s.miss_ttft),
        draft_tokens_total: s.drafted,
        draft_acceptance_rate: s
            .drafted
            .filter(|&d| d > 0)
            .map(|d| s.accepted as f64 / d as f64),
        server_prefix_cache_hit_rate: None,
        server_draft_acceptance_rate: None,
        by_turn: super::turns::by_turn(reps),
        not_reported: Vec::new(),
    };
    let counters = [
        (
            counter_ratio(reps, &crate::base::telemetry::PREFIX_CACHE_COUNTERS),
            "prefix-cache counters: more hits than lookups",
        ),
        (
            counter_ratio(reps, &crate::base::telemetry::SPEC_DECODE_COUNTERS),
            "speculative-decoding counters: more draft tokens accepted than drafted",
        ),
    ]
    .map(|(r, what)| believed(r, what, &mut out.not_reported));
    [
        out.server_prefix_cache_hit_rate,
        out.server_draft_acceptance_rate,
    ] = counters;
    if reported == 0 {
        out.not_reported.push(CACHE_NOT_REPORTED.into());
    }
    if out.draft_acceptance_rate.is_none() {
        out.not_reported.push(DRAFT_NOT_REPORTED.into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::RequestRow;
    use crate::schema::{RequestColumns, ServerCounts};

    /// TTFT µs, prompt tokens, cached, (drafted, accepted).
    type Row = (u64, u32, Option<u32>, Option<(u32, u32)>);

    fn rep(rows: &[Row]) -> Repeat {
        let rows = rows
            .iter()
            .enumerate()
            .map(|(i, &(ttft, prompt, cached, draft))| RequestRow {
                send_offset_us: i as u64,
                ttft_us: Some(ttft),
                e2e_us: Some(ttft + 10),
                prompt_tokens: Some(prompt),
                output_tokens: Some(2),
                itl_us: vec![5],
                server: ServerCounts {
                    cached_prompt_tokens: cached,
                    draft_tokens: draft.map(|d| d.0),
                    draft_accepted_tokens: draft.map(|d| d.1),
                },
                ..RequestRow::default()
            })
            .collect();
        Repeat {
            requests: RequestColumns::from_rows(rows),
            ..Repeat::default()
        }
    }

    #[test]
    fn hit_rate_is_over_prompt_tokens_and_ttft_splits_by_hit() {
        let r = rep(&[
            (9_000, 100, Some(0), Some((8, 6))),
            (2_000, 100, Some(80), Some((8, 2))),
            (3_000, 100, Some(60), None),
            (4_000, 100, None, None),
        ]);
        let s = signals(&[&r]);
        assert_eq!(s.cache_reported_requests, 3);
        assert!((s.prefix_cache_hit_rate.unwrap() - 140.0 / 300.0).abs() < 1e-12);
        assert!((s.cache_hit_request_share.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.ttft_cache_hit.count, 2);
        assert_eq!(s.ttft_cache_miss.max_ms, Some(9.0));
        assert_eq!(s.draft_tokens_total, Some(16));
        assert_eq!(s.draft_acceptance_rate, Some(0.5));
        assert!(s.not_reported.is_empty());
    }

    fn sample(at: u64, v: &[(&str, f64)]) -> crate::schema::MetricSample {
        crate::schema::MetricSample {
            offset_us: at,
            values: v.iter().map(|(k, x)| (k.to_string(), *x)).collect(),
        }
    }

    #[test]
    fn the_servers_own_counters_give_rates_over_the_repeats_and_a_restart_gives_none() {
        let (h, q) = PREFIX;
        let mut a = rep(&[(1_000, 10, None, None)]);
        a.server_metrics = vec![
            sample(0, &[(h, 100.0), (q, 400.0)]),
            sample(9, &[(h, 160.0), (q, 500.0)]),
        ];
        let mut b = a.clone();
        b.server_metrics = vec![
            sample(0, &[(h, 160.0), (q, 500.0)]),
            sample(9, &[(h, 200.0), (q, 600.0)]),
        ];
        let s = signals(&[&a, &b]);
        assert_eq!(s.server_prefix_cache_hit_rate, Some(100.0 / 200.0));
        assert_eq!(s.server_draft_acceptance_rate, None);
        b.server_metrics[1].values.insert(h.into(), 10.0);
        assert_eq!(
            signals(&[&a, &b]).server_prefix_cache_hit_rate,
            None,
            "a restart"
        );
        // SGLang: cached prompt tokens over prompt tokens.
        let (c, p) = crate::base::telemetry::PREFIX_CACHE_COUNTERS[1];
        let mut g = rep(&[(1_000, 10, None, None)]);
        g.server_metrics = vec![
            sample(0, &[(c, 10.0), (p, 40.0)]),
            sample(9, &[(c, 40.0), (p, 160.0)]),
        ];
        assert_eq!(signals(&[&g]).server_prefix_cache_hit_rate, Some(0.25));
        // More hits than lookups, or a negative counter: not a share, not believed, and said.
        g.server_metrics[1].values.insert(c.into(), 1_240.0);
        let s = signals(&[&g]);
        assert_eq!(s.server_prefix_cache_hit_rate, None);
        assert!(s.not_reported.iter().any(|n| n.contains("not believed")));
        g.server_metrics[0].values.insert(c.into(), -200.0);
        g.server_metrics[1].values.insert(c.into(), 0.0);
        assert_eq!(signals(&[&g]).server_prefix_cache_hit_rate, None);
    }

    const PREFIX: (&str, &str) = crate::base::telemetry::PREFIX_CACHE_COUNTERS[0];

    #[test]
    fn a_server_that_reports_nothing_gives_null_with_reasons_never_zero() {
        let s = signals(&[&rep(&[(1_000, 10, None, None)])]);
        assert_eq!(s.prefix_cache_hit_rate, None);
        assert_eq!(s.cache_hit_request_share, None);
        assert_eq!(s.draft_acceptance_rate, None);
        assert_eq!(s.ttft_cache_hit.p95_ms, None);
        assert_eq!(s.not_reported, vec![CACHE_NOT_REPORTED, DRAFT_NOT_REPORTED]);
    }
}
