//! Prometheus text exposition: just enough to read gauges, counters and histogram buckets.
//!
//! Hand-written: prometheus-parse 0.2.5 matches metric names with `\w+`, which rejects the `:`
//! in `vllm:…`, `sglang:…` and `llamacpp:…` names, i.e. every series sloscope needs.

use std::collections::BTreeMap;

use sloscope_core::schema::{HistogramBucket, HistogramDelta};

/// One scrape: plain series summed over label sets, and histogram buckets per family.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scrape {
    /// `name` → value (summed over label sets).
    pub values: BTreeMap<String, f64>,
    /// family → (`le` → cumulative count), summed over label sets.
    pub buckets: BTreeMap<String, BTreeMap<LeKey, f64>>,
}

/// A bucket bound ordered numerically, `+Inf` last.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeKey(pub f64);

impl Eq for LeKey {}

impl PartialOrd for LeKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for LeKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Parses exposition text. Malformed lines and non-finite values are skipped: a missing series
/// reads as absent (`null` downstream), never as 0.
pub fn parse(text: &str) -> Scrape {
    let mut s = Scrape::default();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, labels, rest) = match line.find(['{', ' ', '\t']) {
            Some(i) if line.as_bytes()[i] == b'{' => match line[i..].find('}') {
                Some(j) => (&line[..i], &line[i + 1..i + j], &line[i + j + 1..]),
                None => continue,
            },
            Some(i) => (&line[..i], "", &line[i..]),
            None => continue,
        };
        let Some(value) = rest.split_whitespace().next().and_then(parse_value) else {
            continue;
        };
        if let Some(family) = name.strip_suffix("_bucket") {
            if let Some(le) = label(labels, "le").and_then(parse_value) {
                *s.buckets
                    .entry(family.to_string())
                    .or_default()
                    .entry(LeKey(le))
                    .or_insert(0.0) += value;
                continue;
            }
        }
        if value.is_finite() {
            *s.values.entry(name.to_string()).or_insert(0.0) += value;
        }
    }
    s
}

fn parse_value(v: &str) -> Option<f64> {
    match v {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => None,
        _ => v.parse().ok(),
    }
}

fn label<'a>(labels: &'a str, key: &str) -> Option<&'a str> {
    for part in labels.split(',') {
        let (k, v) = part.split_once('=')?;
        if k.trim() == key {
            return Some(v.trim().trim_matches('"'));
        }
    }
    None
}

/// `end − start` of histogram `family`, or `None` when the end scrape lacks it.
pub fn histogram_delta(family: &str, start: &Scrape, end: &Scrape) -> Option<HistogramDelta> {
    let e = end.buckets.get(family)?;
    let s = start.buckets.get(family);
    let get = |m: &Scrape, k: &str| m.values.get(&format!("{family}{k}")).copied();
    let count = get(end, "_count")? - get(start, "_count").unwrap_or(0.0);
    let sum = get(end, "_sum")? - get(start, "_sum").unwrap_or(0.0);
    let buckets = e
        .iter()
        .map(|(le, c)| HistogramBucket {
            le_seconds: le.0.is_finite().then_some(le.0),
            count: c - s.and_then(|s| s.get(le)).copied().unwrap_or(0.0),
        })
        .collect();
    Some(HistogramDelta {
        metric: family.to_string(),
        count,
        sum_seconds: sum,
        buckets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# HELP vllm:num_requests_waiting waiting\n# TYPE vllm:num_requests_waiting gauge\n\
vllm:num_requests_waiting{model_name=\"m\"} 3\nvllm:num_requests_waiting{model_name=\"n\"} 2\n\
llamacpp:requests_deferred 4\nbad line\nvllm:kv_cache_usage_perc{model_name=\"m\"} NaN\n\
vllm:request_queue_time_seconds_bucket{le=\"0.1\",model_name=\"m\"} 5\n\
vllm:request_queue_time_seconds_bucket{le=\"1.0\",model_name=\"m\"} 8\n\
vllm:request_queue_time_seconds_bucket{le=\"+Inf\",model_name=\"m\"} 9\n\
vllm:request_queue_time_seconds_sum{model_name=\"m\"} 4.5\nvllm:request_queue_time_seconds_count{model_name=\"m\"} 9\n";

    #[test]
    fn reads_colon_names_sums_labels_and_skips_nan() {
        let s = parse(TEXT);
        assert_eq!(s.values["vllm:num_requests_waiting"], 5.0);
        assert_eq!(s.values["llamacpp:requests_deferred"], 4.0);
        assert!(!s.values.contains_key("vllm:kv_cache_usage_perc"));
        assert_eq!(s.buckets["vllm:request_queue_time_seconds"].len(), 3);
    }

    #[test]
    fn histogram_deltas() {
        let start =
            parse("x_bucket{le=\"0.1\"} 1\nx_bucket{le=\"+Inf\"} 2\nx_sum 0.5\nx_count 2\n");
        let end = parse("x_bucket{le=\"0.1\"} 4\nx_bucket{le=\"+Inf\"} 7\nx_sum 3.5\nx_count 7\n");
        let d = histogram_delta("x", &start, &end).unwrap();
        assert_eq!((d.count, d.sum_seconds), (5.0, 3.0));
        assert_eq!(d.buckets[0].count, 3.0);
        assert_eq!(d.buckets[1].le_seconds, None);
        assert_eq!(d.buckets[1].count, 5.0);
        assert!(histogram_delta("y", &start, &end).is_none());
    }
}
