//! The output directory, defined once: where run files, journals, server and benchmark logs,
//! and the copies of the plan and the lineage records go. The native load and the
//! external-command path both write through it, so `sloscope analyze DIR` reads either.
//!
//! Every name that becomes part of a file name goes through [`component`]: a plan's names are
//! plain tokens already (the plan is refused otherwise), and anything else is encoded, so no
//! name can make a path leave its directory.

use std::path::{Path, PathBuf};

use sloscope_core::schema::Role;

use crate::error::CollectError;

/// The layout under one output directory.
#[derive(Debug, Clone)]
pub struct Layout {
    root: PathBuf,
}

/// `name` as one path component: letters, digits, `.`, `_`, `+` and `-` kept, every other
/// byte (a separator, `..`'s leading dot, a space, a control character) written `%XX`, and
/// cut to 120 bytes.
pub fn component(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, b) in name.bytes().enumerate() {
        let plain =
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-') || (b == b'.' && i > 0);
        if plain {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
        if out.len() >= 120 {
            break;
        }
    }
    if out.is_empty() {
        out.push_str("%00");
    }
    out
}

/// A name for a message: control characters escaped, cut to 80 characters.
pub fn shown(name: &str) -> String {
    let s: String = name.chars().take(80).flat_map(char::escape_debug).collect();
    if name.chars().count() > 80 {
        format!("{s}…")
    } else {
        s
    }
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
        self.root.join("runs").join(format!(
            "{}--{role}{}.json",
            component(profile),
            component(target)
        ))
    }

    /// The journal beside a run while it is collected.
    pub fn journal(&self, profile: &str, target: &str) -> PathBuf {
        self.root.join("journal").join(format!(
            "{}--{}.journal.jsonl",
            component(profile),
            component(target)
        ))
    }

    /// One trial of a capacity search (candidates only).
    pub fn trial(&self, profile: &str, target: &str, index: u32, over: &str, load: f64) -> PathBuf {
        self.root.join("runs").join(format!(
            "{}--{}--trial{index:02}-{}-{load}.json",
            component(profile),
            component(target),
            component(over)
        ))
    }

    /// The journal of one trial.
    pub fn trial_journal(&self, profile: &str, target: &str, index: u32) -> PathBuf {
        self.root.join("journal").join(format!(
            "{}--{}--trial{index:02}.journal.jsonl",
            component(profile),
            component(target)
        ))
    }

    /// One trial of a profile's configuration search.
    pub fn search_trial(&self, profile: &str, index: u32, purpose: &str, config: &str) -> PathBuf {
        self.root.join("runs").join(format!(
            "{}--search{index:02}-{purpose}--{}.json",
            component(profile),
            component(config)
        ))
    }

    /// The journal of a configuration search's trial.
    pub fn search_journal(&self, profile: &str, index: u32) -> PathBuf {
        self.root.join("journal").join(format!(
            "{}--search{index:02}.journal.jsonl",
            component(profile)
        ))
    }

    /// The server log of a configuration search's trial.
    pub fn search_log(&self, profile: &str, index: u32) -> PathBuf {
        self.server_log(&format!("{profile}--search{index:02}"))
    }

    /// A launched server's log.
    pub fn server_log(&self, target: &str) -> PathBuf {
        self.root
            .join("logs")
            .join(format!("server-{}.log", component(target)))
    }

    /// An external benchmark's output.
    pub fn external_log(&self, profile: &str) -> PathBuf {
        self.root
            .join("logs")
            .join(format!("external-{}.log", component(profile)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_name_leaves_its_directory() {
        let l = Layout::new(Path::new("out"));
        for name in [
            "../../../../x",
            "/etc/passwd",
            "a/b",
            "..",
            ".",
            "",
            "x\0y",
            "np 4",
        ] {
            for p in [
                l.run("latency", Role::Candidate, name),
                l.journal("latency", name),
                l.trial("latency", name, 1, "concurrency", 2.0),
                l.server_log(name),
            ] {
                let rest = p.strip_prefix("out").unwrap();
                assert_eq!(rest.components().count(), 2, "{name:?} -> {}", p.display());
                assert!(
                    rest.components()
                        .all(|c| matches!(c, std::path::Component::Normal(_))),
                    "{name:?} -> {}",
                    p.display()
                );
            }
        }
        assert_eq!(component("np4"), "np4");
        assert_eq!(component("../x"), "%2E.%2Fx");
    }
}
