//! Measuring one profile (or one capacity trial) of a reached target: its run file opened with
//! its journal, the profile collected, a trial given more requests while its SLO interval
//! straddles a limit, the run file written from the journal and the journal dropped.

use std::path::PathBuf;

use sloscope_core::analysis::{self, Search};
use sloscope_core::checks::Profile;
use sloscope_core::schema::{Run, RunStatus, ServerInfo, Trial};

use super::{profile_ctx, skeleton, Measure, RunCtx};
use crate::cancel::Cancel;
use crate::error::CollectError;
use crate::failure::StopReason;
use crate::record::journal::Journal;
use crate::wire::secret::redact_run;

impl RunCtx<'_> {
    /// Collects `p` (the profile, or one trial's version of it) into a run file. A trial
    /// (`Some((trial, search))`) runs one repeat at a time, and more while its SLO interval
    /// straddles a limit, up to the search's request cap.
    pub(super) async fn measure(
        &mut self,
        m: &Measure<'_>,
        p: &Profile,
        trial: Option<(Trial, &Search, &Profile)>,
    ) -> Result<(PathBuf, Run), CollectError> {
        let (mut run, path, mut journal) =
            self.open_run(m, p, trial.as_ref().map(|x| x.0.clone()))?;
        let mut ctx = profile_ctx(self.plan, self.gpu, self.opts, m, p);
        let mut rows = Vec::new();
        crate::load::collect::collect_profile(
            &ctx,
            &mut run,
            &mut rows,
            &mut journal,
            m.tc,
            self.progress,
        )
        .await;
        if let Some((_, search, planned)) = &trial {
            let file = path.display().to_string();
            while run.status == RunStatus::Ok && !m.tc.is_cancelled() {
                let full = crate::record::spill::materialize(&run, &rows, journal.path())
                    .map_err(CollectError::write(journal.path()))?;
                let report = analysis::evaluate_trial(&file, &full, planned);
                let more = p.workload.requests_per_repeat.unwrap_or(1) as u64;
                if !analysis::needs_more_requests(&report, search, more) {
                    break;
                }
                ctx.first_repeat = run.repeats.len() as u32;
                self.progress.say(&format!(
                    "  {} / {}: an SLO interval straddles its limit at {}; {} more requests",
                    p.name,
                    m.t.name,
                    analysis::load_text(search.over, run.trial.as_ref().map_or(0.0, |x| x.load)),
                    p.workload.requests_per_repeat.unwrap_or(1)
                ));
                let (c, tc) = (&ctx, m.tc);
                crate::load::collect::collect_profile(
                    c,
                    &mut run,
                    &mut rows,
                    &mut journal,
                    tc,
                    self.progress,
                )
                .await;
            }
            let mut seen = std::collections::BTreeSet::new();
            run.notes.retain(|n| seen.insert(n.clone()));
        }
        redact_run(&self.opts.redactor, &mut run);
        let with_requests = trial.is_some() || m.t.search.is_some();
        self.close_run(m.tc, path, run, &rows, journal, with_requests)
    }

    /// The run's header, its file's path and its journal, opened.
    fn open_run(
        &self,
        m: &Measure<'_>,
        p: &Profile,
        trial: Option<Trial>,
    ) -> Result<(Run, PathBuf, Journal), CollectError> {
        let mut run = skeleton(self.plan, m.t, p, Some(m.base));
        if let Some(e) = run.endpoint.as_mut() {
            e.reported = Some(m.reported.clone());
        }
        run.notes
            .extend(crate::server::identity::silence_note(m.reported));
        if let Some(l) = m.launched {
            run.server = Some(ServerInfo {
                command: l.command.clone(),
                exit_status: None,
                startup_s: Some(l.startup_s),
                log_tail: None,
            });
        }
        run.notes.extend(self.gpu.note.clone());
        let (name, t) = (p.name.as_str(), m.t);
        let (path, journal_path) = match (&trial, &t.search) {
            (None, Some(s)) => (
                self.layout
                    .search_trial(name, s.step.index, s.step.purpose.as_str(), &t.name),
                self.layout.search_journal(name, s.step.index),
            ),
            (None, None) => (
                self.layout.run(name, t.role, &t.name),
                self.layout.journal(name, &t.name),
            ),
            (Some(tr), _) => (
                self.layout
                    .trial(name, &t.name, tr.index, &tr.over, tr.load),
                self.layout.trial_journal(name, &t.name, tr.index),
            ),
        };
        run.trial = trial;
        let journal =
            Journal::create(&journal_path, &run).map_err(CollectError::write(&journal_path))?;
        Ok((run, path, journal))
    }

    /// Writes the run file from the journal, then drops the journal. A trial's run is returned
    /// with its requests (its search judges it by them); a fixed-load run as its header.
    fn close_run(
        &mut self,
        tc: &Cancel,
        path: PathBuf,
        run: Run,
        rows: &[crate::record::spill::RepeatRows],
        journal: Journal,
        with_requests: bool,
    ) -> Result<(PathBuf, Run), CollectError> {
        if run.status != RunStatus::Ok {
            self.outcome.incomplete.push(path.display().to_string());
        }
        let total: u64 = rows.iter().map(|r| r.len() as u64).sum();
        // Written from the journal in a stream: the collector never holds the run's requests.
        if let Err(source) = crate::record::spill::write_run(&path, &run, rows, journal.path()) {
            let e = CollectError::RunFile {
                path,
                journal: journal.path().to_path_buf(),
                journaled: journal.requests(),
                total,
                source,
            };
            self.cancel
                .cancel_all(StopReason::RunFileWrite(e.to_string()));
            return Err(e);
        }
        if matches!(tc.reason(), Some(StopReason::JournalWrite(_))) {
            self.progress.warn(&format!(
                "{}: the run file was written after all, with all {total} finished requests; its journal ({} of them) is removed",
                path.display(),
                journal.requests()
            ));
        }
        let run = match with_requests {
            true => crate::record::spill::materialize(&run, rows, journal.path())
                .map_err(CollectError::write(journal.path()))?,
            false => run,
        };
        journal.remove();
        self.outcome.runs.push(path.clone());
        Ok((path, run))
    }
}
