//! A profile's configuration search (the plan's `[space]`), driven live: the core's
//! [`Explorer`] says which configuration to launch and with how many requests; each trial
//! launches the server with the configuration's knobs in its command, measures the profile and
//! writes one run file with `search` set (a launch that fails is an infeasible trial, written
//! as a failed run with its reason). The server stays up until the next step is known: an
//! `extend` trial measures on it again (no new launch). The trial files are the journal: an
//! interrupted search is resumed from them with the same `--out`, replayed by the same core
//! code the analysis uses, so it goes on exactly where the analysis expects.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sloscope_core::checks::Profile;
use sloscope_core::schema::{KnobValue, Purpose, Role, Run, SearchStep, ServerReport, SpaceSpec};
use sloscope_core::search::{self, Config, Explorer, Outcome, Step};

use super::launch::Reached;
use super::{Measure, RunCtx};
use crate::cancel::Cancel;
use crate::error::CollectError;
use crate::plan::target::{SearchTarget, TargetSpec};
use crate::server::process::Launched;
use crate::wire::client::Client;

/// A search trial's file and run (with its requests).
type Trial = (String, Run);

/// The server the last trial measured on, kept up until the search says whether it extends
/// that trial.
struct Live {
    config: Config,
    base: String,
    client: Client,
    launched: Option<Launched>,
    reported: ServerReport,
    tc: Cancel,
}

/// What launching a trial's server came to.
enum Launch {
    Up(Box<Live>),
    /// The launch failed: the infeasible trial's file and run.
    Failed(Box<Trial>),
    Cancelled,
}

impl RunCtx<'_> {
    /// Runs (or resumes) the configuration search of `p`.
    pub(super) async fn run_space_search(
        &mut self,
        spec: &SpaceSpec,
        p: &Profile,
    ) -> Result<(), CollectError> {
        let mut trials = self.earlier_trials(p)?;
        let borrowed: Vec<(&str, &Run)> = trials.iter().map(|(f, r)| (f.as_str(), r)).collect();
        let (mut e, report) = search::replay(spec, p, &borrowed)
            .map_err(|e| CollectError::Plan(format!("space: {e}")))?;
        if report.status == search::SearchStatus::Refused {
            return Err(CollectError::Plan(format!(
                "{}: the search's trial files in {} are not this plan's search ({}): use another --out",
                p.name,
                self.layout.root().display(),
                report.problem.unwrap_or_default()
            )));
        }
        trials.truncate(report.trials.len());
        self.progress
            .say(&format!("search {}: {}", p.name, report.space));
        if !trials.is_empty() {
            self.progress.say(&format!(
                "  resuming after the {} trials already in {}",
                trials.len(),
                self.layout.root().display()
            ));
        }
        let started = Instant::now();
        let mut live: Option<Live> = None;
        loop {
            if self.cancel.is_cancelled() {
                self.outcome.not_run.push(format!(
                    "{} / search: stopped after {} trials: {}",
                    p.name,
                    e.trials().len(),
                    self.cancel.message()
                ));
                break;
            }
            if spec
                .budget
                .wall_time_s
                .is_some_and(|b| started.elapsed().as_secs_f64() >= b)
            {
                e.stop_exploring();
            }
            let Step::Launch {
                config,
                requests,
                purpose,
            } = e.next()
            else {
                break;
            };
            if purpose != Purpose::Extend || live.as_ref().is_some_and(|l| l.config != config) {
                self.stop_live(live.take()).await;
            }
            let step = SearchStep {
                index: e.trials().len() as u32,
                purpose,
                config: e.space().values(&config).into_iter().collect(),
                requests,
                walk: Some(e.settings().walk),
            };
            let name = e.space().name(&config);
            let trial = self.search_trial(p, name, step, &config, &mut live).await;
            let trial = match trial {
                Ok(Some(t)) => t,
                Ok(None) => break,
                Err(err) => {
                    self.stop_live(live.take()).await;
                    return Err(err);
                }
            };
            let all: Vec<(&str, &Run)> = trials.iter().map(|(f, r)| (f.as_str(), r)).collect();
            let earlier = search::pooled_with(e.space(), &all, &config);
            let this = (trial.0.as_str(), &trial.1);
            let Some(outcome) = search::trial_outcome(this, purpose, &earlier, p) else {
                break;
            };
            self.say_trial(&e, &outcome);
            e.record(config, purpose, requests, outcome);
            trials.push(trial);
        }
        self.stop_live(live.take()).await;
        self.say_search(p, &e);
        Ok(())
    }

    /// Stops the server kept up after a trial.
    async fn stop_live(&self, live: Option<Live>) {
        if let Some(l) = live.and_then(|l| l.launched) {
            let log = l.log_path.clone();
            l.stop().await;
            self.redact_log(&log);
        }
    }

    /// The search trials of `p` already in the output directory (an interrupted search's).
    fn earlier_trials(&self, p: &Profile) -> Result<Vec<Trial>, CollectError> {
        let dir = self.layout.root().join("runs");
        let prefix = format!(
            "{}--search",
            crate::record::layout::component(p.name.as_str())
        );
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(out);
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|d| d.ok().map(|d| d.path()))
            .filter(|f| {
                f.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".json"))
            })
            .collect();
        paths.sort();
        for path in paths {
            out.push((path.display().to_string(), read_trial(&path)?));
        }
        Ok(out)
    }

    /// Measures `p` for one trial: on `live` when the trial extends the one before (its server
    /// still up), else on a server launched for it, which is left in `live` (a failed launch
    /// is the failed run it left); `None` when cancelled.
    async fn search_trial(
        &mut self,
        p: &Profile,
        name: String,
        step: SearchStep,
        config: &Config,
        live: &mut Option<Live>,
    ) -> Result<Option<Trial>, CollectError> {
        let t = self.search_target(p, name, step.clone());
        let again = if live.is_some() {
            " on the same launch"
        } else {
            ""
        };
        self.progress.say(&format!(
            "  trial {} ({}): {} with {} requests{again}",
            step.index + 1,
            step.purpose.as_str(),
            t.name,
            step.requests,
        ));
        if live.is_none() {
            match self.launch_trial(p, &t, &step, config).await? {
                Launch::Up(l) => *live = Some(*l),
                Launch::Failed(trial) => return Ok(Some(*trial)),
                Launch::Cancelled => return Ok(None),
            }
        }
        let Some(l) = live.as_ref() else {
            return Ok(None);
        };
        let mut tp = p.clone();
        let per = p.workload.requests_per_repeat.unwrap_or(1).max(1);
        tp.workload.repeats = Some(((step.requests as i64) + per - 1) / per);
        tp.search = None;
        let m = Measure {
            t: &t,
            client: &l.client,
            base: &l.base,
            launched: l.launched.as_ref(),
            tc: &l.tc,
            reported: &l.reported,
        };
        let (path, run) = self.measure(&m, &tp, None).await?;
        Ok(Some((path.display().to_string(), run)))
    }

    /// Launches the server of a trial's configuration and probes what it reports; a launch
    /// that fails is the failed run it left in the output directory.
    async fn launch_trial(
        &mut self,
        p: &Profile,
        t: &TargetSpec,
        step: &SearchStep,
        config: &Config,
    ) -> Result<Launch, CollectError> {
        let tc = self.cancel.child();
        let (base, launched) = match self.reach(t, &tc).await? {
            Reached::Up(base, launched) => (base, launched),
            Reached::Failed => {
                let path = self.layout.search_trial(
                    p.name.as_str(),
                    step.index,
                    step.purpose.as_str(),
                    &t.name,
                );
                let trial = (path.display().to_string(), read_trial(&path)?);
                return Ok(Launch::Failed(Box::new(trial)));
            }
            Reached::Cancelled => return Ok(Launch::Cancelled),
        };
        let client = self.search_client(p, &base)?;
        let reported = crate::server::identity::probe(client.http(), &base).await;
        Ok(Launch::Up(Box::new(Live {
            config: config.clone(),
            base,
            client,
            launched,
            reported,
            tc,
        })))
    }

    fn search_target(&self, p: &Profile, name: String, step: SearchStep) -> TargetSpec {
        let t = &self.plan.raw.target;
        TargetSpec {
            role: Role::Candidate,
            value: KnobValue::Text(name.clone()),
            name,
            artifact: self.plan.deployment.artifact.clone(),
            endpoint: None,
            command: t.server_command.clone(),
            model_path: t.model_path.clone(),
            model: t.model.clone(),
            search: Some(SearchTarget {
                profile: p.name.as_str().to_string(),
                step,
            }),
        }
    }

    fn search_client(&self, p: &Profile, base: &str) -> Result<Client, CollectError> {
        let tgt = &self.plan.raw.target;
        Client::new(
            base,
            tgt.api,
            self.opts.api_key.clone(),
            p.workload.concurrency.unwrap_or(1).max(1) as usize,
            Duration::from_secs_f64(tgt.request_timeout_s),
            Duration::from_secs_f64(tgt.stall_timeout_s.unwrap_or(tgt.request_timeout_s)),
        )
    }

    fn say_trial(&mut self, e: &Explorer, outcome: &Outcome) {
        let line = match outcome {
            Outcome::Infeasible { reason } => format!("    infeasible: {reason}"),
            Outcome::Measured { evidence } => format!(
                "    {} {}; every SLO met with confidence: {}",
                e.primary().name(),
                evidence.primary.map_or("not measured".into(), |x| format!(
                    "{} [{}, {}]",
                    sloscope_core::measure::format_number(x.value),
                    x.lo.map_or("–".into(), sloscope_core::measure::format_number),
                    x.hi.map_or("–".into(), sloscope_core::measure::format_number)
                )),
                if evidence.meets_all() { "yes" } else { "no" }
            ),
        };
        self.progress.say(&line);
    }

    fn say_search(&mut self, p: &Profile, e: &Explorer) {
        let r = e.result();
        let chosen = r.chosen_name.as_deref().unwrap_or("none");
        let confirmed = match r.confirmed {
            Some(true) => "upheld on a fresh launch",
            Some(false) => "NOT upheld on a fresh launch",
            None => "not confirmed",
        };
        self.progress.say(&format!(
            "search {}: chose {chosen} ({confirmed}) after {} of {} launches over {} configurations, {} requests",
            p.name,
            r.launches,
            e.settings().launches,
            r.configurations,
            r.requests
        ));
    }
}

/// Reads a search trial's run file back.
fn read_trial(path: &Path) -> Result<Run, CollectError> {
    let bytes = std::fs::read(path).map_err(CollectError::write(path.to_path_buf()))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        CollectError::Plan(format!(
            "{}: not a readable search trial ({e}): move it away or use another --out",
            path.display()
        ))
    })
}
