//! A profile's configuration search in the analysis: recomputed from its trial files by the
//! replay ([`crate::analyse::explore::replay`]), its trials refused whole when they contradict
//! it, and the chosen configuration's confirmation launch (a fresh measurement, not the data
//! that chose it) handed to the verdict as the profile's candidate — so the profile is decided
//! on fresh evidence, with the intervals every verdict uses, and the search says how it got
//! there.

use crate::analyse::explore::replay::{replay, SearchStatus};
use crate::analyse::report::{Code, Excluded, ProfileReport};
use crate::check::contract::Profile;
use crate::schema::{Plan, Purpose, Run};

/// Whether the plan's space serves the profile named `name`.
pub(crate) fn serves(plan: Option<&Plan>, name: &str) -> bool {
    plan.and_then(|p| p.space.as_ref())
        .is_some_and(|s| s.profiles.iter().any(|p| p == name))
}

/// Replays the search from `search_runs` (the trials left after the checks; `loaded`, every
/// trial file loaded) into `report.search`; returns the confirmation runs the verdict is to
/// weigh (none when the search is refused, or the space does not serve the profile: its trials
/// are then left out with why).
pub(crate) fn search<'a>(
    plan: Option<&Plan>,
    profile: Option<&Profile>,
    [search_runs, loaded]: [&[(&'a str, &'a Run)]; 2],
    report: &mut ProfileReport,
) -> Vec<(&'a str, &'a Run)> {
    let spec = plan.and_then(|p| p.space.as_ref());
    let (Some(spec), Some(profile)) = (spec, profile.filter(|_| serves(plan, &report.profile)))
    else {
        leave_out(
            search_runs,
            "a configuration-search trial, but the plan's space does not serve this profile",
            report,
        );
        return Vec::new();
    };
    let (_, mut r) = match replay(spec, profile, search_runs) {
        Ok(x) => x,
        Err(why) => {
            leave_out(
                search_runs,
                &format!("the plan's space is not valid: {why}"),
                report,
            );
            return Vec::new();
        }
    };
    if r.status == SearchStatus::Incomplete {
        if let Some(why) = hole_left_out(r.trials.len(), loaded, report) {
            r.problem = Some(why);
        }
    }
    if r.status == SearchStatus::Refused {
        let why = r.problem.clone().unwrap_or_default();
        leave_out(
            search_runs,
            &format!("the search is refused: {why}"),
            report,
        );
        report.search = Some(r);
        return Vec::new();
    }
    let used: Vec<&str> = r.trials.iter().map(|t| t.file.as_str()).collect();
    let unused: Vec<(&str, &Run)> = search_runs
        .iter()
        .copied()
        .filter(|(f, _)| !used.contains(f))
        .collect();
    for (file, run) in unused {
        report.excluded.push(Excluded {
            file: file.to_string(),
            candidate: run.candidate.name.clone(),
            code: Code::TrialNotUsed,
            reason: format!(
                "search trial not used: {}",
                r.problem.as_deref().unwrap_or("past the search's end")
            ),
        });
    }
    // The verdict weighs the pick's fresh launch alone: the rival's is in the search's table
    // (a tie between them would otherwise flip the recommendation on noise).
    let chosen = r.result.chosen_name.clone();
    let confirms = search_runs
        .iter()
        .copied()
        .filter(|(f, run)| {
            used.contains(f)
                && chosen.as_deref() == Some(run.candidate.name.as_str())
                && run
                    .search
                    .as_ref()
                    .is_some_and(|s| s.purpose == Purpose::Confirm)
        })
        .collect();
    report.search = Some(r);
    confirms
}

/// Where the replay stopped at a hole (trial `i` not among the trials used), the loaded file
/// of that trial that a check left out, said as such: "trial 5 (runs/….json) was left out:
/// why", not "missing".
fn hole_left_out(i: usize, loaded: &[(&str, &Run)], report: &ProfileReport) -> Option<String> {
    let (file, _) = loaded
        .iter()
        .find(|(_, r)| r.search.as_ref().is_some_and(|s| s.index as usize == i))?;
    let e = report.excluded.iter().find(|e| e.file == *file)?;
    Some(format!(
        "trial {i} ({file}) was left out: {} — the trials after it cannot be replayed without it",
        e.reason
    ))
}

fn leave_out(runs: &[(&str, &Run)], why: &str, report: &mut ProfileReport) {
    for (file, run) in runs {
        report.excluded.push(Excluded {
            file: file.to_string(),
            candidate: run.candidate.name.clone(),
            code: Code::SearchContradicted,
            reason: why.to_string(),
        });
    }
}
