//! What explains a configuration beyond its latency, as a reader sees it beside the candidates:
//! per candidate, the prefix-cache hit rate with TTFT on hits and misses, speculative
//! decoding's acceptance, GPU energy per output token and the cost per million output tokens;
//! one line saying what was not measured, and why, when no candidate has it.

use crate::analyse::report::{CandidateReport, ProfileReport};
use crate::analyse::summary::signals::{ServerSignals, CACHE_NOT_REPORTED, DRAFT_NOT_REPORTED};
use crate::analyse::summary::Summary;
use crate::base::fmt::format_number;

fn pct(v: f64) -> String {
    format!("{} %", format_number(v * 100.0))
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{} ms", format_number(v)))
}

fn cache(s: &ServerSignals) -> Option<String> {
    let counters = s
        .server_prefix_cache_hit_rate
        .map(|r| format!("the server's own counters say {}", pct(r)));
    let Some(rate) = s.prefix_cache_hit_rate else {
        return counters.map(|c| format!("prefix-cache hit rate: {c} of prompt tokens"));
    };
    let also = counters.map(|c| format!("; {c}")).unwrap_or_default();
    Some(format!(
        "prefix-cache hit rate {} of prompt tokens ({} of requests reused some; TTFT p95 {} on hits, {} on misses{also})",
        pct(rate),
        s.cache_hit_request_share.map_or_else(|| "–".into(), pct),
        ms(s.ttft_cache_hit.p95_ms),
        ms(s.ttft_cache_miss.p95_ms),
    ))
}

fn draft(s: &ServerSignals) -> Option<String> {
    match (s.draft_acceptance_rate, s.server_draft_acceptance_rate) {
        (Some(rate), _) => Some(format!(
            "speculative decoding: {} of {} draft tokens accepted",
            pct(rate),
            s.draft_tokens_total.unwrap_or(0)
        )),
        (None, Some(rate)) => Some(format!(
            "speculative decoding: {} of draft tokens accepted, by the server's own counters",
            pct(rate)
        )),
        (None, None) => None,
    }
}

fn energy(s: &Summary) -> Option<String> {
    let j = s.energy_per_output_token_j?;
    Some(format!(
        "GPU energy {} J per output token, mean {} W",
        format_number(j),
        s.mean_gpu_power_w.map_or_else(|| "–".into(), format_number)
    ))
}

fn cost(c: &CandidateReport) -> Option<String> {
    let usd = c.cost_per_million_output_tokens_usd?;
    Some(format!(
        "cost ${} per million output tokens",
        format_number(usd)
    ))
}

fn line(c: &CandidateReport) -> Option<String> {
    let summary = c.summary.as_ref()?;
    let s = &summary.signals;
    let parts: Vec<String> = [cache(s), draft(s), energy(summary), cost(c)]
        .into_iter()
        .flatten()
        .collect();
    (!parts.is_empty()).then(|| format!("{}: {}", c.name, parts.join("; ")))
}

/// One line per candidate that reports a signal, then what no candidate reports.
pub(super) fn lines(p: &ProfileReport) -> Vec<String> {
    let mut out: Vec<String> = p.candidates.iter().filter_map(line).collect();
    let sigs: Vec<&ServerSignals> = p
        .candidates
        .iter()
        .filter_map(|c| c.summary.as_ref().map(|s| &s.signals))
        .collect();
    if sigs.is_empty() {
        return out;
    }
    if sigs.iter().all(|s| cache(s).is_none()) {
        out.push(CACHE_NOT_REPORTED.into());
    }
    if sigs.iter().all(|s| draft(s).is_none()) {
        out.push(DRAFT_NOT_REPORTED.into());
    }
    let summaries = p.candidates.iter().filter_map(|c| c.summary.as_ref());
    if summaries
        .clone()
        .all(|s| s.energy_per_output_token_j.is_none())
    {
        out.push(ENERGY_NOT_MEASURED.into());
    }
    out.extend(price_line(p));
    out
}

/// GPU energy: no candidate has a reading.
const ENERGY_NOT_MEASURED: &str = "GPU energy: not measured (no NVML energy counter: the runs' notes say why); energy per output token and mean power are null, not 0";

fn price_line(p: &ProfileReport) -> Option<String> {
    Some(match p.price.as_ref()? {
        Ok((usd, gpus)) => format!(
            "cost at ${} per GPU-hour × {gpus} GPU(s) per server ÷ output throughput",
            format_number(*usd)
        ),
        Err(why) => format!("cost not computed: the plan's {why}"),
    })
}
