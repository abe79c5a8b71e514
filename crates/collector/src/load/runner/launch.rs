//! Reaching a target: its endpoint, or the server sloscope launches for it (the command filled
//! per word, credentials redacted from its log), and the failed runs a server that did not
//! start leaves.

use std::time::Duration;

use sloscope_core::schema::{EvidenceLevel, RunStatus, ServerInfo};

use super::{skeleton, RunCtx};
use crate::cancel::Cancel;
use crate::error::CollectError;
use crate::plan::target::TargetSpec;
use crate::record::write;
use crate::server::process::{self, LaunchError, Launched};
use crate::server::target;
use crate::wire::secret::redact_run;

/// How a target's server was reached.
pub(super) enum Reached {
    /// At this base URL; `Some` when sloscope launched it.
    Up(String, Option<Launched>),
    /// The launch failed (failed run files are written).
    Failed,
    /// Cancelled before the server was healthy.
    Cancelled,
}

impl RunCtx<'_> {
    /// Rewrites the server's log with every credential redacted (a server may echo its
    /// command line).
    pub(super) fn redact_log(&self, log: &std::path::Path) {
        if self.opts.redactor.is_empty() {
            return;
        }
        if let Ok(bytes) = std::fs::read(log) {
            let text = String::from_utf8_lossy(&bytes);
            let clean = self.opts.redactor.text(&text);
            if clean != text {
                let _ = write::atomic(log, clean.as_bytes());
            }
        }
    }

    /// The base URL of the target's server, launching it when the plan says so.
    pub(super) async fn reach(
        &mut self,
        t: &TargetSpec,
        tc: &Cancel,
    ) -> Result<Reached, CollectError> {
        let cmd = match (&t.command, &t.endpoint) {
            (Some(cmd), _) => cmd,
            (None, Some(ep)) => return self.endpoint_ready(t, ep, tc).await,
            (None, None) => {
                return Err(CollectError::Plan(format!(
                    "target {}: no endpoint and no server command",
                    t.name
                )))
            }
        };
        let log = match &t.search {
            Some(s) => self.layout.search_log(&s.profile, s.step.index),
            None => self.layout.server_log(&t.name),
        };
        self.progress.say(&match &t.search {
            Some(_) => format!("starting server for {}", t.name),
            None => format!(
                "starting server for {} ({} = {})",
                t.name, self.plan.raw.plan.knob, t.value
            ),
        });
        let key = self.opts.api_key.as_ref();
        let Some(launched) = target::launch(self.plan, t, &log, key, self.cancel, tc).await else {
            return Err(CollectError::Plan(format!(
                "target {}: no server command",
                t.name
            )));
        };
        match launched {
            Ok(mut l) => {
                l.command = l
                    .command
                    .iter()
                    .map(|a| self.opts.redactor.text(a))
                    .collect();
                self.progress.say(&format!(
                    "  healthy after {:.1}s at {} (pid {})",
                    l.startup_s, l.base_url, l.pid
                ));
                Ok(Reached::Up(l.base_url.clone(), Some(l)))
            }
            Err(LaunchError::Cancelled) => Ok(Reached::Cancelled),
            Err(LaunchError::Failed(e)) => {
                self.redact_log(&log);
                let e = self.opts.redactor.text(&e);
                self.progress
                    .warn(&format!("the server for {} did not start: {e}", t.name));
                self.record_failed_start(t, cmd, &log, &e)?;
                Ok(Reached::Failed)
            }
        }
    }

    /// An endpoint sloscope did not launch is measured once it is ready: at once where its
    /// health path answers anything but 502–504 (2xx; or no health path, 404; or a refused
    /// connection, which the measurement itself reports), and where it answers 502–504 (a
    /// server still loading its model, a proxy before one) once it answers otherwise, polled
    /// every half second up to the health timeout. One still loading then is not measured:
    /// each profile is listed as not run, with its last answer.
    async fn endpoint_ready(
        &mut self,
        t: &TargetSpec,
        ep: &str,
        tc: &Cancel,
    ) -> Result<Reached, CollectError> {
        let tgt = &self.plan.raw.target;
        let url = format!("{ep}{}", tgt.health_path);
        let timeout = Duration::from_secs_f64(tgt.health_timeout_s);
        let mut b = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(2));
        if let Some(k) = &self.opts.api_key {
            b = b.default_headers(k.auth_headers());
        }
        let http = b.build().map_err(|e| CollectError::Plan(e.to_string()))?;
        let started = std::time::Instant::now();
        loop {
            let status = match http.get(&url).send().await {
                Ok(r) => r.status().as_u16(),
                Err(_) => return Ok(Reached::Up(ep.to_string(), None)),
            };
            if !(502..=504).contains(&status) {
                return Ok(Reached::Up(ep.to_string(), None));
            }
            if started.elapsed() > timeout {
                let why = format!(
                    "the endpoint was not ready: {url} still answered HTTP {status} after {:?} \
                     (health_timeout_s)",
                    timeout
                );
                self.progress.warn(&format!("{}: {why}", t.name));
                self.not_run(t, &why);
                return Ok(Reached::Failed);
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                _ = tc.cancelled() => return Ok(Reached::Cancelled),
            }
        }
    }

    pub(super) fn record_failed_start(
        &mut self,
        t: &TargetSpec,
        cmd: &str,
        log: &std::path::Path,
        why: &str,
    ) -> Result<(), CollectError> {
        let searched = t.search.as_ref().map(|s| s.profile.as_str());
        for p in &self.plan.profiles {
            if searched.is_some_and(|s| s != p.name.as_str()) {
                continue;
            }
            let mut run = skeleton(self.plan, t, p, None);
            run.status = RunStatus::Failed;
            run.evidence_level = EvidenceLevel::FailedBackendProfile;
            run.failure = Some(format!("server did not start: {why}"));
            run.server = Some(ServerInfo {
                command: shell_words::split(cmd).unwrap_or_default(),
                exit_status: None,
                startup_s: None,
                log_tail: process::log_tail(log, 20),
            });
            redact_run(&self.opts.redactor, &mut run);
            let path = match &t.search {
                Some(s) => self.layout.search_trial(
                    p.name.as_str(),
                    s.step.index,
                    s.step.purpose.as_str(),
                    &t.name,
                ),
                None => self.layout.run(p.name.as_str(), t.role, &t.name),
            };
            write::json_compact(&path, &run).map_err(CollectError::write(path.clone()))?;
            // A search trial that did not start is an infeasible configuration, a result.
            if t.search.is_none() {
                self.outcome.incomplete.push(path.display().to_string());
            }
            self.outcome.runs.push(path);
        }
        Ok(())
    }
}
