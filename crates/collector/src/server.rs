//! Launching a server per candidate: fill the command template, start it with its output in a
//! log file, wait for `/health`, and stop it by PID (SIGTERM, then SIGKILL) recording its exit
//! status and the tail of its log.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::config::fill_template;

/// A running server the collector started.
pub struct Launched {
    child: tokio::process::Child,
    /// Process id.
    pub pid: u32,
    /// Argument vector.
    pub command: Vec<String>,
    /// Base URL on 127.0.0.1.
    pub base_url: String,
    /// Spawn → healthy, seconds.
    pub startup_s: f64,
    /// Where its stdout and stderr go.
    pub log_path: PathBuf,
}

/// A free TCP port on 127.0.0.1 (bound and released; the server binds it right after).
pub fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// The last `lines` lines of a file.
pub fn log_tail(path: &Path, lines: usize) -> Option<String> {
    let text = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&text);
    let all: Vec<&str> = text.lines().collect();
    Some(all[all.len().saturating_sub(lines)..].join("\n"))
}

/// Starts the server and waits until `health_path` answers 200.
pub async fn launch(
    template: &str,
    vars: &BTreeMap<String, String>,
    log_path: &Path,
    health_path: &str,
    health_timeout: Duration,
) -> Result<Launched, String> {
    let port = free_port().map_err(|e| format!("no free port on 127.0.0.1: {e}"))?;
    let mut vars = vars.clone();
    vars.insert("port".into(), port.to_string());
    let line = fill_template(template, &vars)?;
    let argv = shell_words::split(&line).map_err(|e| format!("server command {line:?}: {e}"))?;
    let Some((prog, args)) = argv.split_first() else {
        return Err("server command is empty".into());
    };
    let log = std::fs::File::create(log_path)
        .map_err(|e| format!("{}: cannot create: {e}", log_path.display()))?;
    let log2 = log
        .try_clone()
        .map_err(|e| format!("{}: {e}", log_path.display()))?;
    let spawned = Instant::now();
    let mut child = tokio::process::Command::new(prog)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(log)
        .stderr(log2)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {prog:?}: {e}"))?;
    let pid = child.id().unwrap_or(0);
    let base_url = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(2))
        .build()
        .map_err(|e| e.to_string())?;
    let url = format!("{base_url}{health_path}");
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let tail = log_tail(log_path, 20).unwrap_or_default();
            return Err(format!(
                "server exited with {status} before it was healthy; log tail:\n{tail}"
            ));
        }
        if let Ok(r) = http.get(&url).send().await {
            if r.status().is_success() {
                break;
            }
        }
        if spawned.elapsed() > health_timeout {
            let _ = child.kill().await;
            let tail = log_tail(log_path, 20).unwrap_or_default();
            return Err(format!(
                "server not healthy at {url} after {health_timeout:?}; log tail:\n{tail}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(Launched {
        child,
        pid,
        command: argv,
        base_url,
        startup_s: spawned.elapsed().as_secs_f64(),
        log_path: log_path.to_path_buf(),
    })
}

impl Launched {
    /// `Some(status)` once the process has exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Stops the server: SIGTERM, up to 10 s, then SIGKILL. Returns the exit code (`None` when
    /// killed by a signal) and the log tail.
    pub async fn stop(mut self) -> (Option<i32>, Option<String>) {
        if self.exited().is_none() {
            use nix::sys::signal::{kill, Signal};
            let _ = kill(nix::unistd::Pid::from_raw(self.pid as i32), Signal::SIGTERM);
            if tokio::time::timeout(Duration::from_secs(10), self.child.wait())
                .await
                .is_err()
            {
                let _ = self.child.kill().await;
            }
        }
        let code = self.child.wait().await.ok().and_then(|s| s.code());
        (code, log_tail(&self.log_path, 20))
    }
}
