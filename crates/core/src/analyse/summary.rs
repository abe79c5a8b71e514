//! Summaries recomputed from the raw per-request data, never trusted from a
//! file.
//!
//! Definitions (shared with vLLM, SGLang and AIPerf; see `reference/peer-tools.md` §1):
//! - TTFT: send → first non-empty content event.
//! - TPOT: `(e2e − TTFT)/(output_tokens − 1)` per request with more than one output token; the
//!   first token is excluded. Statistics are taken across requests.
//! - ITL: every gap between consecutive content events, pooled across requests (an event may
//!   carry several tokens, so ITL can exceed TPOT).
//! - e2e: send → end of stream.
//! - Queue wait: client queue (open loop: actual − intended send) plus the server's per-request
//!   queue time where it reports one; else estimated from the server's queue-time histogram.
//! - Latency statistics use successful requests only; failures count in `failure_rate`.
//! - Output throughput: output tokens of successful requests / measured window, where a
//!   repeat's window runs from its first send to its last response end; repeats add up.
//! - Goodput: successful requests whose TTFT, TPOT, e2e and (when known per request) queue wait
//!   are each within the tightest limit the profile's SLO sets on that quantity.

mod curves;
mod server;
pub mod signals;
pub mod turns;

use curves::{curve, prefill_bins, sort_counts};
pub use curves::{Curves, PrefillBin};
pub use server::peak_memory_mb;
use server::{add_energy, add_telemetry, histogram_queue};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::base::blocks::each_range;
use crate::base::metric::{Metric, Quantity, Scalar};
use crate::base::stats::Distribution;
use crate::schema::{Repeat, TokenSource};

/// Everything computed for one run, or one repeat of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Summary {
    /// Measured requests sent (warm-up excluded).
    pub requests_sent: u64,
    /// Requests that completed without error.
    pub requests_ok: u64,
    /// Requests that failed (HTTP error, stream error, timeout, reset, no `[DONE]` …).
    pub requests_failed: u64,
    /// failed / sent; `null` when nothing was sent.
    pub failure_rate: Option<f64>,
    /// Time to first token.
    pub ttft: Distribution,
    /// Time per output token (first token excluded).
    pub tpot: Distribution,
    /// Inter-token (inter-event) gaps.
    pub itl: Distribution,
    /// End-to-end latency.
    pub e2e: Distribution,
    /// Queue wait.
    pub queue_wait: Distribution,
    /// Where queue wait came from; `null` when it was not measured.
    pub queue_wait_source: Option<String>,
    /// Prompt tokens of successful requests.
    pub prompt_tokens_total: u64,
    /// Output tokens of successful requests.
    pub output_tokens_total: u64,
    /// How many output counts came from each source (`usage`, `events` …).
    pub output_tokens_sources: BTreeMap<String, u64>,
    /// Measured window in seconds (sum over repeats).
    pub window_s: Option<f64>,
    /// Output tokens per second over the window.
    pub throughput_tps: Option<f64>,
    /// Successful requests per second over the window.
    pub request_throughput_rps: Option<f64>,
    /// Requests per second that met every per-request SLO.
    pub goodput_rps: Option<f64>,
    /// Share of sent requests that met every per-request SLO.
    pub goodput_ratio: Option<f64>,
    /// Output tokens per second of the requests that met every per-request SLO.
    #[serde(default)]
    pub goodput_tps: Option<f64>,
    /// Peak memory used for SLOs: GPU where sampled, else server RSS.
    pub peak_memory_mb: Option<f64>,
    /// Peak GPU memory (NVML).
    pub peak_gpu_memory_mb: Option<f64>,
    /// Peak resident memory of the launched server.
    pub peak_rss_mb: Option<f64>,
    /// `gpu` or `server_rss`: what `peak_memory_mb` is.
    pub memory_source: Option<String>,
    /// Largest server queue depth seen in `/metrics`.
    pub queue_depth_max: Option<f64>,
    /// The series queue depth was read from.
    pub queue_depth_series: Option<String>,
    /// Largest KV-cache use seen (0–1).
    pub kv_cache_usage_max: Option<f64>,
    /// Energy the GPUs used over the repeats, joules (NVML's counter); `null` unless every
    /// repeat has a reading.
    #[serde(default)]
    pub gpu_energy_j: Option<f64>,
    /// `gpu_energy_j` ÷ output tokens of the successful requests.
    #[serde(default)]
    pub energy_per_output_token_j: Option<f64>,
    /// `gpu_energy_j` ÷ the measured window: mean GPU power, watts.
    #[serde(default)]
    pub mean_gpu_power_w: Option<f64>,
    /// What the servers report of prefix-cache hits and speculative decoding.
    #[serde(default)]
    pub signals: signals::ServerSignals,
    /// Percentile curves for CDF charts (pooled summaries only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curves: Option<Curves>,
}

impl Summary {
    /// The value of a metric; `null` when not measured.
    pub fn metric(&self, m: Metric) -> Option<f64> {
        match m {
            Metric::Latency(q, stat) => {
                let d = match q {
                    Quantity::Ttft => &self.ttft,
                    Quantity::Tpot => &self.tpot,
                    Quantity::Itl => &self.itl,
                    Quantity::E2e => &self.e2e,
                    Quantity::QueueWait => &self.queue_wait,
                };
                d.stat(stat)
            }
            Metric::Scalar(s) => match s {
                Scalar::ThroughputTps => self.throughput_tps,
                Scalar::RequestThroughputRps => self.request_throughput_rps,
                Scalar::GoodputRps => self.goodput_rps,
                Scalar::GoodputRatio => self.goodput_ratio,
                Scalar::GoodputTps => self.goodput_tps,
                Scalar::FailureRate => self.failure_rate,
                Scalar::PeakMemoryMb => self.peak_memory_mb,
                Scalar::QueueDepthMax => self.queue_depth_max,
            },
        }
    }
}

/// Per-request ceilings (µs) that decide whether a request counts toward goodput.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Thresholds {
    /// TTFT ceiling.
    pub ttft_us: Option<f64>,
    /// TPOT ceiling.
    pub tpot_us: Option<f64>,
    /// End-to-end ceiling.
    pub e2e_us: Option<f64>,
    /// Queue-wait ceiling.
    pub queue_us: Option<f64>,
}

impl Thresholds {
    /// The tightest limit the SLO sets on each per-request quantity.
    pub fn from_slo(slo: &[(Metric, f64)]) -> Thresholds {
        let mut t = Thresholds::default();
        for &(m, limit) in slo {
            if let Metric::Latency(q, _) = m {
                let slot = match q {
                    Quantity::Ttft => &mut t.ttft_us,
                    Quantity::Tpot => &mut t.tpot_us,
                    Quantity::E2e => &mut t.e2e_us,
                    Quantity::QueueWait => &mut t.queue_us,
                    Quantity::Itl => continue,
                };
                let us = limit * 1000.0;
                *slot = Some(slot.map_or(us, |v: f64| v.min(us)));
            }
        }
        t
    }
}

/// Raw per-request values of one or more repeats, gathered once.
#[derive(Default)]
struct Gathered<'a> {
    sent: u64,
    ok: u64,
    good: u64,
    good_tokens: u64,
    ttft_us: Vec<u64>,
    e2e_us: Vec<u64>,
    tpot_ms: Vec<f64>,
    queue_us: Vec<u64>,
    queue_client: bool,
    queue_server: bool,
    itl: Vec<&'a [u32]>,
    prompt_tokens: u64,
    output_tokens: u64,
    /// (prompt tokens, TTFT µs) of the successful requests that report a prompt length.
    prompt_ttft: Vec<(u32, u64)>,
    /// Output tokens of the successful requests.
    outputs: Vec<u32>,
    /// Gaps between consecutive sends, µs.
    interarrival_us: Vec<u64>,
    sources: BTreeMap<String, u64>,
    window_us: Option<u64>,
}

/// How the output tokens were counted, by [`source_slot`].
const SOURCE_NAMES: [&str; 5] = [
    TokenSource::ALL[0].as_str(),
    TokenSource::ALL[1].as_str(),
    TokenSource::ALL[2].as_str(),
    TokenSource::ALL[3].as_str(),
    "unknown",
];

fn source_slot(s: Option<TokenSource>) -> usize {
    s.map_or(TokenSource::ALL.len(), |s| s as usize)
}

// One pass over a repeat's columns gathers every quantity; kept in one function (past
// 80 lines) because splitting it would walk the million-request columns once per quantity.
fn gather<'a>(rep: &'a Repeat, th: &Thresholds) -> Gathered<'a> {
    let r = &rep.requests;
    let n = r.len();
    let mut g = Gathered {
        sent: n as u64,
        ..Default::default()
    };
    g.ttft_us.reserve(n);
    g.e2e_us.reserve(n);
    g.tpot_ms.reserve(n);
    g.outputs.reserve(n);
    g.prompt_ttft.reserve(n);
    let all_ok = r.error.iter().all(Option::is_none);
    if all_ok {
        g.itl.push(r.itl_us.all());
    }
    // The columns as slices: the page's size-optimized build calls `Vec`'s `Index` as a
    // function, once per request and column.
    let (send_us, ttft_us, e2e_us) = (&r.send_offset_us[..], &r.ttft_us[..], &r.e2e_us[..]);
    let (error, outputs, prompts) = (&r.error[..], &r.output_tokens[..], &r.prompt_tokens[..]);
    let (sources, server_queue_us) = (&r.output_tokens_source[..], &r.server_queue_us[..]);
    let intended_us = r.intended_offset_us.as_deref();
    let (mut first, mut last) = (u64::MAX, 0u64);
    let mut by_source = [0u64; SOURCE_NAMES.len()];
    each_range(n, |range| {
        for i in range {
            let send = send_us[i];
            first = first.min(send);
            if let Some(e) = e2e_us[i] {
                last = last.max(send.saturating_add(e));
            }
            if error[i].is_some() {
                continue;
            }
            let (Some(ttft), Some(e2e), Some(out)) = (ttft_us[i], e2e_us[i], outputs[i]) else {
                continue; // excluded by validation for successful requests
            };
            g.ok += 1;
            g.ttft_us.push(ttft);
            g.e2e_us.push(e2e);
            g.output_tokens += out as u64;
            g.prompt_tokens += prompts[i].unwrap_or(0) as u64;
            g.outputs.push(out);
            if let Some(p) = prompts[i] {
                g.prompt_ttft.push((p, ttft));
            }
            by_source[source_slot(sources[i])] += 1;
            let tpot_us = (out > 1).then(|| e2e.saturating_sub(ttft) as f64 / (out - 1) as f64);
            if let Some(t) = tpot_us {
                g.tpot_ms.push(t / 1000.0);
            }
            let client = intended_us.map(|intended| send.saturating_sub(intended[i]));
            let server = server_queue_us[i];
            g.queue_client |= client.is_some();
            g.queue_server |= server.is_some();
            let queue = match (client, server) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
            };
            if let Some(q) = queue {
                g.queue_us.push(q);
            }
            if !all_ok {
                g.itl.push(r.itl_us.get(i));
            }
            let within = |v: Option<f64>, limit: Option<f64>| match (v, limit) {
                (Some(v), Some(l)) => v <= l,
                _ => true,
            };
            if within(Some(ttft as f64), th.ttft_us)
                && within(tpot_us, th.tpot_us)
                && within(Some(e2e as f64), th.e2e_us)
                && within(queue.map(|q| q as f64), th.queue_us)
            {
                g.good += 1;
                g.good_tokens += u64::from(out);
            }
        }
    });
    for (name, &count) in SOURCE_NAMES.iter().zip(&by_source) {
        if count > 0 {
            g.sources.insert(name.to_string(), count);
        }
    }
    if !rep.send_times_unknown && n > 1 {
        let mut sends = r.send_offset_us.clone();
        crate::base::sort::sort_u64(&mut sends);
        g.interarrival_us = sends.windows(2).map(|w| w[1] - w[0]).collect();
    }
    if rep.send_times_unknown {
        // The requests cannot be placed in time: only the tool's own window can be used.
        g.window_us = rep.reported_window_us;
    } else if n > 0 && last >= first {
        g.window_us = Some(last - first);
    }
    g
}

fn merge<'a>(parts: Vec<Gathered<'a>>) -> Gathered<'a> {
    let mut all = Gathered::default();
    for p in parts {
        all.sent += p.sent;
        all.ok += p.ok;
        all.good += p.good;
        all.good_tokens += p.good_tokens;
        all.ttft_us.extend(p.ttft_us);
        all.e2e_us.extend(p.e2e_us);
        all.tpot_ms.extend(p.tpot_ms);
        all.queue_us.extend(p.queue_us);
        all.queue_client |= p.queue_client;
        all.queue_server |= p.queue_server;
        all.itl.extend(p.itl);
        all.prompt_tokens += p.prompt_tokens;
        all.output_tokens += p.output_tokens;
        all.prompt_ttft.extend(p.prompt_ttft);
        all.outputs.extend(p.outputs);
        all.interarrival_us.extend(p.interarrival_us);
        for (k, v) in p.sources {
            *all.sources.entry(k).or_insert(0) += v;
        }
        all.window_us = match (all.window_us, p.window_us) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }
    all
}

fn finish(mut g: Gathered<'_>, reps: &[&Repeat], with_curves: bool) -> Summary {
    let window_s = g.window_us.filter(|&w| w > 0).map(|w| w as f64 / 1e6);
    let per_s = |x: u64| window_s.map(|w| x as f64 / w);
    let (queue_wait, queue_wait_source) = if !g.queue_us.is_empty() {
        let src = match (g.queue_client, g.queue_server) {
            (true, true) => "client + server, per request",
            (true, false) => "client, per request (server queue not reported)",
            _ => "server, per request",
        };
        (
            Distribution::from_us(&mut g.queue_us),
            Some(src.to_string()),
        )
    } else {
        histogram_queue(reps)
    };
    let itl = Distribution::from_us_u32_parts(&g.itl);
    let ttft = Distribution::from_us(&mut g.ttft_us);
    let tpot = Distribution::from_ms(&mut g.tpot_ms);
    let e2e = Distribution::from_us(&mut g.e2e_us);
    let curves = with_curves.then(|| {
        let mut prompts: Vec<u32> = g.prompt_ttft.iter().map(|p| p.0).collect();
        sort_counts(&mut prompts, |p| *p);
        sort_counts(&mut g.outputs, |o| *o);
        crate::base::sort::sort_u64(&mut g.interarrival_us);
        Curves {
            ttft_ms: curve(|i| g.ttft_us[i] as f64 / 1000.0, g.ttft_us.len()),
            tpot_ms: curve(|i| g.tpot_ms[i], g.tpot_ms.len()),
            e2e_ms: curve(|i| g.e2e_us[i] as f64 / 1000.0, g.e2e_us.len()),
            prompt_tokens: curve(|i| prompts[i] as f64, prompts.len()),
            output_tokens: curve(|i| g.outputs[i] as f64, g.outputs.len()),
            interarrival_ms: curve(
                |i| g.interarrival_us[i] as f64 / 1000.0,
                g.interarrival_us.len(),
            ),
            ttft_by_prompt: prefill_bins(&mut g.prompt_ttft),
        }
    });
    let mut s = Summary {
        curves,
        requests_sent: g.sent,
        requests_ok: g.ok,
        requests_failed: g.sent - g.ok,
        failure_rate: (g.sent > 0).then(|| (g.sent - g.ok) as f64 / g.sent as f64),
        ttft,
        tpot,
        itl,
        e2e,
        queue_wait,
        queue_wait_source,
        prompt_tokens_total: g.prompt_tokens,
        output_tokens_total: g.output_tokens,
        output_tokens_sources: g.sources,
        window_s,
        throughput_tps: per_s(g.output_tokens),
        request_throughput_rps: per_s(g.ok),
        goodput_rps: per_s(g.good),
        goodput_ratio: (g.sent > 0).then(|| g.good as f64 / g.sent as f64),
        goodput_tps: per_s(g.good_tokens),
        ..Default::default()
    };
    add_telemetry(&mut s, reps);
    s.signals = signals::signals(reps);
    add_energy(&mut s, reps);
    s
}

/// Energy per output token and mean power, where every repeat has its GPU energy.
/// Summaries of a run: pooled over all repeats, and one per repeat.
pub fn summarize(repeats: &[Repeat], th: &Thresholds) -> (Summary, Vec<Summary>) {
    let parts: Vec<Gathered<'_>> = repeats.iter().map(|r| gather(r, th)).collect();
    if parts.len() == 1 {
        let reps: Vec<&Repeat> = repeats.iter().collect();
        let pooled = finish(merge(parts), &reps, true);
        let one = Summary {
            curves: None,
            ..pooled.clone()
        };
        return (pooled, vec![one]);
    }
    // Per-repeat summaries need their own copies; the pooled one takes ownership last.
    let per: Vec<Summary> = repeats
        .iter()
        .map(|r| finish(gather(r, th), &[r], false))
        .collect();
    let reps: Vec<&Repeat> = repeats.iter().collect();
    (finish(merge(parts), &reps, true), per)
}

#[cfg(test)]
mod tests;
