//! What the server and the machine said during a run, folded into its summary: GPU energy, the
//! queue wait read from the server's histogram where no request carries its own, peak memory,
//! queue depth and KV-cache use.

use super::Summary;
use crate::base::stats::Distribution;
use crate::base::telemetry::{self, first_present};
use crate::schema::Repeat;

/// GPU energy over the run, per output token and as mean power, when every repeat read it.
pub(super) fn add_energy(s: &mut Summary, reps: &[&Repeat]) {
    let readings: Option<Vec<f64>> = reps.iter().map(|r| r.gpu_energy_j).collect();
    let Some(j) = readings
        .filter(|r| !r.is_empty())
        .map(|r| r.iter().sum::<f64>())
    else {
        return;
    };
    s.gpu_energy_j = Some(j);
    s.energy_per_output_token_j =
        (s.output_tokens_total > 0).then(|| j / s.output_tokens_total as f64);
    s.mean_gpu_power_w = s.window_s.map(|w| j / w);
}

/// Queue wait from the server's histogram deltas when no per-request value exists.
pub(super) fn histogram_queue(reps: &[&Repeat]) -> (Distribution, Option<String>) {
    let hists: Vec<_> = reps
        .iter()
        .filter_map(|r| r.server_queue_histogram.as_ref())
        .collect();
    let Some(first) = hists.first() else {
        return (Distribution::default(), None);
    };
    let mut buckets: Vec<(Option<f64>, f64)> =
        first.buckets.iter().map(|b| (b.le_seconds, 0.0)).collect();
    let (mut count, mut sum) = (0.0, 0.0);
    for h in &hists {
        if h.metric != first.metric || h.buckets.len() != buckets.len() {
            return (Distribution::default(), None);
        }
        count += h.count;
        sum += h.sum_seconds;
        for (acc, b) in buckets.iter_mut().zip(&h.buckets) {
            acc.1 += b.count;
        }
    }
    if count <= 0.0 {
        return (Distribution::default(), None);
    }
    if let Some(why) = histogram_contradiction(&buckets, count, reps)
        .or_else(|| past_first_token(&buckets, sum, reps))
    {
        let not = format!("server histogram {} not believed: {why}", first.metric);
        return (Distribution::default(), Some(not));
    }
    let q = |p: f64| telemetry::histogram_quantile(p, &buckets).map(|s| s * 1000.0);
    let d = Distribution {
        count: count.round() as u64,
        mean_ms: Some(sum / count * 1000.0),
        min_ms: None,
        p50_ms: q(0.50),
        p90_ms: q(0.90),
        p95_ms: q(0.95),
        p99_ms: q(0.99),
        max_ms: None,
    };
    (
        d,
        Some(format!(
            "server histogram {} (bucket-interpolated)",
            first.metric
        )),
    )
}

/// Why a queue-time histogram over the repeats cannot be the server's account of their
/// requests: buckets that are not cumulative (a count falls as the bound rises, or the last
/// is not the total), or a count of observations other than the requests it served — at least
/// the successful ones, at most those sent (5 % and 2 requests of slack for scrape timing).
fn histogram_contradiction(
    buckets: &[(Option<f64>, f64)],
    count: f64,
    reps: &[&Repeat],
) -> Option<String> {
    let cumulative = buckets.windows(2).all(|w| w[1].1 >= w[0].1)
        && buckets.iter().all(|b| b.1 >= 0.0 && b.1.is_finite())
        && buckets.last().is_some_and(|b| (b.1 - count).abs() <= 0.5);
    if !cumulative {
        return Some("its buckets are not cumulative counts ending at the total".into());
    }
    let sent: usize = reps.iter().map(|r| r.requests.len()).sum();
    let ok: usize = reps
        .iter()
        .map(|r| r.requests.error.iter().filter(|e| e.is_none()).count())
        .sum();
    let slack = (sent as f64 * 0.05).max(2.0);
    if count + slack < ok as f64 || count > sent as f64 + slack {
        return Some(format!(
            "it counted {} requests where the run sent {sent} ({ok} successful)",
            crate::base::fmt::format_number(count)
        ));
    }
    None
}

/// Why a queue-time histogram cannot be the queueing of these requests: a request leaves the
/// queue before its first token (a failed one before it ends), so the histogram can neither
/// sum to more than their times to first token, nor count more waits past a bucket's bound
/// than there are requests that lasted that long (5 % and 2 requests of slack, as for the
/// count, for scrape timing).
fn past_first_token(
    buckets: &[(Option<f64>, f64)],
    sum_s: f64,
    reps: &[&Repeat],
) -> Option<String> {
    let mut longest: Vec<f64> = Vec::new();
    for rep in reps {
        let r = &rep.requests;
        let span_s = (0..r.len())
            .filter_map(|i| r.e2e_us[i].map(|e| r.send_offset_us[i].saturating_add(e)))
            .max()
            .unwrap_or(0) as f64
            / 1e6;
        for i in 0..r.len() {
            let us = if r.error[i].is_none() {
                r.ttft_us[i]
            } else {
                r.e2e_us[i]
            };
            longest.push(us.map_or(span_s, |u| u as f64 / 1e6));
        }
    }
    let slack = (longest.len() as f64 * 0.05).max(2.0);
    let most = longest.iter().copied().fold(0.0, f64::max);
    let bound_s: f64 = longest.iter().sum();
    if sum_s > bound_s * 1.05 + slack * most + 0.001 {
        return Some(format!(
            "its waits add up to {} s, more than the requests' {} s to their first token (a \
             request leaves the queue before its first token)",
            crate::base::fmt::format_number(sum_s),
            crate::base::fmt::format_number(bound_s)
        ));
    }
    let total = buckets.last().map_or(0.0, |b| b.1);
    for &(le, cum) in buckets {
        let Some(le) = le else { continue };
        let lasted = longest.iter().filter(|&&l| l > le).count() as f64;
        if total - cum > lasted + slack {
            return Some(format!(
                "it counted {} waits over {} s where {} request(s) took that long to their first \
                 token (a request leaves the queue before its first token)",
                crate::base::fmt::format_number(total - cum),
                crate::base::fmt::format_number(le),
                lasted
            ));
        }
    }
    None
}

/// A run's peak memory, MB: the GPU's where sampled, else the server's RSS (as its summary's
/// `peak_memory_mb`); `None`: neither sampled.
pub fn peak_memory_mb(reps: &[Repeat]) -> Option<f64> {
    let peak = |f: fn(&crate::schema::MemorySample) -> Option<f64>| {
        reps.iter()
            .flat_map(|r| &r.memory)
            .filter_map(f)
            .reduce(f64::max)
    };
    peak(|m| m.gpu_used_mb).or_else(|| peak(|m| m.server_rss_mb))
}

/// Peak memory (the GPU's, else the server's RSS), the deepest queue and the fullest KV cache
/// the samples show.
pub(super) fn add_telemetry(s: &mut Summary, reps: &[&Repeat]) {
    let max = |acc: &mut Option<f64>, v: f64| *acc = Some(acc.map_or(v, |a: f64| a.max(v)));
    for rep in reps {
        for m in &rep.memory {
            if let Some(v) = m.gpu_used_mb {
                max(&mut s.peak_gpu_memory_mb, v);
            }
            if let Some(v) = m.server_rss_mb {
                max(&mut s.peak_rss_mb, v);
            }
        }
        for sample in &rep.server_metrics {
            if let Some((name, v)) = first_present(&sample.values, &telemetry::QUEUE_DEPTH_SERIES) {
                max(&mut s.queue_depth_max, v);
                s.queue_depth_series.get_or_insert(name);
            }
            if let Some((_, v)) = first_present(&sample.values, &telemetry::KV_USAGE_SERIES) {
                max(&mut s.kv_cache_usage_max, v);
            }
        }
    }
    (s.peak_memory_mb, s.memory_source) = match (s.peak_gpu_memory_mb, s.peak_rss_mb) {
        (Some(g), _) => (Some(g), Some("gpu".to_string())),
        (None, Some(r)) => (Some(r), Some("server_rss".to_string())),
        _ => (None, None),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{HistogramBucket, HistogramDelta, RequestColumns, RequestRow};

    /// A repeat of `n` successful requests whose server histogram counted `buckets` (le s, count).
    fn rep(n: usize, buckets: &[(Option<f64>, f64)]) -> Repeat {
        let rows = (0..n)
            .map(|i| RequestRow {
                send_offset_us: i as u64,
                ttft_us: Some(20_000),
                e2e_us: Some(30_000),
                output_tokens: Some(1),
                ..RequestRow::default()
            })
            .collect();
        let count = buckets.last().map_or(0.0, |b| b.1);
        Repeat {
            requests: RequestColumns::from_rows(rows),
            server_queue_histogram: Some(HistogramDelta {
                metric: "vllm:request_queue_time_seconds".into(),
                count,
                sum_seconds: 0.01 * count,
                buckets: buckets
                    .iter()
                    .map(|&(le_seconds, count)| HistogramBucket { le_seconds, count })
                    .collect(),
            }),
            ..Repeat::default()
        }
    }

    #[test]
    fn a_histogram_is_believed_only_as_an_account_of_the_runs_requests() {
        let honest = rep(8, &[(Some(0.001), 2.0), (Some(0.01), 8.0), (None, 8.0)]);
        let (d, src) = histogram_queue(&[&honest]);
        assert_eq!(d.count, 8);
        assert!(d.p95_ms.is_some() && !src.unwrap().contains("not believed"));
        for (what, lying) in [
            ("2 of 8", rep(8, &[(Some(0.001), 2.0), (None, 2.0)])),
            ("2,000,000 of 8", rep(8, &[(Some(0.001), 2e6), (None, 2e6)])),
            (
                "not cumulative",
                rep(8, &[(Some(0.001), 200.0), (None, 8.0)]),
            ),
            (
                "8 waits over 5 s where no request took 5 s to its first token",
                rep(8, &[(Some(5.0), 0.0), (Some(10.0), 8.0), (None, 8.0)]),
            ),
            ("45 s of waits in 0.16 s of first tokens", {
                let mut r = rep(8, &[(Some(0.001), 2.0), (Some(0.01), 8.0), (None, 8.0)]);
                r.server_queue_histogram.as_mut().unwrap().sum_seconds = 45.0;
                r
            }),
        ] {
            let (d, src) = histogram_queue(&[&lying]);
            assert_eq!(d.p95_ms, None, "{what}");
            assert!(src.unwrap().contains("not believed"), "{what}");
        }
    }
}
