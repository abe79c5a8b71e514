//! What the benchmarks share: the test kit's server binaries, pinning to a core, and measuring
//! child processes.

use std::process::{Command, Stdio};

pub(crate) fn scripted_server_bin() -> anyhow::Result<std::path::PathBuf> {
    let p = std::env::current_exe()?.with_file_name("scripted-server");
    anyhow::ensure!(
        p.exists(),
        "{} missing: cargo build --release -p sloscope-testkit",
        p.display()
    );
    Ok(p)
}

pub(crate) fn has_taskset() -> bool {
    Command::new("taskset")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

pub(crate) fn child_json(args: &[&str]) -> anyhow::Result<serde_json::Value> {
    let exe = std::env::current_exe()?;
    let mut cmd = if has_taskset() {
        let mut c = Command::new("taskset");
        c.args(["-c", "0"]).arg(exe);
        c
    } else {
        Command::new(exe)
    };
    let out = cmd.arg("collector-child").args(args).output()?;
    anyhow::ensure!(
        out.status.success(),
        "child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(serde_json::from_slice(&out.stdout)?)
}
