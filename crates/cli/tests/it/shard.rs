//! A plan sharded over processes as a Kubernetes Indexed Job runs it: N `sloscope run` processes
//! with `JOB_COMPLETION_INDEX` set, sharing one results directory, against the scripted server
//! (and, in `sharded_plan_on_two_llama_servers`, against real llama-servers). The merged
//! analysis is the one-process analysis; a killed and retried index counts once; a missing index
//! is named; two finished attempts of one index are not counted twice. The manifests `sloscope
//! k8s` renders validate against the Kubernetes schemas offline.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::collect::{kill_tagged, plan_in, run};
use crate::common::{
    files_under, journal_requests, lineage_in, repo, scratch, scripted_server, sloscope,
    sloscope_bin, stderr, validate_runs_against_schema,
};

/// `sloscope run --shard-from-env --shards N` as index `k` of an Indexed Job, started.
fn spawn_index(plan: &Path, out: &Path, k: u32, n: u32, extra: &[&str]) -> Child {
    Command::new(sloscope_bin())
        .args([
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args(["--shard-from-env", "--shards", &n.to_string(), "--quiet"])
        .args(extra)
        .env("JOB_COMPLETION_INDEX", k.to_string())
        .env("SLOSCOPE_SCRIPTED_SERVER", scripted_server())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(c: Child) {
    let o = c.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

fn analysis(dir: &Path) -> serde_json::Value {
    let a = sloscope(&["analyze", dir.to_str().unwrap(), "--format", "json"], &[]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    serde_json::from_slice(&a.stdout).unwrap()
}

/// A profile's decision, and each candidate measured with its requests sent.
type Outline = (String, String, Vec<(String, String)>);

/// Per profile: decision, the candidates measured and each one's requests sent.
fn outline(v: &serde_json::Value) -> Vec<Outline> {
    v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let cands = p["candidates"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    let sent = c["summary"]["requests_sent"].to_string();
                    (c["name"].as_str().unwrap().to_string(), sent)
                })
                .collect();
            (
                p["profile"].as_str().unwrap().to_string(),
                p["decision"].as_str().unwrap().to_string(),
                cands,
            )
        })
        .collect()
}

#[test]
fn a_sharded_plan_merges_to_the_verdicts_of_one_process() {
    let d = scratch("shard-merge");
    let plan = repo().join("tests/fixtures/scripted/plan.toml");
    let one = d.join("one");
    let o = run(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            one.to_str().unwrap(),
            "--quiet",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let root = d.join("results");
    let children: Vec<Child> = (0..2)
        .map(|k| spawn_index(&plan, &root, k, 2, &[]))
        .collect();
    children.into_iter().for_each(finish);
    assert_eq!(validate_runs_against_schema(&root), 9, "every cell once");
    let (single, merged) = (analysis(&one), analysis(&root));
    assert!(single.get("shards").is_none());
    assert_eq!(merged["shards"]["complete"], true, "{:#}", merged["shards"]);
    assert_eq!(outline(&merged), outline(&single));
    // The scripted server's throughput separates the candidates by 4×: the same choice.
    let throughput = |v: &serde_json::Value| v["profiles"][2]["recommended_name"].clone();
    assert_eq!(throughput(&merged), throughput(&single));
    assert_eq!(throughput(&merged), "slots4");
    for p in merged["profiles"].as_array().unwrap() {
        assert!(
            p["baseline"].is_object(),
            "the baseline's shard merged: {p:#}"
        );
        assert_eq!(p["excluded"], serde_json::json!([]), "{p:#}");
    }
    // Every attempt wrote its record and marker, valid against their schemas.
    for (file, schema) in [("shard.json", "shard"), ("done.json", "shard_done")] {
        let found: Vec<PathBuf> = files_under(&root)
            .into_iter()
            .filter(|f| f.file_name().is_some_and(|n| n == file))
            .collect();
        assert_eq!(found.len(), 2, "{file}");
        let s: serde_json::Value = serde_json::from_slice(
            &std::fs::read(repo().join(format!("static/schema/{schema}.schema.json"))).unwrap(),
        )
        .unwrap();
        let v = jsonschema::validator_for(&s).unwrap();
        for f in found {
            let doc: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
            assert!(v.is_valid(&doc), "{}", f.display());
            if file == "shard.json" {
                assert!(
                    doc["end"]["monotonic_ns"].as_u64() >= doc["start"]["monotonic_ns"].as_u64()
                );
                assert!(doc["ntp_start"].is_object());
            }
        }
    }
}

fn status_of(v: &serde_json::Value, k: usize) -> String {
    v["shards"]["shards"][k]["status"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_killed_index_retried_counts_once_a_missing_one_is_named_and_two_finished_attempts_once() {
    let d = scratch("shard-retry");
    let tag = format!("sloscope-tag-shard-{}", std::process::id());
    let flags = format!("--ttft-ms 5 --gap-ms 30 --tokens 64 --tag {tag}");
    let plan = plan_in(&d, &flags, &flags);
    let root = d.join("results");
    let only = ["--profiles", "latency"];
    finish(spawn_index(&plan, &root, 0, 3, &only));
    // Index 1 is killed mid-run (a node lost): its attempt has a journal and no marker.
    let mut killed = spawn_index(&plan, &root, 1, 3, &only);
    let deadline = Instant::now() + Duration::from_secs(30);
    while journal_requests(&root) < 2 {
        assert!(
            Instant::now() < deadline,
            "index 1 journaled nothing in 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    killed.kill().unwrap();
    killed.wait().unwrap();
    kill_tagged(&tag);
    let v = analysis(&root);
    assert_eq!(status_of(&v, 0), "done");
    assert_eq!(status_of(&v, 1), "partial");
    assert_eq!(status_of(&v, 2), "missing");
    let reason = v["profiles"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("sharded run does not stand for the whole plan"),
        "{reason}"
    );
    let problems = v["shards"]["problems"].to_string();
    assert!(problems.contains("shard 2 of 3: missing"), "{problems}");
    assert!(
        problems.contains("baseline float") || problems.contains("slots"),
        "cells named: {problems}"
    );
    // The retry of index 1, and index 2 finished twice (a pod that finished but was retried).
    finish(spawn_index(&plan, &root, 1, 3, &only));
    finish(spawn_index(&plan, &root, 2, 3, &only));
    finish(spawn_index(&plan, &root, 2, 3, &only));
    let v = analysis(&root);
    assert_eq!(v["shards"]["complete"], true, "{:#}", v["shards"]);
    let left = v["shards"]["left_out"].as_array().unwrap();
    assert_eq!(left.len(), 2, "{left:?}");
    let p = &v["profiles"][0];
    assert_eq!(p["candidates"].as_array().unwrap().len(), 2, "{p:#}");
    assert_eq!(
        p["excluded"],
        serde_json::json!([]),
        "nothing counted twice: {p:#}"
    );
    assert!(p["baseline"].is_object());
    assert_ne!(p["decision"], "accept", "a simulation is never accepted");
    assert!(!p["reason"].as_str().unwrap().contains("shard"), "{p:#}");
}

#[test]
fn shard_arguments_are_checked_and_the_dry_run_prints_the_assignment() {
    let plan = repo().join("tests/fixtures/scripted/plan.toml");
    let d = scratch("shard-args");
    let out = d.join("out");
    let (p, o) = (plan.to_str().unwrap(), out.to_str().unwrap());
    for bad in ["3/3", "0/0", "x/2"] {
        let r = run(&["run", "--plan", p, "--out", o, "--shard", bad], &[]);
        assert_eq!(r.status.code(), Some(2), "{bad}: {}", stderr(&r));
        assert!(stderr(&r).contains("expected K/N"), "{}", stderr(&r));
    }
    let from_env = [
        "run",
        "--plan",
        p,
        "--out",
        o,
        "--shard-from-env",
        "--shards",
        "2",
    ];
    for (env, says) in [
        (vec![], "JOB_COMPLETION_INDEX is not set"),
        (vec![("JOB_COMPLETION_INDEX", "2")], "not below --shards 2"),
        (
            vec![("JOB_COMPLETION_INDEX", "one")],
            "expected a whole number",
        ),
    ] {
        let r = run(&from_env, &env);
        assert_eq!(r.status.code(), Some(2), "{env:?}");
        assert!(stderr(&r).contains(says), "{}", stderr(&r));
    }
    let r = run(
        &[
            "run",
            "--plan",
            p,
            "--out",
            o,
            "--shard",
            "1/2",
            "--dry-run",
        ],
        &[],
    );
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(text.contains("3 cells over 2 shards"), "{text}");
    assert!(text.contains("<- this shard"), "{text}");
    for cell in ["candidate slots1", "candidate slots4", "baseline float"] {
        assert_eq!(
            text.matches(cell).count(),
            1,
            "{cell} assigned once: {text}"
        );
    }
    assert!(!out.exists(), "a dry run writes nothing");
}

/// `kubernetes-validate` from the venv scripts/setup-llama.sh makes (pinned there).
fn validate_offline(yaml: &Path, version: &str) -> std::process::Output {
    let py = std::env::var("SLOSCOPE_PY").expect("SLOSCOPE_PY: source scripts/setup-llama.sh");
    let exe = Path::new(&py).with_file_name("kubernetes-validate");
    Command::new(exe)
        .args(["--strict", "-k", version, yaml.to_str().unwrap()])
        .output()
        .unwrap()
}

/// The Kubernetes versions the manifests are checked against (1.29 is the first with
/// `backoffLimitPerIndex` and `podReplacementPolicy` on by default).
const KUBERNETES: [&str; 5] = ["1.29.0", "1.31.0", "1.33.0", "1.35.0", "1.37.0"];

fn documents(yaml: &str) -> Vec<serde_json::Value> {
    yaml.split("\n---\n")
        .skip(1)
        .map(|d| serde_norway::from_str(d).unwrap())
        .collect()
}

/// `sloscope k8s --plan PLAN ARGS…` rendered beside the plan and validated against every
/// supported Kubernetes version: the file and its documents.
fn render_valid(
    plan: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (PathBuf, Vec<serde_json::Value>) {
    let yaml = plan.with_file_name("job.yaml");
    let (p, y) = (plan.to_str().unwrap(), yaml.to_str().unwrap());
    let mut all = vec!["k8s", "--plan", p, "--out", y];
    all.extend_from_slice(&["--sloscope-image", "registry.example/sloscope:0.1"]);
    all.extend_from_slice(args);
    let r = sloscope(&all, env);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    for k in KUBERNETES {
        let v = validate_offline(&yaml, k);
        assert!(
            v.status.success(),
            "{k}: {}",
            String::from_utf8_lossy(&v.stdout)
        );
    }
    let docs = documents(&std::fs::read_to_string(&yaml).unwrap());
    (yaml, docs)
}

#[test]
#[ignore = "needs kubernetes-validate: run through scripts/test.sh (scripts/setup-llama.sh installs it)"]
fn the_rendered_indexed_job_validates_offline_and_says_what_it_must() {
    let d = scratch("k8s");
    let plan = plan_in(&d, "--tokens 64", "--tokens 64");
    let (yaml, docs) = render_valid(
        &plan,
        &[
            "--shards",
            "3",
            "--image",
            "vllm/vllm-openai:v0.11.0",
            "--gpu-product",
            "NVIDIA-H100-80GB-HBM3",
            "--storage-class",
            "nfs-client",
            "--namespace",
            "bench",
        ],
        &[("SLOSCOPE_SCRIPTED_SERVER", "/opt/scripted-server")],
    );
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["ConfigMap", "PersistentVolumeClaim", "Job", "Pod"]);
    let job = &docs[2]["spec"];
    assert_eq!(job["completionMode"], "Indexed");
    assert_eq!(job["completions"], 3);
    assert_eq!(job["parallelism"], 3);
    assert_eq!(job["podReplacementPolicy"], "Failed");
    assert_eq!(job["template"]["spec"]["restartPolicy"], "Never");
    let rule = &job["podFailurePolicy"]["rules"][0];
    assert_eq!(rule["action"], "FailIndex");
    assert_eq!(
        rule["onExitCodes"]["values"],
        serde_json::json!([2]),
        "bad input is not retried"
    );
    let c = &job["template"]["spec"]["containers"][0];
    let cmd: Vec<&str> = c["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(&cmd[cmd.len() - 3..], ["--shard-from-env", "--shards", "3"]);
    assert_eq!(c["resources"]["limits"]["nvidia.com/gpu"], "1");
    assert_eq!(docs[1]["spec"]["accessModes"][0], "ReadWriteMany");
    // The ConfigMap carries the plan and the files it names, at their relative paths.
    let items = &job["template"]["spec"]["volumes"][1]["configMap"]["items"];
    let paths: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["plan.toml", "gate.json", "baseline.json", "deployment.json"]
    );
    // A breaking edit fails the same validation (the check can fail).
    let broken = std::fs::read_to_string(&yaml)
        .unwrap()
        .replace("completionMode:", "completionMod:");
    std::fs::write(d.join("broken.yaml"), broken).unwrap();
    assert!(!validate_offline(&d.join("broken.yaml"), "1.33.0")
        .status
        .success());
}

#[test]
#[ignore = "needs llama-server, the models and kubernetes-validate: run through scripts/test.sh"]
fn the_demo_plan_renders_to_manifests_that_validate() {
    let _cores = crate::common::llama_cores(1);
    let d = scratch("k8s-demo");
    std::fs::copy(
        repo().join("examples/llama-cpu/plan.toml"),
        d.join("plan.toml"),
    )
    .unwrap();
    lineage_in(&d.join("lineage"), "Q4_1");
    let (_, docs) = render_valid(
        &d.join("plan.toml"),
        &[
            "--shards",
            "3",
            "--image",
            "ghcr.io/ggml-org/llama.cpp:server",
            "--gpus",
            "0",
            "--model-claim",
            "models:/models",
            "--env",
            "LLAMA_SERVER=/app/llama-server",
            "--env",
            "SLOSCOPE_Q4_GGUF=/models/q4_1.gguf",
            "--env",
            "SLOSCOPE_F16_GGUF=/models/f16.gguf",
        ],
        &[],
    );
    let c = &docs[2]["spec"]["template"]["spec"]["containers"][0];
    assert!(
        c["resources"].get("limits").is_none(),
        "a CPU plan asks for no GPU: {c:#}"
    );
}

#[test]
fn a_file_outside_the_plan_directory_is_refused_by_name() {
    let d = scratch("k8s-outside");
    let sub = d.join("plan");
    std::fs::create_dir_all(&sub).unwrap();
    let plan = plan_in(&sub, "--tokens 8", "--tokens 8");
    let text = std::fs::read_to_string(&plan)
        .unwrap()
        .replace("gate = \"gate.json\"", "gate = \"../gate.json\"");
    std::fs::copy(sub.join("gate.json"), d.join("gate.json")).unwrap();
    std::fs::write(&plan, text).unwrap();
    let r = sloscope(
        &[
            "k8s",
            "--plan",
            plan.to_str().unwrap(),
            "--shards",
            "2",
            "--image",
            "i",
            "--sloscope-image",
            "s",
        ],
        &[("SLOSCOPE_SCRIPTED_SERVER", "/opt/s")],
    );
    assert_eq!(r.status.code(), Some(2));
    let e = stderr(&r);
    assert!(
        e.contains("lineage.gate") && e.contains("outside the plan's directory"),
        "{e}"
    );
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh (it runs scripts/setup-llama.sh)"]
fn sharded_plan_on_two_llama_servers() {
    let _cores = crate::common::llama_cores(2); // two servers measured at once
    let plan = crate::llama::llama_plan("shard-llama");
    let root = plan.parent().unwrap().join("results");
    // Two pods at once, each launching its own llama-server (np1 and np4 on one, the F16
    // baseline on the other).
    let children: Vec<Child> = (0..2)
        .map(|k| spawn_index(&plan, &root, k, 2, &["--profiles", "latency"]))
        .collect();
    children.into_iter().for_each(finish);
    let v = analysis(&root);
    assert_eq!(v["shards"]["complete"], true, "{:#}", v["shards"]);
    let p = &v["profiles"][0];
    assert_eq!(p["candidates"].as_array().unwrap().len(), 2, "{p:#}");
    assert!(p["baseline"].is_object(), "{p:#}");
    assert!(!p["reason"].as_str().unwrap().contains("shard"), "{p:#}");
    for f in files_under(&root) {
        if f.parent().is_some_and(|d| d.ends_with("runs")) {
            let run: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
            assert_eq!(
                run["evidence_level"],
                "real_backend_profile",
                "{}",
                f.display()
            );
            let index = run["shard"]["index"].as_u64().unwrap();
            assert!(
                f.to_string_lossy()
                    .contains(&format!("/shard-{index}-of-2/")),
                "{}",
                f.display()
            );
        }
    }
}
