//! Capacity search: the next-load rule against known step capacities, and the capacity derived
//! from trial run files (bracket, binding SLO, ranking, evidence, unusable trials).

use serde_json::json;
use sloscope_core::analyse::capacity::{next_load, CapacityStatus, LoadAxis, RankBy, Search};
use sloscope_core::analyse::report::Code;
use sloscope_core::analyse::verdict::ProfileDecision;
use sloscope_core::check::invariant::Invariant;
use sloscope_core::schema::{EvidenceLevel, Run, RunStatus, Trial};
use sloscope_core::{analyze, read_document, LoadedFile};
use sloscope_testkit::synth::{self, Shape};

fn search(over: LoadAxis, min: f64, max: f64, tolerance: f64) -> Search {
    Search {
        over,
        min,
        max,
        tolerance,
        max_trials: 20,
        max_requests_per_trial: 100,
        time_budget_s: None,
        rank_by: RankBy::FixedLoad,
    }
}

/// Runs the search against `passes` and returns the trials it asked for.
fn drive(s: &Search, passes: impl Fn(f64) -> bool) -> Vec<(f64, bool)> {
    let mut trials = Vec::new();
    while let Some(load) = next_load(s, &trials) {
        assert!((s.min..=s.max).contains(&load), "{load} outside the range");
        assert!(trials.len() < 100, "the search does not end");
        trials.push((load, passes(load)));
    }
    trials
}

fn bracket(trials: &[(f64, bool)]) -> (Option<f64>, Option<f64>) {
    let ff = trials.iter().filter(|t| !t.1).map(|t| t.0).reduce(f64::min);
    let lp = trials
        .iter()
        .filter(|t| t.1 && ff.is_none_or(|f| t.0 < f))
        .map(|t| t.0)
        .reduce(f64::max);
    (lp, ff)
}

#[test]
fn concurrency_search_brackets_every_step_capacity_to_one_stream_in_fewer_trials_than_a_grid() {
    let s = search(LoadAxis::Concurrency, 1.0, 64.0, 1.0);
    let grid = 64;
    for cap in [1.0, 2.0, 3.0, 7.0, 11.0, 12.0, 16.0, 33.0, 63.0] {
        let trials = drive(&s, |l| l <= cap);
        let (lp, ff) = bracket(&trials);
        assert_eq!(lp, Some(cap), "capacity {cap}: {trials:?}");
        assert_eq!(ff, Some(cap + 1.0), "capacity {cap}: {trials:?}");
        assert!(
            trials.iter().all(|t| t.0.fract() == 0.0),
            "whole streams only: {trials:?}"
        );
        assert!(
            trials.len() <= 12 && trials.len() < grid,
            "capacity {cap}: {} trials",
            trials.len()
        );
    }
    // Above the range: every load passes up to max; below it: min fails at once.
    let above = drive(&s, |_| true);
    assert_eq!(bracket(&above), (Some(64.0), None));
    assert_eq!(above.len(), 7, "{above:?}"); // 1 2 4 8 16 32 64
    let below = drive(&s, |_| false);
    assert_eq!(below, vec![(1.0, false)]);
}

#[test]
fn rate_search_stops_within_its_tolerance() {
    let s = search(LoadAxis::RequestRateRps, 0.5, 40.0, 0.25);
    for cap in [0.6, 3.3, 17.9, 39.0] {
        let trials = drive(&s, |l| l <= cap);
        let (lp, ff) = bracket(&trials);
        let (lp, ff) = (lp.unwrap(), ff.unwrap());
        assert!(
            lp <= cap && cap < ff && ff - lp <= 0.25 + 1e-9,
            "cap {cap}: {lp}..{ff}"
        );
        assert!(trials.len() < 159, "{} trials", trials.len());
    }
}

#[test]
fn trial_cap_ends_the_search_with_an_open_bracket() {
    let mut s = search(LoadAxis::Concurrency, 1.0, 64.0, 1.0);
    s.max_trials = 4;
    let trials = drive(&s, |l| l <= 20.0);
    assert_eq!(trials.len(), 4);
}

// ---- capacity from run files --------------------------------------------------------------

fn load(name: &str, v: &serde_json::Value) -> LoadedFile {
    LoadedFile {
        name: name.into(),
        doc: read_document(name, v.to_string().into_bytes()).unwrap_or_else(|e| panic!("{e}")),
    }
}

fn balanced(rank_by: &str) -> sloscope_core::schema::ProfileSpec {
    serde_json::from_value(json!({
        "name": "balanced",
        "workload": {"id": "mixed", "concurrency": 4, "prompt_tokens": 64,
                     "max_output_tokens": 16, "repeats": 1, "requests_per_repeat": 64},
        "primary_metric": "throughput_tps",
        "slo": {"ttft_p95_ms": 100, "failure_rate": 0.0},
        "search": {"over": "concurrency", "min": 1, "max": 16, "rank_by": rank_by},
    }))
    .unwrap()
}

/// A trial of `cand` at `load` streams whose TTFT is fast up to `knee` streams and slow above.
fn trial(
    spec: &sloscope_core::schema::ProfileSpec,
    cand: &str,
    load: f64,
    knee: f64,
    index: u32,
    evidence: EvidenceLevel,
) -> Run {
    let shape = Shape {
        // As the collector sends: at least four requests per stream.
        requests: sloscope_core::analyse::capacity::trial_requests(
            LoadAxis::Concurrency,
            load,
            spec.workload
                .as_ref()
                .and_then(|w| w.requests_per_repeat)
                .unwrap_or(64),
        ) as usize,
        repeats: 1,
        concurrency: load as usize,
        ttft_us: if load <= knee {
            (20_000, 40_000)
        } else {
            (150_000, 300_000)
        },
        // Each candidate's trials are its own measurements.
        seed: index as u64 + 7 + cand.bytes().map(u64::from).sum::<u64>() * 1000,
        ..Shape::default()
    };
    let mut run = synth::run("q4", spec, cand, 1, evidence, &shape);
    run.trial = Some(Trial {
        over: "concurrency".into(),
        load,
        index,
    });
    run
}

fn files(
    spec: &sloscope_core::schema::ProfileSpec,
    knees: &[(&str, f64, EvidenceLevel)],
) -> Vec<LoadedFile> {
    let [g, b, d] = synth::lineage();
    let mut out = vec![
        load("gate.json", &g),
        load("baseline.json", &b),
        load("deployment.json", &d),
    ];
    let names: Vec<(&str, i64)> = knees.iter().map(|k| (k.0, 1)).collect();
    out.push(load("plan.json", &synth::plan(&[spec], &names)));
    let s = search(LoadAxis::Concurrency, 1.0, 16.0, 1.0);
    for &(cand, knee, ev) in knees {
        // The run at the workload's own load, which the collector measures before searching:
        // without it the plan's cell is not measured.
        let mut fixed = trial(spec, cand, 4.0, knee, 99, ev);
        fixed.trial = None;
        out.push(load(
            &format!("{cand}.json"),
            &serde_json::to_value(&fixed).unwrap(),
        ));
        let mut trials = Vec::new();
        while let Some(l) = next_load(&s, &trials) {
            let run = trial(spec, cand, l, knee, trials.len() as u32, ev);
            out.push(load(
                &format!("{cand}-c{l}.json"),
                &serde_json::to_value(&run).unwrap(),
            ));
            trials.push((l, l <= knee));
        }
    }
    out
}

#[test]
fn capacity_is_derived_from_trial_files_and_can_rank_candidates() {
    let spec = balanced("capacity");
    let real = EvidenceLevel::RealBackendProfile;
    let fs = files(&spec, &[("np1", 3.0, real), ("np4", 11.0, real)]);
    let a = analyze(&fs);
    let p = &a.profiles[0];
    let cap = p.capacity.as_ref().expect("a capacity report");
    let np1 = &cap.candidates[0];
    let np4 = &cap.candidates[1];
    assert_eq!(
        (np1.last_pass, np1.first_fail),
        (Some(3.0), Some(4.0)),
        "{np1:#?}"
    );
    assert_eq!((np4.last_pass, np4.first_fail), (Some(11.0), Some(12.0)));
    assert_eq!(np4.status, CapacityStatus::Found);
    assert!(
        np4.binding_at_fail
            .as_deref()
            .unwrap()
            .starts_with("ttft_p95_ms "),
        "{:?}",
        np4.binding_at_fail
    );
    assert_eq!(np4.text, "11 streams (12 fails)");
    // Every trial holds four requests per stream or more, as the collector sends them.
    assert!(np4.short_loads.is_empty(), "{:?}", np4.short_loads);
    assert_eq!(cap.grid_trials, 16);
    assert!(np4.trials.len() < 16);
    assert_eq!(cap.best.as_deref(), Some("np4"));
    assert!(cap.statement.contains("told apart"), "{}", cap.statement);
    // Ranked by capacity: np4 sustains 11 ≥ the workload's 4 streams, all trials real.
    assert_eq!(p.decision, ProfileDecision::Accept, "{}", p.reason);
    assert_eq!(p.recommended_name.as_deref(), Some("np4"));
    // No trial run is counted as a fixed-load run or excluded as another workload.
    assert!(p.excluded.is_empty(), "{:?}", p.excluded);
}

#[test]
fn capacity_below_the_workload_load_or_from_a_simulation_is_not_accepted() {
    let spec = balanced("capacity");
    let real = EvidenceLevel::RealBackendProfile;
    let a = analyze(&files(&spec, &[("np1", 2.0, real)]));
    assert_eq!(
        a.profiles[0].decision,
        ProfileDecision::Tune,
        "{}",
        a.profiles[0].reason
    );
    assert!(
        a.profiles[0]
            .reason
            .contains("below the workload's own load of 4 streams"),
        "{}",
        a.profiles[0].reason
    );
    let sim = EvidenceLevel::CpuProfileSimulation;
    let a = analyze(&files(&spec, &[("np4", 11.0, sim)]));
    assert_eq!(
        a.profiles[0].decision,
        ProfileDecision::Tune,
        "{}",
        a.profiles[0].reason
    );
    assert!(!a.profiles[0].capacity.as_ref().unwrap().candidates[0].real_evidence);
}

#[test]
fn the_fixed_load_verdict_stays_the_default() {
    let spec = balanced("fixed_load");
    let real = EvidenceLevel::RealBackendProfile;
    let mut fs = files(&spec, &[("np4", 11.0, real)]);
    fs.retain(|f| f.name != "np4.json");
    let a = analyze(&fs);
    let p = &a.profiles[0];
    // No fixed-load run: the plan's cell is not measured, and the seed's verdict is not given
    // over nothing; the capacity is still there.
    assert_eq!(p.decision, ProfileDecision::Incomplete, "{}", p.reason);
    assert_eq!(p.missing.len(), 1, "{:?}", p.missing);
    assert!(
        p.reason.contains("candidate np4 (no run file was loaded)"),
        "{}",
        p.reason
    );
    assert_eq!(
        p.capacity.as_ref().unwrap().candidates[0].last_pass,
        Some(11.0)
    );
}

#[test]
fn unusable_trials_are_named_and_a_trial_without_a_search_is_excluded() {
    let spec = balanced("capacity");
    let real = EvidenceLevel::RealBackendProfile;
    let mut fs = files(&spec, &[("np4", 11.0, real)]);
    // A partial trial at 13 streams (interrupted) and one of another prompt length.
    let mut partial = trial(&spec, "np4", 13.0, 11.0, 20, real);
    partial.status = RunStatus::Partial;
    partial.failure = Some("interrupted (Ctrl-C)".into());
    fs.push(load(
        "partial.json",
        &serde_json::to_value(&partial).unwrap(),
    ));
    let mut other = trial(&spec, "np4", 9.0, 11.0, 21, real);
    other
        .profile_spec
        .as_mut()
        .unwrap()
        .workload
        .as_mut()
        .unwrap()
        .prompt_tokens = Some(512);
    fs.push(load("other.json", &serde_json::to_value(&other).unwrap()));
    let a = analyze(&fs);
    let c = &a.profiles[0].capacity.as_ref().unwrap().candidates[0];
    assert_eq!(c.last_pass, Some(11.0));
    assert!(
        c.excluded
            .iter()
            .any(|e| e.starts_with("partial.json: partial trial: interrupted")),
        "{:?}",
        c.excluded
    );
    // Another workload is an invariant every run passes first, trials included.
    let excluded = &a.profiles[0].excluded;
    // The trial left out is in the profile's own list too, with its reason.
    assert!(
        excluded.iter().any(|e| e.file == "partial.json"
            && e.code == Code::TrialNotUsed
            && e.reason.contains("interrupted")),
        "{excluded:?}"
    );
    assert!(
        excluded.iter().any(|e| e.file == "other.json"
            && e.code == Code::Invariant(Invariant::WorkloadMatches)
            && e.reason.contains("prompt_tokens")),
        "{excluded:?}"
    );

    let mut plain: sloscope_core::schema::ProfileSpec = spec.clone();
    plain.search = None;
    let t = trial(&plain, "np4", 2.0, 11.0, 0, real);
    let [g, b, d] = synth::lineage();
    let fs = vec![
        load("gate.json", &g),
        load("baseline.json", &b),
        load("deployment.json", &d),
        load("t.json", &serde_json::to_value(&t).unwrap()),
    ];
    let a = analyze(&fs);
    let p = &a.profiles[0];
    assert!(p.capacity.is_none());
    assert_eq!(
        p.excluded[0].code,
        sloscope_core::analyse::report::Code::TrialWithoutSearch
    );
}

/// A pass above the first failing load contradicts the search: the capacity is the first fail's
/// (the lower), the profile flags it, and the verdict's reason says so; a monotone search is
/// the control.
#[test]
fn a_pass_above_a_fail_is_flagged_never_dropped() {
    let spec = balanced("capacity");
    let real = EvidenceLevel::RealBackendProfile;
    let fs = files(&spec, &[("np4", 11.0, real)]);
    let control = analyze(&fs);
    assert!(!control.profiles[0]
        .flags
        .iter()
        .any(|f| f.code == Code::NonMonotoneTrials));
    let mut fs = fs;
    // A trial at 15 streams that passes (its knee above it), after 12 failed: the search's
    // next position.
    let next = fs.iter().filter(|f| f.name.starts_with("np4-c")).count() as u32;
    let late = trial(&spec, "np4", 15.0, 20.0, next, real);
    fs.push(load("late.json", &serde_json::to_value(&late).unwrap()));
    let a = analyze(&fs);
    let p = &a.profiles[0];
    let c = &p.capacity.as_ref().unwrap().candidates[0];
    assert_eq!((c.last_pass, c.first_fail), (Some(11.0), Some(12.0)));
    assert_eq!(c.passes_above_fail, vec![15.0]);
    let flag = p
        .flags
        .iter()
        .find(|f| f.code == Code::NonMonotoneTrials)
        .expect("a non-monotone flag");
    assert!(flag.message.contains("15 streams"), "{}", flag.message);
    assert!(p.reason.contains("not monotone"), "{}", p.reason);
    let lines = sloscope_core::show::render::markdown(&a);
    assert!(lines.contains("not monotone"), "{lines}");
}

/// A capacity verdict stands on the whole search, on passes its intervals decide, and on the
/// candidate's own run at the workload's load: a trial missing from the search makes the profile
/// incomplete, passes decided by point estimates only are not enough data, and a fixed-load run
/// that fails its SLO there contradicts the capacity (tune).
#[test]
fn a_capacity_verdict_rests_on_the_whole_search_and_agrees_with_its_own_run() {
    let spec = balanced("capacity");
    let real = EvidenceLevel::RealBackendProfile;
    let fs = files(&spec, &[("np4", 11.0, real)]);
    assert_eq!(analyze(&fs).profiles[0].decision, ProfileDecision::Accept);
    // A trial of the search deleted.
    let mut holed = fs.clone();
    holed.retain(|f| f.name != "np4-c2.json");
    let p = &analyze(&holed).profiles[0];
    assert_eq!(p.decision, ProfileDecision::Incomplete, "{}", p.reason);
    assert!(p.reason.contains("no trial at position 1"), "{}", p.reason);
    // 24 requests a trial: no p95 bound, every pass marginal.
    let mut few = spec.clone();
    few.workload.as_mut().unwrap().requests_per_repeat = Some(24);
    let p = &analyze(&files(&few, &[("np4", 11.0, real)])).profiles[0];
    assert_eq!(p.decision, ProfileDecision::NotEnoughData, "{}", p.reason);
    assert!(p.reason.contains("marginal"), "{}", p.reason);
    // Its own run at 4 streams slow: it fails there, whatever the trials say.
    let mut slow = fs.clone();
    let mut fixed = trial(&spec, "np4", 4.0, 1.0, 99, real);
    fixed.trial = None;
    let f = slow.iter_mut().find(|f| f.name == "np4.json").unwrap();
    *f = load("np4.json", &serde_json::to_value(&fixed).unwrap());
    let p = &analyze(&slow).profiles[0];
    assert_eq!(p.decision, ProfileDecision::Tune, "{}", p.reason);
    assert!(p.reason.contains("contradict"), "{}", p.reason);
}

/// Two searches of one candidate mixed: a trial of a second search, at a load the first did not
/// try, claims a position (`trial.index`) a trial of the first holds. No file order says which
/// search is the one: both are left out, the other file named; the rest of the search stands.
#[test]
fn two_trials_at_one_position_of_the_search_are_a_conflict() {
    let spec = balanced("capacity");
    let real = EvidenceLevel::RealBackendProfile;
    let mut fs = files(&spec, &[("np4", 11.0, real)]);
    let trials: Vec<(String, f64, u32)> = fs
        .iter()
        .filter_map(|f| match &f.doc {
            sloscope_core::Document::Run(r) => {
                let t = r.trial.as_ref()?;
                Some((f.name.clone(), t.load, t.index))
            }
            _ => None,
        })
        .collect();
    let holder = trials.iter().find(|t| t.2 == 1).unwrap().0.clone();
    let untried = (1..=16)
        .map(f64::from)
        .find(|l| trials.iter().all(|t| t.1 != *l))
        .unwrap();
    // Its own measurement (another seed), then given position 1.
    let mut second = trial(&spec, "np4", untried, 11.0, 30, real);
    second.trial.as_mut().unwrap().index = 1;
    fs.push(load("second.json", &serde_json::to_value(&second).unwrap()));
    let a = analyze(&fs);
    let conflict: Vec<&sloscope_core::analyse::report::Excluded> = a.profiles[0]
        .excluded
        .iter()
        .filter(|e| e.code == Code::Invariant(Invariant::OneTrialPerLoad))
        .collect();
    let files: Vec<&str> = conflict.iter().map(|e| e.file.as_str()).collect();
    assert_eq!(files, [holder.as_str(), "second.json"], "{conflict:?}");
    let want = format!("at position 1 of its concurrency search ({holder}, second.json)");
    assert!(conflict[0].reason.contains(&want), "{}", conflict[0].reason);
    assert_eq!(
        a.profiles[0].excluded.len(),
        2,
        "{:?}",
        a.profiles[0].excluded
    );
    let c = &a.profiles[0].capacity.as_ref().unwrap().candidates[0];
    assert_eq!(c.trials.len(), trials.len() - 1);
}

#[test]
fn a_trial_whose_interval_straddles_the_limit_is_marginal() {
    // TTFT spread 60–120 ms, a p95 limit of 118 ms: the p95 of 12 requests has no upper bound
    // at all (59 are needed for a one-sided one), and its lower bound is below the limit, so
    // the data cannot decide it: the trial is marginal.
    let spec: sloscope_core::schema::ProfileSpec = serde_json::from_value(json!({
        "name": "balanced",
        "workload": {"id": "mixed", "concurrency": 4, "prompt_tokens": 64,
                     "max_output_tokens": 16, "repeats": 1, "requests_per_repeat": 12},
        "primary_metric": "throughput_tps",
        "slo": {"ttft_p95_ms": 118},
        "search": {"over": "concurrency", "min": 1, "max": 16},
    }))
    .unwrap();
    let shape = Shape {
        requests: 12,
        repeats: 1,
        concurrency: 4,
        ttft_us: (60_000, 120_000),
        seed: 3,
        ..Shape::default()
    };
    let mut run = synth::run(
        "q4",
        &spec,
        "np4",
        1,
        EvidenceLevel::RealBackendProfile,
        &shape,
    );
    run.trial = Some(Trial {
        over: "concurrency".into(),
        load: 4.0,
        index: 0,
    });
    let profile = sloscope_core::check::contract::validate_profile(&spec).unwrap();
    let t = sloscope_core::analyse::capacity::evaluate_trial("t.json", &run, &profile);
    let k = &t.checks[0];
    let iv = k.interval.expect("an order-statistic interval");
    assert!(iv.low.unwrap() < 118.0 && iv.high.is_none(), "{iv:?}");
    assert_eq!(iv.needed, Some(72), "{iv:?}");
    assert!(k.unsure && t.marginal, "{t:#?}");
    let s = profile.search.as_ref().unwrap();
    let more = sloscope_core::analyse::capacity::needs_more_requests;
    assert!(more(&t, s, 12));
    // Another repeat of 12 would pass a cap of 16: the trial stops at one repeat, the most the
    // check of its repeats allows (a trial given 24 was flagged for repeats it was not planned).
    let mut capped = s.clone();
    capped.max_requests_per_trial = 16;
    assert!(!more(&t, &capped, 12));
}

#[test]
fn a_bad_search_is_reported_field_by_field() {
    let mut spec = balanced("capacity");
    spec.search = Some(
        serde_json::from_value(json!({"over": "tokens", "min": 8, "max": 4, "rank_by": "luck"}))
            .unwrap(),
    );
    let e = sloscope_core::check::contract::validate_profile(&spec).unwrap_err();
    let fields: Vec<&str> = e.iter().map(|p| p.field.as_str()).collect();
    assert!(
        fields.contains(&"search.over")
            && fields.contains(&"search.max")
            && fields.contains(&"search.rank_by"),
        "{e:?}"
    );
    spec.search = Some(
        serde_json::from_value(json!({"over": "request_rate_rps", "min": 1, "max": 4})).unwrap(),
    );
    let e = sloscope_core::check::contract::validate_profile(&spec).unwrap_err();
    let fields: Vec<&str> = e.iter().map(|p| p.field.as_str()).collect();
    assert!(
        fields.contains(&"search.tolerance") && fields.contains(&"workload.request_rate_rps"),
        "{e:?}"
    );
    spec.search =
        Some(serde_json::from_value(json!({"over": "concurrency", "min": 1.5, "max": 4})).unwrap());
    let e = sloscope_core::check::contract::validate_profile(&spec).unwrap_err();
    assert!(e[0].message.contains("whole number"), "{e:?}");
}

#[test]
fn a_closed_loop_trial_sends_at_least_four_requests_per_stream() {
    use sloscope_core::analyse::capacity::trial_requests;
    assert_eq!(trial_requests(LoadAxis::Concurrency, 2.0, 20), 20);
    assert_eq!(trial_requests(LoadAxis::Concurrency, 13.0, 20), 52);
    assert_eq!(trial_requests(LoadAxis::RequestRateRps, 13.0, 20), 20);
}

#[test]
fn a_trial_whose_timing_contradicts_its_load_is_left_out() {
    let spec = balanced("capacity");
    let real = EvidenceLevel::RealBackendProfile;
    let mut fs = files(&spec, &[("np4", 3.0, real)]);
    // A file claiming a pass at 12 streams, measured at 2 (never more than 2 in flight).
    let mut low = trial(&spec, "np4", 2.0, 11.0, 30, real);
    low.trial.as_mut().unwrap().load = 12.0;
    fs.push(load("claims-12.json", &serde_json::to_value(&low).unwrap()));
    // A file claiming 3 streams whose requests overlap 8 deep.
    let mut deep = trial(&spec, "np4", 8.0, 11.0, 31, real);
    deep.trial.as_mut().unwrap().load = 3.0;
    fs.push(load("claims-3.json", &serde_json::to_value(&deep).unwrap()));
    let a = analyze(&fs);
    let c = &a.profiles[0].capacity.as_ref().unwrap().candidates[0];
    assert_eq!(
        (c.last_pass, c.first_fail),
        (Some(3.0), Some(4.0)),
        "{c:#?}"
    );
    let excluded = &a.profiles[0].excluded;
    assert!(
        // (It also holds fewer requests than a 12-stream trial sends: both are said.)
        excluded.iter().any(|e| e.file == "claims-12.json"
            && e.reason
                .contains("never more than 2 of its 64 requests in flight")),
        "{excluded:?}"
    );
    assert!(
        excluded.iter().any(|e| e.file == "claims-3.json"
            && e.code == Code::Invariant(Invariant::ConcurrencyRespected)
            && e.reason.starts_with("its requests overlap 8 deep")),
        "{excluded:?}"
    );
}

#[test]
fn goodput_ranking_picks_the_most_output_within_the_slo() {
    let spec = balanced("goodput");
    let real = EvidenceLevel::RealBackendProfile;
    let a = analyze(&files(&spec, &[("np1", 6.0, real), ("np4", 11.0, real)]));
    let p = &a.profiles[0];
    let cap = p.capacity.as_ref().unwrap();
    for c in &cap.candidates {
        let g = c.goodput_tps.unwrap();
        let best_pass = c
            .trials
            .iter()
            .filter(|t| t.pass)
            .filter_map(|t| t.throughput_tps)
            .fold(0.0, f64::max);
        assert_eq!(g, best_pass, "{}", c.name);
        assert!(c.goodput_load.unwrap() <= c.last_pass.unwrap());
    }
    let best = cap
        .candidates
        .iter()
        .max_by(|a, b| a.goodput_tps.unwrap().total_cmp(&b.goodput_tps.unwrap()))
        .unwrap();
    assert_eq!(p.recommended_name.as_deref(), Some(best.name.as_str()));
    assert!(
        cap.statement
            .contains("delivers the most output within every SLO"),
        "{}",
        cap.statement
    );
    assert_eq!(p.decision, ProfileDecision::Accept, "{}", p.reason);
}
