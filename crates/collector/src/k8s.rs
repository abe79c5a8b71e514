//! The Kubernetes front door: a plan rendered as an Indexed Job whose pods each run one shard
//! (`sloscope run --shard-from-env`), with the plan and the files it names as a ConfigMap and a
//! shared results volume. Nothing is applied: [`render`] returns the YAML for `kubectl`.
//!
//! The objects are typed ([`k8s_openapi`], the oldest API it ships, 1.33; the manifests are
//! validated against Kubernetes 1.29 onwards in the tests), so a misspelt field does not
//! compile. The pod: an init container copies the `sloscope` binary
//! from the sloscope image into a shared `emptyDir`; the main container is the serving image
//! (vLLM, SGLang …), in which sloscope launches the server per candidate exactly as `run` does
//! on one host.

use std::path::{Component, Path, PathBuf};

use sha2::Digest;

use crate::plan::config::{load_plan, Overrides, RunPlan};

mod objects;

/// What the Job is made of, as the user asked for it.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The plan file; it and the files it names must lie in its directory or below it.
    pub plan: PathBuf,
    /// How many shards (pods).
    pub shards: u32,
    /// The serving image of the main container.
    pub image: String,
    /// The image holding the `sloscope` binary.
    pub sloscope_image: String,
    /// Where the binary lies in `sloscope_image`.
    pub sloscope_path: String,
    /// Namespace of every object.
    pub namespace: String,
    /// The Job's name; `None`: `sloscope-` and the plan file's sha256's first 10 hex digits.
    pub name: Option<String>,
    /// GPUs per pod (0: none requested).
    pub gpus: u32,
    /// The extended resource that counts GPUs.
    pub gpu_resource: String,
    /// Only nodes with this `nvidia.com/gpu.product` label.
    pub gpu_product: Option<String>,
    /// More node labels to select on, `KEY=VALUE`.
    pub node_selector: Vec<String>,
    /// Storage class of the results volume.
    pub storage_class: Option<String>,
    /// Size of the results volume.
    pub results_size: String,
    /// An existing claim for the results instead of a rendered one.
    pub results_claim: Option<String>,
    /// An existing claim mounted read-only, `CLAIM:PATH`.
    pub model_claim: Option<String>,
    /// Environment of the main container, `NAME=VALUE`.
    pub env: Vec<String>,
    /// Retries of each index (`backoffLimitPerIndex`).
    pub retries: u32,
    /// Do not run the float baseline.
    pub no_baseline: bool,
}

/// Everything the objects are rendered from, checked.
struct Job {
    name: String,
    shards: u32,
    plan_file: String,
    files: Vec<(String, String)>,
    plan_sha: String,
    env: Vec<(String, String)>,
    node_selector: Vec<(String, String)>,
    model: Option<(String, String)>,
}

/// The manifests as one YAML stream (ConfigMap, the results claim unless one is given, the
/// Indexed Job, a reader pod), or what is wrong with the plan or the spec.
pub fn render(spec: &Spec) -> Result<String, String> {
    let job = checked(spec)?;
    let mut out = format!(
        "# sloscope k8s: plan file {} (sha256 {}), {} shards.\n# kubectl apply -f THIS.yaml; see the user guide, docs/src/guides/kubernetes.md.\n",
        job.plan_file, job.plan_sha, job.shards
    );
    for doc in objects::all(spec, &job)? {
        out.push_str("---\n");
        out.push_str(&doc);
    }
    Ok(out)
}

fn checked(spec: &Spec) -> Result<Job, String> {
    let max = sloscope_core::checks::MAX_SHARDS;
    if spec.shards == 0 || spec.shards > max {
        return Err(format!("--shards {}: expected 1 to {max}", spec.shards));
    }
    let env = pairs("--env", &spec.env)?;
    // The pod's environment is the one the plan's `$VARS` expand in: check the plan in it.
    for (k, v) in &env {
        std::env::set_var(k, v);
    }
    let overrides = Overrides {
        no_baseline: spec.no_baseline,
        ..Overrides::default()
    };
    let plan = load_plan(&spec.plan, &overrides).map_err(|e| {
        format!("bad plan: {e} (the pod's environment is given with --env NAME=VALUE)")
    })?;
    let bytes = std::fs::read(&spec.plan).map_err(|e| format!("{}: {e}", spec.plan.display()))?;
    let plan_sha: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let name = spec
        .name
        .clone()
        .unwrap_or_else(|| format!("sloscope-{}", &plan_sha[..10]));
    dns_label("--name", &name)?;
    dns_label("--namespace", &spec.namespace)?;
    Ok(Job {
        name,
        shards: spec.shards,
        plan_file: file_name(&spec.plan)?,
        files: plan_files(&spec.plan, &plan)?,
        plan_sha,
        env,
        node_selector: pairs("--node-selector", &spec.node_selector)?,
        model: spec.model_claim.as_deref().map(model_claim).transpose()?,
    })
}

fn model_claim(m: &str) -> Result<(String, String), String> {
    m.split_once(':')
        .filter(|(c, p)| !c.is_empty() && p.starts_with('/'))
        .map(|(c, p)| (c.to_string(), p.to_string()))
        .ok_or_else(|| format!("--model-claim {m:?}: expected CLAIM:/absolute/path"))
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
    let mut out: Vec<(String, String)> = Vec::new();
    for (what, rel) in named_files(path, plan)? {
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

/// The plan and the files it names, each with what names it.
fn named_files(path: &Path, plan: &RunPlan) -> Result<Vec<(String, PathBuf)>, String> {
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
    Ok(named)
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

fn pairs(flag: &str, list: &[String]) -> Result<Vec<(String, String)>, String> {
    list.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(format!("{flag} {s:?}: expected KEY=VALUE")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_pairs_are_checked() {
        assert!(dns_label("--name", "sloscope-ab12").is_ok());
        for bad in ["", "-a", "a-", "A", "a_b", &"a".repeat(53)] {
            assert!(dns_label("--name", bad).is_err(), "{bad}");
        }
        assert_eq!(
            pairs("--env", &["A=b=c".into()]).unwrap(),
            [("A".into(), "b=c".into())]
        );
        assert!(pairs("--env", &["=b".into()]).is_err());
        assert!(model_claim("models:/m").is_ok());
        assert!(model_claim("models:m").is_err());
        assert!(inside("x", Path::new("../x")).is_err());
        assert!(inside("x", Path::new("/x")).is_err());
        assert_eq!(inside("x", Path::new("d/x.json")).unwrap(), "d/x.json");
    }
}
