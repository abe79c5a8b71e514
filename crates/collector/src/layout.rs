//! The output directory, defined once: where run files, journals, server and benchmark logs,
//! and the copies of the plan and the lineage records go. The native load and the
//! external-command path both write through it, so `sloscope analyze DIR` reads either.

use std::path::{Path, PathBuf};

use sloscope_core::schema::Role;

use crate::error::CollectError;

/// The layout under one output directory.
#[derive(Debug, Clone)]
pub struct Layout {
    root: PathBuf,
}

/// Lineage record copies, in the order the plan names them.
pub const LINEAGE_COPIES: [&str; 3] = ["gate", "baseline", "deployment"];

impl Layout {
    /// The layout under `root`.
    pub fn new(root: &Path) -> Layout {
        Layout {
            root: root.to_path_buf(),
        }
    }

    /// Creates the directories.
    pub fn create(&self) -> Result<(), CollectError> {
        for d in ["runs", "lineage", "journal", "logs"] {
            let dir = self.root.join(d);
            std::fs::create_dir_all(&dir).map_err(CollectError::write(dir))?;
        }
        Ok(())
    }

    /// The output directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The plan as run.
    pub fn plan(&self) -> PathBuf {
        self.root.join("plan.json")
    }

    /// A lineage record copy (`gate`, `baseline`, `deployment`).
    pub fn lineage(&self, kind: &str) -> PathBuf {
        self.root.join("lineage").join(format!("{kind}.json"))
    }

    /// The run file of one target under one profile.
    pub fn run(&self, profile: &str, role: Role, target: &str) -> PathBuf {
        let role = match role {
            Role::Candidate => "",
            Role::Baseline => "baseline-",
        };
        self.root
            .join("runs")
            .join(format!("{profile}--{role}{target}.json"))
    }

    /// The journal beside a run while it is collected.
    pub fn journal(&self, profile: &str, target: &str) -> PathBuf {
        self.root
            .join("journal")
            .join(format!("{profile}--{target}.journal.jsonl"))
    }

    /// One trial of a capacity search (candidates only).
    pub fn trial(&self, profile: &str, target: &str, index: u32, over: &str, load: f64) -> PathBuf {
        self.root.join("runs").join(format!(
            "{profile}--{target}--trial{index:02}-{over}-{load}.json"
        ))
    }

    /// The journal of one trial.
    pub fn trial_journal(&self, profile: &str, target: &str, index: u32) -> PathBuf {
        self.root.join("journal").join(format!(
            "{profile}--{target}--trial{index:02}.journal.jsonl"
        ))
    }

    /// A launched server's log.
    pub fn server_log(&self, target: &str) -> PathBuf {
        self.root.join("logs").join(format!("server-{target}.log"))
    }

    /// An external benchmark's output.
    pub fn external_log(&self, profile: &str) -> PathBuf {
        self.root
            .join("logs")
            .join(format!("external-{profile}.log"))
    }
}
