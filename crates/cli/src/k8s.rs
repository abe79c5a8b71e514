//! `sloscope k8s`: renders a plan as a Kubernetes Indexed Job whose pods each run one shard
//! (`sloscope run --shard-from-env`), with the plan and the files it names as a ConfigMap and a
//! shared results volume. Nothing is applied: the YAML is printed (or written) for `kubectl`.
//!
//! The pod: an init container copies the `sloscope` binary from `--sloscope-image` into a
//! shared `emptyDir`; the main container is the serving image (vLLM, SGLang …), in which
//! sloscope launches the server per candidate exactly as `run` does on one host.

use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use serde_json::{json, Value};
use sha2::Digest;
use sloscope_collector::plan::config::{load_plan, Overrides, RunPlan};

/// Arguments of `sloscope k8s`.
#[derive(clap::Args)]
#[command(
    after_help = format!(
        "Apply and watch: kubectl apply -f job.yaml; kubectl -n NS get pods -l job-name=NAME -w\n\n{}",
        crate::exit::K8s::help()
    )
)]
pub struct Args {
    /// The plan (TOML or JSON); it and the files it names (lineage records, datasets, traces)
    /// must lie in its directory or below it.
    #[arg(long, value_name = "PLAN")]
    plan: PathBuf,
    /// How many shards (pods), each one server launch at a time.
    #[arg(long, value_name = "N")]
    shards: u32,
    /// The serving image the main container runs (sloscope launches the server in it).
    #[arg(long, value_name = "IMAGE")]
    image: String,
    /// An image holding the `sloscope` binary (and `cp`), copied into the pod by an init
    /// container.
    #[arg(long, value_name = "IMAGE")]
    sloscope_image: String,
    /// Where the binary lies in `--sloscope-image`.
    #[arg(long, value_name = "PATH", default_value = "/usr/local/bin/sloscope")]
    sloscope_path: String,
    /// Namespace of every object.
    #[arg(long, default_value = "default")]
    namespace: String,
    /// The Job's name (and prefix of the other objects); default `sloscope-` and the plan
    /// file's sha256's first 10 hex digits.
    #[arg(long)]
    name: Option<String>,
    /// GPUs per pod (0: none requested, a CPU backend).
    #[arg(long, default_value_t = 1)]
    gpus: u32,
    /// The extended resource that counts GPUs.
    #[arg(long, default_value = "nvidia.com/gpu")]
    gpu_resource: String,
    /// Only nodes with this GPU model (the label `nvidia.com/gpu.product` set by NVIDIA's GPU
    /// feature discovery), e.g. `NVIDIA-H100-80GB-HBM3`.
    #[arg(long, value_name = "PRODUCT")]
    gpu_product: Option<String>,
    /// More node labels to select on, `KEY=VALUE` (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    node_selector: Vec<String>,
    /// Storage class of the results volume (ReadWriteMany: every pod writes to it).
    #[arg(long, value_name = "CLASS")]
    storage_class: Option<String>,
    /// Size of the results volume.
    #[arg(long, default_value = "20Gi")]
    results_size: String,
    /// Use this existing PersistentVolumeClaim for the results instead of rendering one.
    #[arg(long, value_name = "CLAIM")]
    results_claim: Option<String>,
    /// Mount this existing PersistentVolumeClaim read-only, `CLAIM:PATH` (model files).
    #[arg(long, value_name = "CLAIM:PATH")]
    model_claim: Option<String>,
    /// Environment of the main container, `NAME=VALUE` (repeatable): the plan's `$VARS`.
    #[arg(long, value_name = "NAME=VALUE")]
    env: Vec<String>,
    /// Retries of each index before it is failed (`backoffLimitPerIndex`).
    #[arg(long, default_value_t = 2)]
    retries: u32,
    /// Do not run the float baseline.
    #[arg(long)]
    no_baseline: bool,
    /// Write the YAML here instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match render(&args) {
        Ok(yaml) => write_out(&args, &yaml),
        Err(e) => {
            eprintln!("sloscope: k8s: {e}");
            Ok(ExitCode::from(crate::exit::K8s::Bad))
        }
    }
}

fn write_out(args: &Args, yaml: &str) -> anyhow::Result<ExitCode> {
    match &args.out {
        Some(p) => {
            if let Err(e) = sloscope_collector::record::write::atomic(p, yaml.as_bytes()) {
                eprintln!("sloscope: {}: cannot write: {e}", p.display());
                return Ok(ExitCode::from(crate::exit::K8s::Output));
            }
        }
        None => print!("{yaml}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// Everything the rendering needs, checked.
struct Job {
    name: String,
    shards: u32,
    plan_file: String,
    files: Vec<(String, String)>,
    plan_sha: String,
}

fn render(args: &Args) -> Result<String, String> {
    let max = sloscope_core::check::text::MAX_SHARDS;
    if args.shards == 0 || args.shards > max {
        return Err(format!("--shards {}: expected 1 to {max}", args.shards));
    }
    let overrides = Overrides {
        no_baseline: args.no_baseline,
        ..Overrides::default()
    };
    // The pod's environment is the one the plan's `$VARS` expand in: check the plan in it.
    for (k, v) in pairs("--env", &args.env)? {
        std::env::set_var(k, v);
    }
    let plan = load_plan(&args.plan, &overrides).map_err(|e| {
        format!("bad plan: {e} (the pod's environment is given with --env NAME=VALUE)")
    })?;
    let bytes = std::fs::read(&args.plan).map_err(|e| format!("{}: {e}", args.plan.display()))?;
    let plan_sha: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let name = match &args.name {
        Some(n) => n.clone(),
        None => format!("sloscope-{}", &plan_sha[..10]),
    };
    dns_label("--name", &name)?;
    dns_label("--namespace", &args.namespace)?;
    let job = Job {
        name,
        shards: args.shards,
        plan_file: file_name(&args.plan)?,
        files: plan_files(&args.plan, &plan)?,
        plan_sha,
    };
    let mut docs = vec![config_map(args, &job)];
    if args.results_claim.is_none() {
        docs.push(results_claim(args, &job));
    }
    docs.push(indexed_job(args, &job)?);
    docs.push(reader_pod(args, &job));
    let mut out = format!(
        "# sloscope k8s: plan file {} (sha256 {}), {} shards.\n# kubectl apply -f THIS.yaml; see the user guide, docs/src/guides/kubernetes.md.\n",
        job.plan_file, job.plan_sha, job.shards
    );
    for d in docs {
        out.push_str("---\n");
        out.push_str(&serde_norway::to_string(&d).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// A DNS-1123 label: what Kubernetes accepts as an object name or namespace.
fn dns_label(flag: &str, s: &str) -> Result<(), String> {
    let ok = !s.is_empty()
        && s.len() <= 52
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{flag} {s:?}: expected lower-case letters, digits and '-', at most 52 characters, not starting or ending with '-'"
        ))
    }
}

fn file_name(p: &Path) -> Result<String, String> {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{}: not a file", p.display()))
}

/// The plan file and every file it names, as (path relative to the plan's directory, text).
fn plan_files(path: &Path, plan: &RunPlan) -> Result<Vec<(String, String)>, String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let l = &plan.raw.lineage;
    let mut named: Vec<(String, PathBuf)> = vec![
        ("the plan".into(), PathBuf::from(file_name(path)?)),
        ("lineage.gate".into(), l.gate.clone()),
        ("lineage.baseline".into(), l.baseline.clone()),
        ("lineage.deployment".into(), l.deployment.clone()),
    ];
    for p in &plan.raw.plan.profiles {
        let Some(w) = &p.workload else { continue };
        let who = p.name.as_deref().unwrap_or("?");
        if let Some(d) = &w.dataset {
            named.push((format!("profile {who}: dataset"), PathBuf::from(&d.file)));
        }
        if let Some(t) = &w.trace {
            named.push((format!("profile {who}: trace"), PathBuf::from(&t.file)));
        }
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for (what, rel) in named {
        let key = inside(&what, &rel)?;
        let text = std::fs::read_to_string(dir.join(&rel))
            .map_err(|e| format!("{what} {}: cannot read as text: {e}", rel.display()))?;
        if !out.iter().any(|(k, _)| *k == key) {
            out.push((key, text));
        }
    }
    let total: usize = out.iter().map(|(_, t)| t.len()).sum();
    if total > 900 * 1024 {
        return Err(format!(
            "the plan and its files are {total} bytes: a ConfigMap holds at most 1 MiB; put large datasets on a volume"
        ));
    }
    Ok(out)
}

/// `rel` as a path under the plan's directory, or why it cannot travel in the ConfigMap.
fn inside(what: &str, rel: &Path) -> Result<String, String> {
    let plain = rel.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain || rel.as_os_str().is_empty() {
        return Err(format!(
            "{what} {:?}: a path outside the plan's directory cannot travel in the ConfigMap; put the file beside the plan (or below it) and name it relatively",
            rel.display().to_string()
        ));
    }
    Ok(rel.to_string_lossy().into_owned())
}

fn labels(job: &Job) -> Value {
    json!({
        "app.kubernetes.io/name": "sloscope",
        "app.kubernetes.io/instance": job.name,
        "sloscope.dev/plan-file-sha256": &job.plan_sha[..16],
    })
}

/// An object's metadata: its name, the namespace and the shared labels.
fn metadata(args: &Args, job: &Job, name: &str) -> Value {
    json!({"name": name, "namespace": args.namespace, "labels": labels(job)})
}

fn config_map(args: &Args, job: &Job) -> Value {
    let data: serde_json::Map<String, Value> = job
        .files
        .iter()
        .enumerate()
        .map(|(i, (_, text))| (format!("f{i}"), Value::String(text.clone())))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(args, job, &format!("{}-plan", job.name)),
        "data": data,
    })
}

fn results_claim(args: &Args, job: &Job) -> Value {
    let mut spec = json!({
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": args.results_size}},
    });
    if let Some(sc) = &args.storage_class {
        spec["storageClassName"] = json!(sc);
    }
    json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata(args, job, &claim_name(args, job)),
        "spec": spec,
    })
}

fn claim_name(args: &Args, job: &Job) -> String {
    args.results_claim
        .clone()
        .unwrap_or_else(|| format!("{}-results", job.name))
}

fn pairs(flag: &str, list: &[String]) -> Result<Vec<(String, String)>, String> {
    list.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(format!("{flag} {s:?}: expected KEY=VALUE")),
        })
        .collect()
}

fn volumes(args: &Args, job: &Job) -> Result<(Vec<Value>, Vec<Value>), String> {
    let items: Vec<Value> = job
        .files
        .iter()
        .enumerate()
        .map(|(i, (path, _))| json!({"key": format!("f{i}"), "path": path}))
        .collect();
    let mut vols = vec![
        json!({"name": "sloscope-bin", "emptyDir": {}}),
        json!({"name": "plan", "configMap": {"name": format!("{}-plan", job.name), "items": items}}),
        json!({"name": "results", "persistentVolumeClaim": {"claimName": claim_name(args, job)}}),
        json!({"name": "shm", "emptyDir": {"medium": "Memory"}}),
    ];
    let mut mounts = vec![
        json!({"name": "sloscope-bin", "mountPath": "/sloscope/bin"}),
        json!({"name": "plan", "mountPath": "/plan", "readOnly": true}),
        json!({"name": "results", "mountPath": "/results"}),
        json!({"name": "shm", "mountPath": "/dev/shm"}),
    ];
    if let Some(m) = &args.model_claim {
        let (claim, path) = m
            .split_once(':')
            .filter(|(c, p)| !c.is_empty() && p.starts_with('/'))
            .ok_or_else(|| format!("--model-claim {m:?}: expected CLAIM:/absolute/path"))?;
        vols.push(json!({"name": "models", "persistentVolumeClaim": {"claimName": claim, "readOnly": true}}));
        mounts.push(json!({"name": "models", "mountPath": path, "readOnly": true}));
    }
    Ok((vols, mounts))
}

fn main_container(args: &Args, job: &Job, mounts: Vec<Value>) -> Result<Value, String> {
    let mut env = vec![
        json!({"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}),
        json!({"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}),
    ];
    for (k, v) in pairs("--env", &args.env)? {
        env.push(json!({"name": k, "value": v}));
    }
    let mut command = vec![
        "/sloscope/bin/sloscope".to_string(),
        "run".into(),
        "--plan".into(),
        format!("/plan/{}", job.plan_file),
        "--out".into(),
        "/results".into(),
        "--shard-from-env".into(),
        "--shards".into(),
        job.shards.to_string(),
    ];
    if args.no_baseline {
        command.push("--no-baseline".into());
    }
    let resources = if args.gpus == 0 {
        json!({})
    } else {
        let gpus = json!({ args.gpu_resource.clone(): args.gpus.to_string() });
        json!({"limits": gpus, "requests": gpus})
    };
    Ok(json!({
        "name": "sloscope",
        "image": args.image,
        "command": command,
        "env": env,
        "resources": resources,
        "volumeMounts": mounts,
    }))
}

fn indexed_job(args: &Args, job: &Job) -> Result<Value, String> {
    let (vols, mounts) = volumes(args, job)?;
    let mut selector = serde_json::Map::new();
    if let Some(p) = &args.gpu_product {
        selector.insert("nvidia.com/gpu.product".into(), json!(p));
    }
    for (k, v) in pairs("--node-selector", &args.node_selector)? {
        selector.insert(k, json!(v));
    }
    let init = json!({
        "name": "sloscope-binary",
        "image": args.sloscope_image,
        "command": ["cp", args.sloscope_path, "/sloscope/bin/sloscope"],
        "volumeMounts": [{"name": "sloscope-bin", "mountPath": "/sloscope/bin"}],
    });
    let mut pod = json!({
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 120,
        "initContainers": [init],
        "containers": [main_container(args, job, mounts)?],
        "volumes": vols,
    });
    if !selector.is_empty() {
        pod["nodeSelector"] = Value::Object(selector);
    }
    Ok(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(args, job, &job.name),
        "spec": {
            "completionMode": "Indexed",
            "completions": job.shards,
            "parallelism": job.shards,
            "backoffLimitPerIndex": args.retries,
            "podReplacementPolicy": "Failed",
            "podFailurePolicy": {"rules": [
                {"action": "FailIndex", "onExitCodes": {"containerName": "sloscope", "operator": "In", "values": [2]}},
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
            ]},
            "template": {"metadata": {"labels": labels(job)}, "spec": pod},
        },
    }))
}

/// A small pod that mounts the results volume, to copy the results out with `kubectl cp`.
fn reader_pod(args: &Args, job: &Job) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata(args, job, &format!("{}-reader", job.name)),
        "spec": {
            "restartPolicy": "Never",
            "containers": [{
                "name": "reader",
                "image": args.sloscope_image,
                "command": ["sleep", "86400"],
                "volumeMounts": [{"name": "results", "mountPath": "/results", "readOnly": true}],
            }],
            "volumes": [{"name": "results", "persistentVolumeClaim": {"claimName": claim_name(args, job)}}],
        },
    })
}
