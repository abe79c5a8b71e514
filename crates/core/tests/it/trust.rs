//! A verdict a reviewer can sign: hostile, inconsistent and ambiguous inputs never yield a
//! silent `accept`.
//!
//! The adversarial suite is a generator, not a list: it walks every field of the losing
//! candidate's run files in the committed example set (numbers to 0, −1, huge and fractional;
//! arrays shortened and lengthened; names and values renamed) and checks each outcome is
//! refused (the read path names the file), flagged or excluded (a new flag or exclusion for
//! that candidate), or harmless (it still does not win) — never a silent win.

use serde_json::Value;
use sloscope_core::analyse::report::{Analysis, Code};
use sloscope_core::analyse::verdict::ProfileDecision;
use sloscope_core::check::invariant::Invariant;
use sloscope_core::show::render;
use sloscope_core::show::view::AnalysisOutput;
use sloscope_core::{analyze, analyze_with, read_document, AnalyzeOptions, LoadedFile};

use crate::snapshots::example_files;

/// Each profile's losing candidate in the example set: one it does not recommend.
type Losers = std::collections::BTreeMap<String, String>;

fn losers(a: &Analysis) -> Losers {
    a.profiles
        .iter()
        .filter_map(|p| {
            let loser = p
                .candidates
                .iter()
                .find(|c| p.recommended_name.as_deref() != Some(c.name.as_str()))?;
            Some((p.profile.clone(), loser.name.clone()))
        })
        .collect()
}

fn is_loser_run(losers: &Losers, name: &str) -> bool {
    let file = name.rsplit('/').next().unwrap_or("");
    losers
        .iter()
        .any(|(profile, loser)| file == format!("{profile}--{loser}.json"))
}

/// Flags and exclusions that concern the losers, by profile.
fn concerns(a: &Analysis, losers: &Losers) -> Vec<(String, Code, String)> {
    let mut out = Vec::new();
    for p in &a.profiles {
        let Some(loser) = losers.get(&p.profile) else {
            continue;
        };
        for f in &p.flags {
            if f.candidate.as_deref() == Some(loser.as_str()) || f.message.contains(loser.as_str())
            {
                out.push((p.profile.clone(), f.code, f.message.clone()));
            }
        }
        for e in &p.excluded {
            out.push((p.profile.clone(), e.code, e.file.clone()));
        }
    }
    out
}

/// Every mutation of one JSON value: (path, mutated document).
fn mutations(v: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    walk(v, &mut Vec::new(), &mut |path, leaf| {
        let variants: Vec<Value> = match leaf {
            Value::Number(_) => vec![0.into(), (-1).into(), 1e19.into(), 0.5.into()],
            Value::String(s) => vec![
                Value::String(format!("{s}-renamed")),
                Value::String("np4".into()),
                Value::String(String::new()),
            ],
            Value::Array(a) if !a.is_empty() => {
                let mut shorter = a.clone();
                shorter.pop();
                let mut longer = a.clone();
                longer.push(a[0].clone());
                vec![Value::Array(shorter), Value::Array(longer)]
            }
            _ => vec![],
        };
        for new in variants {
            let mut doc = v.clone();
            *pointer_mut(&mut doc, path) = new.clone();
            out.push((format!("{}={}", path.join("/"), short(&new)), doc));
        }
    });
    out
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 40 {
        format!("{}…", &s[..40])
    } else {
        s
    }
}

/// Visits every value; of each array only the first, middle and last elements (the classes of
/// position), so the suite stays fast on columns of thousands of entries.
fn walk(v: &Value, path: &mut Vec<String>, f: &mut dyn FnMut(&[String], &Value)) {
    f(path, v);
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(k.clone());
                walk(x, path, f);
                path.pop();
            }
        }
        Value::Array(a) => {
            let mut idx = vec![0, a.len() / 2, a.len().saturating_sub(1)];
            idx.dedup();
            for i in idx.into_iter().filter(|&i| i < a.len()) {
                path.push(i.to_string());
                walk(&a[i], path, f);
                path.pop();
            }
        }
        _ => {}
    }
}

fn pointer_mut<'a>(v: &'a mut Value, path: &[String]) -> &'a mut Value {
    let mut cur = v;
    for p in path {
        cur = match cur {
            Value::Object(m) => m.get_mut(p).expect("path exists"),
            Value::Array(a) => &mut a[p.parse::<usize>().expect("index")],
            _ => unreachable!("path leads through containers"),
        };
    }
    cur
}

#[test]
fn no_mutation_of_the_losing_candidate_wins_silently() {
    let files = example_files();
    let base = analyze(&files);
    let losers = losers(&base);
    assert_eq!(
        losers.len(),
        base.profiles.len(),
        "every profile has a loser"
    );
    // Each mutation is analysed with the files its run's profile reads (lineage, plan and that
    // profile's runs), against the unmutated analysis of the same files.
    let subset = |files: &[LoadedFile], i: usize| -> Vec<LoadedFile> {
        let name = files[i].name.rsplit('/').next().unwrap_or("");
        let profile = name.split("--").next().unwrap_or("");
        files
            .iter()
            .enumerate()
            .filter(|(j, g)| {
                *j != i && (!g.name.contains("/runs/") || g.name.contains(&format!("/{profile}--")))
            })
            .map(|(_, g)| g.clone())
            .collect()
    };
    let before: Vec<_> = (0..files.len())
        .map(|i| {
            let mut set = subset(&files, i);
            set.push(files[i].clone());
            concerns(&analyze(&set), &losers)
        })
        .collect();
    let (mut refused, mut flagged, mut harmless) = (0, 0, 0);
    for (i, f) in files
        .iter()
        .enumerate()
        .filter(|(_, f)| is_loser_run(&losers, &f.name))
    {
        let original: Value = serde_json::to_value(match &f.doc {
            sloscope_core::Document::Run(r) => r,
            _ => unreachable!(),
        })
        .unwrap();
        for (what, doc) in mutations(&original) {
            let bytes = doc.to_string().into_bytes();
            let loaded = match read_document(&f.name, bytes) {
                Err(e) => {
                    assert_eq!(e.file, f.name, "{what}: the error names the file");
                    refused += 1;
                    continue;
                }
                Ok(d) => d,
            };
            let mut set = subset(&files, i);
            set.push(LoadedFile {
                name: f.name.clone(),
                doc: loaded,
            });
            let a = analyze(&set);
            let new_concerns = concerns(&a, &losers) != before[i];
            for p in &a.profiles {
                let loser = losers.get(&p.profile).map(String::as_str);
                let silent_win = p.decision == ProfileDecision::Accept
                    && p.recommended_name.as_deref() == loser
                    && !new_concerns;
                assert!(
                    !silent_win,
                    "{}: mutation {what} made {loser:?} win {} silently",
                    f.name, p.profile
                );
            }
            if new_concerns {
                flagged += 1;
            } else {
                harmless += 1;
            }
        }
    }
    eprintln!("mutations: {refused} refused, {flagged} flagged or excluded, {harmless} harmless");
    assert!(
        refused > 100 && flagged > 10,
        "{refused} {flagged} {harmless}"
    );
}

/// The example set with one run file edited (as JSON) and read again.
pub(crate) fn set_with(name: &str, edit: impl Fn(&mut Value)) -> Vec<LoadedFile> {
    let mut files = example_files();
    let f = files.iter_mut().find(|f| f.name.ends_with(name)).unwrap();
    let mut v = match &f.doc {
        sloscope_core::Document::Run(r) => serde_json::to_value(r).unwrap(),
        _ => unreachable!(),
    };
    edit(&mut v);
    f.doc = read_document(&f.name, v.to_string().into_bytes()).unwrap();
    files
}

/// Why `profile` left out the run file ending in `file_end`, if it did.
pub(crate) fn excluded_code(a: &Analysis, profile: &str, file_end: &str) -> Option<Code> {
    a.profiles
        .iter()
        .find(|p| p.profile == profile)?
        .excluded
        .iter()
        .find(|e| e.file.ends_with(file_end))
        .map(|e| e.code)
}

#[test]
fn a_run_must_match_the_plan() {
    let a = analyze(&set_with("latency--np4.json", |v| {
        v["candidate"]["name"] = "np99".into()
    }));
    assert_eq!(
        excluded_code(&a, "latency", "latency--np4.json"),
        Some(Code::Invariant(Invariant::InPlan))
    );
    let a = analyze(&set_with("latency--np4.json", |v| {
        v["candidate"]["value"] = 8.into()
    }));
    assert_eq!(
        excluded_code(&a, "latency", "latency--np4.json"),
        Some(Code::Invariant(Invariant::KnobValueMatches))
    );
    let a = analyze(&set_with("latency--np4.json", |v| {
        v["repeats"].as_array_mut().unwrap().pop();
    }));
    // A run that says ok with a repeat fewer than planned is not the measurement planned: left
    // out, and its cell is missing.
    let p = &a.profiles[0];
    assert!(
        p.excluded
            .iter()
            .any(|e| e.code == Code::Invariant(Invariant::RunComplete)
                && e.reason.contains("2 of 3 planned repeats")),
        "{:?}",
        p.excluded
    );
    assert_eq!(
        p.decision,
        sloscope_core::analyse::verdict::ProfileDecision::Incomplete
    );
}

#[test]
fn reruns_are_a_named_conflict_and_copies_count_once() {
    let mut files = example_files();
    let np4 = files
        .iter()
        .find(|f| f.name.ends_with("latency--np4.json"))
        .unwrap()
        .clone();
    // A byte-identical copy: counted once, the verdict unchanged.
    let mut copy = np4.clone();
    copy.name = "elsewhere/latency--np4.json".into();
    files.push(copy);
    let a = analyze(&files);
    let p = &a.profiles[0];
    let base = analyze(&example_files());
    assert_eq!(p.recommended_name, base.profiles[0].recommended_name);
    assert_eq!(p.candidates.len(), base.profiles[0].candidates.len());
    assert!(p.flags.iter().any(|f| f.code == Code::DuplicateRun));
    // A different rerun: np4 is excluded with both files named, whatever the load order.
    let rerun = set_with("latency--np1.json", |v| {
        v["candidate"] = serde_json::json!({"name": "np4", "knob": "parallel", "value": 4});
        relaunch(v, "4");
    });
    let moved = rerun
        .iter()
        .find(|f| f.name.ends_with("latency--np1.json"))
        .unwrap()
        .clone();
    for order in [0, 1] {
        let mut files = example_files();
        files.retain(|f| !f.name.ends_with("latency--np1.json"));
        let mut second = moved.clone();
        second.name = "rerun/latency--np4.json".into();
        if order == 0 {
            files.push(second);
        } else {
            files.insert(0, second);
        }
        let a = analyze(&files);
        let p = &a.profiles[0];
        assert_ne!(p.recommended_name.as_deref(), Some("np4"));
        let conflicts: Vec<_> = p
            .excluded
            .iter()
            .filter(|e| e.code == Code::ConflictingRuns)
            .collect();
        assert_eq!(conflicts.len(), 2, "{:?}", p.excluded);
        assert!(conflicts[0].reason.contains("rerun/latency--np4.json"));
        assert!(conflicts[0]
            .reason
            .contains("static/examples/runs/latency--np4.json"));
        // Pooled only when asked, and then the same whatever the load order.
        let pooled = analyze_with(&files, AnalyzeOptions { pool_reruns: true });
        let p = &pooled.profiles[0];
        assert!(!p.excluded.iter().any(|e| e.code == Code::ConflictingRuns));
        let flag = p.flags.iter().find(|f| f.code == Code::PooledRuns).unwrap();
        assert!(
            flag.message.contains("rerun/latency--np4.json"),
            "{}",
            flag.message
        );
        let np4 = p.candidates.iter().find(|c| c.name == "np4").unwrap();
        let one = base.profiles[0]
            .candidates
            .iter()
            .find(|c| c.name == "np4")
            .unwrap();
        assert_eq!(np4.repeats, 2 * one.repeats, "every repeat of both runs");
        let again = analyze_with(&files, AnalyzeOptions { pool_reruns: true });
        assert_eq!(again.profiles[0], *p);
        if order == 1 {
            let mut reversed = files.clone();
            reversed.reverse();
            let r = analyze_with(&reversed, AnalyzeOptions { pool_reruns: true });
            assert_eq!(
                r.profiles[0].candidates, p.candidates,
                "load order decides nothing"
            );
        }
    }
}

#[test]
fn later_repeats_served_from_a_cache_are_flagged_with_the_evidence() {
    // What a prompt cache does: repeats 2 and 3 get their first token ten times sooner.
    let files = set_with("latency--np4.json", |v| {
        for rep in v["repeats"].as_array_mut().unwrap().iter_mut().skip(1) {
            let r = &mut rep["requests"];
            let n = r["ttft_us"].as_array().unwrap().len();
            for i in 0..n {
                let (Some(t), Some(e)) = (r["ttft_us"][i].as_u64(), r["e2e_us"][i].as_u64()) else {
                    continue;
                };
                let fast = (t / 10).max(1);
                r["ttft_us"][i] = fast.into();
                r["e2e_us"][i] = (e - (t - fast)).into();
            }
        }
    });
    let a = analyze(&files);
    let f = a.profiles[0]
        .flags
        .iter()
        .find(|f| f.code == Code::LaterRepeatsFaster && f.candidate.as_deref() == Some("np4"))
        .expect("flagged");
    assert!(f.message.contains("in repeat 1 but"), "{}", f.message);
    // The committed example set is collected with prompts that never repeat: no such flag.
    let clean = analyze(&example_files());
    for p in &clean.profiles {
        assert!(
            p.flags.iter().all(|f| f.code != Code::LaterRepeatsFaster),
            "{}: {:?}",
            p.profile,
            p.flags
        );
    }
}

#[test]
fn hostile_strings_stay_inert_and_long_ones_are_cut() {
    let evil = "<img src=x onerror=alert(1)>\u{1b}[31mred\u{202e}txt.exe|**b**";
    let files = set_with("latency--np1.json", |v| {
        v["candidate"]["name"] = evil.into();
        v["notes"] = serde_json::json!([evil]);
    });
    let a = analyze(&files);
    let md = render::markdown(&a);
    let text = render::text(&a);
    assert!(!md.contains("<img"), "raw HTML in Markdown");
    assert!(md.contains("&lt;img"));
    for out in [&md, &text] {
        assert!(!out.contains('\u{1b}') && !out.contains('\u{202e}'));
        assert!(out.contains("\\u{001b}") && out.contains("\\u{202e}"));
    }
    let json = serde_json::to_string(&AnalysisOutput::new(a)).unwrap();
    assert!(json.contains("\\\\u{202e}"), "the view shows it visibly");

    // A 5 MB name is no name: refused, naming the field. Free text is cut when read, so the
    // JSON analysis is bounded too.
    let huge = "x".repeat(5_000_000);
    let mut bad = set_with("latency--np1.json", |_| {});
    let f = bad
        .iter_mut()
        .find(|f| f.name.ends_with("latency--np1.json"))
        .unwrap();
    let mut v = match &f.doc {
        sloscope_core::Document::Run(r) => serde_json::to_value(r).unwrap(),
        _ => unreachable!(),
    };
    v["candidate"]["name"] = huge.clone().into();
    let e = read_document(&f.name, v.to_string().into_bytes()).unwrap_err();
    assert_eq!(e.path, "$.candidate.name");
    assert!(e.message.contains("at most 1024 [text_bounded]"), "{e}");
    let files = set_with("latency--np1.json", |v| {
        v["notes"] = serde_json::json!([huge.clone()]);
        v["status"] = "partial".into();
        v["failure"] = huge.clone().into();
    });
    let a = analyze(&files);
    let text = render::text(&a);
    assert!(
        text.len() < 200_000,
        "{} bytes of text for a 5 MB note",
        text.len()
    );
    assert!(text.contains("more characters)"));
    let json = serde_json::to_string(&AnalysisOutput::new(a)).unwrap();
    assert!(json.len() < 400_000, "{} bytes of JSON", json.len());
}

/// A run whose profile is none of the three is not analysed, and shown as such: a row of its
/// own in the verdict table (text, Markdown) and in the view, naming the file — not a note
/// line only.
#[test]
fn an_unknown_profile_gets_a_visible_row_that_says_why() {
    let files: Vec<LoadedFile> = example_files()
        .into_iter()
        .map(|f| match f.doc {
            sloscope_core::Document::Run(mut r) if f.name.ends_with("latency--np4.json") => {
                r.profile = "chat\u{202e}".into();
                LoadedFile {
                    name: f.name,
                    doc: sloscope_core::Document::Run(r),
                }
            }
            _ => f,
        })
        .collect();
    let a = analyze(&files);
    assert_eq!(a.unknown_profiles.len(), 1);
    assert_eq!(a.unknown_profiles[0].name, "chat\u{202e}");
    assert_eq!(
        a.unknown_profiles[0].files,
        ["static/examples/runs/latency--np4.json"]
    );
    let view = sloscope_core::show::view::report_view(&a);
    let u = &view.unknown_profiles[0];
    assert_eq!(u.profile.to_string(), "chat\\u{202e}", "made inert");
    assert!(u.line.contains("not a serving profile"), "{}", u.line);
    let row = view.verdicts.rows.last().unwrap();
    assert_eq!(row.cells[1].text.to_string(), "not analysed");
    let text = render::text(&a);
    assert!(
        text.contains("not analysed") && text.contains("latency--np4.json"),
        "{text}"
    );
}

/// The run's recorded launch command with its `--parallel` flag set to `value`, as a rerun of
/// that configuration would record it.
fn relaunch(v: &mut serde_json::Value, value: &str) {
    let cmd = v["server"]["command"]
        .as_array_mut()
        .expect("a launch record");
    let i = cmd
        .iter()
        .position(|a| a == "--parallel")
        .expect("a --parallel flag");
    cmd[i + 1] = value.into();
}

/// Two honest runs of one candidate under an output-length distribution, pooled as asked: each
/// repeat's caps are the ones the profile drew for that repeat, and pooling (which renumbers
/// the repeats) must not make them look like other requests. Control: without pooling the two
/// runs conflict, and neither is left out for its caps.
#[test]
fn pooled_reruns_keep_their_drawn_caps() {
    // balanced--np1's run, relaunched as np4: the same caps (the profile draws them, the same
    // for every candidate) and its own times.
    let rerun = set_with("balanced--np1.json", |v| {
        v["candidate"] = serde_json::json!({"name": "np4", "knob": "parallel", "value": 4});
        relaunch(v, "4");
        // Its own times: every time and gap 1 % shorter (no more overlap than it had).
        let shorter = |x: &Value| x.as_u64().map_or(Value::Null, |t| (t - t / 100).into());
        for rep in v["repeats"].as_array_mut().unwrap() {
            let r = &mut rep["requests"];
            for col in ["ttft_us", "e2e_us"] {
                let stretched: Vec<Value> =
                    r[col].as_array().unwrap().iter().map(shorter).collect();
                r[col] = stretched.into();
            }
            let gaps: Vec<Value> = r["itl_us"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g.as_array().unwrap().iter().map(shorter).collect())
                .collect();
            r["itl_us"] = gaps.into();
        }
    });
    let mut second = rerun
        .iter()
        .find(|f| f.name.ends_with("balanced--np1.json"))
        .unwrap()
        .clone();
    second.name = "rerun/balanced--np4.json".into();
    let mut files = example_files();
    files.push(second);
    let capped = |a: &Analysis| {
        let p = a.profiles.iter().find(|p| p.profile == "balanced").unwrap();
        p.excluded
            .iter()
            .filter(|e| e.reason.contains("output caps"))
            .map(|e| e.reason.clone())
            .collect::<Vec<_>>()
    };
    let pooled = analyze_with(&files, AnalyzeOptions { pool_reruns: true });
    assert_eq!(capped(&pooled), Vec::<String>::new());
    let p = pooled
        .profiles
        .iter()
        .find(|p| p.profile == "balanced")
        .unwrap();
    assert!(
        p.candidates.iter().any(|c| c.name == "np4"),
        "{:?}",
        p.excluded
    );
    assert_eq!(capped(&analyze(&files)), Vec::<String>::new());
}
