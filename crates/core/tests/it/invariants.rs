//! One generated violation per invariant of the catalogue: a valid set from the test kit (the
//! lineage records, a plan and one candidate's run), one mutation that breaks exactly that
//! invariant, and the outcome the catalogue promises — the file refused naming the invariant,
//! the run excluded with its code, or the run flagged with it — beside the clean control. The
//! `match` over every invariant makes a new invariant without a generated violation a compile
//! error.

use serde_json::{json, Value};
use sloscope_core::analyse::report::{Analysis, Code};
use sloscope_core::check::invariant::{Invariant, Outcome};
use sloscope_core::schema::{EvidenceLevel, ProfileSpec};
use sloscope_core::{analyze, read_document, LoadedFile};
use sloscope_testkit::synth::{self, Shape};

/// The set a mutation starts from: plan, run and (for some invariants) a second run.
#[derive(Clone)]
pub(crate) struct Set {
    pub(crate) plan: Option<Value>,
    pub(crate) run: Value,
    pub(crate) extra: Vec<(String, Value)>,
}

fn spec() -> ProfileSpec {
    synth::profile(
        "latency",
        "short",
        2,
        "ttft_p95_ms",
        json!({"ttft_p95_ms": 100, "failure_rate": 0.0}),
    )
}

pub(crate) fn base() -> Set {
    let p = spec();
    let shape = Shape {
        concurrency: 2,
        ..Shape::default()
    };
    let run = synth::run(
        "q4",
        &p,
        "np4",
        4,
        EvidenceLevel::RealBackendProfile,
        &shape,
    );
    Set {
        plan: Some(synth::plan(&[&p], &[("np1", 1), ("np4", 4)])),
        run: serde_json::to_value(run).unwrap(),
        extra: Vec::new(),
    }
}

/// Request `i` of repeat `r`, column `col`.
pub(crate) fn cell<'a>(run: &'a mut Value, r: usize, col: &str, i: usize) -> &'a mut Value {
    &mut run["repeats"][r]["requests"][col][i]
}

/// Requests of the first repeat.
pub(crate) fn requests(run: &Value) -> usize {
    run["repeats"][0]["requests"]["send_offset_us"]
        .as_array()
        .unwrap()
        .len()
}

/// Every request of every repeat: (repeat, index).
pub(crate) fn each(run: &Value) -> Vec<(usize, usize)> {
    let reps = run["repeats"].as_array().unwrap();
    reps.iter()
        .enumerate()
        .flat_map(|(r, rep)| {
            let n = rep["requests"]["send_offset_us"].as_array().unwrap().len();
            (0..n).map(move |i| (r, i))
        })
        .collect()
}

pub(crate) fn map_col(run: &mut Value, col: &str, f: impl Fn(u64) -> u64) {
    for (r, i) in each(run) {
        if let Some(v) = cell(run, r, col, i).as_u64() {
            *cell(run, r, col, i) = f(v).into();
        }
    }
}

pub(crate) fn drop_request(run: &mut Value, r: usize, i: usize) {
    let cols = run["repeats"][r]["requests"].as_object_mut().unwrap();
    for (_, col) in cols.iter_mut() {
        if let Some(a) = col.as_array_mut() {
            a.remove(i);
        }
    }
}

/// The text of a run file with one key written twice.
fn twice(run: &Value, key: &str) -> String {
    let text = run.to_string();
    let at = format!("\"{key}\":");
    let i = text.find(&at).unwrap();
    let end = i + text[i..].find(',').unwrap();
    format!("{},{}", &text[..end], &text[i..])
}

/// A search trial of a configuration the plan's space does not hold (parallel 8).
fn outside_the_space(s: &mut Set) {
    let plan = s.plan.as_mut().unwrap();
    plan["space"] = json!({"profiles": ["latency"], "knobs": {"parallel": {"values": [1, 4]}}});
    s.run["candidate"]["name"] = "parallel-8".into();
    s.run["search"] =
        json!({"index": 0, "purpose": "screen", "config": {"parallel": 8}, "requests": 90});
}

/// What breaks `inv`, as a set or as a file's text that must be refused.
enum Case {
    Set(Set),
    Text(&'static str, Vec<u8>),
}

fn case(inv: Invariant) -> Case {
    let mut s = base();
    let r = &mut s.run;
    match inv {
        Invariant::UniqueKeys => return Case::Text("run.json", twice(r, "artifact_id").into()),
        Invariant::TextBounded => r["candidate"]["name"] = "n".repeat(2000).into(),
        Invariant::ShardBounded => {
            r["shard"] = json!({"plan_sha256": "ab".repeat(32), "index": 4_000_000_000_u32, "count": 4_000_000_001_u32, "attempt": "a"});
        }
        Invariant::PlanNamesUnique => {
            let plan = s.plan.as_mut().unwrap();
            plan["candidates"][1]["name"] = "NP1".into();
            return Case::Text("plan.json", plan.to_string().into());
        }
        Invariant::OkRunHasRequests => r["repeats"] = json!([]),
        Invariant::RepeatIndicesUnique => r["repeats"][1]["index"] = 0.into(),
        Invariant::RequestIdsUnique => {
            let text = include_str!("../../../../tests/fixtures/peers/aiperf/profile_export.jsonl");
            let first = text.lines().next().unwrap();
            return Case::Text("aiperf.jsonl", format!("{first}\n{text}").into());
        }
        Invariant::ColumnsAligned => {
            r["repeats"][0]["requests"]["ttft_us"]
                .as_array_mut()
                .unwrap()
                .pop();
        }
        Invariant::SendOrder => *cell(r, 0, "send_offset_us", 1) = 0.into(),
        Invariant::TimesBounded => *cell(r, 0, "e2e_us", 3) = (8u64 * 86_400_000_000).into(),
        Invariant::SentAfterIntended => intended_after_sent(r),
        Invariant::SuccessComplete => *cell(r, 0, "ttft_us", 2) = Value::Null,
        Invariant::FirstTokenAfterSend => *cell(r, 0, "ttft_us", 2) = 0.into(),
        Invariant::EndAfterFirstToken => *cell(r, 0, "e2e_us", 2) = 10.into(),
        Invariant::GapsFitTokens => *cell(r, 0, "output_tokens", 2) = 1.into(),
        Invariant::GapsFitRequest => r["repeats"][0]["requests"]["itl_us"][2][0] = 9_000_000.into(),
        Invariant::ServerCountsFit => {
            let mut cached = vec![Value::Null; requests(r)];
            cached[2] = 1_000_000.into();
            r["repeats"][0]["requests"]["cached_prompt_tokens"] = json!(cached);
        }
        Invariant::SessionTurns => {
            // Every request turn 1 of session 0: the second one should be turn 2.
            r["repeats"][0]["requests"]["session"] = json!(vec![0; requests(r)]);
            r["repeats"][0]["requests"]["turn"] = json!(vec![1; requests(r)]);
        }
        Invariant::ValuesNonNegative => {
            r["repeats"][0]["memory"][0]["server_rss_mb"] = (-1.0).into()
        }
        Invariant::StatedCountsMatch => r["reported"] = json!({"requests_sent": 999}),
        Invariant::StatedDurationCovers => r["reported"] = json!({"duration_s": 0.001}),
        Invariant::SignalsBounded => {
            r["reported"] = json!({"throughput_tps": 100.0, "goodput_tps": 150.0})
        }
        Invariant::InPlan => r["candidate"]["name"] = "np8".into(),
        Invariant::InSpace => outside_the_space(&mut s),
        Invariant::KnobMatches => r["candidate"]["knob"] = "max_batch".into(),
        Invariant::KnobValueMatches => r["candidate"]["value"] = 8.into(),
        Invariant::WorkloadMatches => r["workload_id"] = "long".into(),
        Invariant::ArtifactMatches => r["artifact_id"] = "q8".into(),
        Invariant::LaunchMatches => launched_as_np1(r),
        Invariant::BackendVersionMatches => {
            r["endpoint"] = json!({"url": "http://127.0.0.1:8080", "api": "completions",
                "reported": {"version": "9.9.9", "version_from": "/version", "models": []}});
        }
        Invariant::NamesDistinct => {
            s.plan = None;
            let mut other = s.run.clone();
            other["candidate"]["name"] = "n\u{0440}4".into();
            s.extra.push(("run2.json".into(), other));
        }
        Invariant::ConcurrencyRespected => {
            for i in 0..3 {
                *cell(r, 0, "send_offset_us", i) = 0.into();
            }
        }
        Invariant::ConcurrencyReached => concurrency_reached(&mut s),
        Invariant::ArrivalMatchesRate => arrival_matches_rate(&mut s),
        Invariant::WindowCoversRequests => {
            r["started_at"] = "2026-12-01T06:00:00Z".into();
            r["finished_at"] = "2026-12-01T06:00:00Z".into();
        }
        Invariant::OutputsWithinCap => *cell(r, 0, "output_tokens", 2) = 17.into(),
        Invariant::PromptsMatchWorkload => map_col(r, "prompt_tokens", |_| 1000),
        Invariant::GapsSpanDecode => gaps_span_decode(&mut s),
        Invariant::Streamed => streamed(&mut s),
        Invariant::PlausibleLatency => ttft_in_ms(r),
        Invariant::OneTrialPerLoad => one_trial_per_load(&mut s),
        Invariant::MeasuredOnce => relabelled_as_np1(&mut s),
        Invariant::SentOnce => sent_once(&mut s),
        Invariant::QueueWithinFirstToken => queue_past_first_token(r),
        Invariant::RunComplete => drop_request(r, 1, 4),
        Invariant::RepeatsAsPlanned => one_repeat_more(r),
        Invariant::RequestsAsPlanned => return Case::Set(more_requests(s)),
        Invariant::OkRecordsNoFailure => r["failure"] = "server exited with signal 11".into(),
        Invariant::StampsReadable => r["finished_at"] = "yesterday afternoon".into(),
        Invariant::EnergyBounded => energy_on_a_cpu(r),
        Invariant::SharesBounded => kv_fill_past_full(r),
        Invariant::CapsGenerated => stopped_before_cap(&mut s),
        Invariant::StreamEndsAtLastToken => late_ends(r),
    }
    Case::Set(s)
}

/// The np4 run's server launched with `--parallel 1`.
fn launched_as_np1(r: &mut Value) {
    r["server"] = json!({"command": ["llama-server", "-m", "m.gguf", "--parallel", "1"],
        "exit_status": 0, "startup_s": 0.5, "log_tail": ""});
}

/// 1 MJ in each repeat of a run on a CPU.
fn energy_on_a_cpu(r: &mut Value) {
    for rep in r["repeats"].as_array_mut().unwrap() {
        rep["gpu_energy_j"] = 1.0e6.into();
    }
}

/// A fourth repeat, measured anew: the third's requests each 7 µs slower between tokens.
fn one_repeat_more(r: &mut Value) {
    let mut extra = r["repeats"][2].clone();
    extra["index"] = 3.into();
    let q = &mut extra["requests"];
    let n = q["itl_us"].as_array().unwrap().len();
    for i in 0..n {
        let mut added = 0;
        if let Some(gaps) = q["itl_us"][i].as_array_mut() {
            for g in gaps.iter_mut() {
                *g = (g.as_u64().unwrap() + 7).into();
                added += 7;
            }
        }
        if let Some(e) = q["e2e_us"][i].as_u64() {
            q["e2e_us"][i] = (e + added).into();
        }
    }
    r["repeats"].as_array_mut().unwrap().push(extra);
}

/// The first repeat with one request more than planned: the last one sent again a second
/// later.
fn more_requests(mut s: Set) -> Set {
    let q = &mut s.run["repeats"][0]["requests"];
    let obj = q.as_object_mut().unwrap();
    let last_send = obj["send_offset_us"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_u64()
        .unwrap();
    let last_end = obj["e2e_us"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_u64()
        .unwrap();
    for (k, col) in obj.iter_mut() {
        let a = col.as_array_mut().unwrap();
        let mut v = a.last().unwrap().clone();
        if k == "send_offset_us" {
            v = (last_send + last_end + 1_000_000).into();
        }
        a.push(v);
    }
    s
}

/// A sample of the KV cache 170% full.
fn kv_fill_past_full(r: &mut Value) {
    r["repeats"][0]["server_metrics"] =
        json!([{"offset_us": 1000, "values": {"vllm:kv_cache_usage_perc": 1.7}}]);
}

/// np4's requests relabelled as np1's run.
fn relabelled_as_np1(s: &mut Set) {
    let mut other = s.run.clone();
    other["candidate"]["name"] = "np1".into();
    other["candidate"]["value"] = 1.into();
    s.extra.push(("np1.json".into(), other));
}

/// Asked to ignore end-of-sequence, the third request (counted by the server) stopped a token
/// short of its cap.
fn stopped_before_cap(s: &mut Set) {
    s.run["endpoint"] =
        json!({"url": "http://127.0.0.1:8080", "api": "completions", "ignore_eos": true});
    cap_sent(s, 17);
}

/// The profile sends max_tokens `cap` (the plan's profile, the run's copy of it and the run's
/// first repeat's caps, each request's), where the run's requests generated 16 tokens each.
pub(crate) fn cap_sent(s: &mut Set, cap: u64) {
    s.plan.as_mut().unwrap()["profiles"][0]["workload"]["max_output_tokens"] = cap.into();
    s.run["profile_spec"]["workload"]["max_output_tokens"] = cap.into();
    let n = requests(&s.run);
    s.run["repeats"][0]["requests"]["max_output_tokens"] = json!(vec![cap; n]);
}

/// Every TTFT a thousandth of itself (milliseconds written as microseconds), each end moved
/// with it so that the decode time stays the gaps'.
fn ttft_in_ms(r: &mut Value) {
    for (rep, i) in each(r) {
        if let (Some(t), Some(e)) = (
            cell(r, rep, "ttft_us", i).as_u64(),
            cell(r, rep, "e2e_us", i).as_u64(),
        ) {
            *cell(r, rep, "ttft_us", i) = (t / 1000).into();
            *cell(r, rep, "e2e_us", i) = (e - t + t / 1000).into();
        }
    }
}

/// Every gap halved: each stream goes on for half its decode time after its last token.
fn late_ends(r: &mut Value) {
    for rep in r["repeats"].as_array_mut().unwrap() {
        for gaps in rep["requests"]["itl_us"].as_array_mut().unwrap() {
            for g in gaps.as_array_mut().unwrap() {
                *g = (g.as_u64().unwrap() / 2).into();
            }
        }
    }
}

/// Every request meant to go out 5 µs after it was sent.
fn intended_after_sent(r: &mut Value) {
    let sends = r["repeats"][0]["requests"]["send_offset_us"].clone();
    let late: Vec<u64> = sends
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap() + 5)
        .collect();
    r["repeats"][0]["requests"]["intended_offset_us"] = json!(late);
}

fn queue_past_first_token(r: &mut Value) {
    let mut queue = vec![Value::Null; requests(r)];
    queue[2] = 60_000_000.into();
    r["repeats"][0]["requests"]["server_queue_us"] = json!(queue);
}

fn concurrency_reached(s: &mut Set) {
    let r = &mut s.run;
    // One request after another: never two in flight at the two streams it states.
    for rep in 0..3 {
        let mut t = 0u64;
        let n = r["repeats"][rep]["requests"]["send_offset_us"]
            .as_array()
            .unwrap()
            .len();
        for i in 0..n {
            *cell(r, rep, "send_offset_us", i) = t.into();
            t += cell(r, rep, "e2e_us", i).as_u64().unwrap_or(1000) + 2000;
        }
    }
}

fn arrival_matches_rate(s: &mut Set) {
    for v in [s.plan.as_mut().unwrap(), &mut s.run] {
        let w = if v["kind"] == "plan" {
            &mut v["profiles"][0]
        } else {
            &mut v["profile_spec"]
        };
        w["workload"]["request_rate_rps"] = 1000.into();
    }
    let r = &mut s.run;
    for rep in 0..3 {
        let sends = r["repeats"][rep]["requests"]["send_offset_us"].clone();
        r["repeats"][rep]["requests"]["intended_offset_us"] = sends;
    }
}

fn gaps_span_decode(s: &mut Set) {
    let r = &mut s.run;
    for (rep, i) in each(r) {
        if let Some(g) = r["repeats"][rep]["requests"]["itl_us"][i].as_array_mut() {
            g.iter_mut()
                .for_each(|x| *x = (x.as_u64().unwrap() / 1000).into());
        }
    }
}

fn streamed(s: &mut Set) {
    let r = &mut s.run;
    for (rep, i) in each(r) {
        let t = cell(r, rep, "ttft_us", i).clone();
        *cell(r, rep, "e2e_us", i) = t;
        if let Some(g) = r["repeats"][rep]["requests"]["itl_us"][i].as_array_mut() {
            g.iter_mut().for_each(|x| *x = 0.into());
        }
    }
}

fn one_trial_per_load(s: &mut Set) {
    let r = &mut s.run;
    let plan = s.plan.as_mut().unwrap();
    plan["profiles"][0]["search"] = json!({"over": "concurrency", "min": 1, "max": 4});
    r["profile_spec"]["search"] = plan["profiles"][0]["search"].clone();
    r["trial"] = json!({"over": "concurrency", "load": 2, "index": 0});
    let mut other = r.clone();
    other["trial"]["index"] = 1.into();
    // Another measurement at the same load (not the same requests relabelled): its own gaps
    // between tokens (each stream's in the other order: the same sums, other sequences).
    map_col(&mut other, "prompt_tokens", |p| p + 1);
    for rep in other["repeats"].as_array_mut().unwrap() {
        for gaps in rep["requests"]["itl_us"].as_array_mut().unwrap() {
            gaps.as_array_mut().unwrap().reverse();
        }
    }
    s.extra.push(("trial2.json".into(), other));
}

fn sent_once(s: &mut Set) {
    let r = &mut s.run;
    let n = r["repeats"][0]["requests"]["send_offset_us"]
        .as_array()
        .unwrap()
        .len();
    let mut col = vec![false; n];
    col[3] = true;
    r["repeats"][0]["requests"]["resent"] = json!(col);
}

fn load(name: &str, v: &Value) -> LoadedFile {
    LoadedFile {
        name: name.into(),
        doc: read_document(name, v.to_string().into_bytes()).unwrap_or_else(|e| panic!("{e}")),
    }
}

pub(crate) fn files(s: &Set) -> Result<Vec<LoadedFile>, String> {
    let [g, b, d] = synth::lineage();
    let mut out = vec![
        load("gate.json", &g),
        load("baseline.json", &b),
        load("deployment.json", &d),
    ];
    if let Some(p) = &s.plan {
        out.push(load("plan.json", p));
    }
    let mut runs = vec![("run.json".to_string(), s.run.clone())];
    runs.extend(s.extra.iter().cloned());
    for (name, v) in runs {
        let doc = read_document(&name, v.to_string().into_bytes()).map_err(|e| e.to_string())?;
        out.push(LoadedFile { name, doc });
    }
    Ok(out)
}

/// Every invariant code an analysis names on an exclusion or a flag.
pub(crate) fn named(a: &Analysis) -> Vec<(Outcome, Invariant)> {
    let mut out = Vec::new();
    for p in &a.profiles {
        for e in &p.excluded {
            if let Code::Invariant(i) = e.code {
                out.push((Outcome::Exclude, i));
            }
        }
        for f in &p.flags {
            if let Code::Invariant(i) = f.code {
                out.push((Outcome::Flag, i));
            }
        }
    }
    out
}

#[test]
fn the_clean_control_breaks_no_invariant() {
    let a = analyze(&files(&base()).unwrap());
    assert_eq!(named(&a), vec![], "{:#?}", a.profiles[0].excluded);
    assert_eq!(a.profiles[0].candidates.len(), 1);
}

#[test]
fn each_invariant_has_a_violation_with_the_promised_outcome() {
    for &inv in Invariant::ALL {
        match (case(inv), inv.outcome()) {
            (Case::Text(name, bytes), Outcome::Refuse) => {
                let e = read_document(name, bytes).expect_err(inv.code());
                assert!(
                    e.message.contains(&format!("[{}]", inv.code())),
                    "{inv:?}: {e}"
                );
            }
            (Case::Set(s), Outcome::Refuse) => {
                let e = files(&s).expect_err(inv.code());
                assert!(e.contains(&format!("[{}]", inv.code())), "{inv:?}: {e}");
            }
            (Case::Set(s), outcome) => {
                let fs = files(&s).unwrap_or_else(|e| panic!("{inv:?}: {e}"));
                let a = analyze(&fs);
                let found = named(&a);
                assert!(
                    found.contains(&(outcome, inv)),
                    "{inv:?} not {outcome:?}: {found:?}\n{:#?}",
                    a.profiles[0].excluded
                );
                // Exactly that invariant: nothing else is broken by the mutation.
                assert!(
                    found.iter().all(|(_, i)| *i == inv),
                    "{inv:?}: more than one invariant broken: {found:?}"
                );
            }
            (Case::Text(..), outcome) => panic!("{inv:?} is {outcome:?}, but its case is a file"),
        }
    }
}
