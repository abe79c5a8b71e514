//! What a run's token counts and gaps show against what it states: outputs within the cap it
//! sent, prompts about as long as it asked, and gaps that add up to the decode time.

use super::Stated;
use crate::base::blocks::each_range;
use crate::base::fmt::format_number;
use crate::check::invariant::{Invariant, Violation};
use crate::schema::{RequestColumns, Run, RunSource};

/// Prompts may be this much longer than asked (a chat template, special tokens).
const PROMPT_TEMPLATE_TOKENS: f64 = 64.0;
/// Median share of the decode time the gaps must cover; a unit error gives a thousandth.
const MIN_GAP_SHARE: f64 = 0.1;
/// Decode times shorter than this say little about the gaps' unit.
const MIN_DECODE_US: u64 = 1_000;

pub(crate) fn check(run: &Run, stated: &Stated, out: &mut Vec<Violation>) {
    within_cap(run, stated, out);
    prompts(run, stated, out);
    gaps_span_decode(run, out);
}

/// The cap request `i` was sent with: recorded per request, else the workload's largest.
fn cap(r: &RequestColumns, i: usize, stated: &Stated) -> Option<u32> {
    match &r.max_output_tokens {
        Some(col) => col.get(i).copied().flatten(),
        None => stated.output_cap,
    }
}

fn within_cap(run: &Run, stated: &Stated, out: &mut Vec<Violation>) {
    // Another tool may count output tokens by re-tokenizing the text, which can exceed the
    // cap by a token or two: its counts are held to the cap with that slack, not exempted.
    let slack = |c: u32| {
        if run.source == RunSource::Imported {
            retokenized_slack(c)
        } else {
            0
        }
    };
    let mut over = 0usize;
    let mut first: Option<(usize, usize, u32, u32)> = None;
    for (ri, rep) in run.repeats.iter().enumerate() {
        let r = &rep.requests;
        each_range(r.len(), |range| {
            for i in range {
                let (Some(n), Some(c)) = (r.output_tokens[i], cap(r, i, stated)) else {
                    continue;
                };
                if r.error[i].is_none() && n > c.saturating_add(slack(c)) {
                    over += 1;
                    first.get_or_insert((ri, i, n, c));
                }
            }
        });
    }
    if let Some((ri, i, n, c)) = first {
        out.push(Violation::new(
            Invariant::OutputsWithinCap,
            format!("$.repeats[{ri}].requests.output_tokens[{i}]"),
            format!(
                "{over} successful request(s) produced more output tokens than the cap sent (the \
                 first: {n} tokens under max_tokens {c}): the server's count, or the workload, is \
                 not what the run states"
            ),
        ));
    }
}

/// How far another tool's count of `n` tokens, made by re-tokenizing the text, may stray from
/// the server's: two tokens or a tenth, whichever is more.
pub(crate) fn retokenized_slack(n: u32) -> u32 {
    2.max(n.div_ceil(10))
}

fn prompts(run: &Run, stated: &Stated, out: &mut Vec<Violation>) {
    let Some(asked) = stated.prompt_tokens_mean else {
        return;
    };
    let mut sum = 0.0;
    let mut n = 0usize;
    for rep in &run.repeats {
        let r = &rep.requests;
        each_range(r.len(), |range| {
            for i in range {
                // Every count the run states, whatever its source says (or does not): a
                // requested length unlike the workload's is another workload as surely as a
                // measured one, and a source left null must not switch the check off. A
                // session's later turns carry the conversation so far: only first turns are the
                // workload's own prompt.
                let first = r.turn.as_ref().is_none_or(|t| t[i].is_none_or(|t| t <= 1));
                if let (true, Some(p)) = (first, r.prompt_tokens[i]) {
                    sum += f64::from(p);
                    n += 1;
                }
            }
        });
    }
    if n == 0 {
        return;
    }
    let mean = sum / n as f64;
    let (low, high) = (0.5 * asked - 8.0, 2.0 * asked + PROMPT_TEMPLATE_TOKENS);
    if mean < low || mean > high {
        out.push(Violation::new(
            Invariant::PromptsMatchWorkload,
            "$.repeats[].requests.prompt_tokens",
            format!(
                "its prompts were {} tokens on average by the server's count, for a workload \
                 that asks {}: not the workload it states (a prompt-length calibration the \
                 server misanswered, or another workload)",
                format_number(mean),
                format_number(asked)
            ),
        ));
    }
}

fn gaps_span_decode(run: &Run, out: &mut Vec<Violation>) {
    let mut shares: Vec<f64> = Vec::new();
    for rep in &run.repeats {
        let r = &rep.requests;
        each_range(r.len(), |range| {
            for i in range {
                let gaps = r.itl_us.get(i);
                let (Some(t), Some(e)) = (r.ttft_us[i], r.e2e_us[i]) else {
                    continue;
                };
                if r.error[i].is_some() || gaps.len() < 2 || e.saturating_sub(t) < MIN_DECODE_US {
                    continue;
                }
                let sum: u64 = gaps.iter().map(|&g| u64::from(g)).sum();
                shares.push(sum as f64 / (e - t) as f64);
            }
        });
    }
    if shares.len() < 2 {
        return;
    }
    let mid = shares.len() / 2;
    let median = *shares.select_nth_unstable_by(mid, f64::total_cmp).1;
    if median < MIN_GAP_SHARE {
        out.push(Violation::new(
            Invariant::GapsSpanDecode,
            "$.repeats[].requests.itl_us",
            format!(
                "its inter-token gaps add up to {}% of the decode time (median over {} \
                 requests): gaps in another unit, or not this request's gaps",
                format_number(100.0 * median),
                shares.len()
            ),
        ));
    }
}
