//! Metric names that plans, SLOs and reports use, and which direction is better.
//!
//! Latency metrics are `{quantity}_{stat}_ms` with quantity `ttft`, `tpot`, `itl`, `e2e` or
//! `queue_wait` and stat `mean`, `p50`, `p90`, `p95`, `p99` or `max`. Scalar metrics are listed
//! in [`Scalar`]. An unknown name is an error wherever it appears, never ignored.

use serde::{Deserialize, Serialize};

/// A per-request latency quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quantity {
    /// Time to first token: send → first non-empty content.
    Ttft,
    /// Time per output token after the first: (e2e − TTFT)/(output tokens − 1).
    Tpot,
    /// Inter-token latency: every gap between consecutive content events.
    Itl,
    /// End-to-end: send → end of stream.
    E2e,
    /// Waiting before service: client queue (open loop) plus server queue where known.
    QueueWait,
}

impl Quantity {
    /// All quantities.
    pub const ALL: [Quantity; 5] = [
        Quantity::Ttft,
        Quantity::Tpot,
        Quantity::Itl,
        Quantity::E2e,
        Quantity::QueueWait,
    ];

    /// Name prefix in metric names.
    pub fn as_str(self) -> &'static str {
        match self {
            Quantity::Ttft => "ttft",
            Quantity::Tpot => "tpot",
            Quantity::Itl => "itl",
            Quantity::E2e => "e2e",
            Quantity::QueueWait => "queue_wait",
        }
    }
}

/// Statistics available for latency quantities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stat {
    /// Arithmetic mean.
    Mean,
    /// Median.
    P50,
    /// 90th percentile.
    P90,
    /// 95th percentile.
    P95,
    /// 99th percentile.
    P99,
    /// Largest value.
    Max,
}

impl Stat {
    /// All statistics, in report order.
    pub const ALL: [Stat; 6] = [
        Stat::Mean,
        Stat::P50,
        Stat::P90,
        Stat::P95,
        Stat::P99,
        Stat::Max,
    ];

    /// Name in metric names.
    pub fn as_str(self) -> &'static str {
        match self {
            Stat::Mean => "mean",
            Stat::P50 => "p50",
            Stat::P90 => "p90",
            Stat::P95 => "p95",
            Stat::P99 => "p99",
            Stat::Max => "max",
        }
    }
}

/// Run-level metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    /// Output tokens per second over the measured window (`throughput_tps`).
    ThroughputTps,
    /// Successful requests per second (`request_throughput_rps`).
    RequestThroughputRps,
    /// Requests per second that met every per-request SLO (`goodput_rps`).
    GoodputRps,
    /// Share of sent requests that met every per-request SLO (`goodput_ratio`).
    GoodputRatio,
    /// Output tokens per second carried by the requests that met every per-request SLO
    /// (`goodput_tps`, DistServe's goodput in tokens).
    GoodputTps,
    /// Failed / sent (`failure_rate`).
    FailureRate,
    /// Peak memory: GPU where sampled, else server RSS (`peak_memory_mb`).
    PeakMemoryMb,
    /// Largest server queue depth seen (`queue_depth_max`).
    QueueDepthMax,
}

impl Scalar {
    /// All scalars.
    pub const ALL: [Scalar; 8] = [
        Scalar::ThroughputTps,
        Scalar::RequestThroughputRps,
        Scalar::GoodputRps,
        Scalar::GoodputRatio,
        Scalar::GoodputTps,
        Scalar::FailureRate,
        Scalar::PeakMemoryMb,
        Scalar::QueueDepthMax,
    ];

    /// Metric name.
    pub fn as_str(self) -> &'static str {
        match self {
            Scalar::ThroughputTps => "throughput_tps",
            Scalar::RequestThroughputRps => "request_throughput_rps",
            Scalar::GoodputRps => "goodput_rps",
            Scalar::GoodputRatio => "goodput_ratio",
            Scalar::GoodputTps => "goodput_tps",
            Scalar::FailureRate => "failure_rate",
            Scalar::PeakMemoryMb => "peak_memory_mb",
            Scalar::QueueDepthMax => "queue_depth_max",
        }
    }
}

/// Whether smaller or larger values are better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// An SLO value is a ceiling; the primary metric is minimised.
    LowerIsBetter,
    /// An SLO value is a floor; the primary metric is maximised.
    HigherIsBetter,
}

/// A known metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// `{quantity}_{stat}_ms`.
    Latency(Quantity, Stat),
    /// A run-level metric.
    Scalar(Scalar),
}

impl Metric {
    /// TTFT p50.
    pub const TTFT_P50: Metric = Metric::Latency(Quantity::Ttft, Stat::P50);
    /// TTFT p95.
    pub const TTFT_P95: Metric = Metric::Latency(Quantity::Ttft, Stat::P95);
    /// TPOT p95.
    pub const TPOT_P95: Metric = Metric::Latency(Quantity::Tpot, Stat::P95);
    /// ITL p95.
    pub const ITL_P95: Metric = Metric::Latency(Quantity::Itl, Stat::P95);
    /// End-to-end p95.
    pub const E2E_P95: Metric = Metric::Latency(Quantity::E2e, Stat::P95);
    /// Queue wait p95.
    pub const QUEUE_WAIT_P95: Metric = Metric::Latency(Quantity::QueueWait, Stat::P95);
    /// Output tokens per second.
    pub const THROUGHPUT: Metric = Metric::Scalar(Scalar::ThroughputTps);
    /// Goodput ratio.
    pub const GOODPUT_RATIO: Metric = Metric::Scalar(Scalar::GoodputRatio);
    /// Failure rate.
    pub const FAILURE_RATE: Metric = Metric::Scalar(Scalar::FailureRate);
    /// Peak memory.
    pub const PEAK_MEMORY: Metric = Metric::Scalar(Scalar::PeakMemoryMb);

    /// Whether the metric's interval is a bootstrap over requests (a per-request latency
    /// statistic) rather than a Student-t interval over per-repeat values (run-level metrics
    /// such as throughput, and the maximum, which no resample bounds).
    pub fn per_request_interval(self) -> bool {
        matches!(
            self,
            Metric::Latency(Quantity::Ttft | Quantity::Tpot | Quantity::E2e | Quantity::Itl, s)
                if s != Stat::Max
        )
    }

    /// Parses a metric name; `None` when unknown.
    pub fn parse(name: &str) -> Option<Metric> {
        if let Some(s) = Scalar::ALL.into_iter().find(|s| s.as_str() == name) {
            return Some(Metric::Scalar(s));
        }
        let body = name.strip_suffix("_ms")?;
        for q in Quantity::ALL {
            if let Some(stat) = body
                .strip_prefix(q.as_str())
                .and_then(|r| r.strip_prefix('_'))
            {
                let s = Stat::ALL.into_iter().find(|s| s.as_str() == stat)?;
                return Some(Metric::Latency(q, s));
            }
        }
        None
    }

    /// The canonical name.
    pub fn name(self) -> String {
        match self {
            Metric::Latency(q, s) => format!("{}_{}_ms", q.as_str(), s.as_str()),
            Metric::Scalar(s) => s.as_str().to_string(),
        }
    }

    /// Which way is better.
    pub fn direction(self) -> Direction {
        match self {
            Metric::Scalar(
                Scalar::ThroughputTps
                | Scalar::RequestThroughputRps
                | Scalar::GoodputRps
                | Scalar::GoodputRatio
                | Scalar::GoodputTps,
            ) => Direction::HigherIsBetter,
            _ => Direction::LowerIsBetter,
        }
    }

    /// Unit for display.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Latency(..) => "ms",
            Metric::Scalar(Scalar::ThroughputTps | Scalar::GoodputTps) => "tok/s",
            Metric::Scalar(Scalar::RequestThroughputRps | Scalar::GoodputRps) => "req/s",
            Metric::Scalar(Scalar::GoodputRatio | Scalar::FailureRate) => "",
            Metric::Scalar(Scalar::PeakMemoryMb) => "MB",
            Metric::Scalar(Scalar::QueueDepthMax) => "req",
        }
    }

    /// The metric in words, for a reader who does not know the identifier:
    /// `time to first token, 95th percentile (ms)`.
    pub fn describe(self) -> String {
        let unit = match self.unit() {
            "" => String::new(),
            u => format!(" ({u})"),
        };
        let what = match self {
            Metric::Latency(q, s) => {
                let q = match q {
                    Quantity::Ttft => "time to first token",
                    Quantity::Tpot => "time per output token after the first",
                    Quantity::Itl => "gap between consecutive tokens",
                    Quantity::E2e => "end-to-end time of a request",
                    Quantity::QueueWait => "wait before service",
                };
                let s = match s {
                    Stat::Mean => "mean",
                    Stat::P50 => "median",
                    Stat::P90 => "90th percentile",
                    Stat::P95 => "95th percentile",
                    Stat::P99 => "99th percentile",
                    Stat::Max => "largest",
                };
                format!("{q}, {s}")
            }
            Metric::Scalar(s) => match s {
                Scalar::ThroughputTps => "output tokens per second, all streams together",
                Scalar::RequestThroughputRps => "requests completed per second",
                Scalar::GoodputRps => "requests per second that met every per-request SLO",
                Scalar::GoodputRatio => "share of requests that met every per-request SLO",
                Scalar::GoodputTps => "output tokens per second of requests that met every SLO",
                Scalar::FailureRate => "share of requests that failed",
                Scalar::PeakMemoryMb => "peak memory (GPU where sampled, else the server's RSS)",
                Scalar::QueueDepthMax => "largest server queue depth seen",
            }
            .to_string(),
        };
        format!("{what}{unit}")
    }

    /// The metric's short name for a reader, as a card says it: `TTFT p95`, `output tokens/s`.
    pub fn short(self) -> String {
        match self {
            Metric::Latency(q, s) => {
                let q = match q {
                    Quantity::Ttft => "TTFT",
                    Quantity::Tpot => "TPOT",
                    Quantity::Itl => "inter-token gap",
                    Quantity::E2e => "end-to-end",
                    Quantity::QueueWait => "queue wait",
                };
                let s = match s {
                    Stat::Mean => "mean",
                    Stat::P50 => "median",
                    Stat::P90 => "p90",
                    Stat::P95 => "p95",
                    Stat::P99 => "p99",
                    Stat::Max => "max",
                };
                format!("{q} {s}")
            }
            Metric::Scalar(s) => match s {
                Scalar::ThroughputTps => "output tokens/s",
                Scalar::RequestThroughputRps => "requests/s",
                Scalar::GoodputRps => "goodput requests/s",
                Scalar::GoodputRatio => "goodput share",
                Scalar::GoodputTps => "goodput tokens/s",
                Scalar::FailureRate => "failure rate",
                Scalar::PeakMemoryMb => "peak memory",
                Scalar::QueueDepthMax => "largest queue depth",
            }
            .to_string(),
        }
    }

    /// Whether `value` satisfies `limit` in this metric's direction.
    pub fn meets(self, value: f64, limit: f64) -> bool {
        match self.direction() {
            Direction::LowerIsBetter => value <= limit,
            Direction::HigherIsBetter => value >= limit,
        }
    }

    /// How far `value` is on the good side of `limit` (negative: missed by that much).
    pub fn margin(self, value: f64, limit: f64) -> f64 {
        match self.direction() {
            Direction::LowerIsBetter => limit - value,
            Direction::HigherIsBetter => value - limit,
        }
    }

    /// The guide's table of every metric (Markdown): name, meaning, unit and which way is
    /// better, generated from the enums so the list cannot go stale.
    pub fn catalogue_markdown() -> String {
        let mut out = String::from("| metric | what it is | better |\n|---|---|---|\n");
        for name in Metric::all_names() {
            let Some(m) = Metric::parse(&name) else {
                continue;
            };
            let better = match m.direction() {
                Direction::LowerIsBetter => "lower",
                Direction::HigherIsBetter => "higher",
            };
            out.push_str(&format!("| `{name}` | {} | {better} |\n", m.describe()));
        }
        out
    }

    /// Every known metric name, for error messages and the schema docs.
    pub fn all_names() -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for q in Quantity::ALL {
            for s in Stat::ALL {
                v.push(Metric::Latency(q, s).name());
            }
        }
        v.extend(Scalar::ALL.iter().map(|s| s.as_str().to_string()));
        v
    }
}

impl Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for Metric {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Metric::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown metric {s:?}; see the guide's metric list (docs/src/reference/metrics.md)"
            ))
        })
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Metric {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Metric".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A metric by its name: `{quantity}_{stat}_ms` (quantity ttft, tpot, itl, e2e or queue_wait; stat mean, p50, p90, p95, p99 or max), or a run-level metric such as `throughput_tps`.",
            "type": "string",
        })
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// Non-metric keys accepted in `reported` summaries.
pub fn is_reported_extra(key: &str) -> bool {
    matches!(
        key,
        "requests_sent" | "requests_ok" | "requests_failed" | "output_tokens_total" | "duration_s"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_names_round_trip() {
        for name in Metric::all_names() {
            let m = Metric::parse(&name).unwrap();
            assert_eq!(m.name(), name);
        }
        assert_eq!(Metric::parse("ttft_p95_ms"), Some(Metric::TTFT_P95));
        assert_eq!(
            Metric::parse("queue_wait_p95_ms"),
            Some(Metric::QUEUE_WAIT_P95)
        );
        assert_eq!(Metric::parse("ttft_p97_ms"), None);
        assert_eq!(Metric::parse("ttft_p95"), None);
        assert_eq!(Metric::parse("throughput"), None);
    }

    #[test]
    fn directions() {
        let t = Metric::parse("throughput_tps").unwrap();
        assert_eq!(t.direction(), Direction::HigherIsBetter);
        assert!(t.meets(100.0, 80.0) && !t.meets(70.0, 80.0));
        let l = Metric::parse("ttft_p95_ms").unwrap();
        assert!(l.meets(380.0, 500.0) && !l.meets(501.0, 500.0));
        assert_eq!(l.margin(380.0, 500.0), 120.0);
        assert!(Metric::parse("failure_rate").unwrap().meets(0.0, 0.0));
    }
}
