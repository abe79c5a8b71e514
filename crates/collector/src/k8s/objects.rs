//! The four objects, typed: a misspelt field or a wrong type does not compile.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{
    Job as BatchJob, JobSpec, PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
};
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapVolumeSource, Container, EmptyDirVolumeSource, EnvVar, EnvVarSource,
    KeyToPath, ObjectFieldSelector, PersistentVolumeClaim, PersistentVolumeClaimSpec,
    PersistentVolumeClaimVolumeSource, Pod, PodSpec, PodTemplateSpec, ResourceRequirements, Volume,
    VolumeMount, VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;

use super::{Job, Spec};

/// The exit code the pod's container fails with on bad input: that index is not retried.
const BAD_INPUT_EXIT: i32 = 2;

/// Each object as a YAML document, in the order they are applied.
pub(super) fn all(spec: &Spec, job: &Job) -> Result<Vec<String>, String> {
    let mut docs = vec![yaml(&config_map(spec, job))?];
    if spec.results_claim.is_none() {
        docs.push(yaml(&results_claim(spec, job))?);
    }
    docs.push(yaml(&indexed_job(spec, job))?);
    docs.push(yaml(&reader_pod(spec, job))?);
    Ok(docs)
}

fn yaml<T: Serialize>(object: &T) -> Result<String, String> {
    serde_norway::to_string(object).map_err(|e| e.to_string())
}

fn labels(job: &Job) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".into(), "sloscope".into()),
        ("app.kubernetes.io/instance".into(), job.name.clone()),
        (
            "sloscope.dev/plan-file-sha256".into(),
            job.plan_sha[..16].to_string(),
        ),
    ])
}

/// An object's metadata: its name, the namespace and the shared labels.
fn metadata(spec: &Spec, job: &Job, name: String) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: Some(spec.namespace.clone()),
        labels: Some(labels(job)),
        ..ObjectMeta::default()
    }
}

fn config_map(spec: &Spec, job: &Job) -> ConfigMap {
    let data = job
        .files
        .iter()
        .enumerate()
        .map(|(i, (_, text))| (format!("f{i}"), text.clone()))
        .collect();
    ConfigMap {
        metadata: metadata(spec, job, format!("{}-plan", job.name)),
        data: Some(data),
        ..ConfigMap::default()
    }
}

fn results_claim(spec: &Spec, job: &Job) -> PersistentVolumeClaim {
    let size = BTreeMap::from([("storage".into(), Quantity(spec.results_size.clone()))]);
    PersistentVolumeClaim {
        metadata: metadata(spec, job, claim_name(spec, job)),
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec!["ReadWriteMany".into()]),
            resources: Some(VolumeResourceRequirements {
                requests: Some(size),
                ..VolumeResourceRequirements::default()
            }),
            storage_class_name: spec.storage_class.clone(),
            ..PersistentVolumeClaimSpec::default()
        }),
        ..PersistentVolumeClaim::default()
    }
}

fn claim_name(spec: &Spec, job: &Job) -> String {
    spec.results_claim
        .clone()
        .unwrap_or_else(|| format!("{}-results", job.name))
}

fn claim(name: &str, claim: String, read_only: bool) -> Volume {
    Volume {
        name: name.into(),
        persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
            claim_name: claim,
            read_only: read_only.then_some(true),
        }),
        ..Volume::default()
    }
}

fn empty_dir(name: &str, medium: Option<&str>) -> Volume {
    Volume {
        name: name.into(),
        empty_dir: Some(EmptyDirVolumeSource {
            medium: medium.map(str::to_string),
            ..EmptyDirVolumeSource::default()
        }),
        ..Volume::default()
    }
}

fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.into(),
        mount_path: path.into(),
        read_only: read_only.then_some(true),
        ..VolumeMount::default()
    }
}

fn volumes(spec: &Spec, job: &Job) -> (Vec<Volume>, Vec<VolumeMount>) {
    let items = job
        .files
        .iter()
        .enumerate()
        .map(|(i, (path, _))| KeyToPath {
            key: format!("f{i}"),
            path: path.clone(),
            mode: None,
        })
        .collect();
    let plan = Volume {
        name: "plan".into(),
        config_map: Some(ConfigMapVolumeSource {
            name: format!("{}-plan", job.name),
            items: Some(items),
            ..ConfigMapVolumeSource::default()
        }),
        ..Volume::default()
    };
    let mut vols = vec![
        empty_dir("sloscope-bin", None),
        plan,
        claim("results", claim_name(spec, job), false),
        empty_dir("shm", Some("Memory")),
    ];
    let mut mounts = vec![
        mount("sloscope-bin", "/sloscope/bin", false),
        mount("plan", "/plan", true),
        mount("results", "/results", false),
        mount("shm", "/dev/shm", false),
    ];
    if let Some((name, path)) = &job.model {
        vols.push(claim("models", name.clone(), true));
        mounts.push(mount("models", path, true));
    }
    (vols, mounts)
}

fn field_env(name: &str, path: &str) -> EnvVar {
    EnvVar {
        name: name.into(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: path.into(),
                api_version: None,
            }),
            ..EnvVarSource::default()
        }),
        value: None,
    }
}

/// `sloscope run` for the pod's index of the Job.
fn run_command(spec: &Spec, job: &Job) -> Vec<String> {
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
    if spec.no_baseline {
        command.push("--no-baseline".into());
    }
    command
}

fn main_container(spec: &Spec, job: &Job, mounts: Vec<VolumeMount>) -> Container {
    let mut env = vec![
        field_env("POD_NAME", "metadata.name"),
        field_env("NODE_NAME", "spec.nodeName"),
    ];
    env.extend(job.env.iter().map(|(k, v)| EnvVar {
        name: k.clone(),
        value: Some(v.clone()),
        value_from: None,
    }));
    let resources = (spec.gpus > 0).then(|| {
        let gpus = BTreeMap::from([(spec.gpu_resource.clone(), Quantity(spec.gpus.to_string()))]);
        ResourceRequirements {
            limits: Some(gpus.clone()),
            requests: Some(gpus),
            ..ResourceRequirements::default()
        }
    });
    Container {
        name: "sloscope".into(),
        image: Some(spec.image.clone()),
        command: Some(run_command(spec, job)),
        env: Some(env),
        resources,
        volume_mounts: Some(mounts),
        ..Container::default()
    }
}

fn init_container(spec: &Spec) -> Container {
    Container {
        name: "sloscope-binary".into(),
        image: Some(spec.sloscope_image.clone()),
        command: Some(vec![
            "cp".into(),
            spec.sloscope_path.clone(),
            "/sloscope/bin/sloscope".into(),
        ]),
        volume_mounts: Some(vec![mount("sloscope-bin", "/sloscope/bin", false)]),
        ..Container::default()
    }
}

/// Bad input fails its index at once; a pod disrupted by the cluster is not counted.
fn failure_policy() -> PodFailurePolicy {
    PodFailurePolicy {
        rules: vec![
            PodFailurePolicyRule {
                action: "FailIndex".into(),
                on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement {
                    container_name: Some("sloscope".into()),
                    operator: "In".into(),
                    values: vec![BAD_INPUT_EXIT],
                }),
                on_pod_conditions: None,
            },
            PodFailurePolicyRule {
                action: "Ignore".into(),
                on_exit_codes: None,
                on_pod_conditions: Some(vec![PodFailurePolicyOnPodConditionsPattern {
                    type_: "DisruptionTarget".into(),
                    status: "True".into(),
                }]),
            },
        ],
    }
}

fn node_selector(spec: &Spec, job: &Job) -> Option<BTreeMap<String, String>> {
    let mut selector: BTreeMap<String, String> = job.node_selector.iter().cloned().collect();
    if let Some(p) = &spec.gpu_product {
        selector.insert("nvidia.com/gpu.product".into(), p.clone());
    }
    (!selector.is_empty()).then_some(selector)
}

fn indexed_job(spec: &Spec, job: &Job) -> BatchJob {
    let (vols, mounts) = volumes(spec, job);
    let pod = PodSpec {
        restart_policy: Some("Never".into()),
        termination_grace_period_seconds: Some(120),
        init_containers: Some(vec![init_container(spec)]),
        containers: vec![main_container(spec, job, mounts)],
        volumes: Some(vols),
        node_selector: node_selector(spec, job),
        ..PodSpec::default()
    };
    let shards = i32::try_from(job.shards).unwrap_or(i32::MAX);
    BatchJob {
        metadata: metadata(spec, job, job.name.clone()),
        spec: Some(JobSpec {
            completion_mode: Some("Indexed".into()),
            completions: Some(shards),
            parallelism: Some(shards),
            backoff_limit_per_index: Some(i32::try_from(spec.retries).unwrap_or(i32::MAX)),
            pod_replacement_policy: Some("Failed".into()),
            pod_failure_policy: Some(failure_policy()),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(job)),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod),
            },
            ..JobSpec::default()
        }),
        ..BatchJob::default()
    }
}

/// A small pod that mounts the results volume, to copy the results out with `kubectl cp`.
fn reader_pod(spec: &Spec, job: &Job) -> Pod {
    Pod {
        metadata: metadata(spec, job, format!("{}-reader", job.name)),
        spec: Some(PodSpec {
            restart_policy: Some("Never".into()),
            containers: vec![Container {
                name: "reader".into(),
                image: Some(spec.sloscope_image.clone()),
                command: Some(vec!["sleep".into(), "86400".into()]),
                volume_mounts: Some(vec![mount("results", "/results", true)]),
                ..Container::default()
            }],
            volumes: Some(vec![claim("results", claim_name(spec, job), false)]),
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}
