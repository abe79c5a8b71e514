//! The merge of a sharded results tree, on the committed example set (real llama-server runs)
//! split as three shards would have written it: the merged verdicts are the one-host verdicts;
//! every way a tree can fail to stand for the plan is named and holds the verdict.

use sloscope_core::analyse::shard::assign;
use sloscope_core::schema::{
    Cell, ClockAnchor, KnobValue, NtpState, Role, ShardDone, ShardOutcome, ShardRecord, ShardRef,
};
use sloscope_core::{analyze, Analysis, Document, LoadedFile};

use crate::snapshots::{example_analysis, example_files};
use sloscope_core::base::time::rfc3339_us;

/// The sha256 of the example's plan file, as every shard's reference names it.
fn plan_sha() -> String {
    example_files()
        .iter()
        .find_map(|f| match &f.doc {
            Document::Plan(p) => p.file_sha256.0.clone(),
            _ => None,
        })
        .unwrap()
}

/// The example runs' first start and last end, µs since 1970.
fn run_span() -> (i64, i64) {
    let mut span = (i64::MAX, i64::MIN);
    for f in example_files() {
        if let Document::Run(r) = &f.doc {
            let t = |s: &Option<String>| s.as_deref().and_then(rfc3339_us);
            if let (Some(a), Some(b)) = (t(&r.started_at), t(&r.finished_at)) {
                span = (span.0.min(a), span.1.max(b));
            }
        }
    }
    span
}

/// `us` since 1970 as an RFC 3339 UTC stamp (whole seconds).
fn stamp(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

pub(crate) fn cells() -> Vec<Cell> {
    let files = example_files();
    let plan = files
        .iter()
        .find_map(|f| match &f.doc {
            Document::Plan(p) => Some(p.clone()),
            _ => None,
        })
        .unwrap();
    let mut c = assign::cells(&plan, Some(("f16", &KnobValue::Int(4))));
    assign::assign(&mut c, 3);
    c
}

pub(crate) fn shard_of(cells: &[Cell], role: Role, name: &str) -> u32 {
    cells
        .iter()
        .find(|c| c.role == role && c.name == name)
        .unwrap()
        .shard
}

/// A clock reading at the start (`t` 0) or end (`t` 1) of an attempt that ran the example runs
/// (from a minute before their first start to a minute after their last end), `shift` minutes
/// later.
fn anchor(t: i64, shift: i64) -> ClockAnchor {
    let (first, last) = run_span();
    let minute = 60_000_000;
    let zero = first - minute;
    let base = if t == 0 { zero } else { last + minute };
    let us = (base + shift * minute).div_euclid(1_000_000) * 1_000_000;
    ClockAnchor {
        wall: stamp(us),
        wall_unix_ns: us * 1000,
        monotonic_ns: 5_000_000_000_000 + (us - zero) as u64 * 1000,
    }
}

/// A run's own stamps moved `shift` minutes later.
fn later(r: &mut sloscope_core::schema::Run, shift: i64) {
    for s in [&mut r.started_at, &mut r.finished_at] {
        if let Some(us) = s.as_deref().and_then(rfc3339_us) {
            *s = Some(stamp(us + shift * 60_000_000));
        }
    }
}

fn reference(index: u32, attempt: &str) -> ShardRef {
    ShardRef {
        plan_sha256: plan_sha(),
        index,
        count: 3,
        attempt: attempt.into(),
    }
}

/// Shard `index`'s record and marker for `attempt`, `t` minutes after the first attempt.
fn attempt_files(cells: &[Cell], index: u32, attempt: &str, t: i64) -> Vec<LoadedFile> {
    let dir = format!("results/shard-{index}-of-3/attempt-{attempt}");
    let ntp = NtpState {
        synchronized: Some(true),
        est_error_us: Some(100),
        max_error_us: Some(1000),
        note: None,
    };
    let record = ShardRecord {
        kind: sloscope_core::schema::Kind::Shard,
        schema_version: "1.0".into(),
        shard: reference(index, attempt),
        cells: cells.to_vec(),
        sloscope_version: "test".into(),
        node: Some(format!("node-{index}")),
        pod: None,
        hardware: Some("NVIDIA H100 80GB HBM3 (85.0 GB)".into()),
        start: anchor(0, t),
        ntp_start: ntp.clone(),
        end: Some(anchor(1, t)),
        ntp_end: Some(ntp),
        outcome: Some(ShardOutcome::Ok),
        incomplete: Vec::new(),
    };
    let done = ShardDone {
        kind: sloscope_core::schema::Kind::ShardDone,
        schema_version: "1.0".into(),
        shard: reference(index, attempt),
        finished_at: anchor(1, t).wall,
        outcome: ShardOutcome::Ok,
    };
    vec![
        LoadedFile {
            name: format!("{dir}/shard.json"),
            doc: Document::Shard(Box::new(record)),
        },
        LoadedFile {
            name: format!("{dir}/done.json"),
            doc: Document::ShardDone(done),
        },
    ]
}

/// The example set as three shards' first attempts wrote it.
pub(crate) fn sharded() -> Vec<LoadedFile> {
    let cells = cells();
    let mut out = Vec::new();
    for mut f in example_files() {
        if let Document::Run(r) = &mut f.doc {
            let k = shard_of(&cells, r.role, &r.candidate.name);
            r.shard = Some(reference(k, "a"));
            f.name = format!("results/shard-{k}-of-3/attempt-a/{}", f.name);
        }
        out.push(f);
    }
    for k in 0..3 {
        out.extend(attempt_files(&cells, k, "a", 0));
    }
    out
}

fn verdicts(a: &Analysis) -> Vec<(String, String, Option<String>, usize)> {
    a.profiles
        .iter()
        .map(|p| {
            (
                p.profile.clone(),
                p.decision.as_str().to_string(),
                p.recommended_name.clone(),
                p.candidates.len(),
            )
        })
        .collect()
}

fn problems(a: &Analysis) -> String {
    a.shards.as_ref().unwrap().problems.join("\n")
}

fn held(a: &Analysis) -> bool {
    a.profiles.iter().all(|p| {
        p.reason
            .contains("sharded run does not stand for the whole plan")
    })
}

#[test]
fn three_shards_merge_to_the_one_host_verdicts() {
    assert_eq!(cells().iter().map(|c| c.shard).collect::<Vec<_>>().len(), 3);
    let a = analyze(&sharded());
    let s = a.shards.as_ref().unwrap();
    assert!(s.complete, "{:#?}", s.problems);
    assert_eq!(verdicts(&a), verdicts(&example_analysis()));
    assert_eq!(a.lineage, example_analysis().lineage);
}

#[test]
fn a_missing_shard_is_named_with_its_cells_and_holds_every_verdict() {
    let cells = cells();
    let gone = shard_of(&cells, Role::Baseline, "f16");
    let files: Vec<LoadedFile> = sharded()
        .into_iter()
        .filter(|f| !f.name.starts_with(&format!("results/shard-{gone}-of-3/")))
        .collect();
    let a = analyze(&files);
    let p = problems(&a);
    assert!(p.contains(&format!("shard {gone} of 3: missing")), "{p}");
    assert!(p.contains("baseline f16"), "{p}");
    assert!(held(&a));
}

#[test]
fn the_latest_finished_attempt_counts_and_the_other_is_left_out_not_pooled() {
    let cells = cells();
    let mut files = sharded();
    // Shard 0 ran again to the end, later (a pod retried after its marker was written).
    let again: Vec<LoadedFile> = files
        .iter()
        .filter(|f| f.name.starts_with("results/shard-0-of-3/attempt-a/static"))
        .map(|f| {
            let mut g = f.clone();
            if let Document::Run(r) = &mut g.doc {
                r.shard = Some(reference(0, "b"));
                later(r, 30);
            }
            g.name = g.name.replace("attempt-a", "attempt-b");
            g
        })
        .collect();
    files.extend(again);
    files.extend(attempt_files(&cells, 0, "b", 30));
    let a = analyze(&files);
    let s = a.shards.as_ref().unwrap();
    assert!(s.complete, "{:#?}", s.problems);
    assert_eq!(s.left_out.len(), 1, "{:?}", s.left_out);
    assert!(
        s.left_out[0].contains("attempt a left out"),
        "{:?}",
        s.left_out
    );
    assert_eq!(verdicts(&a), verdicts(&example_analysis()));
    for p in &a.profiles {
        assert!(p.excluded.is_empty(), "{:?}", p.excluded);
    }
}

#[test]
fn an_attempt_without_its_marker_is_partial() {
    let files: Vec<LoadedFile> = sharded()
        .into_iter()
        .filter(|f| f.name != "results/shard-1-of-3/attempt-a/done.json")
        .collect();
    let a = analyze(&files);
    assert!(
        problems(&a).contains("shard 1 of 3: partial"),
        "{}",
        problems(&a)
    );
    assert!(held(&a));
}

#[test]
fn shards_on_other_hardware_or_another_plan_or_another_split_are_named() {
    // One shard's runs on another GPU.
    let cells = cells();
    let k = shard_of(&cells, Role::Candidate, "np4");
    let mut files = sharded();
    for f in &mut files {
        if let Document::Run(r) = &mut f.doc {
            if r.shard.as_ref().is_some_and(|s| s.index == k) {
                r.hardware = "1x NVIDIA A100-SXM4-80GB".into();
            }
        }
    }
    let a = analyze(&files);
    assert!(problems(&a).contains("not comparable"), "{}", problems(&a));
    assert!(held(&a));
    // A file of another plan's split is left out, named.
    let mut files = sharded();
    let mut stray = files
        .iter()
        .find(|f| f.name.ends_with("shard-2-of-3/attempt-a/done.json"))
        .unwrap()
        .clone();
    if let Document::ShardDone(d) = &mut stray.doc {
        d.shard.plan_sha256 = "0".repeat(64);
    }
    stray.name = "elsewhere/done.json".into();
    files.push(stray);
    let a = analyze(&files);
    assert!(
        problems(&a).contains("elsewhere/done.json: belongs to the plan"),
        "{}",
        problems(&a)
    );
    // A record that assigns the cells differently.
    let mut files = sharded();
    for f in &mut files {
        if let Document::Shard(s) = &mut f.doc {
            if s.shard.index == 1 {
                s.cells.iter_mut().for_each(|c| c.shard = 0);
            }
        }
    }
    let a = analyze(&files);
    assert!(
        problems(&a).contains("assigns the plan's cells differently"),
        "{}",
        problems(&a)
    );
    assert!(held(&a));
}
