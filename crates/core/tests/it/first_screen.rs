//! What a reader sees before the verdicts: what is judged (the subject), the notes that every
//! profile shares said once, and sloscope's own sentences whole — on the committed example set,
//! with a control for each (one profile alone shares nothing; a file's own long name is cut).

use sloscope_core::show::render;
use sloscope_core::show::view::{report_view, Shown};
use sloscope_core::{analyze, Document};

use crate::snapshots::{example_analysis, example_files};

#[test]
fn the_subject_names_artifact_baseline_backend_hardware_plan_and_dates() {
    let a = example_analysis();
    let v = report_view(&a);
    let labels: Vec<&str> = v.subject.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "Artifact",
            "Float baseline",
            "Backend",
            "Hardware",
            "Plan",
            "Collected"
        ]
    );
    let value = |l: &str| {
        v.subject
            .iter()
            .find(|x| x.label.as_str() == l)
            .unwrap()
            .value
            .to_string()
    };
    assert!(value("Artifact").starts_with("smollm2-135m-instruct-q8_0 (Q8_0)"));
    assert!(value("Float baseline").contains("f16"));
    // The records' words quoted where they are not one plain token.
    assert_eq!(value("Backend"), "\"llama.cpp llama-server\" b1-7e4c0a9");
    assert!(value("Plan").contains("content sha256 "));
    assert!(value("Collected").contains("UTC") && value("Collected").contains("runs)"));
    assert!(!v.subject.iter().any(|l| l.value.contains("not recorded")));
    let text = render::text(&a);
    assert!(text.starts_with("Artifact: smollm2-135m-instruct-q8_0"));
    assert!(render::markdown(&a).contains("Artifact: smollm2-135m-instruct-q8\\_0 (Q8\\_0)"));
}

#[test]
fn the_plan_hash_is_of_its_content_not_its_spelling() {
    let files = example_files();
    let hash = |a: &sloscope_core::Analysis| a.subject.plan_content_sha256.clone().unwrap();
    let before = hash(&analyze(&files));
    let moved: Vec<_> = files
        .into_iter()
        .map(|mut f| {
            if f.name.ends_with("plan.json") {
                let sloscope_core::Document::Plan(p) = &f.doc else {
                    panic!("{} is not a plan", f.name)
                };
                let pretty = serde_json::to_vec_pretty(p).unwrap();
                f.doc = sloscope_core::read_document("other/plan.json", pretty).unwrap();
                f.name = "other/plan.json".into();
            }
            f
        })
        .collect();
    assert_eq!(before, hash(&analyze(&moved)));
}

#[test]
fn notes_every_profile_shares_are_said_once() {
    let a = example_analysis();
    let v = report_view(&a);
    let nvml: Vec<&Shown> = v
        .run_notes
        .iter()
        .filter(|n| n.contains("NVML not available"))
        .collect();
    assert_eq!(nvml.len(), 1, "{:?}", v.run_notes);
    assert!(nvml[0].contains("(every profile)"));
    for p in &v.profiles {
        assert!(!p.notes.iter().any(|n| n.contains("NVML not available")));
        // A note of this profile alone stays with it.
        assert!(
            p.notes.iter().any(|n| n.contains("prompts:")),
            "{:?}",
            p.notes
        );
    }
    let text = render::text(&a);
    assert_eq!(text.matches("NVML not available").count(), 1);
}

#[test]
fn one_profile_alone_shares_no_notes() {
    let files: Vec<_> = example_files()
        .into_iter()
        .filter(|f| !f.name.contains("runs/") || f.name.contains("latency"))
        .collect();
    let a = analyze(&files);
    let v = report_view(&a);
    assert!(v.run_notes.is_empty(), "{:?}", v.run_notes);
    let latency = v.profiles.iter().find(|p| p.profile.as_str() == "latency");
    assert!(latency
        .unwrap()
        .notes
        .iter()
        .any(|n| n.contains("NVML not available")));
}

#[test]
fn sloscopes_own_sentences_are_whole_and_a_files_long_name_is_cut() {
    let a = example_analysis();
    let text = render::text(&a);
    assert!(!text.contains("more characters)"), "own words were cut");
    assert!(text.contains("about 145 requests would decide it)"));
    let long = "x".repeat(1000);
    assert!(Shown::input(&long).contains("more characters)"));
    assert_eq!(Shown::new(&long).len(), 1000);
}

#[test]
fn a_card_says_its_profile_and_decision_once() {
    let v = report_view(&example_analysis());
    for p in &v.profiles {
        let whole = format!("{}: {} · {}", p.profile, p.decision_label, p.card_ids);
        assert_eq!(p.headline.as_str(), whole, "{}", p.profile);
        assert!(!p.card_line.contains(&format!("{}:", p.profile)));
        // The card says each metric by its short name; the identifiers are on hover.
        for name in sloscope_core::base::metric::Metric::all_names() {
            assert!(!p.card_line.contains(&name), "{}: {name}", p.profile);
        }
    }
    assert!(v.profiles[0].card_line.contains("TTFT p95 117.78 ms"));
    assert!(v.profiles[0].card_ids.contains("ttft_p95_ms 117.78 ms"));
}

#[test]
fn every_decision_says_what_to_do_next() {
    let v = report_view(&example_analysis());
    let next = |name: &str| {
        v.profiles
            .iter()
            .find(|p| p.profile.as_str() == name)
            .and_then(|p| p.next_step.clone())
            .map(|s| s.to_string())
            .unwrap_or_default()
    };
    assert_eq!(
        next("latency"),
        "deploy np1 (parallel = 1) for this profile"
    );
    assert!(next("balanced").contains("retest"), "{}", next("balanced"));
    assert!(
        next("throughput").contains("about 145 requests per candidate"),
        "{}",
        next("throughput")
    );
    let labels: Vec<&str> = v.legend.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        ["ACCEPT", "TUNE", "REJECT", "INCOMPLETE", "NOT ENOUGH DATA"]
    );
}

#[test]
fn a_missing_cell_is_the_next_thing_to_measure() {
    let files: Vec<_> = example_files()
        .into_iter()
        .filter(|f| !f.name.ends_with("runs/latency--np4.json"))
        .collect();
    let v = report_view(&analyze(&files));
    let latency = v.profiles.iter().find(|p| p.profile.as_str() == "latency");
    let next = latency.unwrap().next_step.clone().unwrap().to_string();
    assert!(next.starts_with("measure candidate np4 (planned"), "{next}");
}

/// Absence is never a verdict: a profile whose runs are all missing gets no provisional
/// answer (a verdict over no run), and each kind of missing cell is said once with its names.
#[test]
fn a_profile_with_nothing_measured_has_no_provisional_answer() {
    let files: Vec<_> = example_files()
        .into_iter()
        .filter(|f| !(f.name.contains("runs/latency--") && f.name.ends_with(".json")))
        .collect();
    let a = analyze(&files);
    let latency = a.profiles.iter().find(|p| p.profile == "latency").unwrap();
    assert_eq!(latency.decision.label(), "INCOMPLETE");
    assert!(latency.candidates.is_empty());
    assert_eq!(latency.provisional, None, "{:?}", latency.provisional);
    let v = report_view(&a);
    let p = v.profiles.iter().find(|p| p.profile.as_str() == "latency");
    let next = p.unwrap().next_step.clone().unwrap().to_string();
    assert!(
        next.starts_with("measure candidates np1, np4 and the float baseline f16"),
        "{next}"
    );
    assert!(p.unwrap().provisional_line.is_none());
    assert!(!p.unwrap().card_line.to_string().contains("provisional"));
    // Control: one run left, and the provisional answer over it is kept.
    let one: Vec<_> = example_files()
        .into_iter()
        .filter(|f| !f.name.ends_with("runs/latency--np4.json"))
        .collect();
    let a = analyze(&one);
    let latency = a.profiles.iter().find(|p| p.profile == "latency").unwrap();
    assert!(latency.provisional.is_some());
}

/// Runs under a profile the loaded plan does not define (runs of another plan) are not
/// judged: `incomplete`, never a reject, with what to load; the same for two plans.
#[test]
fn a_profile_the_plan_does_not_define_is_not_judged() {
    use sloscope_core::Document;
    let mut files = example_files();
    for f in &mut files {
        if let Document::Plan(p) = &mut f.doc {
            p.profiles.retain(|x| x.name.as_deref() != Some("balanced"));
        }
    }
    let a = analyze(&files);
    let balanced = a.profiles.iter().find(|p| p.profile == "balanced").unwrap();
    assert_eq!(
        balanced.decision.label(),
        "INCOMPLETE",
        "{}",
        balanced.reason
    );
    assert!(balanced
        .reason
        .contains("the profile definition is invalid"));
    assert!(balanced.recommended_name.is_none());
    assert!(balanced.candidates.iter().all(|c| !c.chosen));
    let v = report_view(&a);
    let p = v.profiles.iter().find(|p| p.profile.as_str() == "balanced");
    let next = p.unwrap().next_step.clone().unwrap().to_string();
    assert!(
        next.starts_with("load the plan the runs were collected under"),
        "{next}"
    );
    // Control: latency, which the plan still defines, keeps its verdict.
    let latency = a.profiles.iter().find(|p| p.profile == "latency").unwrap();
    assert_eq!(latency.decision.label(), "ACCEPT");
    // Two different plans: no verdict anywhere, and one plan to load.
    let mut two = example_files();
    let mut other = two
        .iter()
        .find(|f| f.name.ends_with("plan.json"))
        .unwrap()
        .clone();
    if let Document::Plan(p) = &mut other.doc {
        p.name = Some("another plan".into());
    }
    other.name = "other/plan.json".into();
    two.push(other);
    let a = analyze(&two);
    for p in &a.profiles {
        assert_eq!(
            p.decision.label(),
            "INCOMPLETE",
            "{}: {}",
            p.profile,
            p.reason
        );
    }
    let v = report_view(&a);
    let next = v.profiles[0].next_step.clone().unwrap().to_string();
    assert!(next.starts_with("load one plan"), "{next}");
}

/// A pull-request comment: what is judged and the answer per profile with its next step come
/// before any fold, in under 3 KB; everything else is folded, each fold closed.
#[test]
fn the_markdown_summary_answers_before_its_folds() {
    let md = render::markdown(&example_analysis());
    let visible = &md[..md.find("<details>").expect("folds")];
    assert!(
        visible.len() < 3000,
        "{} bytes before the first fold",
        visible.len()
    );
    for must in [
        "Artifact: ",
        "latency: ACCEPT",
        "→ next: deploy np1",
        "balanced: TUNE",
    ] {
        assert!(visible.contains(must), "{must:?} not before the folds");
    }
    assert_eq!(
        md.matches("<details>").count(),
        md.matches("</details>").count()
    );
    for p in ["latency", "balanced", "throughput"] {
        assert!(
            md.contains(&format!("<details><summary>{p} — ")),
            "{p} not folded"
        );
    }
}

/// Every heading of a candidate table that names a metric, or a column of sloscope's own, says
/// in words what it holds; each metric's words are its own.
#[test]
fn every_metric_heading_says_what_it_holds() {
    use sloscope_core::base::metric::Metric;
    let v = report_view(&example_analysis());
    for p in &v.profiles {
        for c in p.candidates.columns.iter().skip(2) {
            assert!(
                !c.help.is_empty(),
                "{}: {} has no words",
                p.profile,
                c.title
            );
        }
    }
    let names = Metric::all_names();
    let mut words: Vec<String> = names
        .iter()
        .map(|n| Metric::parse(n).unwrap().describe())
        .collect();
    assert_eq!(
        Metric::parse("ttft_p95_ms").unwrap().describe(),
        "time to first token, 95th percentile (ms)"
    );
    words.sort();
    words.dedup();
    assert_eq!(words.len(), names.len(), "two metrics share their words");
}

/// The example set with the plan's `latency` TTFT p95 limit set to `limit_ms`.
fn latency_ttft_limit(limit_ms: f64) -> Vec<sloscope_core::LoadedFile> {
    example_files()
        .into_iter()
        .map(|mut f| {
            if let sloscope_core::Document::Plan(p) = &f.doc {
                let mut v = serde_json::to_value(p).unwrap();
                v["profiles"][0]["slo"]["ttft_p95_ms"] = limit_ms.into();
                assert_eq!(v["profiles"][0]["name"], "latency");
                f.doc = sloscope_core::read_document(&f.name, v.to_string().into_bytes()).unwrap();
            }
            f
        })
        .collect()
}

/// Each profile's charts open with the SLO chart and the chart of the metric that decides it:
/// in the example set the latency profile's tightest SLO is TPOT p95 (its distribution next);
/// with a TTFT limit that no candidate meets, TTFT binds and its distribution comes next; a
/// profile decided by a metric no chart but the SLO chart draws (queue wait) says so.
#[test]
fn the_charts_shown_first_follow_the_deciding_metric() {
    use sloscope_core::view::ChartKind as K;
    let first = |files: &[sloscope_core::LoadedFile], profile: &str| {
        let v = report_view(&analyze(files));
        let p = v
            .profiles
            .iter()
            .find(|p| p.profile.as_str() == profile)
            .unwrap();
        (p.charts.first.clone(), p.charts.first_reason.to_string())
    };
    let files = example_files();
    assert_eq!(first(&files, "latency").0, [K::Slo, K::CdfTpot]);
    let (kinds, why) = first(&files, "throughput");
    assert_eq!(kinds, [K::Slo, K::Tradeoff]);
    assert!(
        why.contains("queue wait p95, drawn in the SLO chart"),
        "{why}"
    );
    let tight = latency_ttft_limit(1.0);
    let (kinds, why) = first(&tight, "latency");
    assert_eq!(kinds, [K::Slo, K::CdfTtft], "{why}");
    assert!(why.starts_with("decided by TTFT p95"), "{why}");
}

/// A plan whose SLOs were edited after the runs were collected re-judges them by the new
/// limits, and says so on the card, naming each limit and what the runs were collected under.
#[test]
fn slos_edited_after_collection_are_said() {
    use sloscope_core::analyse::report::Code;
    use sloscope_core::Document;
    let mut files = example_files();
    for f in &mut files {
        if let Document::Plan(p) = &mut f.doc {
            for pr in &mut p.profiles {
                if pr.name.as_deref() == Some("latency") {
                    pr.slo.as_mut().unwrap().insert("ttft_p95_ms".into(), 100.0);
                }
            }
        }
    }
    let a = analyze(&files);
    let flag = |name: &str| {
        let p = a.profiles.iter().find(|p| p.profile == name).unwrap();
        p.flags.iter().find(|f| f.code == Code::SloChanged).cloned()
    };
    let f = flag("latency").expect("the edit is said");
    assert!(
        f.message.contains("ttft_p95_ms 100 (collected under 250)"),
        "{}",
        f.message
    );
    let v = report_view(&a);
    let card = v.profiles.iter().find(|p| p.profile.as_str() == "latency");
    assert!(card
        .unwrap()
        .caveats
        .iter()
        .any(|c| c.to_string().contains("collected under 250")));
    // Control: the profiles left as planned say nothing, nor does the unedited example.
    assert!(flag("balanced").is_none());
    let a = example_analysis();
    assert!(a
        .profiles
        .iter()
        .all(|p| p.flags.iter().all(|f| f.code != Code::SloChanged)));
}

/// The lineage records of another artifact beside the example's runs: every run is left out,
/// and the report says so above the verdicts, so the header's artifact (the records') is not
/// read as what the runs measured.
#[test]
fn runs_of_another_lineage_than_the_records_are_said_above_the_verdicts() {
    use sloscope_core::read_document;
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/scripted");
    let mut files: Vec<_> = example_files()
        .into_iter()
        .filter(|f| !f.name.contains("/lineage/"))
        .collect();
    for name in ["gate.json", "baseline.json", "deployment.json"] {
        let bytes = std::fs::read(fixtures.join(name)).unwrap();
        let name = format!("scripted/{name}");
        let doc = read_document(&name, bytes).unwrap();
        files.push(sloscope_core::LoadedFile { name, doc });
    }
    let a = analyze(&files);
    let v = report_view(&a);
    let said: Vec<String> = v.caveats.iter().map(|c| c.to_string()).collect();
    let n = a.subject.runs;
    let want = format!("{n} of the {n} run(s) are of another lineage than the records");
    assert!(
        said.iter()
            .any(|c| c.starts_with(&want) && c.contains("nothing below was judged")),
        "{said:#?}"
    );
    // The header names the records' artifact and what the runs measured beside it.
    let artifact = &a.subject.lines()[0].1;
    assert!(
        artifact.starts_with("scripted-q4 (Q4_1), made from scripted, as the records say"),
        "{artifact}"
    );
    let candidates = files
        .iter()
        .filter(|f| f.name.contains("/runs/") && !f.name.contains("baseline"))
        .count();
    let runs_own = format!("the runs measured another: smollm2-135m-instruct-q8_0 ({candidates} of {candidates} candidate runs)");
    assert!(artifact.contains(&runs_own), "{artifact}");
    // Control: the example as collected says nothing of the kind.
    let a = example_analysis();
    assert!(a.subject.runs_artifact.is_none(), "{:?}", a.subject);
    let v = report_view(&a);
    assert!(!v
        .caveats
        .iter()
        .any(|c| c.to_string().contains("another lineage")));
}

/// The same file given twice (dropped again, or named twice on the command line) is one run:
/// the header counts it once and the flag says it was given twice (not "a copy of itself").
#[test]
fn a_file_given_twice_is_one_run() {
    use sloscope_core::analyse::report::Code;
    let files = example_files();
    let runs_before = analyze(&files).subject.runs;
    let again = files
        .iter()
        .find(|f| f.name.ends_with("runs/throughput--np4.json"))
        .unwrap()
        .clone();
    let mut twice = files.clone();
    twice.push(again);
    let a = analyze(&twice);
    assert_eq!(a.subject.runs, runs_before);
    let p = a
        .profiles
        .iter()
        .find(|p| p.profile == "throughput")
        .unwrap();
    let f = p
        .flags
        .iter()
        .find(|f| f.code == Code::DuplicateRun)
        .unwrap();
    assert!(
        f.message
            .ends_with("runs/throughput--np4.json was given twice: counted once"),
        "{}",
        f.message
    );
    // Control: the verdicts are the example's.
    let once = analyze(&files);
    for (x, y) in a.profiles.iter().zip(&once.profiles) {
        assert_eq!(
            (x.decision, &x.recommended_name),
            (y.decision, &y.recommended_name)
        );
    }
}

/// Another tool's file that does not say its backend's version or the hardware: the header
/// says "not recorded", never the importer's placeholder `unknown` as if it were a value.
#[test]
fn what_another_tool_did_not_say_is_not_recorded() {
    use sloscope_core::read_document;
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/peers/vllm");
    let mut files = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let name = p.display().to_string();
            if let Ok(doc) = read_document(&name, std::fs::read(&p).unwrap()) {
                files.push(sloscope_core::LoadedFile { name, doc });
            }
        }
    }
    assert!(!files.is_empty());
    let v = report_view(&analyze(&files));
    let lines: Vec<String> = v
        .subject
        .iter()
        .map(|l| format!("{}: {}", l.label, l.value))
        .collect();
    assert!(lines.iter().all(|l| !l.contains("unknown")), "{lines:#?}");
    assert!(
        lines.contains(&"Hardware: not recorded".to_string()),
        "{lines:#?}"
    );
    // Control: the example's own records are said as recorded.
    let v = report_view(&example_analysis());
    let backend = v
        .subject
        .iter()
        .find(|l| l.label.as_str() == "Backend")
        .unwrap();
    assert!(
        backend
            .value
            .to_string()
            .starts_with("\"llama.cpp llama-server\" b"),
        "{}",
        backend.value
    );
}

/// Runs not compared that share a name (trials of one configuration, two tools' files of one
/// benchmark) are each named once with their count, not listed as identical labels.
#[test]
fn runs_not_compared_are_named_once_each() {
    use sloscope_core::Document;
    let mut files = example_files();
    let base = files
        .iter()
        .find(|f| f.name.ends_with("runs/latency--np4.json"))
        .unwrap()
        .clone();
    for (i, name) in ["a", "b"].iter().enumerate() {
        let mut f = base.clone();
        f.name = format!("other/latency--np4-{name}.json");
        if let Document::Run(r) = &mut f.doc {
            let w = r.profile_spec.as_mut().unwrap().workload.as_mut().unwrap();
            w.prompt_tokens = Some(512 + i as i64);
        }
        files.push(f);
    }
    let v = report_view(&analyze(&files));
    let latency = v
        .profiles
        .iter()
        .find(|p| p.profile.as_str() == "latency")
        .unwrap();
    let said: Vec<String> = latency.caveats.iter().map(|c| c.to_string()).collect();
    assert!(
        said.iter()
            .any(|c| c.starts_with("2 run(s) not compared (np4 ×2)")),
        "{said:#?}"
    );
}

/// A rival whose run holds no value for the primary metric (another tool's summary that
/// states none) and is not shown to miss an SLO may rank first: the candidates measured do not
/// win by default, nor is the rival accepted as the only one not shown to miss (NOT ENOUGH
/// DATA, naming it), and its missing figures are undecided, never misses. (Profiles without
/// sessions: a summary cannot show it measured the latency profile's.) Control: the same rival
/// with its primary metric stated is ranked as usual.
#[test]
fn a_rival_with_no_value_for_the_primary_metric_is_not_beaten_by_default() {
    use sloscope_core::analyse::verdict::ProfileDecision;
    use sloscope_core::analysis::SloOutcome;
    let with = |profile: &str, reported: serde_json::Value| {
        let mut files = example_files();
        let f = files
            .iter_mut()
            .find(|f| f.name.ends_with(&format!("runs/{profile}--np4.json")))
            .unwrap();
        let sloscope_core::Document::Run(r) = &mut f.doc else {
            panic!("a run")
        };
        r.repeats.clear();
        r.source = sloscope_core::schema::RunSource::Imported;
        r.reported = Some(serde_json::from_value(reported).unwrap());
        analyze(&files)
    };
    let of = |a: &sloscope_core::analysis::Analysis, profile: &str| {
        a.profiles
            .iter()
            .find(|p| p.profile == profile)
            .unwrap()
            .clone()
    };
    // Throughput: np1 misses its queue-wait SLO; np4's summary states its queue wait within
    // the limit and no throughput.
    let a = with(
        "throughput",
        serde_json::json!({"queue_wait_p95_ms": 20.0, "failure_rate": 0.0}),
    );
    let p = of(&a, "throughput");
    assert_eq!(p.decision, ProfileDecision::NotEnoughData, "{}", p.reason);
    assert!(
        p.reason.contains("np4") && p.reason.contains("throughput_tps"),
        "{}",
        p.reason
    );
    assert_eq!(p.recommended_name, None);
    let np4 = p.candidates.iter().find(|c| c.name == "np4").unwrap();
    for k in np4.slo_checks.iter().filter(|k| k.value.is_none()) {
        assert_ne!(k.outcome, SloOutcome::Fail, "{k:?}");
    }
    let v = report_view(&a);
    let next = v
        .profiles
        .iter()
        .find(|p| p.profile.as_str() == "throughput")
        .unwrap();
    assert_eq!(
        next.next_step.as_deref(),
        Some("measure np4 with per-request data (sloscope run, or the tool's per-request file) and analyze again")
    );
    // Stated percentiles are ordered (balanced: ttft and tpot p95 limits): a median already
    // past the limit is a miss, a p99 within it a pass.
    let a = with(
        "balanced",
        serde_json::json!({"ttft_p50_ms": 1628.9, "tpot_p99_ms": 13.4, "failure_rate": 0.0}),
    );
    let p = of(&a, "balanced");
    let np4 = p.candidates.iter().find(|c| c.name == "np4").unwrap();
    let outcome = |m: &str| {
        let k = np4
            .slo_checks
            .iter()
            .find(|k| k.metric.name() == m)
            .unwrap();
        (
            k.outcome,
            k.basis.contains(if m == "ttft_p95_ms" {
                "ttft_p50_ms (1628.9) is already past the limit"
            } else {
                "tpot_p99_ms (13.4) is within the limit"
            }),
        )
    };
    assert_eq!(outcome("ttft_p95_ms"), (SloOutcome::Fail, true));
    assert_eq!(outcome("tpot_p95_ms"), (SloOutcome::Pass, true));
    // Control: with its throughput stated, np4 is judged as usual.
    let a = with(
        "throughput",
        serde_json::json!({"throughput_tps": 40.0, "queue_wait_p95_ms": 20.0, "failure_rate": 0.0}),
    );
    let p = of(&a, "throughput");
    assert_ne!(p.decision, ProfileDecision::NotEnoughData, "{}", p.reason);
    assert!(
        !p.reason.contains("no value for the primary metric"),
        "{}",
        p.reason
    );
}

/// A run left out of the comparison (another tool's run of another artifact, short of the
/// plan's repeats) raises no flag on the verdict and is counted as left out in the header.
/// Control: the example set leaves nothing out and its flags are its own.
#[test]
fn a_run_left_out_raises_no_flag_and_is_counted_as_left_out() {
    let mut files = example_files();
    let mut peer = files
        .iter()
        .find(|f| f.name.ends_with("runs/latency--np4.json"))
        .unwrap()
        .clone();
    peer.name = "peer/other-tool.json".into();
    let sloscope_core::Document::Run(r) = &mut peer.doc else {
        panic!("a run")
    };
    r.repeats.truncate(1);
    r.source = sloscope_core::schema::RunSource::Imported;
    r.artifact_id = "another-q4".into();
    r.candidate.name = "other tool c1".into();
    files.push(peer);
    let a = analyze(&files);
    let p = a.profiles.iter().find(|p| p.profile == "latency").unwrap();
    assert!(
        p.excluded.iter().any(|e| e.candidate == "other tool c1"),
        "{:?}",
        p.excluded
    );
    assert!(
        p.flags
            .iter()
            .all(|f| f.candidate.as_deref() != Some("other tool c1")),
        "{:#?}",
        p.flags
    );
    assert_eq!(a.subject.runs_left_out, 1);
    let artifact = &a.subject.lines()[0].1;
    assert!(
        artifact.ends_with("the runs measured another: another-q4 (1 of 15 candidate runs), left out of every verdict"),
        "{artifact}"
    );
    let collected = &a.subject.lines()[5].1;
    assert!(
        collected.ends_with("runs, 1 of them left out)"),
        "{collected}"
    );
    // Control.
    let a = example_analysis();
    assert_eq!(a.subject.runs_left_out, 0);
    assert!(a.subject.lines()[5].1.ends_with(" runs)"));
}

/// Two different plans loaded: the header names both (with their hashes) and that none is
/// used, rather than "none loaded"; and no "no plan was loaded" caveat contradicts it.
#[test]
fn two_plans_loaded_are_named_in_the_header() {
    let mut files = example_files();
    let mut other = files
        .iter()
        .find(|f| matches!(f.doc, sloscope_core::Document::Plan(_)))
        .unwrap()
        .clone();
    other.name = "edited/plan.json".into();
    let sloscope_core::Document::Plan(p) = &mut other.doc else {
        panic!("a plan")
    };
    p.name = Some("edited".into());
    files.push(other);
    let a = analyze(&files);
    let plan = a.subject.plan.as_deref().unwrap();
    assert!(
        plan.starts_with("2 different plans loaded (") && plan.ends_with("): none is used"),
        "{plan}"
    );
    assert!(plan.contains("edited, content sha256 "), "{plan}");
    assert_eq!(a.completeness_unchecked, None);
}

/// A file's text never reads as sloscope's own words in the header: anything but one plain
/// token is quoted and escaped (a model id that carries a verdict, a backend version that
/// claims a check). Control: plain ids are said as they are.
#[test]
fn a_files_text_in_the_header_is_quoted() {
    let mut files = example_files();
    for f in files.iter_mut() {
        if let sloscope_core::Document::Deployment(d) = &mut f.doc {
            d.artifact.artifact_id = "q4 · ACCEPT np4 — meets every SLO".into();
            d.artifact.backend_version = "b1 (lineage verified by sloscope)\n".into();
        }
    }
    let a = analyze(&files);
    let lines = a.subject.lines();
    assert!(
        lines[0]
            .1
            .starts_with("\"q4 · ACCEPT np4 — meets every SLO\" (Q8_0)"),
        "{}",
        lines[0].1
    );
    assert!(
        lines[2]
            .1
            .ends_with(" \"b1 (lineage verified by sloscope)\""),
        "{}",
        lines[2].1
    );
    let a = example_analysis();
    assert!(a.subject.lines()[0].1.starts_with(
        "smollm2-135m-instruct-q8_0 (Q8_0), made from HuggingFaceTB/SmolLM2-135M-Instruct"
    ));
}

/// Another tool's file placed in the plan by hand (the page's placing, `sloscope import
/// --plan`) is judged as the deployed artifact; where the file names another model, the
/// verdict's card says so, quoting it. Control: a file that names the deployed artifact
/// raises nothing.
#[test]
fn a_placed_file_that_names_another_model_is_said_on_the_card() {
    use sloscope_core::analyse::report::Code;
    use sloscope_core::input::assign;
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/peers/vllm/save-result.json");
    // vLLM's run at one stream, as it ran it; stated here as the throughput profile's eight
    // (the latency profile's sessions, which vLLM does not run, would leave it out).
    let read = |model: Option<&str>| {
        let mut file: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&fixture).unwrap()).unwrap();
        file["max_concurrency"] = 8.into();
        let doc =
            sloscope_core::read_document("save-result.json", serde_json::to_vec(&file).unwrap())
                .unwrap();
        let Document::Imported(mut runs) = doc else {
            panic!("an import")
        };
        if let Some(m) = model {
            runs.iter_mut().for_each(|(_, r)| r.artifact_id = m.into());
        }
        runs
    };
    let placed = |runs: Vec<(String, sloscope_core::schema::Run)>| {
        let mut files = example_files();
        files.retain(|f| !f.name.ends_with("runs/throughput--np4.json"));
        let plan = files
            .iter()
            .find_map(|f| match &f.doc {
                Document::Plan(p) => Some(p.clone()),
                _ => None,
            })
            .unwrap();
        let deployment = files
            .iter()
            .find_map(|f| match &f.doc {
                Document::Deployment(d) => Some(d.clone()),
                _ => None,
            })
            .unwrap();
        let a = assign(
            "save-result.json",
            &runs,
            &plan,
            Some(&deployment),
            ("throughput", "np4"),
        )
        .unwrap();
        for (name, run) in a.runs {
            files.push(sloscope_core::LoadedFile {
                name,
                doc: Document::Run(Box::new(run)),
            });
        }
        analyze(&files)
    };
    let a = placed(read(None));
    let p = a
        .profiles
        .iter()
        .find(|p| p.profile == "throughput")
        .unwrap();
    let flag = p
        .flags
        .iter()
        .find(|f| f.code == Code::PlacedModel)
        .unwrap();
    assert!(
        flag.message.starts_with("np4 is vLLM's file \"save-result.json\", placed in the plan by hand: the file names the model \"smollm2-q4\""),
        "{}",
        flag.message
    );
    let v = report_view(&a);
    let card = v
        .profiles
        .iter()
        .find(|c| c.profile.as_str() == "throughput")
        .unwrap();
    assert!(
        card.caveats.iter().any(|c| c.to_string() == flag.message),
        "{:#?}",
        card.caveats
    );
    // Control: the file names the deployed artifact.
    let a = placed(read(Some("smollm2-135m-instruct-q8_0")));
    let p = a
        .profiles
        .iter()
        .find(|p| p.profile == "throughput")
        .unwrap();
    assert!(
        p.flags.iter().all(|f| f.code != Code::PlacedModel),
        "{:#?}",
        p.flags
    );
}

/// With no plan loaded, which runs were planned is unknown: a verdict then carries that on its
/// own card (a planned run missing from the set would not show), not only in the report's
/// caveats above. Control: with the plan, the missing run is named and the profile held.
#[test]
fn a_verdict_with_no_plan_loaded_says_so_on_its_card() {
    let files: Vec<_> = example_files()
        .into_iter()
        .filter(|f| !f.name.ends_with("runs/latency--np4.json"))
        .collect();
    let without: Vec<_> = files
        .iter()
        .filter(|f| !matches!(f.doc, Document::Plan(_)))
        .cloned()
        .collect();
    let v = report_view(&analyze(&without));
    let card = v
        .profiles
        .iter()
        .find(|c| c.profile.as_str() == "latency")
        .unwrap();
    assert_eq!(card.decision_label.as_str(), "ACCEPT");
    assert!(
        card.caveats
            .iter()
            .any(|c| c.starts_with("no plan loaded: a planned run missing")),
        "{:#?}",
        card.caveats
    );
    let a = analyze(&files);
    let p = a.profiles.iter().find(|p| p.profile == "latency").unwrap();
    assert_eq!(
        p.decision,
        sloscope_core::analyse::verdict::ProfileDecision::Incomplete,
        "{}",
        p.reason
    );
    assert!(report_view(&a)
        .profiles
        .iter()
        .all(|c| c.caveats.iter().all(|x| !x.starts_with("no plan loaded"))));
}
