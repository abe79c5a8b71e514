//! Violations beyond the catalogue's one generated case per invariant: the second face of an
//! invariant, another origin of data held to it, and the classes hostile files found, each
//! from the same valid set as the catalogue's cases.

use serde_json::{json, Value};
use sloscope_core::analyze;
use sloscope_core::check::invariant::{Invariant, Outcome};

use crate::invariants::{base, cell, files, map_col, named, requests};

/// The catalogue's second face of `measurements_reused`: one run's repeat copied as another of
/// its repeats (the copy's window nulled, so nothing else can tell).
#[test]
fn a_repeat_copied_inside_its_run_is_measurements_reused() {
    let mut s = base();
    let mut copy = s.run["repeats"][0].clone();
    let last = s.run["repeats"].as_array().unwrap().len();
    copy["index"] = last.into();
    s.run["repeats"].as_array_mut().unwrap().push(copy);
    s.run["started_at"] = Value::Null;
    s.run["finished_at"] = Value::Null;
    let a = analyze(&files(&s).unwrap());
    let found = named(&a);
    assert!(
        found.contains(&(Outcome::Exclude, Invariant::MeasuredOnce)),
        "{found:?}"
    );
    assert!(a.profiles[0].excluded[0].reason.contains("copied"));
}

/// An imported run is held to the request-level token checks too, with another tool's slack:
/// a count ten times the cap is left out, and a success with no tokens but many gaps refused.
#[test]
fn an_imported_run_is_held_to_its_cap_and_its_gaps() {
    let mut s = base();
    s.run["source"] = "imported".into();
    *cell(&mut s.run, 0, "output_tokens", 2) = 160.into();
    let a = analyze(&files(&s).unwrap());
    assert!(
        named(&a).contains(&(Outcome::Exclude, Invariant::OutputsWithinCap)),
        "{:?}",
        named(&a)
    );
    let mut s = base();
    s.run["source"] = "imported".into();
    let gaps = s.run["repeats"][0]["requests"]["itl_us"][2]
        .as_array()
        .unwrap()
        .len();
    assert!(gaps >= 3, "the control has gaps to count: {gaps}");
    *cell(&mut s.run, 0, "output_tokens", 2) = 0.into();
    let e = files(&s).expect_err("zero tokens under many gaps");
    assert!(
        e.contains("[gaps_fit_tokens]") || e.contains("[success_complete]"),
        "{e}"
    );
}

/// Every token in one content event is not a stream, even when the closing `[DONE]` came later
/// (end-to-end past the first token): `not_streamed`, with no other invariant broken.
#[test]
fn one_event_per_request_is_not_streamed_however_late_the_end() {
    let mut s = base();
    let r = &mut s.run;
    for rep in r["repeats"].as_array_mut().unwrap() {
        let n = rep["requests"]["ttft_us"].as_array().unwrap().len();
        rep["requests"]["output_events"] = json!(vec![1; n]);
        rep["requests"]["itl_us"] = json!(vec![Vec::<u64>::new(); n]);
    }
    let a = analyze(&files(&s).unwrap());
    let found = named(&a);
    assert!(
        found.contains(&(Outcome::Exclude, Invariant::Streamed)),
        "{found:?}"
    );
}

/// More content events than output tokens is the same broken rule as more gaps
/// (`gaps_fit_tokens`): n events carry at least n tokens.
#[test]
fn more_events_than_tokens_is_refused() {
    let mut s = base();
    let r = &mut s.run;
    let mut events: Vec<Value> = r["repeats"][0]["requests"]["itl_us"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g.as_array().unwrap().len() + 1).into())
        .collect();
    let tokens = cell(r, 0, "output_tokens", 2).as_u64().unwrap();
    events[2] = (tokens + 1).into();
    r["repeats"][0]["requests"]["output_events"] = json!(events);
    let e = files(&s).expect_err("events past tokens");
    assert!(
        e.contains("[gaps_fit_tokens]") && e.contains("output_events"),
        "{e}"
    );
}

/// The prompt-length check reads every stated count: a source left null (or `requested`) does
/// not switch it off.
#[test]
fn prompt_lengths_are_checked_whatever_their_source_says() {
    for source in [Value::Null, "requested".into()] {
        let mut s = base();
        map_col(&mut s.run, "prompt_tokens", |_| 1000);
        for rep in s.run["repeats"].as_array_mut().unwrap() {
            let n = rep["requests"]["prompt_tokens"].as_array().unwrap().len();
            rep["requests"]["prompt_tokens_source"] = json!(vec![source.clone(); n]);
        }
        let found = named(&analyze(&files(&s).unwrap()));
        assert!(
            found.contains(&(Outcome::Exclude, Invariant::PromptsMatchWorkload)),
            "{source}: {found:?}"
        );
    }
}

/// Gives the plan's profile and the run's own copy of it the prompt lengths `dist`.
fn prompts_asked(s: &mut crate::invariants::Set, dist: &Value) {
    s.plan.as_mut().unwrap()["profiles"][0]["workload"]["prompt_length"] = dist.clone();
    s.run["profile_spec"]["workload"]["prompt_length"] = dist.clone();
}

/// The prompt-length check's second face: lengths of another spread. A run whose prompts are
/// all one length, for a workload that asks lengths spread over hundreds of tokens (another
/// tool's fixed-length benchmark placed in a mixed-length profile), is another workload even
/// at the right mean; so is a run of spread lengths for a workload of one length. Controls:
/// the fixed run in a fixed workload, and a run drawn from the spread it is held to.
#[test]
fn prompts_of_another_spread_are_another_workload() {
    let spread = json!({"kind": "log_normal", "mean": 64, "stddev": 48, "min": 8, "max": 320});
    let prompt_check = |s: &crate::invariants::Set| {
        named(&analyze(&files(s).unwrap()))
            .contains(&(Outcome::Exclude, Invariant::PromptsMatchWorkload))
    };
    // One length (64, every request) for a spread workload of mean 64.
    let mut fixed_in_spread = base();
    prompts_asked(&mut fixed_in_spread, &spread);
    assert!(
        prompt_check(&fixed_in_spread),
        "fixed prompts in a spread workload"
    );
    // Spread lengths (mean about 64) for a workload of one length, 64.
    let mut spread_in_fixed = base();
    let at = crate::invariants::each(&spread_in_fixed.run);
    for (k, (r, i)) in at.into_iter().enumerate() {
        *cell(&mut spread_in_fixed.run, r, "prompt_tokens", i) = (8 + (k * 37) % 113).into();
    }
    assert!(
        prompt_check(&spread_in_fixed),
        "spread prompts in a fixed workload"
    );
    // Controls.
    assert!(!prompt_check(&base()), "fixed prompts in a fixed workload");
    let mut drawn = base();
    prompts_asked(&mut drawn, &spread);
    let dist: sloscope_core::base::traffic::LengthDist = serde_json::from_value(spread).unwrap();
    let at = crate::invariants::each(&drawn.run);
    for (k, (r, i)) in at.into_iter().enumerate() {
        *cell(&mut drawn.run, r, "prompt_tokens", i) = dist.sample(3, k as u64).into();
    }
    assert!(!prompt_check(&drawn), "prompts drawn from the spread asked");
}

/// The output cap's second face, for a run that records no cap per request (another tool's,
/// placed in a profile whose caps are drawn): outputs that the caps drawn could allow only to a
/// few requests, on most of them, are other requests than the profile's. Controls: outputs
/// that reach caps drawn from the distribution, imported and measured.
#[test]
fn outputs_past_the_caps_a_workload_draws_are_other_requests() {
    let caps = json!({"kind": "uniform", "min": 16, "max": 48});
    let dist: sloscope_core::base::traffic::LengthDist =
        serde_json::from_value(caps.clone()).unwrap();
    let with = |source: &str, output: &dyn Fn(u64) -> u64| {
        let mut s = base();
        s.plan.as_mut().unwrap()["profiles"][0]["workload"]["output_length"] = caps.clone();
        s.run["profile_spec"]["workload"]["output_length"] = caps.clone();
        s.run["source"] = source.into();
        let at = crate::invariants::each(&s.run);
        for (k, (r, i)) in at.into_iter().enumerate() {
            if cell(&mut s.run, r, "output_tokens", i).is_u64() {
                *cell(&mut s.run, r, "output_tokens", i) = output(k as u64).into();
            }
        }
        named(&analyze(&files(&s).unwrap()))
    };
    let past = (Outcome::Exclude, Invariant::OutputsWithinCap);
    // Every output 44 tokens: caps of 39 or more (44 less the re-tokenizing slack) are drawn
    // for under a third of requests.
    assert!(with("imported", &|_| 44).contains(&past));
    assert!(with("measured", &|_| 44).contains(&past));
    // Outputs that reach caps the distribution draws (some other draw than the check's own).
    let drawn = |k: u64| u64::from(dist.sample(11, k));
    assert!(!with("imported", &drawn).contains(&past));
    assert!(!with("measured", &drawn).contains(&past));
}

/// What a run is held to is the plan's profile, never the run's own copy of it: a run that
/// gives its copy a prompt distribution the plan never drew (500 tokens, fixed) and sends
/// 500-token prompts is another workload than the plan's 64. Control: the copy unedited.
#[test]
fn a_run_cannot_set_its_own_test_by_rewriting_its_workload() {
    let mut s = base();
    s.run["profile_spec"]["workload"]["prompt_length"] = json!({"kind": "fixed", "tokens": 500});
    map_col(&mut s.run, "prompt_tokens", |_| 500);
    let found = named(&analyze(&files(&s).unwrap()));
    assert!(
        found.contains(&(Outcome::Exclude, Invariant::PromptsMatchWorkload)),
        "{found:?}"
    );
    assert!(named(&analyze(&files(&base()).unwrap())).is_empty());
}

/// One length with the server's token-count noise (60–69 tokens) is not a spread of 32–96
/// asked, once 20 or more prompts show it; ten draws of that spread are (control).
#[test]
fn one_length_with_noise_is_not_a_narrow_spread() {
    let spread = json!({"kind": "uniform", "min": 32, "max": 96});
    let mut noisy = base();
    prompts_asked(&mut noisy, &spread);
    let at = crate::invariants::each(&noisy.run);
    for (k, (r, i)) in at.into_iter().enumerate() {
        *cell(&mut noisy.run, r, "prompt_tokens", i) = (60 + (k * 7) % 10).into();
    }
    let found = named(&analyze(&files(&noisy).unwrap()));
    assert!(
        found.contains(&(Outcome::Exclude, Invariant::PromptsMatchWorkload)),
        "{found:?}"
    );
    let mut drawn = base();
    prompts_asked(&mut drawn, &spread);
    let dist: sloscope_core::base::traffic::LengthDist = serde_json::from_value(spread).unwrap();
    let at = crate::invariants::each(&drawn.run);
    for (k, (r, i)) in at.into_iter().enumerate() {
        *cell(&mut drawn.run, r, "prompt_tokens", i) = dist.sample(5, k as u64).into();
    }
    assert!(named(&analyze(&files(&drawn).unwrap())).is_empty());
}

/// Caps recorded per request are held to the one cap the profile sends: 64 where it sends 16
/// is other requests, whatever the run's source. Control: 16 recorded.
#[test]
fn recorded_caps_other_than_the_profiles_are_other_requests() {
    for (cap, left_out) in [(64, true), (16, false)] {
        let mut s = base();
        let n = requests(&s.run);
        s.run["repeats"][0]["requests"]["max_output_tokens"] = json!(vec![cap; n]);
        let found = named(&analyze(&files(&s).unwrap()));
        assert_eq!(
            found.contains(&(Outcome::Exclude, Invariant::WorkloadMatches)),
            left_out,
            "{cap}: {found:?}"
        );
    }
}

/// Another tool's file in a profile of multi-turn sessions must show it measured sessions:
/// one that records no turns is left out, saying so (its later turns' longer prompts are
/// not read as another spread). Control: a profile without sessions.
#[test]
fn another_tools_file_without_turns_cannot_show_sessions() {
    let sessions = json!({"turns": {"kind": "fixed", "tokens": 3}, "think_time_ms": {"kind": "fixed", "tokens": 100}});
    let mut s = base();
    s.plan.as_mut().unwrap()["profiles"][0]["workload"]["sessions"] = sessions.clone();
    s.run["profile_spec"]["workload"]["sessions"] = sessions;
    s.run["source"] = "imported".into();
    let a = analyze(&files(&s).unwrap());
    let reasons: Vec<&str> = a.profiles[0]
        .excluded
        .iter()
        .map(|e| e.reason.as_str())
        .collect();
    assert!(
        reasons.iter().any(|r| r.contains("records no turns")),
        "{reasons:?}"
    );
    let mut plain = base();
    plain.run["source"] = "imported".into();
    let a = analyze(&files(&plain).unwrap());
    assert!(
        a.profiles[0]
            .excluded
            .iter()
            .all(|e| !e.reason.contains("records no turns")),
        "{:?}",
        a.profiles[0].excluded
    );
}

#[test]
fn a_memory_sample_past_any_machine_is_refused() {
    for (field, v) in [("server_rss_mb", 1e308), ("gpu_used_mb", 2e12)] {
        let mut s = base();
        s.run["repeats"][0]["memory"][0][field] = v.into();
        let e = files(&s).expect_err("a size past 1 EiB");
        assert!(
            e.contains("[values_non_negative]") && e.contains(field) && e.contains("1 EiB"),
            "{e}"
        );
    }
    // A large machine's sample is kept.
    let mut s = base();
    s.run["repeats"][0]["memory"][0]["gpu_used_mb"] = 2_000_000.0.into();
    files(&s).expect("2 TB of GPU memory is a size");
}

#[test]
fn events_bound_the_gaps_and_a_count_taken_from_them() {
    // 20 events cannot have 47 gaps between them (measured here: one gap fewer than events).
    let mut s = base();
    let n = requests(&s.run);
    let gaps = s.run["repeats"][0]["requests"]["itl_us"][2]
        .as_array()
        .unwrap()
        .len();
    let mut events = vec![Value::Null; n];
    events[2] = (gaps as u64 / 2).into();
    s.run["repeats"][0]["requests"]["output_events"] = json!(events);
    let e = files(&s).expect_err("gaps past events");
    assert!(
        e.contains("[gaps_fit_tokens]") && e.contains("content events"),
        "{e}"
    );
    // A count whose source is the events is the events.
    let mut s = base();
    let tokens = cell(&mut s.run, 0, "output_tokens", 2).as_u64().unwrap();
    let mut events = vec![Value::Null; n];
    events[2] = tokens.into();
    let mut source = vec![Value::Null; n];
    source[2] = "events".into();
    s.run["repeats"][0]["requests"]["output_tokens_source"] = json!(source);
    s.run["repeats"][0]["requests"]["output_events"] = json!(events.clone());
    files(&s).expect("a count equal to its events");
    events[2] = (tokens - 1).into();
    s.run["repeats"][0]["requests"]["output_events"] = json!(events);
    let e = files(&s).expect_err("a count past its events");
    assert!(e.contains("counted from the stream's events"), "{e}");
}

#[test]
fn a_baseline_copied_from_a_candidate_with_its_times_shifted_is_one_measurement() {
    // np4's requests as the np1 run, each first token and end 1 µs later: the gaps between
    // tokens give the copy away.
    let mut s = base();
    let mut other = s.run.clone();
    other["candidate"]["name"] = "np1".into();
    other["candidate"]["value"] = 1.into();
    map_col(&mut other, "ttft_us", |t| t + 1);
    map_col(&mut other, "e2e_us", |t| t + 1);
    s.extra.push(("np1.json".into(), other));
    let a = analyze(&files(&s).unwrap());
    assert!(
        named(&a).contains(&(Outcome::Exclude, Invariant::MeasuredOnce)),
        "{:?}",
        named(&a)
    );
}

/// A server that gives no token count and stops before the cap it was asked to reach (its
/// stream events counted): `stopped_before_cap` all the same, saying how the tokens were
/// counted.
#[test]
fn a_cap_not_reached_by_the_streams_events_is_flagged() {
    let mut s = base();
    s.run["endpoint"] =
        json!({"url": "http://127.0.0.1:8080", "api": "completions", "ignore_eos": true});
    let n = requests(&s.run);
    let q = &mut s.run["repeats"][0]["requests"];
    q["output_tokens_source"] = json!(vec!["events"; n]);
    q["output_events"] = q["output_tokens"].clone();
    crate::invariants::cap_sent(&mut s, 20);
    let a = analyze(&files(&s).unwrap());
    assert_eq!(
        named(&a),
        [(Outcome::Flag, Invariant::CapsGenerated)],
        "{:?}",
        a.profiles[0].flags
    );
    let flag = &a.profiles[0].flags[0].message;
    assert!(flag.contains("counted from its stream events"), "{flag}");
}
