//! Server metric names: which Prometheus series mean queue depth, queue time and KV-cache use on
//! each backend. The collector scrapes these; the analysis reads them back. Old and new vLLM
//! names are both listed (vLLM renames metrics across releases).

/// Gauges that count requests waiting for a slot, per backend.
pub const QUEUE_DEPTH_SERIES: [&str; 4] = [
    "vllm:num_requests_waiting",
    "sglang:num_queue_reqs",
    "llamacpp:requests_deferred",
    "tgi_queue_size",
];

/// Gauges that count requests being served.
pub const RUNNING_SERIES: [&str; 4] = [
    "vllm:num_requests_running",
    "sglang:num_running_reqs",
    "llamacpp:requests_processing",
    "tgi_batch_current_size",
];

/// Gauges of KV-cache use as a fraction 0–1.
pub const KV_USAGE_SERIES: [&str; 4] = [
    "vllm:kv_cache_usage_perc",
    "vllm:gpu_cache_usage_perc",
    "sglang:token_usage",
    "llamacpp:kv_cache_usage_ratio",
];

/// Histograms of server-side queue time in seconds.
pub const QUEUE_TIME_HISTOGRAMS: [&str; 4] = [
    "vllm:request_queue_time_seconds",
    "sglang:queue_time_seconds",
    "tgi_request_queue_duration",
    "vllm:time_in_queue_requests",
];

/// Counters of the server's own prefix cache, (hits, queries), in tokens: vLLM V1's, and
/// SGLang's cached prompt tokens (summed over its `cache_source` labels) over its prompt tokens.
pub const PREFIX_CACHE_COUNTERS: [(&str, &str); 2] = [
    (
        "vllm:prefix_cache_hits_total",
        "vllm:prefix_cache_queries_total",
    ),
    ("sglang:cached_tokens_total", "sglang:prompt_tokens_total"),
];

/// Counters of speculative decoding, (accepted, drafted) tokens (vLLM).
pub const SPEC_DECODE_COUNTERS: [(&str, &str); 1] = [(
    "vllm:spec_decode_num_accepted_tokens_total",
    "vllm:spec_decode_num_draft_tokens_total",
)];

fn is_counter(name: &str) -> bool {
    PREFIX_CACHE_COUNTERS
        .iter()
        .chain(&SPEC_DECODE_COUNTERS)
        .any(|(a, b)| *a == name || *b == name)
}

/// Every series the collector keeps from a scrape (histograms are kept as `_sum`/`_count`).
pub fn is_kept_series(name: &str) -> bool {
    let base = name
        .strip_suffix("_sum")
        .or_else(|| name.strip_suffix("_count"))
        .unwrap_or(name);
    QUEUE_DEPTH_SERIES.contains(&name)
        || RUNNING_SERIES.contains(&name)
        || KV_USAGE_SERIES.contains(&name)
        || QUEUE_TIME_HISTOGRAMS.contains(&base)
        || is_counter(name)
        || name.starts_with("llamacpp:")
}

/// The first of `names` present in `values`.
pub fn first_present(
    values: &std::collections::BTreeMap<String, f64>,
    names: &[&str],
) -> Option<(String, f64)> {
    names
        .iter()
        .find_map(|n| values.get(*n).map(|v| (n.to_string(), *v)))
}

/// The `q`-quantile (0–1) of a cumulative histogram, interpolated linearly inside the bucket as
/// Prometheus' `histogram_quantile` does. `None` when empty; the `+Inf` bucket yields the
/// largest finite bound.
pub fn histogram_quantile(q: f64, buckets: &[(Option<f64>, f64)]) -> Option<f64> {
    let total = buckets.last()?.1;
    if total <= 0.0 {
        return None;
    }
    let rank = q.clamp(0.0, 1.0) * total;
    let mut prev_le = 0.0;
    let mut prev_count = 0.0;
    for &(le, count) in buckets {
        if count >= rank {
            return match le {
                None => Some(prev_le),
                Some(le) => {
                    let in_bucket = count - prev_count;
                    if in_bucket <= 0.0 {
                        Some(le)
                    } else {
                        Some(prev_le + (le - prev_le) * (rank - prev_count) / in_bucket)
                    }
                }
            };
        }
        if let Some(le) = le {
            prev_le = le;
        }
        prev_count = count;
    }
    Some(prev_le)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_interpolates_inside_buckets() {
        let b = [
            (Some(0.1), 50.0),
            (Some(0.5), 90.0),
            (Some(1.0), 100.0),
            (None, 100.0),
        ];
        assert!((histogram_quantile(0.5, &b).unwrap() - 0.1).abs() < 1e-12);
        assert!((histogram_quantile(0.7, &b).unwrap() - 0.3).abs() < 1e-12);
        assert!((histogram_quantile(0.95, &b).unwrap() - 0.75).abs() < 1e-12);
        assert_eq!(histogram_quantile(0.5, &[(None, 0.0)]), None);
        assert_eq!(
            histogram_quantile(0.99, &[(Some(1.0), 1.0), (None, 10.0)]),
            Some(1.0)
        );
    }

    #[test]
    fn keeps_known_series() {
        assert!(is_kept_series("vllm:num_requests_waiting"));
        assert!(is_kept_series("vllm:request_queue_time_seconds_sum"));
        assert!(is_kept_series("llamacpp:tokens_predicted_total"));
        assert!(!is_kept_series("process_cpu_seconds_total"));
    }
}
