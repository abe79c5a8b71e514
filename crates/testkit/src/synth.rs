//! Deterministic synthetic data: lineage records and runs with known per-request timings.

use serde_json::{json, Value};
use sloscope_core::schema::Kind;
use sloscope_core::schema::{
    CandidateRef, EvidenceLevel, Gaps, KnobValue, MemorySample, ProfileSpec, Repeat,
    RequestColumns, Role, Run, RunSource, RunStatus, TokenSource, ToolInfo, SCHEMA_VERSION,
};

pub use sloscope_core::measure::Rng;

/// Shape of a synthetic run.
#[derive(Clone)]
pub struct Shape {
    /// Requests per repeat.
    pub requests: usize,
    /// Repeats.
    pub repeats: usize,
    /// Output tokens per request (one event per token).
    pub output_tokens: u32,
    /// TTFT range, µs.
    pub ttft_us: (u64, u64),
    /// Inter-token gap range, µs.
    pub gap_us: (u32, u32),
    /// Concurrency (closed loop: requests start as earlier ones finish).
    pub concurrency: usize,
    /// Every n-th request fails (0 = none).
    pub fail_every: usize,
    /// Peak RSS to report, MB.
    pub rss_mb: Option<f64>,
    /// Seed.
    pub seed: u64,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            requests: 30,
            repeats: 3,
            output_tokens: 16,
            ttft_us: (40_000, 60_000),
            gap_us: (9_000, 11_000),
            concurrency: 1,
            fail_every: 0,
            rss_mb: Some(300.0),
            seed: 1,
        }
    }
}

/// Gives each request the prompt length the workload's distribution draws for it, as the
/// collector sends (a shape's repeats are otherwise 64-token prompts).
fn prompts_drawn(repeats: &mut [Repeat], w: &sloscope_core::schema::WorkloadSpec, seed: u64) {
    let Some(d) = &w.prompt_length else { return };
    let mut index = 0u64;
    for rep in repeats {
        for p in &mut rep.requests.prompt_tokens {
            *p = Some(d.sample(seed, index));
            index += 1;
        }
    }
}

/// Builds one repeat with the given shape.
pub fn repeat(shape: &Shape, index: u32, rng: &mut Rng) -> Repeat {
    let n = shape.requests;
    let mut r = RequestColumns::default();
    let mut gaps = Gaps::new();
    let mut slots = vec![0u64; shape.concurrency.max(1)];
    let mut buf = Vec::with_capacity(shape.output_tokens as usize);
    let mut sends = Vec::with_capacity(n);
    for i in 0..n {
        // closed loop: the earliest free slot sends next
        let (slot, &free_at) = slots
            .iter()
            .enumerate()
            .min_by_key(|(_, t)| **t)
            .unwrap_or((0, &0));
        let send = free_at + rng.range(50, 400);
        let failed = shape.fail_every > 0 && (i + 1) % shape.fail_every == 0;
        let ttft = rng.range(shape.ttft_us.0, shape.ttft_us.1);
        buf.clear();
        if !failed {
            for _ in 1..shape.output_tokens {
                buf.push(rng.range(shape.gap_us.0 as u64, shape.gap_us.1 as u64) as u32);
            }
        }
        let e2e = ttft + buf.iter().map(|&g| g as u64).sum::<u64>() + rng.range(50, 300);
        slots[slot] = send + e2e;
        sends.push((send, failed, ttft, e2e, buf.clone()));
    }
    sends.sort_by_key(|s| s.0);
    for (send, failed, ttft, e2e, g) in sends {
        r.send_offset_us.push(send);
        r.prompt_tokens.push(Some(64));
        r.prompt_tokens_source.push(Some(TokenSource::Usage));
        r.server_queue_us.push(None);
        if failed {
            r.ttft_us.push(None);
            r.e2e_us.push(None);
            r.output_tokens.push(None);
            r.output_tokens_source.push(None);
            r.error.push(Some("HTTP 503: server overloaded".into()));
            gaps.push(&[]);
        } else {
            r.ttft_us.push(Some(ttft));
            r.e2e_us.push(Some(e2e));
            r.output_tokens.push(Some(shape.output_tokens));
            r.output_tokens_source.push(Some(TokenSource::Usage));
            r.error.push(None);
            gaps.push(&g);
        }
    }
    r.itl_us = gaps;
    let end = r.send_offset_us.last().copied().unwrap_or(0) + 1;
    Repeat {
        index,
        started_at: None,
        warmup_requests: 0,
        requests: r,
        server_metrics: Vec::new(),
        server_queue_histogram: None,
        send_times_unknown: false,
        reported_window_us: None,
        gpu_energy_j: None,
        memory: shape
            .rss_mb
            .map(|mb| {
                vec![
                    MemorySample {
                        offset_us: 0,
                        gpu_used_mb: None,
                        server_rss_mb: Some(mb * 0.9),
                    },
                    MemorySample {
                        offset_us: end,
                        gpu_used_mb: None,
                        server_rss_mb: Some(mb),
                    },
                ]
            })
            .unwrap_or_default(),
    }
}

/// A run of `candidate` (knob `parallel`) under `profile_spec`.
pub fn run(
    artifact_id: &str,
    profile_spec: &ProfileSpec,
    candidate: &str,
    knob_value: i64,
    evidence: EvidenceLevel,
    shape: &Shape,
) -> Run {
    // Each candidate's own measurement: two runs never share their gaps between tokens.
    let own = candidate.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let mut rng = Rng::new(shape.seed ^ own);
    let mut repeats: Vec<Repeat> = (0..shape.repeats)
        .map(|i| repeat(shape, i as u32, &mut rng))
        .collect();
    let w = profile_spec.workload.clone().unwrap_or_default();
    prompts_drawn(&mut repeats, &w, shape.seed);
    Run {
        kind: Kind::Run,
        schema_version: SCHEMA_VERSION.into(),
        tool: ToolInfo {
            name: "sloscope-testkit".into(),
            version: "synthetic".into(),
        },
        artifact_id: artifact_id.into(),
        role: Role::Candidate,
        profile: profile_spec.name.clone().unwrap_or_default(),
        workload_id: w.id.unwrap_or_default(),
        profile_spec: Some(profile_spec.clone()),
        candidate: CandidateRef {
            name: candidate.into(),
            knob: Some("parallel".into()),
            value: Some(KnobValue::Int(knob_value)),
        },
        backend: "llama.cpp".into(),
        backend_version: "b1-test".into(),
        hardware: "cpu-test".into(),
        endpoint: None,
        status: RunStatus::Ok,
        failure: None,
        evidence_level: evidence,
        source: RunSource::Measured,
        imported_from: None,
        import: None,
        started_at: None,
        finished_at: None,
        server: None,
        notes: vec!["synthetic data from sloscope-testkit".into()],
        repeats,
        reported: None,
        trial: None,
        search: None,
        shard: None,
        plan_content_sha256: None,
    }
}

/// A profile spec from JSON-ish parts.
pub fn profile(
    name: &str,
    workload_id: &str,
    concurrency: i64,
    primary: &str,
    slo: Value,
) -> ProfileSpec {
    serde_json::from_value(json!({
        "name": name,
        "workload": {"id": workload_id, "concurrency": concurrency, "prompt_tokens": 64,
                     "max_output_tokens": 16, "repeats": 3, "requests_per_repeat": 30},
        "primary_metric": primary,
        "slo": slo,
    }))
    .unwrap_or_default()
}

/// Gate, baseline and deployment records that agree (llama.cpp on CPU, SmolLM2 Q4_1 vs F16).
pub fn lineage() -> [Value; 3] {
    let common = json!({
        "schema_version": SCHEMA_VERSION, "model": "HuggingFaceTB/SmolLM2-135M-Instruct",
        "revision": "main", "backend": "llama.cpp", "backend_version": "b1-test",
        "hardware": "cpu-test", "tokenizer_id": "smollm2", "tokenizer_sha256": "ab12",
    });
    let with = |extra: Value| {
        let mut v = common.clone();
        for (k, x) in extra.as_object().into_iter().flatten() {
            v[k] = x.clone();
        }
        v
    };
    [
        with(
            json!({"kind": "quality_gate", "artifact_id": "q4", "format": "Q4_1",
                    "quality": {"mmlu_delta": -0.4}, "decision": "accept"}),
        ),
        with(
            json!({"kind": "float_baseline", "artifact_id": "f16", "format": "F16", "decision": "accept"}),
        ),
        with(
            json!({"kind": "deployment", "artifact_id": "q4", "format": "Q4_1",
                    "gate_artifact_id": "q4", "decision": "accept"}),
        ),
    ]
}

/// A plan varying `parallel` over `candidates` (name, value) with `profiles`.
pub fn plan(profiles: &[&ProfileSpec], candidates: &[(&str, i64)]) -> Value {
    json!({
        "kind": "plan",
        "schema_version": SCHEMA_VERSION,
        "knob": "parallel",
        "candidates": candidates
            .iter()
            .map(|(n, v)| json!({"name": n, "value": v}))
            .collect::<Vec<_>>(),
        "profiles": profiles,
    })
}

/// Replaces the requests of `run` with one repeat per cluster of `ttft_ms` (concurrency 1, one
/// request after another): each request's TTFT as given, then 15 gaps of 10 ms. Two runs
/// given clusters of the same sizes send the same request sequence (they pair by index).
pub fn with_ttfts(run: &mut Run, ttft_ms: &[Vec<f64>]) {
    run.repeats = ttft_ms
        .iter()
        .enumerate()
        .map(|(k, values)| {
            let mut r = RequestColumns::default();
            let mut gaps = Gaps::new();
            let mut at = 0u64;
            for &t in values {
                let ttft = (t.max(0.001) * 1000.0).round() as u64;
                let g = [10_000u32; 15];
                let e2e = ttft + 150_000 + 100;
                r.send_offset_us.push(at);
                r.prompt_tokens.push(Some(64));
                r.prompt_tokens_source.push(Some(TokenSource::Usage));
                r.server_queue_us.push(None);
                r.ttft_us.push(Some(ttft));
                r.e2e_us.push(Some(e2e));
                r.output_tokens.push(Some(16));
                r.output_tokens_source.push(Some(TokenSource::Usage));
                r.error.push(None);
                gaps.push(&g);
                at += e2e + 500;
            }
            r.itl_us = gaps;
            Repeat {
                index: k as u32,
                requests: r,
                ..Default::default()
            }
        })
        .collect();
}
