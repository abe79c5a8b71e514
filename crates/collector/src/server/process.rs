//! Launching a server per candidate: fill the command template, start it in a process group of
//! its own with its output in a log file, wait for `/health`, and stop the whole group (SIGTERM,
//! then SIGKILL), recording its exit status and the tail of its log.
//!
//! Nothing the collector starts may outlive it. The server's process group is signalled as a
//! whole, so a wrapper (`sh -c '… llama-server …'`) cannot orphan the real server; and a
//! watchdog (`/bin/sh` blocked reading a pipe that only the collector holds open, in a group of
//! its own) kills the server's group when that pipe closes, which the kernel does however the
//! collector ends, SIGKILL included. (The crate forbids `unsafe`, so no `PR_SET_PDEATHSIG` in
//! a `pre_exec` hook; the watchdog also covers what that cannot: the wrapper's children.)
//!
//! The server's exit is observed the moment it happens (a task awaiting the child, not a
//! poll): it cancels the target's flag with [`StopReason::ServerExited`], so the exit is
//! charged to the run in flight.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::sync::watch;

use crate::cancel::Cancel;
use crate::failure::StopReason;
use crate::plan::template::fill_template;
use crate::wire::secret::Secret;

/// A running server the collector started.
pub struct Launched {
    /// Process id of the direct child, which leads the server's process group.
    pub pid: u32,
    /// Argument vector.
    pub command: Vec<String>,
    /// Base URL on 127.0.0.1.
    pub base_url: String,
    /// Spawn → healthy, seconds.
    pub startup_s: f64,
    /// Where its stdout and stderr go.
    pub log_path: PathBuf,
    exit: watch::Receiver<Option<ExitStatus>>,
    stopping: std::sync::Arc<std::sync::atomic::AtomicBool>,
    watchdog: Option<std::process::Child>,
}

/// Why a launch did not give a healthy server.
#[derive(Debug)]
pub enum LaunchError {
    /// The collection was cancelled while waiting (Ctrl-C): nothing to record.
    Cancelled,
    /// The server could not be started or never became healthy.
    Failed(String),
}

/// What a launch needs.
pub struct LaunchSpec<'a> {
    /// Command template.
    pub template: &'a str,
    /// Placeholder values (`{port}` is added).
    pub vars: &'a BTreeMap<String, String>,
    /// The server's log file.
    pub log_path: &'a Path,
    /// Health path.
    pub health_path: &'a str,
    /// How long to wait for health.
    pub health_timeout: Duration,
    /// Sent as a bearer token with health checks.
    pub api_key: Option<&'a Secret>,
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

/// Kills process group `pgid` once the watchdog's stdin reaches end of file (the collector
/// is gone or let go of it): SIGTERM, up to 10 s, then SIGKILL.
/// (POSIX `kill` with a negative pid; dash's `kill` takes no `--`.)
const WATCHDOG: &str = r#"read _ ; kill -TERM -"$1" 2>/dev/null; kill -CONT -"$1" 2>/dev/null; i=0
while [ "$i" -lt 100 ] && kill -0 -"$1" 2>/dev/null; do sleep 0.1; i=$((i+1)); done
kill -KILL -"$1" 2>/dev/null; exit 0"#;

fn spawn_watchdog(pgid: u32) -> Option<std::process::Child> {
    use std::os::unix::process::CommandExt as _;
    std::process::Command::new("/bin/sh")
        .args(["-c", WATCHDOG, "sloscope-watchdog", &pgid.to_string()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        // Its own group: a terminal's Ctrl-C must not kill it before it is needed.
        .process_group(0)
        .spawn()
        .ok()
}

/// Starts the server and waits until `health_path` answers 200. `target` is cancelled with
/// [`StopReason::ServerExited`] when the server exits without being asked to.
pub async fn launch(
    spec: &LaunchSpec<'_>,
    cancel: &Cancel,
    target: &Cancel,
) -> Result<Launched, LaunchError> {
    let failed = LaunchError::Failed;
    let port = free_port().map_err(|e| failed(format!("no free port on 127.0.0.1: {e}")))?;
    let mut vars = spec.vars.clone();
    vars.insert("port".into(), port.to_string());
    // Split first, then fill each word: a value (a model path with a space, a name) is one
    // argument, never several, and never shell syntax.
    let words = shell_words::split(spec.template)
        .map_err(|e| failed(format!("server command {:?}: {e}", spec.template)))?;
    let argv = words
        .iter()
        .map(|w| fill_template(w, &vars))
        .collect::<Result<Vec<String>, String>>()
        .map_err(failed)?;
    let Some((prog, args)) = argv.split_first() else {
        return Err(failed("server command is empty".into()));
    };
    let log_path = spec.log_path;
    let log = std::fs::File::create(log_path)
        .map_err(|e| failed(format!("{}: cannot create: {e}", log_path.display())))?;
    let log2 = log
        .try_clone()
        .map_err(|e| failed(format!("{}: {e}", log_path.display())))?;
    let spawned = Instant::now();
    let mut cmd = tokio::process::Command::new(prog);
    cmd.args(args)
        .stdin(std::process::Stdio::null())
        .stdout(log)
        .stderr(log2)
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd
        .spawn()
        .map_err(|e| failed(format!("cannot start {prog:?}: {e}")))?;
    let pid = child.id().unwrap_or(0);
    let watchdog = spawn_watchdog(pid);
    let (tx, exit) = watch::channel(None);
    let stopping = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let stopping = stopping.clone();
        let target = target.clone();
        tokio::spawn(async move {
            let status = child.wait().await;
            if let Ok(s) = status {
                if !stopping.load(std::sync::atomic::Ordering::SeqCst) {
                    target.cancel(StopReason::ServerExited(describe(s)));
                }
                let _ = tx.send(Some(s));
            }
        });
    }
    let mut l = Launched {
        pid,
        command: argv.clone(),
        base_url: format!("http://127.0.0.1:{port}"),
        startup_s: 0.0,
        log_path: log_path.to_path_buf(),
        exit,
        stopping,
        watchdog,
    };
    match wait_healthy(&mut l, spec, cancel, spawned).await {
        Ok(()) => {
            l.startup_s = spawned.elapsed().as_secs_f64();
            Ok(l)
        }
        Err(e) => {
            l.stop().await;
            Err(e)
        }
    }
}

async fn wait_healthy(
    l: &mut Launched,
    spec: &LaunchSpec<'_>,
    cancel: &Cancel,
    spawned: Instant,
) -> Result<(), LaunchError> {
    // A redirect is not health: another address's 200 must not pass for this server's.
    let mut b = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(2));
    if let Some(k) = spec.api_key {
        b = b.default_headers(k.auth_headers());
    }
    let http = b.build().map_err(|e| LaunchError::Failed(e.to_string()))?;
    let url = format!("{}{}", l.base_url, spec.health_path);
    loop {
        if let Some(status) = l.exit_status() {
            let tail = log_tail(&l.log_path, 20).unwrap_or_default();
            return Err(LaunchError::Failed(format!(
                "server exited ({}) before it was healthy; log tail:\n{tail}",
                describe(status)
            )));
        }
        if cancel.is_cancelled() {
            return Err(LaunchError::Cancelled);
        }
        let probe = async {
            match http.get(&url).send().await {
                Ok(r) => r.status().is_success(),
                Err(_) => false,
            }
        };
        let healthy = tokio::select! {
            h = probe => h,
            _ = cancel.cancelled() => return Err(LaunchError::Cancelled),
        };
        if healthy {
            return Ok(());
        }
        if spawned.elapsed() > spec.health_timeout {
            let tail = log_tail(&l.log_path, 20).unwrap_or_default();
            return Err(LaunchError::Failed(format!(
                "server not healthy at {url} after {:?}; log tail:\n{tail}",
                spec.health_timeout
            )));
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            _ = cancel.cancelled() => return Err(LaunchError::Cancelled),
        }
    }
}

/// An exit status as a person reads it: `exit code 1`, `killed by SIGKILL`.
pub fn describe(s: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(sig)) => match Signal::try_from(sig) {
            Ok(name) => format!("killed by {name}"),
            Err(_) => format!("killed by signal {sig}"),
        },
        _ => s.to_string(),
    }
}

impl Launched {
    /// `Some(status)` once the server process has exited.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        *self.exit.borrow()
    }

    /// Waits up to `d` for the server to exit; its status if it did.
    pub async fn exited_within(&self, d: Duration) -> Option<ExitStatus> {
        let mut rx = self.exit.clone();
        let waited = tokio::time::timeout(d, rx.wait_for(|s| s.is_some())).await;
        match waited {
            Ok(Ok(s)) => *s,
            _ => self.exit_status(),
        }
    }

    /// Stops the server's whole process group: SIGTERM, up to 10 s, then SIGKILL. Returns the
    /// exit code (`None` when killed by a signal) and the log tail.
    pub async fn stop(mut self) -> (Option<i32>, Option<String>) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        // The collector does the stopping itself; the watchdog is for when it cannot.
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        let group = Pid::from_raw(self.pid as i32);
        if self.exit_status().is_none() {
            let _ = killpg(group, Signal::SIGTERM);
            // A stopped (SIGSTOP) server only acts on SIGTERM once continued.
            let _ = killpg(group, Signal::SIGCONT);
            if self.exited_within(Duration::from_secs(10)).await.is_none() {
                let _ = killpg(group, Signal::SIGKILL);
                self.exited_within(Duration::from_secs(5)).await;
            }
        }
        // Whatever the leader left behind in its group (a wrapper's children).
        let _ = killpg(group, Signal::SIGKILL);
        let code = self.exit_status().and_then(|s| s.code());
        (code, log_tail(&self.log_path, 20))
    }
}
