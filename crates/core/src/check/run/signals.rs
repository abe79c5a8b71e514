//! What a run's serving signals may be, bounded by physics and by the run's own word:
//!
//! - **Shares** (a failure rate, a goodput ratio, a cache hit rate) lie in [0, 1], and goodput
//!   (tokens or requests per second that met every SLO) is at most the throughput it is part
//!   of: a tool's reported summary that says otherwise is refused ([`reported`]).
//! - **GPU energy** is what the recorded hardware can draw: a run on hardware that names no GPU,
//!   a run whose notes say energy was not measured, or a repeat whose mean power is above
//!   [`MAX_GPU_W`] per GPU named (or below [`MIN_GPU_W`]) holds an energy reading that is not
//!   one: the run is flagged, and its energy figures are `null` in every output
//!   ([`energy_doubt`]), never a number beside the note.
//! - **Sampled shares** (the KV cache's fill: vLLM's `kv_cache_usage_perc`, SGLang's
//!   `token_usage`, llama.cpp's `kv_cache_usage_ratio`, all fractions despite their names) lie in
//!   [0, 1]: a run whose server sampled one outside it is flagged and the KV cache's peak is
//!   `null` in every output ([`share_doubt`]).

use crate::check::invariant::{Invariant, Violation};
use crate::schema::Run;

/// The most one GPU draws, W (a GB200 board is 1,200 W; headroom for a brief excursion).
pub const MAX_GPU_W: f64 = 1500.0;
/// The least a powered GPU draws, W (idle boards draw tens of watts).
pub const MIN_GPU_W: f64 = 5.0;

/// A tool's reported shares out of [0, 1], or goodput above its throughput.
pub(crate) fn reported(run: &Run) -> Result<(), Violation> {
    let Some(rep) = &run.reported else {
        return Ok(());
    };
    let get = |k: &str| rep.get(k).copied().flatten();
    for k in ["failure_rate", "goodput_ratio"] {
        if let Some(v) = get(k).filter(|v| *v > 1.0) {
            return Err(Violation::new(
                Invariant::SignalsBounded,
                format!("$.reported.{k}"),
                format!("{v}: expected a share in [0, 1]"),
            ));
        }
    }
    for (good, all) in [
        ("goodput_tps", "throughput_tps"),
        ("goodput_rps", "request_throughput_rps"),
    ] {
        if let (Some(g), Some(t)) = (get(good), get(all)) {
            if g > t * (1.0 + 1e-6) + 1e-9 {
                return Err(Violation::new(
                    Invariant::SignalsBounded,
                    format!("$.reported.{good}"),
                    format!(
                        "{g} is more than the {all} {t} it is part of: goodput counts only the \
                         requests that met every SLO"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// GPUs the hardware string names (`2x NVIDIA H100 …`, or each `NVIDIA` mention); 0 for a CPU.
fn gpus(hardware: &str) -> u32 {
    let h = hardware.to_ascii_lowercase();
    if !["nvidia", "gpu", "amd instinct", "radeon", "gaudi", " tpu"]
        .iter()
        .any(|g| h.contains(g))
    {
        return 0;
    }
    let counted = h
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find_map(|w| w.strip_suffix('x').and_then(|n| n.parse::<u32>().ok()))
        .filter(|n| (1..=256).contains(n));
    counted.unwrap_or_else(|| h.matches("nvidia").count().max(1) as u32)
}

/// Why the run's GPU energy readings are not energy the recorded hardware drew, if they are not.
pub fn energy_doubt(run: &Run) -> Option<String> {
    let readings: Vec<(u32, f64, f64)> = run
        .repeats
        .iter()
        .filter_map(|r| {
            let j = r.gpu_energy_j?;
            let span = window_s(&r.requests)?;
            Some((r.index, j, span))
        })
        .collect();
    if readings.is_empty() {
        return None;
    }
    if let Some(n) = run
        .notes
        .iter()
        .find(|n| n.starts_with("GPU energy: not measured"))
    {
        return Some(format!(
            "the run says {n:?}, yet its repeats hold energy readings"
        ));
    }
    let n = gpus(&run.hardware);
    if n == 0 {
        return Some(format!(
            "the run's hardware ({:?}) names no GPU, yet its repeats hold GPU energy readings",
            run.hardware
        ));
    }
    let (max, min) = (MAX_GPU_W * f64::from(n), MIN_GPU_W * f64::from(n));
    readings.iter().find_map(|&(index, j, span)| {
        let w = j / span;
        (w > max || w < min).then(|| {
            format!(
                "repeat {index}'s GPU energy {j:.0} J over its {span:.1} s is a mean power of \
                 {w:.0} W, outside what {n} GPU(s) draw ({min:.0}–{max:.0} W)"
            )
        })
    })
}

/// A repeat's measured window, seconds (first send to last end), when it has one.
fn window_s(r: &crate::schema::RequestColumns) -> Option<f64> {
    let first = *r.send_offset_us.first()?;
    let last = (0..r.len())
        .filter_map(|i| r.e2e_us[i].map(|e| r.send_offset_us[i] + e))
        .max()?;
    (last > first).then(|| (last - first) as f64 / 1e6)
}

/// Why the run's sampled KV-cache fill is not a share, if it is not: the first sample outside
/// [0, 1].
pub fn share_doubt(run: &Run) -> Option<String> {
    use crate::base::telemetry::{first_present, KV_USAGE_SERIES};
    run.repeats.iter().find_map(|rep| {
        rep.server_metrics.iter().find_map(|m| {
            let (name, v) = first_present(&m.values, &KV_USAGE_SERIES)?;
            (!(0.0..=1.0).contains(&v)).then(|| {
                format!(
                    "repeat {}'s server sampled {name} = {v} at {} µs: a fraction of the cache, \
                     expected within [0, 1]",
                    rep.index, m.offset_us
                )
            })
        })
    })
}

/// The energy and share invariants, flagged.
pub(crate) fn check(run: &Run, out: &mut Vec<Violation>) {
    if let Some(why) = share_doubt(run) {
        out.push(Violation::new(
            Invariant::SharesBounded,
            "$.repeats[].server_metrics[].values",
            format!("{why}: the KV cache's peak is not believed (null)"),
        ));
    }
    if let Some(why) = energy_doubt(run) {
        out.push(Violation::new(
            Invariant::EnergyBounded,
            "$.repeats[].gpu_energy_j",
            format!("{why}: its energy figures are not believed (null)"),
        ));
    }
}
