//! One shard of a plan run over several processes (`sloscope run --shard K/N`, or a Kubernetes
//! Indexed Job's `JOB_COMPLETION_INDEX`). The plan's cells are assigned by the core
//! ([`sloscope_core::analysis::shard_cells`]); this module writes what the attempt leaves
//! beside its runs: `shard.json` when it starts (rewritten when it ends) and, last and
//! atomically, the completion marker `done.json`. An attempt without the marker is partial.
//!
//! Layout: `<out>/<plan sha256>/shard-K-of-N/attempt-<id>/`, where the plan sha256 is that of
//! the `plan.json` copy (the same in every shard of one split).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use sloscope_core::analysis::{assign_shards, shard_cells};
use sloscope_core::schema::{
    Cell, ClockAnchor, Kind, ShardDone, ShardOutcome, ShardRecord, ShardRef, SCHEMA_VERSION,
};

use crate::clock::rfc3339_now;
use crate::failure::StopReason;
use crate::load::runner::Outcome;
use crate::plan::config::RunPlan;
use crate::record::layout::component;
use crate::wire::secret::Redactor;

mod ntp;

/// Which shard of how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// From 0.
    pub index: u32,
    /// At least 1.
    pub count: u32,
}

/// Parses `K/N` (`0 ≤ K < N`).
pub fn parse_split(s: &str) -> Result<Split, String> {
    let bad = || {
        format!(
            "--shard {s:?}: expected K/N with 0 ≤ K < N ≤ {}, e.g. 0/4",
            sloscope_core::checks::MAX_SHARDS
        )
    };
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let index: u32 = k.trim().parse().map_err(|_| bad())?;
    let count: u32 = n.trim().parse().map_err(|_| bad())?;
    split(index, count).ok_or_else(bad)
}

fn split(index: u32, count: u32) -> Option<Split> {
    let max = sloscope_core::checks::MAX_SHARDS;
    (count >= 1 && count <= max && index < count).then_some(Split { index, count })
}

/// The shard a Kubernetes Indexed Job's pod runs: `JOB_COMPLETION_INDEX` of `count`.
pub fn split_from_env(count: u32) -> Result<Split, String> {
    let v = std::env::var("JOB_COMPLETION_INDEX").map_err(|_| {
        "--shard-from-env: JOB_COMPLETION_INDEX is not set (Kubernetes sets it in an Indexed Job's pods)".to_string()
    })?;
    let index: u32 = v.trim().parse().map_err(|_| {
        format!("--shard-from-env: JOB_COMPLETION_INDEX={v:?}: expected a whole number")
    })?;
    split(index, count).ok_or_else(|| {
        format!(
            "--shard-from-env: JOB_COMPLETION_INDEX={index} is not below --shards {count} (at most {})",
            sloscope_core::checks::MAX_SHARDS
        )
    })
}

/// The plan's cells, assigned to `count` shards.
pub fn plan_cells(plan: &RunPlan, count: u32) -> Vec<Cell> {
    let mut p = plan.raw.plan.clone();
    p.profiles.retain(|s| {
        plan.profiles
            .iter()
            .any(|x| s.name.as_deref() == Some(x.name.as_str()))
    });
    p.candidates = plan.candidates.clone();
    let baseline = plan.baseline.as_ref().map(|b| (b.name.as_str(), &b.value));
    let mut cells = shard_cells(&p, baseline);
    assign_shards(&mut cells, count);
    cells
}

/// sha256 of the plan copy as `plan.json` holds it, lower-case hex.
pub fn plan_sha256(plan: &RunPlan, redactor: &Redactor) -> Result<String, String> {
    let value = crate::load::runner::plan_copy(plan, redactor)?;
    let bytes = serde_json::to_vec_pretty(&value).map_err(|e| e.to_string())?;
    Ok(Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The assignment as a table, the given shard marked.
pub fn describe(cells: &[Cell], split: Split) -> String {
    let mut out = format!(
        "{} cells over {} shards (longest first onto the least loaded; estimated decode steps):\n",
        cells.len(),
        split.count
    );
    for k in 0..split.count {
        let mine: Vec<&Cell> = cells.iter().filter(|c| c.shard == k).collect();
        let steps: f64 = mine.iter().map(|c| c.estimated_steps).sum();
        let mark = if k == split.index {
            "  <- this shard"
        } else {
            ""
        };
        out.push_str(&format!("  shard {k}: {steps:.0} steps{mark}\n"));
        for c in mine {
            let role = match c.role {
                sloscope_core::schema::Role::Candidate => "candidate",
                sloscope_core::schema::Role::Baseline => "baseline",
            };
            out.push_str(&format!(
                "    {} {role} {} ({:.0} steps)\n",
                c.id, c.name, c.estimated_steps
            ));
        }
    }
    out
}

/// An attempt in progress.
pub struct Attempt {
    /// Its directory (the output directory of the runs).
    pub dir: PathBuf,
    record: ShardRecord,
}

/// The clocks now.
pub fn anchor() -> ClockAnchor {
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0);
    let mono = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0);
    ClockAnchor {
        wall: rfc3339_now(),
        wall_unix_ns: wall,
        monotonic_ns: mono,
    }
}

/// This attempt's id: the start time, the pod (or host) and the process id.
fn attempt_id(where_: Option<&str>) -> String {
    let t = rfc3339_now().replace(['-', ':'], "");
    let who = where_.map_or_else(String::new, |w| format!("-{}", component(w)));
    format!("{t}{who}-{}", std::process::id())
}

fn host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|s| !s.is_empty())
}

impl Attempt {
    /// Creates the attempt's directory under `root` and writes its `shard.json`.
    pub fn start(
        root: &Path,
        plan_sha256: String,
        split: Split,
        cells: Vec<Cell>,
        hardware: Option<String>,
    ) -> std::io::Result<Attempt> {
        let pod = env("POD_NAME");
        let node = env("NODE_NAME").or_else(host_name);
        let id = attempt_id(pod.as_deref().or(node.as_deref()));
        let dir = root
            .join(&plan_sha256)
            .join(format!("shard-{}-of-{}", split.index, split.count))
            .join(format!("attempt-{id}"));
        std::fs::create_dir_all(&dir)?;
        let record = ShardRecord {
            kind: Kind::Shard,
            schema_version: SCHEMA_VERSION.into(),
            shard: ShardRef {
                plan_sha256,
                index: split.index,
                count: split.count,
                attempt: id,
            },
            cells,
            sloscope_version: env!("CARGO_PKG_VERSION").into(),
            node,
            pod,
            hardware,
            start: anchor(),
            ntp_start: ntp::state(),
            end: None,
            ntp_end: None,
            outcome: None,
            incomplete: Vec::new(),
        };
        let a = Attempt { dir, record };
        crate::record::write::json(&a.dir.join("shard.json"), &a.record)?;
        Ok(a)
    }

    /// What every run of this attempt carries.
    pub fn reference(&self) -> ShardRef {
        self.record.shard.clone()
    }

    /// The cells this shard runs, as (role, name).
    pub fn mine(&self) -> Vec<(sloscope_core::schema::Role, String)> {
        self.record
            .cells
            .iter()
            .filter(|c| c.shard == self.record.shard.index)
            .map(|c| (c.role, c.name.clone()))
            .collect()
    }

    /// The split this attempt is part of.
    pub fn split(&self) -> Split {
        Split {
            index: self.record.shard.index,
            count: self.record.shard.count,
        }
    }

    /// Ends the attempt after its runs: every run that did not finish or was not run is
    /// listed as incomplete.
    pub fn close(self, outcome: &Outcome) -> std::io::Result<()> {
        let incomplete = outcome
            .incomplete
            .iter()
            .chain(&outcome.not_run)
            .cloned()
            .collect();
        self.finish(incomplete)
    }

    /// Rewrites `shard.json` with the end and, last and atomically, writes `done.json`.
    pub fn finish(mut self, incomplete: Vec<String>) -> std::io::Result<()> {
        let outcome = if incomplete.is_empty() {
            ShardOutcome::Ok
        } else {
            ShardOutcome::Incomplete
        };
        self.record.end = Some(anchor());
        self.record.ntp_end = Some(ntp::state());
        self.record.outcome = Some(outcome);
        self.record.incomplete = incomplete;
        crate::record::write::json(&self.dir.join("shard.json"), &self.record)?;
        let done = ShardDone {
            kind: Kind::ShardDone,
            schema_version: SCHEMA_VERSION.into(),
            shard: self.record.shard.clone(),
            finished_at: rfc3339_now(),
            outcome,
        };
        crate::record::write::json(&self.dir.join("done.json"), &done)
    }
}

/// Which shard a `run` is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Which {
    /// The whole plan, in one process.
    Whole,
    /// `--shard K/N`, as given.
    Given(String),
    /// `--shard-from-env`: `JOB_COMPLETION_INDEX` of this many shards.
    FromEnv(u32),
}

/// Why a shard could not be prepared.
#[derive(Debug)]
pub enum ShardError {
    /// The shard arguments (or the pod's index) are not a shard of the split.
    Arguments(String),
    /// The plan copy or the attempt's directory could not be written.
    Output(String),
}

impl std::fmt::Display for ShardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShardError::Arguments(m) | ShardError::Output(m) => f.write_str(m),
        }
    }
}

/// What [`prepare`] decided.
pub enum Prepared {
    /// Not sharded: run the whole plan as it is.
    Whole,
    /// A dry run: the assignment as a table; run nothing.
    DryRun(String),
    /// This shard's attempt has started and the plan is narrowed to its cells.
    Attempt(Box<Attempt>),
}

/// The shard front door: the split, the plan's cells assigned, this shard's attempt started
/// under `root` (its `shard.json` written) and `plan` narrowed to the attempt's cells.
pub fn prepare(
    plan: &mut RunPlan,
    root: &Path,
    which: &Which,
    dry_run: bool,
    redactor: &Redactor,
) -> Result<Prepared, ShardError> {
    let split = match which {
        Which::Given(s) => parse_split(s),
        Which::FromEnv(n) => split_from_env(*n),
        Which::Whole => Ok(Split { index: 0, count: 1 }),
    }
    .map_err(ShardError::Arguments)?;
    let cells = plan_cells(plan, split.count);
    if dry_run {
        return Ok(Prepared::DryRun(describe(&cells, split)));
    }
    if *which == Which::Whole {
        return Ok(Prepared::Whole);
    }
    let sha = plan_sha256(plan, redactor)
        .map_err(|e| ShardError::Output(format!("cannot write the plan copy: {e}")))?;
    let hardware = crate::server::telemetry::Gpu::init().describe();
    let attempt = Attempt::start(root, sha, split, cells, hardware)
        .map_err(|e| ShardError::Output(format!("{}: cannot write: {e}", root.display())))?;
    plan.shard = Some(attempt.reference());
    plan.only = Some(attempt.mine());
    Ok(Prepared::Attempt(Box::new(attempt)))
}

/// Whether an attempt that stopped this way ran to its end: an interrupted attempt, or one
/// that could not write, stays without its completion marker (partial).
pub fn ran_to_end(stop: Option<&StopReason>) -> bool {
    !matches!(stop, Some(StopReason::Interrupted(_)))
        && !stop.is_some_and(StopReason::is_output_failure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits() {
        assert_eq!(parse_split("1/4"), Ok(Split { index: 1, count: 4 }));
        for bad in ["4/4", "0/0", "-1/2", "a/2", "1", "1/2/3", "", "0/4097"] {
            assert!(parse_split(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_monotonic_clock_moves_forward() {
        let (a, b) = (anchor(), anchor());
        assert!(b.monotonic_ns >= a.monotonic_ns && a.monotonic_ns > 0);
        assert!(a.wall_unix_ns > 1_700_000_000_000_000_000);
    }
}
