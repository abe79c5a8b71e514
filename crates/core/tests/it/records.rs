//! A generator of semantic mutations of the newer records — gate evidence, shard trees, sessions,
//! serving signals, launch records and comparisons — applied to the committed example set (real
//! llama-server runs) as JSON and read back through the reader, as a user's edited or forged file
//! would be. It mutates what a careful forger would: ids, hashes, clocks, counts, bounds and
//! labels.
//!
//! The oracle is the same for every mutant of an analysis: the clean set's analysis is the
//! control, and a mutant must leave a trace the control does not have (a refused file, an
//! excluded run, a flag, a lineage or shard problem, a missing cell), and must never turn a
//! profile into `accept` of a candidate the control did not accept. For a comparison: a side that
//! repeats the other (whole, a subset, nudged, relabelled) never passes.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use sloscope_core::analyse::regression::types::Outcome;
use sloscope_core::analyse::regression::{compare, CompareOptions};
use sloscope_core::schema::{EvidenceLevel, ProfileSpec};
use sloscope_core::{analyze, read_document, Analysis, Document, LoadedFile};
use sloscope_testkit::synth::{self, Shape};

use crate::snapshots::example_files;

/// One file of a set as its bytes: a mutation edits its JSON, an untouched file keeps its bytes
/// (the plan's sha256 is computed from them).
#[derive(Clone)]
struct File {
    name: String,
    bytes: Vec<u8>,
}

type Set = Vec<File>;

fn value(doc: &Document) -> Value {
    match doc {
        Document::Run(r) => serde_json::to_value(r),
        Document::Shard(s) => serde_json::to_value(s),
        Document::ShardDone(d) => serde_json::to_value(d),
        Document::QualityGate(g) => serde_json::to_value(g),
        Document::FloatBaseline(b) => serde_json::to_value(b),
        Document::Deployment(d) => serde_json::to_value(d),
        other => panic!("no JSON form for {:?}", other.kind()),
    }
    .unwrap()
}

/// The example set's files as written on disk.
fn plain() -> Set {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    example_files()
        .iter()
        .map(|f| File {
            name: f.name.clone(),
            bytes: std::fs::read(root.join(&f.name)).unwrap(),
        })
        .collect()
}

/// The example set as three shards' first attempts wrote it (the plan's bytes kept).
fn sharded() -> Set {
    let disk = plain();
    crate::shards::sharded()
        .iter()
        .map(|f| match disk.iter().find(|d| d.name == f.name) {
            Some(d) => d.clone(),
            None => File {
                name: f.name.clone(),
                bytes: value(&f.doc).to_string().into_bytes(),
            },
        })
        .collect()
}

/// Edits the JSON of the one file whose name ends with `suffix`.
fn edit(set: &mut Set, suffix: &str, f: impl FnOnce(&mut Value)) {
    let file = set
        .iter_mut()
        .find(|x| x.name.ends_with(suffix))
        .unwrap_or_else(|| panic!("no file {suffix}"));
    let mut v: Value = serde_json::from_slice(&file.bytes).unwrap();
    f(&mut v);
    file.bytes = v.to_string().into_bytes();
}

/// The set read as a user's files are: a file the reader refuses is a trace of its own.
fn read(set: &Set) -> (Vec<LoadedFile>, Vec<String>) {
    let mut files = Vec::new();
    let mut refused = Vec::new();
    for f in set {
        match read_document(&f.name, f.bytes.clone()) {
            Ok(doc) => files.push(LoadedFile {
                name: f.name.clone(),
                doc,
            }),
            Err(e) => refused.push(format!("refused {}: {e}", f.name)),
        }
    }
    (files, refused)
}

/// Everything the analysis names as wrong, missing or doubtful, without its prose.
fn traces(a: &Analysis, refused: &[String]) -> BTreeSet<String> {
    let mut t: BTreeSet<String> = refused.iter().cloned().collect();
    let l = &a.lineage;
    t.extend(l.issues.iter().map(|p| format!("lineage {:?}", p.code)));
    t.extend(l.warnings.iter().map(|p| format!("warning {:?}", p.code)));
    t.extend(l.other_gates.iter().flat_map(|g| g.problems.clone()));
    if let Some(g) = &l.gate {
        t.extend(g.insufficient.iter().map(|s| format!("gate {s}")));
        t.insert(format!("gate {:?}", g.decision));
    }
    if let Some(s) = &a.shards {
        t.extend(s.problems.iter().map(|p| format!("shard {p}")));
        t.extend(s.left_out.iter().map(|p| format!("shard left out {p}")));
    }
    for p in &a.profiles {
        let who = &p.profile;
        t.extend(
            p.flags
                .iter()
                .map(|f| format!("{who} flag {} {:?}", f.code.as_str(), f.candidate)),
        );
        t.extend(
            p.excluded
                .iter()
                .map(|e| format!("{who} excluded {} {}", e.code.as_str(), e.file)),
        );
        t.extend(p.missing.iter().map(|m| format!("{who} missing {m:?}")));
        t.extend(
            p.contract_issues
                .iter()
                .map(|c| format!("{who} {:?}", c.code)),
        );
    }
    t
}

/// A mutation of a set: its name and what it does.
type Mutant = (&'static str, fn(&mut Set));

fn gate_mutants() -> Vec<Mutant> {
    const G: &str = "lineage/gate.json";
    vec![
        ("gate: another quantized sha256", |s| {
            edit(s, G, |v| {
                v["evidence"]["quantized"]["artifact_sha256"] = "ab".repeat(32).into()
            })
        }),
        ("gate: another float sha256", |s| {
            edit(s, G, |v| {
                v["evidence"]["float"]["artifact_sha256"] = "cd".repeat(32).into()
            })
        }),
        ("gate: scored on another backend version", |s| {
            edit(s, G, |v| v["evidence"]["backend_version"] = "b9999".into())
        }),
        ("gate: another evaluation set", |s| {
            edit(s, G, |v| {
                v["evidence"]["eval_set"]["name"] = "wikitext-2".into()
            })
        }),
        ("gate: the quantized id relabelled", |s| {
            edit(s, G, |v| {
                v["evidence"]["quantized"]["artifact_id"] = "other-q4".into()
            })
        }),
        ("gate: positions copied", |s| edit(s, G, copy_positions)),
        ("gate: too few positions", |s| {
            edit(s, G, |v| keep_positions(v, 16))
        }),
        ("gate: the noise scoring is the quantized one", |s| {
            edit(s, G, |v| {
                let p = v["evidence"]["positions"].clone();
                v["evidence"]["noise_positions"] = p;
            })
        }),
        ("gate: a divergence out of bounds", |s| {
            edit(s, G, |v| {
                v["evidence"]["positions"]["kld"][3] = (-0.5).into()
            })
        }),
        ("gate: a top-1 match that is not 0 or 1", |s| {
            edit(s, G, |v| {
                v["evidence"]["positions"]["top1_match"][0] = 7.into()
            })
        }),
        ("gate: better figures claimed than measured", |s| {
            edit(s, G, |v| {
                v["evidence"]["figures"]["kld_mean"] = 0.000_01.into()
            })
        }),
    ]
}

/// The first half of the positions copied over the second.
fn copy_positions(v: &mut Value) {
    let cols = v["evidence"]["positions"].as_object_mut().unwrap();
    for col in cols.values_mut() {
        if let Some(a) = col.as_array_mut() {
            let half = a.len() / 2;
            for i in 0..half {
                a[half + i] = a[i].clone();
            }
        }
    }
}

/// Only the first `n` positions kept.
fn keep_positions(v: &mut Value, n: usize) {
    let cols = v["evidence"]["positions"].as_object_mut().unwrap();
    for col in cols.values_mut() {
        if let Some(a) = col.as_array_mut() {
            a.truncate(n);
        }
    }
}

const NP1: &str = "runs/latency--np1.json";
const BAL: &str = "runs/balanced--np4.json";
const THR: &str = "runs/throughput--np4.json";

fn run_mutants() -> Vec<Mutant> {
    vec![
        ("session: a turn past the profile's", |s| {
            edit(s, NP1, |v| {
                v["repeats"][0]["requests"]["turn"][2] = 9.into()
            })
        }),
        ("session: sessions stripped from a session profile", |s| {
            edit(s, NP1, |v| {
                for rep in v["repeats"].as_array_mut().unwrap() {
                    let q = rep["requests"].as_object_mut().unwrap();
                    q.remove("session");
                    q.remove("turn");
                }
            })
        }),
        (
            "session: one session id reused in two repeats' worth",
            |s| {
                edit(s, NP1, |v| {
                    let n = v["repeats"][0]["requests"]["session"]
                        .as_array()
                        .unwrap()
                        .len();
                    v["repeats"][0]["requests"]["session"] = json!(vec![0; n]);
                })
            },
        ),
        ("signal: a reported failure rate of 1.7", |s| {
            edit(s, BAL, |v| v["reported"] = json!({"failure_rate": 1.7}))
        }),
        ("signal: a sampled KV-cache fill of 1.7", |s| {
            edit(s, BAL, |v| {
                v["repeats"][0]["server_metrics"][2]["values"]["llamacpp:kv_cache_usage_ratio"] =
                    1.7.into()
            })
        }),
        ("signal: goodput above throughput", |s| {
            edit(s, BAL, |v| {
                v["reported"] = json!({"throughput_tps": 50.0, "goodput_tps": 80.0})
            })
        }),
        ("signal: GPU energy on a CPU run", |s| {
            edit(s, THR, |v| {
                for rep in v["repeats"].as_array_mut().unwrap() {
                    rep["gpu_energy_j"] = 400.0.into();
                }
            })
        }),
        ("launch: served with another --parallel", |s| {
            edit(s, NP1, |v| set_flag(v, "--parallel", "4"))
        }),
        ("launch: loaded another format", |s| {
            edit(s, NP1, |v| {
                set_flag(v, "-m", "/models/smollm2-135m-instruct-q4_0.gguf")
            })
        }),
        ("label: np1's measurements labelled np4", |s| {
            let mut np1: Value =
                serde_json::from_slice(&s.iter().find(|f| f.name.ends_with(NP1)).unwrap().bytes)
                    .unwrap();
            np1["candidate"] = json!({"name": "np4", "knob": "parallel", "value": 4});
            set_flag(&mut np1, "--parallel", "4");
            edit(s, "runs/latency--np4.json", |v| *v = np1);
        }),
        ("label: a candidate run relabelled the baseline", |s| {
            edit(s, NP1, |v| v["role"] = "baseline".into())
        }),
        ("clock: a run that ends before it starts", |s| {
            edit(s, NP1, |v| v["finished_at"] = "2026-01-01T00:00:00Z".into())
        }),
        ("count: a repeat's requests halved", |s| {
            edit(s, BAL, |v| {
                let q = v["repeats"][1]["requests"].as_object_mut().unwrap();
                for col in q.values_mut() {
                    if let Some(a) = col.as_array_mut() {
                        let n = a.len() / 2;
                        a.truncate(n);
                    }
                }
            })
        }),
    ]
}

/// The value after `flag` in the run's recorded server command set to `to`.
fn set_flag(v: &mut Value, flag: &str, to: &str) {
    let cmd = v["server"]["command"].as_array_mut().unwrap();
    let i = cmd.iter().position(|a| a == flag).unwrap();
    cmd[i + 1] = to.into();
}

/// The shard record and marker of shard `k`'s first attempt.
fn record(k: u32) -> String {
    format!("shard-{k}-of-3/attempt-a/shard.json")
}

fn marker(k: u32) -> String {
    format!("shard-{k}-of-3/attempt-a/done.json")
}

fn shard_mutants() -> Vec<Mutant> {
    vec![
        ("shard: another plan's sha256 in a record", |s| {
            edit(s, &record(1), |v| {
                v["shard"]["plan_sha256"] = "ef".repeat(32).into()
            })
        }),
        ("shard: record incomplete, marker ok", |s| {
            edit(s, &record(0), |v| v["outcome"] = "incomplete".into())
        }),
        ("shard: a record that ends before it starts", |s| {
            edit(s, &record(2), |v| {
                let start = v["start"].clone();
                v["end"]["wall"] = "2020-01-01T00:00:00Z".into();
                v["end"]["wall_unix_ns"] = 1_577_836_800_000_000_000_i64.into();
                v["end"]["monotonic_ns"] = start["monotonic_ns"].clone();
            })
        }),
        ("shard: a marker days after its attempt", |s| {
            edit(s, &marker(1), |v| {
                v["finished_at"] = "2027-03-01T00:00:00Z".into()
            })
        }),
        ("shard: a record of another split", |s| {
            edit(s, &record(0), |v| v["shard"]["count"] = 4.into())
        }),
        (
            "shard: a record that lists an unfinished run beside an ok marker",
            |s| edit(s, &record(2), |v| v["incomplete"] = json!(["latency/np1"])),
        ),
        ("shard: the marker removed", |s| {
            let m = marker(2);
            s.retain(|f| !f.name.ends_with(&m));
        }),
    ]
}

fn verdicts(a: &Analysis) -> Vec<(String, String, Option<String>)> {
    a.profiles
        .iter()
        .map(|p| {
            let d = p.decision.as_str().to_string();
            (p.profile.clone(), d, p.recommended_name.clone())
        })
        .collect()
}

/// Every mutant of `clean` leaves a trace the control lacks and accepts nothing the control did
/// not; the failures, one line each.
fn check(clean: &Set, mutants: &[Mutant]) -> Vec<String> {
    let (files, refused) = read(clean);
    assert!(refused.is_empty(), "{refused:?}");
    let control = analyze(&files);
    let base = traces(&control, &[]);
    let accepted = verdicts(&control);
    let mut failures = Vec::new();
    for (name, f) in mutants {
        let mut set = clean.clone();
        f(&mut set);
        let (files, refused) = read(&set);
        let a = analyze(&files);
        let new: Vec<String> = traces(&a, &refused).difference(&base).cloned().collect();
        if std::env::var_os("SLOSCOPE_SHOW_TRACES").is_some() {
            eprintln!("{name}: {new:?}");
        }
        if new.is_empty() {
            failures.push(format!("{name}: no trace"));
        }
        for v in verdicts(&a).into_iter().filter(|v| v.1 == "accept") {
            if !accepted.contains(&v) {
                failures.push(format!("{name}: a new accept {v:?}"));
            }
        }
    }
    failures
}

#[test]
fn every_mutation_of_the_newer_records_leaves_a_trace_and_accepts_nothing_new() {
    let mut mutants = gate_mutants();
    mutants.extend(run_mutants());
    let failures = check(&plain(), &mutants);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let failures = check(&sharded(), &shard_mutants());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_oracle_sees_an_unchanged_set_and_a_new_accept() {
    // A mutant that changes nothing leaves no trace: the oracle can fail.
    let none: [Mutant; 1] = [("nothing", |_| {})];
    assert_eq!(
        check(&plain(), &none),
        vec!["nothing: no trace".to_string()]
    );
    // A mutant that turns np4's latency run into np1's numbers made faster, and says nothing,
    // would be a new accept; the oracle names it (here the run is also excluded, a trace).
    let faster: [Mutant; 1] = [("faster", |s| {
        edit(s, "runs/throughput--np1.json", |v| {
            v["reported"] = json!({"requests_sent": 1})
        })
    })];
    let f = check(&plain(), &faster);
    assert!(f.iter().all(|l| !l.contains("no trace")), "{f:?}");
}

#[test]
fn the_clean_controls_are_clean() {
    // The controls themselves: every file read, the sharded tree's merge complete, and the
    // verdicts the same on one host and across three shards.
    let (files, refused) = read(&plain());
    assert!(refused.is_empty(), "{refused:?}");
    let one = analyze(&files);
    let (files, refused) = read(&sharded());
    assert!(refused.is_empty(), "{refused:?}");
    let three = analyze(&files);
    let s = three.shards.as_ref().expect("a shard report");
    assert!(s.complete && s.problems.is_empty(), "{:?}", s.problems);
    assert_eq!(verdicts(&one), verdicts(&three));
    assert!(one.lineage.issues.is_empty(), "{:?}", one.lineage.issues);
}

fn balanced() -> ProfileSpec {
    synth::profile(
        "balanced",
        "mixed",
        1,
        "tpot_p95_ms",
        json!({"ttft_p95_ms": 200, "tpot_p95_ms": 20, "failure_rate": 0.05}),
    )
}

/// One side of a comparison: the lineage, the plan and a run of np1 and np4, each measured with
/// its own seed.
fn side(seed: u64) -> Vec<(String, Value)> {
    let p = balanced();
    let [g, b, d] = synth::lineage();
    let mut out = vec![
        ("gate.json".to_string(), g),
        ("baseline.json".into(), b),
        ("deployment.json".into(), d),
        (
            "plan.json".into(),
            synth::plan(&[&p], &[("np1", 1), ("np4", 4)]),
        ),
    ];
    for (i, (name, value)) in [("np1", 1), ("np4", 4)].into_iter().enumerate() {
        let shape = Shape {
            requests: 30,
            repeats: 3,
            seed: seed * 10 + i as u64,
            ..Shape::default()
        };
        let run = synth::run(
            "q4",
            &p,
            name,
            value,
            EvidenceLevel::RealBackendProfile,
            &shape,
        );
        out.push((format!("{name}.json"), serde_json::to_value(&run).unwrap()));
    }
    out
}

fn loaded(side: &[(String, Value)]) -> Vec<LoadedFile> {
    side.iter()
        .map(|(n, v)| LoadedFile {
            name: n.clone(),
            doc: read_document(n, v.to_string().into_bytes()).unwrap(),
        })
        .collect()
}

fn run_of<'a>(side: &'a mut [(String, Value)], name: &str) -> &'a mut Value {
    &mut side.iter_mut().find(|f| f.0 == name).unwrap().1
}

/// The ways an after side can repeat the before side's measurements.
type Reuse = (
    &'static str,
    fn(&[(String, Value)], &mut Vec<(String, Value)>),
);

fn reuses() -> Vec<Reuse> {
    vec![
        ("the whole before side", |b, a| *a = b.to_vec()),
        ("the before side's run under a new file name", |b, a| {
            let r = b.iter().find(|f| f.0 == "np1.json").unwrap().1.clone();
            *run_of(a, "np1.json") = r;
            a.iter_mut().find(|f| f.0 == "np1.json").unwrap().0 = "rerun.json".into();
        }),
        ("a subset: two of the three repeats", |b, a| {
            let mut r = b.iter().find(|f| f.0 == "np1.json").unwrap().1.clone();
            r["repeats"].as_array_mut().unwrap().pop();
            *run_of(a, "np1.json") = r;
        }),
        ("every gap nudged by a microsecond", |b, a| {
            let mut r = b.iter().find(|f| f.0 == "np1.json").unwrap().1.clone();
            nudge(&mut r);
            *run_of(a, "np1.json") = r;
        }),
        ("np1's measurements relabelled np4", |b, a| {
            let mut r = b.iter().find(|f| f.0 == "np1.json").unwrap().1.clone();
            r["candidate"] = json!({"name": "np4", "knob": "parallel", "value": 4});
            *run_of(a, "np4.json") = r;
        }),
        ("two requests spliced into a fresh run", |b, a| {
            let old = b.iter().find(|f| f.0 == "np1.json").unwrap().1.clone();
            let r = run_of(a, "np1.json");
            for col in ["ttft_us", "e2e_us", "itl_us", "output_tokens"] {
                for i in [3, 7] {
                    r["repeats"][0]["requests"][col][i] =
                        old["repeats"][0]["requests"][col][i].clone();
                }
            }
        }),
    ]
}

/// Every gap between tokens moved by ±1 µs, alternately, each end moved with its gaps.
fn nudge(r: &mut Value) {
    for rep in r["repeats"].as_array_mut().unwrap() {
        let q = &mut rep["requests"];
        let n = q["itl_us"].as_array().unwrap().len();
        for i in 0..n {
            let mut moved = 0_i64;
            if let Some(gaps) = q["itl_us"][i].as_array_mut() {
                for (j, g) in gaps.iter_mut().enumerate() {
                    let d = if j % 2 == 0 { 1 } else { -1 };
                    *g = (g.as_i64().unwrap() + d).into();
                    moved += d;
                }
            }
            if let Some(e) = q["e2e_us"][i].as_i64() {
                q["e2e_us"][i] = (e + moved).into();
            }
        }
    }
}

#[test]
fn a_side_that_repeats_the_other_never_passes() {
    let before = side(1);
    let fresh = side(2);
    // The control: two independent collections compare and pass.
    let c = compare(
        &loaded(&before),
        &loaded(&fresh),
        &CompareOptions::default(),
    );
    assert_eq!(
        c.outcome,
        Outcome::NoRegression,
        "{:?} {:?}",
        c.refused,
        c.notes
    );
    let mut failures = Vec::new();
    for (name, f) in reuses() {
        let mut after = fresh.clone();
        f(&before, &mut after);
        let c = compare(
            &loaded(&before),
            &loaded(&after),
            &CompareOptions::default(),
        );
        if matches!(c.outcome, Outcome::NoRegression | Outcome::Regression) {
            failures.push(format!("{name}: {:?}", c.outcome));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

type Edit = fn(&mut Vec<(String, Value)>);

/// An after side that lost a cell — its run deleted or cut short — is
/// incomplete, never a pass: a failing cell cannot get past the comparison by going missing.
#[test]
fn a_side_that_lost_a_cell_never_passes() {
    let before = side(1);
    let lose: [(&str, Edit); 2] = [
        ("np4's run deleted", |a| a.retain(|f| f.0 != "np4.json")),
        ("np4's run cut to one request a repeat", |a| {
            for rep in run_of(a, "np4.json")["repeats"].as_array_mut().unwrap() {
                for col in rep["requests"].as_object_mut().unwrap().values_mut() {
                    if let Some(v) = col.as_array_mut() {
                        v.truncate(1);
                    }
                }
            }
        }),
    ];
    for (name, f) in lose {
        let mut after = side(2);
        f(&mut after);
        let c = compare(
            &loaded(&before),
            &loaded(&after),
            &CompareOptions::default(),
        );
        assert_eq!(
            c.outcome,
            Outcome::Incomplete,
            "{name}: {:?}",
            c.not_comparable
        );
    }
}
