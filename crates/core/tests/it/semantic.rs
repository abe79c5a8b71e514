//! The adversarial suite's semantic half: where `trust` damages numbers one field at a time,
//! these mutations make a file contradict itself or its plan — counts against rows, duplicated
//! repeats and requests, overlap against streams, times in another unit, a stream that never
//! streamed, outputs past the cap, another workload, names that only look right, repeated keys —
//! and apply them to every origin a run can have: a candidate's fixed-load run, the float
//! baseline's run, a capacity trial and a run recovered from a journal. Every one must be
//! refused, excluded or flagged: a contradiction that changes no verdict and no number silently
//! is the only harmless outcome, and there is none of those here.

use serde_json::{json, Value};
use sloscope_core::analyse::report::Analysis;
use sloscope_core::schema::{JournalLine, Run, JOURNAL_KIND, SCHEMA_VERSION};
use sloscope_core::{analyze, read_document, LoadedFile};

use crate::snapshots::example_files;

/// The run files each mutation is applied to, one per origin.
const TARGETS: [&str; 3] = [
    "runs/latency--np1.json",
    "runs/latency--baseline-f16.json",
    "runs/balanced--np1--trial01-concurrency-2.json",
];

fn requests(v: &mut Value, r: usize) -> &mut serde_json::Map<String, Value> {
    v["repeats"][r]["requests"].as_object_mut().unwrap()
}

fn len(v: &Value, r: usize) -> usize {
    v["repeats"][r]["requests"]["send_offset_us"]
        .as_array()
        .unwrap()
        .len()
}

/// Applies `f` to every value of a per-request column in every repeat.
fn each(v: &mut Value, col: &str, f: &dyn Fn(&mut Value)) {
    for rep in v["repeats"].as_array_mut().unwrap() {
        for x in rep["requests"][col].as_array_mut().unwrap() {
            f(x);
        }
    }
}

fn scale(x: &mut Value, by: f64) {
    if let Some(n) = x.as_u64() {
        *x = ((n as f64 * by).round() as u64).into();
    }
}

type Mutation = (&'static str, &'static dyn Fn(&mut Value));

/// Every semantic mutation of a run: (name, the mutated document as text).
fn mutations(run: &Value) -> Vec<(&'static str, String)> {
    let mut texts: Vec<(&'static str, String)> = reshaped()
        .iter()
        .chain(restated().iter())
        .map(|(name, f)| {
            let mut v = run.clone();
            f(&mut v);
            (*name, v.to_string())
        })
        .collect();
    let text = run.to_string();
    texts.push((
        "a key written twice",
        format!("{{\"profile\":\"throughput\",{}", &text[1..]),
    ));
    texts.push(("bytes after the document", format!("{text}\n{{}}")));
    texts
}

fn scale_gaps(v: &mut Value, by: f64) {
    for rep in v["repeats"].as_array_mut().unwrap() {
        for g in rep["requests"]["itl_us"].as_array_mut().unwrap() {
            for x in g.as_array_mut().unwrap() {
                scale(x, by);
            }
        }
    }
}

/// Rows that contradict the run's counts, its streams or their own units.
fn reshaped() -> Vec<Mutation> {
    vec![
        ("a repeat twice under one index", &|v| {
            let r0 = v["repeats"][0].clone();
            v["repeats"].as_array_mut().unwrap().push(r0);
        }),
        ("a repeat copied under a new index", &|v| {
            let mut r0 = v["repeats"][0].clone();
            r0["index"] = 99.into();
            v["repeats"].as_array_mut().unwrap().push(r0);
        }),
        ("half the requests of a repeat dropped", &|v| {
            let n = len(v, 0);
            for (_, col) in requests(v, 0).iter_mut() {
                if let Some(a) = col.as_array_mut() {
                    a.truncate(n / 2);
                }
            }
        }),
        ("every request of a repeat duplicated", &|v| {
            for (_, col) in requests(v, 0).iter_mut() {
                if let Some(a) = col.as_array_mut() {
                    *a = a.iter().flat_map(|x| [x.clone(), x.clone()]).collect();
                }
            }
        }),
        ("inter-token gaps in ms written as µs", &|v| {
            scale_gaps(v, 0.001)
        }),
        ("TTFT in ms written as µs", &|v| {
            each(v, "ttft_us", &|x| scale(x, 0.001))
        }),
        ("every time in ns written as µs", &|v| {
            for col in ["send_offset_us", "ttft_us", "e2e_us"] {
                each(v, col, &|x| scale(x, 1000.0));
            }
            scale_gaps(v, 1000.0);
        }),
        ("every request sent at once", &|v| {
            each(v, "send_offset_us", &|x| *x = 0.into())
        }),
        ("no stream: every token at the first one", &|v| {
            for rep in v["repeats"].as_array_mut().unwrap() {
                let r = &mut rep["requests"];
                let ttft = r["ttft_us"].clone();
                r["e2e_us"] = ttft;
            }
            scale_gaps(v, 0.0);
        }),
    ]
}

/// Statements the run's rows, or its plan, contradict.
fn restated() -> Vec<Mutation> {
    vec![
        ("ten times the output tokens", &|v| {
            each(v, "output_tokens", &|x| scale(x, 10.0))
        }),
        ("twenty times the prompt tokens", &|v| {
            each(v, "prompt_tokens", &|x| scale(x, 20.0))
        }),
        ("another concurrency in its workload", &|v| {
            let c = v["profile_spec"]["workload"]["concurrency"]
                .as_u64()
                .unwrap_or(1);
            v["profile_spec"]["workload"]["concurrency"] = (c * 4).into();
        }),
        ("another workload id", &|v| {
            v["workload_id"] = "burst".into()
        }),
        ("a finish before its start", &|v| {
            let start = v["started_at"].clone();
            v["started_at"] = v["finished_at"].clone();
            v["finished_at"] = start;
        }),
        ("a stated window of one second", &|v| {
            v["finished_at"] = v["started_at"].clone();
        }),
        ("the candidate name in capitals", &|v| {
            let n = v["candidate"]["name"].as_str().unwrap().to_uppercase();
            v["candidate"]["name"] = n.into();
        }),
        ("a look-alike candidate name", &|v| {
            let n = v["candidate"]["name"]
                .as_str()
                .unwrap()
                .replace('p', "\u{0440}");
            v["candidate"]["name"] = n.into();
        }),
        ("another knob value", &|v| {
            v["candidate"]["value"] = 96.into()
        }),
        ("stated counts that are not its rows", &|v| {
            v["reported"] = json!({"requests_sent": 1000, "requests_failed": 0});
        }),
    ]
}

/// The run as the journal the collector would have left, read back (origin: recovered).
pub(crate) fn as_journal(run: &Value) -> String {
    // Through text: the columns are read as raw JSON, which a `Value` cannot hand over.
    let typed: Run = serde_json::from_str(&run.to_string()).unwrap();
    let mut header = typed.clone();
    header.repeats.clear();
    let mut lines = vec![serde_json::to_string(&JournalLine::Header {
        kind: JOURNAL_KIND.into(),
        schema_version: SCHEMA_VERSION.into(),
        run: Box::new(header),
    })
    .unwrap()];
    for rep in &typed.repeats {
        lines.push(
            serde_json::to_string(&JournalLine::Repeat {
                repeat: rep.index,
                warmup_requests: rep.warmup_requests,
            })
            .unwrap(),
        );
        let r = &rep.requests;
        for i in 0..r.len() {
            let row = r.row(i);
            lines.push(
                serde_json::to_string(&JournalLine::Request {
                    repeat: rep.index,
                    row,
                })
                .unwrap(),
            );
        }
    }
    lines.join("\n") + "\n"
}

/// What the analysis says about the mutated file: refused, or concerns naming it.
fn outcome(files: &[LoadedFile], name: &str, bytes: Vec<u8>) -> Result<Analysis, String> {
    let doc = read_document(name, bytes).map_err(|e| e.to_string())?;
    let mut set: Vec<LoadedFile> = files.iter().filter(|f| f.name != name).cloned().collect();
    set.push(LoadedFile {
        name: name.to_string(),
        doc,
    });
    Ok(analyze(&set))
}

/// Exclusions and flags that concern `name` (by file, or by the run's candidate), as keys.
fn concerns(a: &Analysis, name: &str, candidate: &str) -> Vec<String> {
    let mut out = Vec::new();
    for p in &a.profiles {
        for e in p.excluded.iter().filter(|e| e.file == name) {
            out.push(format!("{} excluded {}", p.profile, e.code.as_str()));
        }
        for f in &p.flags {
            if f.candidate.as_deref() == Some(candidate) || f.message.contains(name) {
                out.push(format!(
                    "{} flag {} {}",
                    p.profile,
                    f.code.as_str(),
                    f.message
                ));
            }
        }
        let capacity = p.capacity.as_ref().map(|c| &c.candidates);
        for e in capacity.into_iter().flatten().flat_map(|c| &c.excluded) {
            if e.starts_with(name) {
                out.push(format!("{} trial {e}", p.profile));
            }
        }
    }
    out
}

#[test]
fn every_contradiction_is_refused_excluded_or_flagged_whatever_the_origin() {
    let files = example_files();
    let base = analyze(&files);
    let mut caught = 0;
    let mut missed = Vec::new();
    for target in TARGETS {
        let f = files.iter().find(|f| f.name.ends_with(target)).unwrap();
        let run = match &f.doc {
            sloscope_core::Document::Run(r) => serde_json::to_value(r).unwrap(),
            _ => unreachable!(),
        };
        let cand = run["candidate"]["name"].as_str().unwrap().to_string();
        let before = concerns(&base, &f.name, &cand);
        let baseline = run["role"] == "baseline";
        for (what, text) in mutations(&run) {
            // A float baseline is no candidate of the plan: its name and knob are not checked
            // against it, so renaming it contradicts nothing.
            if baseline && (what.contains("candidate name") || what.contains("knob")) {
                continue;
            }
            let mut origins = vec![(f.name.clone(), text.clone().into_bytes())];
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                if serde_json::from_str::<Run>(&text).is_ok() {
                    let journal = f.name.replace(".json", ".journal.jsonl");
                    origins.push((journal, as_journal(&v).into_bytes()));
                }
            }
            for (name, bytes) in origins {
                let journal = name.ends_with(".jsonl");
                match outcome(&files, &name, bytes) {
                    Err(_) => caught += 1,
                    // A recovered journal is a partial run: excluded as such, which leaves its
                    // contradiction unused; only refusals and flags of it are counted.
                    Ok(a)
                        if concerns(&a, &name, &cand)
                            .iter()
                            .any(|c| !before.contains(c)) =>
                    {
                        caught += 1
                    }
                    Ok(_) if journal => {}
                    Ok(a) => missed.push(format!(
                        "{target}: {what}: not refused, excluded or flagged ({})",
                        a.profiles
                            .iter()
                            .map(|p| format!("{} {:?}", p.profile, p.decision))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                }
            }
        }
    }
    eprintln!("semantic mutations caught: {caught}");
    assert!(missed.is_empty(), "{}", missed.join("\n"));
    assert!(caught >= 60, "{caught}");
}

#[test]
fn equal_values_spelled_differently_change_nothing() {
    let files = example_files();
    let want = serde_json::to_string(&analyze(&files)).unwrap();
    let mut changed = files.clone();
    for f in changed.iter_mut().filter(|f| f.name.contains("/runs/")) {
        let mut v = match &f.doc {
            sloscope_core::Document::Run(r) => serde_json::to_value(r).unwrap(),
            _ => continue,
        };
        // 4 and 4.0 are one knob value.
        if let Some(n) = v["candidate"]["value"].as_i64() {
            v["candidate"]["value"] = json!(n as f64);
        }
        f.doc = read_document(&f.name, v.to_string().into_bytes()).unwrap();
    }
    let got = serde_json::to_string(&analyze(&changed)).unwrap();
    // The value is shown as written; the analysis is otherwise the same.
    assert_eq!(got.replace(".0,", ","), want.replace(".0,", ","));
}
