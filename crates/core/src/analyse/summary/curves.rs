//! The curves a report draws from one run's requests: percentile curves for the CDFs and
//! the prefill bins (TTFT against prompt length).

use serde::{Deserialize, Serialize};

/// Percentiles 0, 1, …, 100 (numpy-linear) of the per-request quantities, in ms: entry `k` is
/// the k-th percentile. Empty when there are no values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Curves {
    /// TTFT.
    pub ttft_ms: Vec<f64>,
    /// TPOT.
    pub tpot_ms: Vec<f64>,
    /// End-to-end.
    pub e2e_ms: Vec<f64>,
    /// The traffic measured: prompt tokens of the successful requests that report them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompt_tokens: Vec<f64>,
    /// Output tokens of the successful requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_tokens: Vec<f64>,
    /// Gaps between consecutive sends within a repeat (every request sent), in ms.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interarrival_ms: Vec<f64>,
    /// Prefill cost: TTFT against prompt length, the successful requests in up to
    /// [`PREFILL_BINS`] bins of nearly equal count by prompt length, one prompt length never
    /// split between two bins (a binned scatter: it reads the same at 100 requests and at a
    /// million).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ttft_by_prompt: Vec<PrefillBin>,
}

/// Bins of the prefill chart.
pub const PREFILL_BINS: usize = 20;

/// One bin of requests of similar prompt length.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PrefillBin {
    /// Median prompt tokens of the bin.
    pub prompt_tokens: f64,
    /// Median TTFT of the bin.
    pub ttft_p50_ms: f64,
    /// 90th percentile TTFT of the bin.
    pub ttft_p90_ms: f64,
    /// Requests in the bin.
    pub requests: u64,
}

/// Sorts token counts (small integers) by counting, stably and in linear time; a comparison
/// sort when there are few items or the largest is too large for a count table.
pub(super) fn sort_counts<T: Copy>(items: &mut [T], key: impl Fn(&T) -> u32) {
    let max = items.iter().map(&key).max().unwrap_or(0) as usize;
    if max > (1 << 20) || items.len() < 1024 {
        crate::base::order::sort_by_key(items, |x| key(x));
        return;
    }
    let mut start = vec![0usize; max + 2];
    let start = start.as_mut_slice(); // indexed per item: see `base::stats::rank_u32`
    for x in items.iter() {
        start[key(x) as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let copy = items.to_vec();
    for x in copy {
        let k = key(&x) as usize;
        items[start[k]] = x;
        start[k] += 1;
    }
}

/// TTFT against prompt length in (nearly) equal-count bins; pairs are (prompt tokens, TTFT µs).
/// A bin boundary never splits requests of the same prompt length, so two bins never show
/// the same length and the bins do not depend on the order of the requests.
pub(super) fn prefill_bins(pairs: &mut [(u32, u64)]) -> Vec<PrefillBin> {
    if pairs.is_empty() {
        return Vec::new();
    }
    sort_counts(pairs, |p| p.0);
    let n = pairs.len();
    let k = PREFILL_BINS.min(n);
    let mut bounds = vec![0usize];
    for b in 1..=k {
        let mut end = b * n / k;
        while end < n && end > 0 && pairs[end].0 == pairs[end - 1].0 {
            end += 1;
        }
        if end > *bounds.last().unwrap_or(&0) {
            bounds.push(end);
        }
    }
    bounds
        .windows(2)
        .map(|w| {
            let bin = &pairs[w[0]..w[1]];
            let mut ttft: Vec<f64> = bin.iter().map(|p| p.1 as f64 / 1000.0).collect();
            crate::base::sort::sort_f64(&mut ttft);
            let pct = |q| crate::base::stats::percentile_ranked(ttft.len(), q, |i| ttft[i]);
            PrefillBin {
                prompt_tokens: pairs_median(bin),
                ttft_p50_ms: pct(50.0).unwrap_or(f64::NAN),
                ttft_p90_ms: pct(90.0).unwrap_or(f64::NAN),
                requests: bin.len() as u64,
            }
        })
        .collect()
}

/// The median prompt length of a non-empty, sorted bin.
fn pairs_median(bin: &[(u32, u64)]) -> f64 {
    crate::base::stats::percentile_ranked(bin.len(), 50.0, |i| bin[i].0 as f64).unwrap_or(f64::NAN)
}

pub(super) fn curve(sorted_ms: impl Fn(usize) -> f64, n: usize) -> Vec<f64> {
    if n == 0 {
        return Vec::new();
    }
    (0..=100)
        .filter_map(|q| crate::base::stats::percentile_ranked(n, q as f64, &sorted_ms))
        .collect()
}
