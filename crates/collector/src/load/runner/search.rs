//! A profile's capacity search for one candidate: trials at the loads the core's
//! [`analysis::next_load`] asks for, on the server already running, each written as a run file
//! with `trial` set. The capacity itself is derived from those files by the core, never stored.

use std::path::PathBuf;
use std::time::Instant;

use sloscope_core::analysis::{self, load_text};
use sloscope_core::checks::Profile;
use sloscope_core::schema::{Role, Run, RunStatus, Trial};

use super::{Measure, RunCtx};
use crate::error::CollectError;

impl RunCtx<'_> {
    /// Runs `p`'s search for the target of `m` (candidates only); returns the trial files.
    pub(super) async fn run_search(
        &mut self,
        m: &Measure<'_>,
        p: &Profile,
    ) -> Result<Vec<(PathBuf, Run)>, CollectError> {
        let (Some(search), Role::Candidate) = (&p.search, m.t.role) else {
            return Ok(Vec::new());
        };
        let started = Instant::now();
        let mut outcomes: Vec<(f64, bool)> = Vec::new();
        let mut written = Vec::new();
        let who = format!("{} / {}", p.name, m.t.name);
        self.progress.say(&format!(
            "capacity search {who}: {} from {} to {}, tolerance {}",
            search.over.as_str(),
            load_text(search.over, search.min),
            load_text(search.over, search.max),
            load_text(search.over, search.tolerance)
        ));
        while let Some(load) = analysis::next_load(search, &outcomes) {
            if m.tc.is_cancelled() {
                self.outcome.not_run.push(format!(
                    "{who}: capacity search stopped after {} trials: {}",
                    outcomes.len(),
                    m.tc.message()
                ));
                break;
            }
            if let Some(b) = search
                .time_budget_s
                .filter(|&b| started.elapsed().as_secs_f64() >= b)
            {
                self.progress.warn(&format!(
                    "{who}: capacity search stopped after {} trials: its time budget of {b} s is spent",
                    outcomes.len()
                ));
                break;
            }
            let mut tp = p.clone();
            tp.workload = search.over.apply(&p.workload, load);
            tp.workload.repeats = Some(1);
            tp.workload.requests_per_repeat = Some(analysis::trial_requests(
                search.over,
                load,
                p.workload.requests_per_repeat.unwrap_or(1),
            ));
            let trial = Trial {
                over: search.over.as_str().into(),
                load,
                index: outcomes.len() as u32,
            };
            self.progress.say(&format!(
                "  trial {} at {}",
                trial.index + 1,
                load_text(search.over, load)
            ));
            let (path, run) = self.measure(m, &tp, Some((trial, search, p))).await?;
            let file = path.display().to_string();
            let status = run.status;
            let report = analysis::evaluate_trial(&file, &run, p);
            written.push((path, run));
            if status != RunStatus::Ok {
                self.progress.warn(&format!(
                    "{who}: capacity search stopped: the trial at {} is {}",
                    load_text(search.over, load),
                    status.as_str()
                ));
                break;
            }
            self.progress.say(&format!(
                "    {}{} ({} requests; {})",
                if report.pass { "pass" } else { "fail" },
                if report.marginal { ", marginal" } else { "" },
                report.requests_sent,
                report
                    .checks
                    .iter()
                    .map(|k| format!(
                        "{} {}",
                        k.metric,
                        k.value
                            .map_or("not measured".into(), sloscope_core::measure::format_number)
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            outcomes.push((load, report.pass));
        }
        Ok(written)
    }
}
