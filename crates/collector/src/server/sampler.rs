//! Telemetry sampled alongside one repeat's load: memory (GPU through NVML, else the server's
//! RSS, summed over its process group) and the server's `/metrics`, every second. Runs as its
//! own task so the timing path never waits for a scrape. (A server that exits is seen by the
//! task awaiting it, [`crate::server::process`], not by this sampler.)

use std::time::{Duration, Instant};

use sloscope_core::schema::{MemorySample, MetricSample};
use tokio::sync::oneshot;

use crate::server::telemetry::{self, Gpu};

/// What the sampler collected.
#[derive(Debug, Default)]
pub struct Samples {
    /// Memory samples.
    pub memory: Vec<MemorySample>,
    /// `/metrics` samples.
    pub metrics: Vec<MetricSample>,
    /// `/metrics` scrapes that got no answer (an error, a non-2xx status, or none within 2 s).
    pub missed_scrapes: u32,
}

/// A running sampler; [`Sampler::finish`] stops it and returns what it saw.
pub struct Sampler {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Samples>,
}

/// What the sampler watches.
pub struct Watch {
    /// HTTP client for `/metrics`.
    pub http: reqwest::Client,
    /// `/metrics` URL, when the server has one.
    pub metrics_url: Option<String>,
    /// The launched server's process group.
    pub pid: Option<u32>,
    /// Whether NVML reported memory at start-up.
    pub gpu: bool,
}

const TICK: Duration = Duration::from_millis(250);
/// Memory and metrics every this many ticks.
const SAMPLE_EVERY: u64 = 4;

impl Sampler {
    /// Starts sampling; offsets are µs since `t0`.
    pub fn start(watch: Watch, t0: Instant) -> Sampler {
        let (stop, mut stopped) = oneshot::channel();
        let task = tokio::spawn(async move {
            let gpu = watch.gpu.then(Gpu::init);
            let mut out = Samples::default();
            let mut tick = 0u64;
            loop {
                let off = t0.elapsed().as_micros() as u64;
                if tick % SAMPLE_EVERY == 0 {
                    sample_once(&watch, gpu.as_ref(), off, &mut out).await;
                }
                tick += 1;
                tokio::select! {
                    _ = tokio::time::sleep(TICK) => {}
                    _ = &mut stopped => break,
                }
            }
            out
        });
        Sampler { stop, task }
    }

    /// Stops the sampler and returns its samples.
    pub async fn finish(self) -> Samples {
        let _ = self.stop.send(());
        self.task.await.unwrap_or_default()
    }
}

async fn sample_once(watch: &Watch, gpu: Option<&Gpu>, off: u64, out: &mut Samples) {
    let gpu_mb = gpu.and_then(Gpu::used_mb);
    let rss = watch.pid.and_then(telemetry::group_rss_mb);
    if gpu_mb.is_some() || rss.is_some() {
        out.memory.push(MemorySample {
            offset_us: off,
            gpu_used_mb: gpu_mb,
            server_rss_mb: rss,
        });
    }
    if let Some(u) = &watch.metrics_url {
        match telemetry::scrape(&watch.http, u).await {
            Some(s) => out.metrics.push(telemetry::sample(off, &s)),
            None => out.missed_scrapes += 1,
        }
    }
}
