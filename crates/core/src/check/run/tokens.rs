//! What a run's token counts and gaps show against what it states: outputs within the cap it
//! sent, prompts about as long as it asked, and gaps that add up to the decode time (a measured stream
//! that goes on well after its last token is flagged).

use super::Stated;
use crate::base::blocks::each_range;
use crate::base::fmt::format_number;
use crate::check::invariant::{Invariant, Violation};
use crate::schema::{RequestColumns, Run, RunSource};

/// Prompts may be this much longer than asked (a chat template, special tokens).
const PROMPT_TEMPLATE_TOKENS: f64 = 64.0;
/// Median share of the decode time the gaps must cover; a unit error gives a thousandth.
const MIN_GAP_SHARE: f64 = 0.1;
/// A measured stream may end this long after its last token (its usage and `[DONE]` events)
/// before the wait is flagged.
const MIN_TAIL_US: f64 = 10_000.0;
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
    // llmperf tokenizes with a Llama tokenizer class whatever the model (its tokenizer is
    // hard-coded; pointed at the model's files, a GPT-2 style vocabulary still reads as Llama's),
    // so its counts stray further: held to half again the cap, which still catches a workload
    // that was not the one stated.
    let llmperf = run
        .import
        .as_ref()
        .is_some_and(|i| i.tool.eq_ignore_ascii_case("llmperf"));
    let slack = |c: u32| match (run.source == RunSource::Imported, llmperf) {
        (true, true) => c.div_ceil(2).max(2),
        (true, false) => retokenized_slack(c),
        _ => 0,
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

/// The first turns' prompt lengths a run states (every count, whatever its source says: a
/// requested length unlike the workload's is another workload as surely as a measured one, and
/// a source left null must not switch the check off; a session's later turns carry the
/// conversation so far, so only first turns are the workload's own prompt).
fn first_prompts(run: &Run) -> Vec<f64> {
    let mut v = Vec::new();
    for rep in &run.repeats {
        let r = &rep.requests;
        each_range(r.len(), |range| {
            for i in range {
                let first = r.turn.as_ref().is_none_or(|t| t[i].is_none_or(|t| t <= 1));
                if let (true, Some(p)) = (first, r.prompt_tokens[i]) {
                    v.push(f64::from(p));
                }
            }
        });
    }
    v
}

fn prompts(run: &Run, stated: &Stated, out: &mut Vec<Violation>) {
    let Some(asked) = stated.prompt_tokens_mean else {
        return;
    };
    let mut v = first_prompts(run);
    if v.is_empty() {
        return;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
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
        return;
    }
    // A session's later turns carry the conversation so far: without turns recorded (another
    // tool's file), its first turns cannot be told from them, and their spread says nothing.
    let turns_unknown = stated.sessions && run.repeats.iter().any(|r| r.requests.turn.is_none());
    if let Some(why) = stated
        .prompt_tokens_spread
        .filter(|_| !turns_unknown)
        .and_then(|asked_spread| spread_differs(&mut v, asked_spread, asked))
    {
        out.push(Violation::new(
            Invariant::PromptsMatchWorkload,
            "$.repeats[].requests.prompt_tokens",
            why,
        ));
    }
}

/// Fewest first-turn prompts whose spread is weighed: in 400,000 simulated runs each of 10 to
/// 12 honest draws (uniform 16–48; log-normal of CV 0.2 and 0.5), the draws fell within a
/// tenth of the spread asked at most 1 time in 400,000, so an honest run is not left out by chance.
const MIN_SPREAD_PROMPTS: usize = 10;
/// From this many prompts the realised spread must reach a quarter of the spread asked (none
/// of 100,000 simulated honest runs of 20 draws fell short of it, for uniform 16–48 and 32–96
/// and log-normal of CV 0.2 and 0.5), so that one length with the server's token-count noise
/// (8 tokens) is told from a spread of 32 tokens or more.
const MANY_PROMPTS: usize = 20;

/// Where the realised prompts' spread (10th to 90th percentile) is not the workload's: the
/// same length every time for a workload that asks lengths spread over `asked_spread` tokens
/// (less than a tenth of it, a quarter from 20 prompts, for a spread of at least 8 tokens and a
/// fifth of the mean), or
/// lengths spread over more than 16 tokens and half the mean for a workload that asks one
/// length (`asked_spread` 0). A chat template adds the same tokens to every prompt, so it
/// moves the lengths, never their spread.
fn spread_differs(v: &mut [f64], asked_spread: f64, asked_mean: f64) -> Option<String> {
    if v.len() < MIN_SPREAD_PROMPTS {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let (p10, p90) = (
        crate::base::stats::percentile_sorted(v, 10.0)?,
        crate::base::stats::percentile_sorted(v, 90.0)?,
    );
    let got = p90 - p10;
    let n = v.len();
    let varied = asked_spread >= 8.0_f64.max(0.2 * asked_mean);
    let least = if n >= MANY_PROMPTS { 0.25 } else { 0.1 };
    if varied && got < least * asked_spread {
        return Some(format!(
            "its prompts were {}–{} tokens (10th to 90th percentile of {n}), for a workload \
             whose prompt lengths spread over {} tokens: lengths of another workload",
            format_number(p10),
            format_number(p90),
            format_number(asked_spread)
        ));
    }
    (asked_spread == 0.0 && got > 16.0_f64.max(0.5 * asked_mean)).then(|| {
        format!(
            "its prompts spread over {}–{} tokens (10th to 90th percentile of {n}), for a \
             workload that asks every prompt {} tokens long: lengths of another workload",
            format_number(p10),
            format_number(p90),
            format_number(asked_mean)
        )
    })
}

/// The median of `v` (the upper one of an even count); `None` when empty.
fn median(v: &mut [f64]) -> Option<f64> {
    let mid = v.len() / 2;
    (mid < v.len()).then(|| *v.select_nth_unstable_by(mid, f64::total_cmp).1)
}

/// The gaps of each successful multi-token request against its decode time (end minus first
/// token): their share of it, and what is left after the last gap (the stream's tail), µs.
fn decode_spans(run: &Run) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (mut shares, mut tails, mut decodes) = (Vec::new(), Vec::new(), Vec::new());
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
                let decode = (e - t) as f64;
                shares.push(sum as f64 / decode);
                tails.push((decode - sum as f64).max(0.0));
                decodes.push(decode);
            }
        });
    }
    (shares, tails, decodes)
}

fn gaps_span_decode(run: &Run, out: &mut Vec<Violation>) {
    let (mut shares, mut tails, mut decodes) = decode_spans(run);
    if shares.len() < 2 {
        return;
    }
    let n = shares.len();
    let (Some(share), Some(tail), Some(decode)) = (
        median(&mut shares),
        median(&mut tails),
        median(&mut decodes),
    ) else {
        return;
    };
    let measured = run.source == RunSource::Measured;
    let tail_ms = format_number(tail / 1000.0);
    if share < MIN_GAP_SHARE {
        let why = if measured {
            format!(
                "the streams went on a median {tail_ms} ms after their last token (the server \
                 ended them late), or these are not this request's gaps"
            )
        } else {
            "gaps in another unit, or not this request's gaps".to_string()
        };
        out.push(Violation::new(
            Invariant::GapsSpanDecode,
            "$.repeats[].requests.itl_us",
            format!(
                "its inter-token gaps add up to {}% of the decode time (median over {n} \
                 requests): {why}",
                format_number(100.0 * share),
            ),
        ));
    } else if measured && tail > MIN_TAIL_US && tail > decode * MIN_GAP_SHARE {
        out.push(Violation::new(
            Invariant::StreamEndsAtLastToken,
            "$.repeats[].requests.e2e_us",
            format!(
                "its streams ended a median {tail_ms} ms after their last token ({}% of the \
                 decode time, over {n} requests): the server ends its streams late; TPOT and \
                 end-to-end times include that wait, as the peers' definitions do, inter-token \
                 latency does not",
                format_number(100.0 * tail / decode)
            ),
        ));
    }
}
