//! `sloscope k8s`: flags → the collector's Kubernetes door ([`sloscope_collector::k8s`]) →
//! the YAML printed (or written) for `kubectl` → exit code. Nothing is applied.

use std::path::PathBuf;
use std::process::ExitCode;

use sloscope_collector::k8s::{render, Spec};

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
    match render(&args.spec()) {
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

impl Args {
    /// What the Job is made of.
    fn spec(&self) -> Spec {
        Spec {
            plan: self.plan.clone(),
            shards: self.shards,
            image: self.image.clone(),
            sloscope_image: self.sloscope_image.clone(),
            sloscope_path: self.sloscope_path.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            gpus: self.gpus,
            gpu_resource: self.gpu_resource.clone(),
            gpu_product: self.gpu_product.clone(),
            node_selector: self.node_selector.clone(),
            storage_class: self.storage_class.clone(),
            results_size: self.results_size.clone(),
            results_claim: self.results_claim.clone(),
            model_claim: self.model_claim.clone(),
            env: self.env.clone(),
            retries: self.retries,
            no_baseline: self.no_baseline,
        }
    }
}
