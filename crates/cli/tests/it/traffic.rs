//! Traffic shapes reaching the server as declared, checked in the scripted server's own log:
//! length distributions and gamma arrivals per request, a replayed trace at its times and
//! lengths, a dataset's prompts and shared prefixes, and the goodness of fit of 2,000 requests.

use std::path::{Path, PathBuf};

use crate::collect::{plan_edited, run};
use crate::common::{files_under, scratch, sloscope, stderr};

/// A balanced profile with mixed lengths and bursty arrivals: every request gets its own drawn
/// prompt length and output cap (the same sequence on every candidate, so they stay
/// comparable), the realised counts are recorded per request, and the workload definition
/// travels with each run.
#[test]
fn mixed_lengths_and_gamma_arrivals_reach_the_server_per_request() {
    let d = scratch("collect-mixed");
    let plan = plan_edited(&d, |text| {
        let edited = text.replace(
            r#"workload = { id = "mixed", concurrency = 4, prompt_tokens = 32, max_output_tokens = 16, repeats = 2, requests_per_repeat = 8 }"#,
            r#"workload = { id = "mixed", concurrency = 4, prompt_tokens = 32, max_output_tokens = 40, repeats = 2, requests_per_repeat = 24, request_rate_rps = 60, arrival = { kind = "gamma", burstiness = 0.5 }, prompt_length = { kind = "uniform", min = 8, max = 96 }, output_length = { kind = "uniform", min = 2, max = 40 } }"#,
        );
        assert!(edited.contains("burstiness"), "the fixture plan changed");
        edited
    });
    let out = d.join("out");
    let o = run(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--profiles",
            "balanced",
            "--quiet",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let runs: Vec<serde_json::Value> = files_under(&out)
        .iter()
        .filter(|f| {
            f.to_string_lossy().contains("balanced") && f.extension().is_some_and(|e| e == "json")
        })
        .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
        .collect();
    assert_eq!(runs.len(), 3, "2 candidates + baseline");
    let column = |r: &serde_json::Value, col: &str| -> Vec<u64> {
        r["repeats"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|rep| rep["requests"][col].as_array().unwrap().clone())
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    let outputs: Vec<Vec<u64>> = runs.iter().map(|r| column(r, "output_tokens")).collect();
    for o in &outputs {
        assert_eq!(o.len(), 48);
        assert!(o.iter().all(|t| (2..=40).contains(t)), "{o:?}");
        let distinct: std::collections::BTreeSet<_> = o.iter().collect();
        assert!(distinct.len() > 10, "output caps vary: {distinct:?}");
    }
    // Each request index got the same cap on every candidate (they finish in another order,
    // so compare the multisets).
    let sorted = |v: &Vec<u64>| {
        let mut v = v.clone();
        v.sort_unstable();
        v
    };
    assert_eq!(sorted(&outputs[0]), sorted(&outputs[1]));
    let prompts = column(&runs[0], "prompt_tokens");
    let distinct: std::collections::BTreeSet<_> = prompts.iter().collect();
    assert!(distinct.len() > 10, "prompt lengths vary: {distinct:?}");
    for r in &runs {
        let w = &r["profile_spec"]["workload"];
        assert_eq!(w["arrival"]["kind"], "gamma", "{w}");
        assert_eq!(w["output_length"]["kind"], "uniform", "{w}");
    }
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let p = crate::common::profile(&v["profiles"], "balanced");
    assert_eq!(
        p["excluded"],
        serde_json::json!([]),
        "comparable: {}",
        p["excluded"]
    );
    assert_eq!(p["candidates"].as_array().unwrap().len(), 2);
}

/// The balanced profile's line of the fixture plan, to edit.
const BALANCED: &str = r#"workload = { id = "mixed", concurrency = 4, prompt_tokens = 32, max_output_tokens = 16, repeats = 2, requests_per_repeat = 8 }"#;

/// Runs the fixture plan's balanced profile on one candidate, the scripted server logging each
/// request it receives (its own clock, in its own process); returns the output directory and
/// the server's log lines.
fn run_logged(d: &Path, workload: &str) -> (PathBuf, Vec<serde_json::Value>) {
    run_logged_with(d, workload, "", 1, 0)
}

/// Milliseconds between tokens where a test analyses what it collected: a busy client (four test
/// threads beside llama-server) reads tokens sent 1 ms apart in one read, and a run whose
/// requests' tokens all arrive at once is rightly excluded as not streamed.
pub(crate) const STREAM_GAP_MS: u32 = 10;

/// As [`run_logged`], the scripted server given `flags` too and `gap_ms` between tokens; `run`
/// must exit with `code`.
pub(crate) fn run_logged_with(
    d: &Path,
    workload: &str,
    flags: &str,
    gap_ms: u32,
    code: i32,
) -> (PathBuf, Vec<serde_json::Value>) {
    let log = d.join("server.log");
    let plan = plan_edited(d, |text| {
        let edited = text.replace(BALANCED, workload).replace(
            "--ttft-ms 20 --gap-ms 4 --tokens 64",
            &format!(
                "--ttft-ms 2 --gap-ms {gap_ms} --tokens 4 --log {} {flags}",
                log.display()
            ),
        );
        assert!(edited.contains(workload), "the fixture plan changed");
        edited
    });
    let out = d.join("out");
    let o = run(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--profiles",
            "balanced",
            "--candidates",
            "slots4",
            "--no-baseline",
            "--quiet",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
    let lines = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out, lines)
}

pub(crate) fn balanced_run(out: &Path) -> (PathBuf, serde_json::Value) {
    let f = files_under(out)
        .into_iter()
        .find(|f| {
            f.to_string_lossy().contains("balanced")
                && f.extension().is_some_and(|e| e == "json")
                && !f.to_string_lossy().contains("journal")
        })
        .unwrap();
    let v = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
    (f, v)
}

/// A Mooncake trace is replayed at its (time-scaled) send times with its prompt and output
/// lengths, checked in the server's own log; the run names the trace by its hash, and a run
/// that replayed other bytes under the same name is not compared.
#[test]
fn a_trace_is_replayed_at_its_times_and_lengths() {
    let d = scratch("collect-trace");
    // 400 requests over 4 s of trace time, replayed 4× faster: ~400 requests/s in bursts.
    let mut trace = String::new();
    let mut t = 0u64;
    for i in 0..400u64 {
        t += (i * 7919) % 19 + (i % 5) * 3;
        trace.push_str(&format!(
            "{{\"timestamp\": {t}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": [{i}]}}\n",
            5 + (i * 31) % 60,
            1 + (i * 17) % 4
        ));
    }
    std::fs::write(d.join("trace.jsonl"), &trace).unwrap();
    let (out, log) = run_logged(
        &d,
        r#"workload = { id = "mixed", concurrency = 64, prompt_tokens = 32, max_output_tokens = 16, repeats = 1, trace = { file = "trace.jsonl", format = "mooncake", time_scale = 0.25 } }"#,
    );
    let entries: Vec<serde_json::Value> = trace
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Calibration and connection warm-up come first; the measured requests are the last 400.
    assert!(log.len() >= 400, "{} requests logged", log.len());
    let measured = &log[log.len() - 400..];
    arrivals_follow_the_trace(measured, &entries);
    // Lengths exactly as the trace says (the server counts one token per word, as its
    // /tokenize does, so calibration is exact).
    let mut want: Vec<(u64, u64)> = entries
        .iter()
        .map(|e| {
            (
                e["input_length"].as_u64().unwrap(),
                e["output_length"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut got: Vec<(u64, u64)> = measured
        .iter()
        .map(|l| {
            (
                l["prompt_tokens"].as_u64().unwrap(),
                l["max_tokens"].as_u64().unwrap(),
            )
        })
        .collect();
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, want);
    // The run records the intended send times (the trace's) and the trace's identity.
    let (file, run) = balanced_run(&out);
    let mut intended: Vec<u64> = run["repeats"][0]["requests"]["intended_offset_us"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    intended.sort_unstable();
    let first = entries[0]["timestamp"].as_u64().unwrap();
    let want_offsets: Vec<u64> = entries
        .iter()
        .map(|e| (e["timestamp"].as_u64().unwrap() - first) * 250)
        .collect();
    for (got, want) in intended.iter().zip(&want_offsets) {
        assert!(
            got.abs_diff(*want) <= 1,
            "intended {got} µs, trace {want} µs"
        );
    }
    let w = &run["profile_spec"]["workload"];
    assert_eq!(w["requests_per_repeat"], 400, "{w}");
    assert_eq!(w["trace"]["sha256"].as_str().unwrap().len(), 64, "{w}");
    let a = sloscope(&["analyze", out.to_str().unwrap()], &[]);
    let text = String::from_utf8_lossy(&a.stdout);
    assert!(
        text.contains("replaying the Mooncake trace trace.jsonl (sha256 "),
        "{text}"
    );
    // Another run of the same name but other bytes: left out, the trace named.
    let mut other = run.clone();
    other["candidate"]["name"] = "slots1".into();
    other["profile_spec"]["workload"]["trace"]["sha256"] = "ab".repeat(32).into();
    std::fs::write(
        file.with_file_name("balanced--slots1.json"),
        other.to_string(),
    )
    .unwrap();
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let p = crate::common::profile(&v["profiles"], "balanced");
    let excluded = p["excluded"].as_array().unwrap();
    assert_eq!(excluded.len(), 1, "{excluded:?}");
    let why = excluded[0]["reason"].as_str().unwrap();
    assert!(
        why.contains("trace Mooncake trace trace.jsonl (sha256 abababababab…)"),
        "{why}"
    );
}

/// Dataset prompts are sent as written with the records' output caps; shared prefix groups put
/// one of N prefixes in front of each synthetic prompt.
#[test]
fn dataset_prompts_and_shared_prefixes_reach_the_server() {
    let d = scratch("collect-dataset");
    let mut data = String::new();
    for i in 0..30 {
        data.push_str(&format!(
            "{{\"prompt\": \"record{i} tell me about rivers\", \"output_tokens\": {}}}\n",
            1 + i % 4
        ));
    }
    data.push_str("{\"messages\": [{\"role\": \"user\", \"content\": \"chat0 hello there\"}], \"output_tokens\": 2}\n");
    std::fs::write(d.join("prompts.jsonl"), &data).unwrap();
    let (_, log) = run_logged(
        &d,
        r#"workload = { id = "mixed", concurrency = 4, prompt_tokens = 32, max_output_tokens = 16, repeats = 2, requests_per_repeat = 40, dataset = { file = "prompts.jsonl", format = "jsonl" } }"#,
    );
    let measured = &log[log.len() - 80..];
    let mut seen = std::collections::BTreeSet::new();
    for l in measured {
        let head = l["prompt_head"].as_str().unwrap();
        let first = head.split_whitespace().next().unwrap();
        let cap = l["max_tokens"].as_u64().unwrap();
        if let Some(i) = first.strip_prefix("record") {
            let i: u64 = i.parse().unwrap();
            assert_eq!(head, format!("record{i} tell me about rivers"));
            assert_eq!(cap, 1 + i % 4);
        } else {
            assert_eq!(head, "chat0 hello there");
            assert_eq!(cap, 2);
        }
        seen.insert(first.to_string());
    }
    assert!(seen.len() > 15, "sampled across the dataset: {seen:?}");

    let d = scratch("collect-prefix");
    let (_, log) = run_logged(
        &d,
        r#"workload = { id = "mixed", concurrency = 4, prompt_tokens = 12, max_output_tokens = 4, repeats = 1, requests_per_repeat = 30, shared_prefix = { groups = 3, tokens = 10 } }"#,
    );
    let measured = &log[log.len() - 30..];
    let prefixes: std::collections::BTreeSet<String> = measured
        .iter()
        .map(|l| {
            l["prompt_head"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .take(10)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(prefixes.len(), 3, "{prefixes:?}");
    assert!(measured
        .iter()
        .all(|l| l["prompt_tokens"].as_u64().unwrap() == 22));
}

/// The standard normal CDF (Abramowitz–Stegun 7.1.26 erf, |error| < 1.5e-7).
fn phi(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    0.5 * (1.0 + if x < 0.0 { -erf } else { erf })
}

/// Kolmogorov–Smirnov distance between a sample and a CDF evaluated at the sample's values
/// (for integer samples the CDF is taken at each value, its jump included).
fn ks(mut xs: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    let mut d = 0f64;
    let mut i = 0;
    while i < xs.len() {
        let mut j = i;
        while j < xs.len() && xs[j] == xs[i] {
            j += 1;
        }
        let f = cdf(xs[i]);
        d = d
            .max((j as f64 / n - f).abs())
            .max((i as f64 / n - cdf_left(&cdf, xs[i])).abs());
        i = j;
    }
    d
}

/// The CDF just below `x` for integer-valued samples.
fn cdf_left(cdf: &impl Fn(f64) -> f64, x: f64) -> f64 {
    if x.fract() == 0.0 {
        cdf(x - 1.0)
    } else {
        cdf(x)
    }
}

/// Goodness of fit, checked where the requests land: 2,000 requests with log-normal prompt
/// lengths and uniform output caps as the scripted server logged them, and Poisson send times
/// as the run recorded them (the server's arrivals following them). Kolmogorov–Smirnov
/// distances stay under the 0.1% critical value (1.95/√n).
#[test]
fn requested_lengths_and_send_times_follow_the_declared_distributions() {
    let d = scratch("collect-fit");
    let (out, log) = run_logged(
        &d,
        r#"workload = { id = "mixed", concurrency = 64, prompt_tokens = 40, max_output_tokens = 8, repeats = 1, requests_per_repeat = 2000, request_rate_rps = 400, prompt_length = { kind = "log_normal", mean = 40, stddev = 20, min = 1, max = 100000 }, output_length = { kind = "uniform", min = 1, max = 8 } }"#,
    );
    assert!(log.len() >= 2000);
    let m = &log[log.len() - 2000..];
    let n = m.len() as f64;
    let critical = 1.95 / n.sqrt();
    // Log-normal lengths of mean 40 and sd 20, rounded to whole tokens.
    let s2 = (1.0f64 + 0.25).ln();
    let mu = 40f64.ln() - s2 / 2.0;
    let prompts: Vec<f64> = m
        .iter()
        .map(|l| l["prompt_tokens"].as_f64().unwrap())
        .collect();
    let dp = ks(prompts, |k| {
        if k < 1.0 {
            0.0
        } else {
            phi(((k + 0.5).ln() - mu) / s2.sqrt())
        }
    });
    assert!(dp < critical, "prompt lengths: KS {dp:.4} ≥ {critical:.4}");
    let caps: Vec<f64> = m
        .iter()
        .map(|l| l["max_tokens"].as_f64().unwrap())
        .collect();
    let dc = ks(caps, |k| (k.floor() / 8.0).clamp(0.0, 1.0));
    assert!(dc < critical, "output caps: KS {dc:.4} ≥ {critical:.4}");
    // Send times: the schedule the run records (intended offsets) has exponential gaps at
    // 400/s, and the server saw the requests arrive on it. The arrivals' fit is not tested
    // with KS: tests run in parallel, and a busy machine delays sends by milliseconds (the
    // precision is measured by `xtask bench-replay` instead).
    let (_, run) = balanced_run(&out);
    let mut intended: Vec<f64> = run["repeats"][0]["requests"]["intended_offset_us"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    intended.sort_by(f64::total_cmp);
    let gaps: Vec<f64> = intended.windows(2).map(|w| (w[1] - w[0]) / 1e6).collect();
    let dg = ks(gaps, |x| 1.0 - (-400.0 * x.max(0.0)).exp());
    eprintln!(
        "KS: prompt lengths {dp:.4}, output caps {dc:.4}, gaps {dg:.4} (critical {critical:.4})"
    );
    assert!(dg < critical, "send gaps: KS {dg:.4} ≥ {critical:.4}");
    let mut at: Vec<f64> = m.iter().map(|l| l["at_us"].as_f64().unwrap()).collect();
    at.sort_by(f64::total_cmp);
    let mut late: Vec<f64> = at.iter().zip(&intended).map(|(a, i)| a - i).collect();
    let least = late.iter().copied().fold(f64::MAX, f64::min);
    late.iter_mut().for_each(|l| *l = (*l - least) / 1000.0);
    late.sort_by(f64::total_cmp);
    let median = late[late.len() / 2];
    assert!(
        median < 20.0,
        "arrivals trail the schedule by a median {median} ms"
    );
    // The KS check can fail: the same lengths against a wrong mean are rejected.
    let prompts: Vec<f64> = m
        .iter()
        .map(|l| l["prompt_tokens"].as_f64().unwrap())
        .collect();
    let wrong = ks(prompts, |k| {
        phi(((k + 0.5).ln() - (44f64.ln() - s2 / 2.0)) / s2.sqrt())
    });
    assert!(
        wrong > critical,
        "a 10% wrong mean should be detected: KS {wrong:.4}"
    );
}

/// Each measured request reached the server at its trace time (× 0.25), by the server's clock.
fn arrivals_follow_the_trace(measured: &[serde_json::Value], entries: &[serde_json::Value]) {
    let mut by_order = measured.to_vec();
    by_order.sort_by_key(|l| l["at_us"].as_u64().unwrap());
    let t0 = by_order[0]["at_us"].as_u64().unwrap() as f64;
    let mut errors_ms: Vec<f64> = Vec::new();
    for (l, e) in by_order.iter().zip(entries) {
        let want_ms = e["timestamp"].as_f64().unwrap() * 0.25;
        errors_ms.push((l["at_us"].as_u64().unwrap() as f64 - t0) / 1000.0 - want_ms);
    }
    // Lateness against the trace, less the smallest (the first arrival may itself be late).
    let least = errors_ms.iter().copied().fold(f64::MAX, f64::min);
    for e in &mut errors_ms {
        *e -= least;
    }
    errors_ms.sort_by(f64::total_cmp);
    let p50 = errors_ms[errors_ms.len() / 2];
    let p99 = errors_ms[errors_ms.len() * 99 / 100];
    eprintln!("received vs trace time: p50 {p50:.3} ms, p99 {p99:.3} ms");
    assert!(p50.abs() < 5.0, "received vs trace time, p50 {p50} ms");
}
