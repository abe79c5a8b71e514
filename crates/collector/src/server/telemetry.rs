//! Server telemetry: `/metrics` scrapes, the launched server's resident memory and GPU memory
//! through NVML (loaded at run time; no GPU or no driver gives `null` and a note).

use std::collections::BTreeMap;

use sloscope_core::measure::{is_kept_series, QUEUE_TIME_HISTOGRAMS};
use sloscope_core::schema::{MemorySample, MetricSample};

use crate::server::prometheus::{self, Scrape};

/// Scrapes `url`; `None` when the endpoint does not answer with metrics.
pub async fn scrape(http: &reqwest::Client, url: &str) -> Option<Scrape> {
    let resp = http
        .get(url)
        .timeout(std::time::Duration::from_secs(2))
        .send()
        .await
        .ok()?;
    if !resp.status().is_success() {
        return None;
    }
    Some(prometheus::parse(&resp.text().await.ok()?))
}

/// The series sloscope keeps from a scrape.
pub fn sample(offset_us: u64, s: &Scrape) -> MetricSample {
    let values: BTreeMap<String, f64> = s
        .values
        .iter()
        .filter(|(k, _)| is_kept_series(k))
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    MetricSample { offset_us, values }
}

/// The first queue-time histogram family present in a scrape.
pub fn queue_histogram_family(s: &Scrape) -> Option<&'static str> {
    QUEUE_TIME_HISTOGRAMS
        .iter()
        .copied()
        .find(|f| s.buckets.contains_key(*f))
}

/// Resident memory of every live process in process group `pgid` (a launched server and
/// whatever it started), in MB (10^6 bytes). `None` when no process of the group is alive.
pub fn group_rss_mb(pgid: u32) -> Option<f64> {
    let mut total = None;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // After the command name: state, ppid, pgrp, …
        let mut fields = stat.rsplit(')').next().unwrap_or("").split_whitespace();
        let state = fields.next();
        if state == Some("Z") || fields.nth(1).and_then(|g| g.parse::<u32>().ok()) != Some(pgid) {
            continue;
        }
        if let Some(mb) = rss_mb(pid) {
            *total.get_or_insert(0.0) += mb;
        }
    }
    total
}

/// Resident memory of `pid` in MB (10^6 bytes), from `/proc/<pid>/status`.
pub fn rss_mb(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb * 1024.0 / 1e6)
}

/// GPU memory through NVML, if a driver is present.
pub struct Gpu {
    nvml: Option<nvml_wrapper::Nvml>,
    /// Why there is no GPU reading, for the run's notes.
    pub note: Option<String>,
}

impl Gpu {
    /// Loads NVML (`libnvidia-ml.so`) at run time.
    pub fn init() -> Gpu {
        match nvml_wrapper::Nvml::init() {
            Ok(nvml) => match nvml.device_count() {
                Ok(0) => Gpu {
                    nvml: None,
                    note: Some("NVML loaded but reports no GPU; GPU memory is null".into()),
                },
                Ok(_) => Gpu {
                    nvml: Some(nvml),
                    note: None,
                },
                Err(e) => Gpu {
                    nvml: None,
                    note: Some(format!(
                        "NVML device count failed ({e}); GPU memory is null"
                    )),
                },
            },
            Err(e) => Gpu {
                nvml: None,
                note: Some(format!(
                    "no GPU memory reading: NVML not available ({e}); GPU memory is null"
                )),
            },
        }
    }

    /// Memory in use summed over all devices, MB (10^6 bytes). `None` without NVML or on error.
    pub fn used_mb(&self) -> Option<f64> {
        let nvml = self.nvml.as_ref()?;
        let n = nvml.device_count().ok()?;
        let mut total = 0u64;
        for i in 0..n {
            total += nvml.device_by_index(i).ok()?.memory_info().ok()?.used;
        }
        Some(total as f64 / 1e6)
    }

    /// Each device's total-energy counter, millijoules since the driver loaded (Volta and
    /// later); why not, when a reading is missing.
    pub fn energy_mj(&self) -> Result<Vec<u64>, String> {
        let nvml = self.nvml.as_ref().ok_or("no NVML")?;
        let n = nvml.device_count().map_err(|e| e.to_string())?;
        (0..n)
            .map(|i| {
                let d = nvml.device_by_index(i).map_err(|e| e.to_string())?;
                d.total_energy_consumption()
                    .map_err(|e| format!("GPU {i}: {e}"))
            })
            .collect()
    }

    /// Names and total memory of the devices, for notes.
    pub fn describe(&self) -> Option<String> {
        let nvml = self.nvml.as_ref()?;
        let n = nvml.device_count().ok()?;
        let mut parts = Vec::new();
        for i in 0..n {
            let d = nvml.device_by_index(i).ok()?;
            let name = d.name().unwrap_or_else(|_| "GPU".into());
            let total = d
                .memory_info()
                .map(|m| m.total as f64 / 1e9)
                .unwrap_or(f64::NAN);
            parts.push(format!("{name} ({total:.1} GB)"));
        }
        Some(parts.join(", "))
    }
}

/// One memory sample; `server_group` is the launched server's process group.
pub fn memory(offset_us: u64, gpu: &Gpu, server_group: Option<u32>) -> MemorySample {
    MemorySample {
        offset_us,
        gpu_used_mb: gpu.used_mb(),
        server_rss_mb: server_group.and_then(group_rss_mb),
    }
}

/// Joules used between two readings of the devices' energy counters (millijoules), summed over
/// devices; why not when the readings cannot be compared: another number of devices, or a
/// counter that went backwards (a driver reload, a device reset).
pub fn energy_between(start_mj: &[u64], end_mj: &[u64]) -> Result<f64, String> {
    if start_mj.len() != end_mj.len() || start_mj.is_empty() {
        return Err(format!(
            "{} devices at the start, {} at the end",
            start_mj.len(),
            end_mj.len()
        ));
    }
    let mut total = 0u64;
    for (i, (&a, &b)) in start_mj.iter().zip(end_mj).enumerate() {
        let d = b
            .checked_sub(a)
            .ok_or_else(|| format!("GPU {i}'s energy counter went backwards ({a} → {b} mJ)"))?;
        total += d;
    }
    Ok(total as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::energy_between;

    /// Counter readings as NVML returns them on a two-GPU host (mJ since the driver loaded),
    /// recorded around a repeat, and the cases that cannot give a figure.
    #[test]
    fn energy_from_a_recorded_counter_sequence() {
        let start = [1_234_567_890_u64, 987_654_321];
        let end = [1_234_620_390_u64, 987_700_821];
        assert_eq!(energy_between(&start, &end), Ok(52.5 + 46.5));
        assert_eq!(energy_between(&start, &start), Ok(0.0));
        let back = energy_between(&start, &[1_000, 987_700_821]).unwrap_err();
        assert!(
            back.contains("GPU 0's energy counter went backwards"),
            "{back}"
        );
        let other = energy_between(&start, &end[..1]).unwrap_err();
        assert!(
            other.contains("2 devices at the start, 1 at the end"),
            "{other}"
        );
        assert!(energy_between(&[], &[]).is_err());
    }
}
