//! A run against the plan and profile it claims: a candidate of the plan with its knob value,
//! the profile's workload, the deployed artifact, and as many repeats and requests as planned.
//! The same rules hold for fixed-load runs, capacity trials, float-baseline runs and imports.

use super::{is_candidate, Expect};
use crate::check::contract::search::{trial_requests, LoadAxis, Search};
use crate::check::invariant::{Invariant, Violation};
use crate::schema::{ForeignWorkload, Plan, ProfileSpec, Run, WorkloadSpec};

pub(crate) fn check(run: &Run, expect: &Expect<'_>, out: &mut Vec<Violation>) {
    artifact(run, expect, out);
    let searched = run.search.is_some();
    if searched {
        in_space(expect, run, out);
    } else if is_candidate(run) {
        knob(run, expect, out);
        if let Some((file, plan)) = expect.plan {
            in_plan(file, plan, run, out);
        }
    }
    let format = expect.formats[usize::from(!is_candidate(run))];
    super::launch::check(run, expect.knob.filter(|_| !searched), format, out);
    if let Some(spec) = expect.spec {
        same_workload(spec, run, out);
        super::drawn::check(spec, run, expect.pooled, out);
        counts(spec, expect.search, run, out);
    }
}

/// A run measures its role's artifact: a candidate the deployed one, the baseline the float
/// baseline's (a run of another lineage is not comparable: the seed's rule).
fn artifact(run: &Run, expect: &Expect<'_>, out: &mut Vec<Violation>) {
    let (want, role) = if is_candidate(run) {
        (expect.artifacts[0], "deployed")
    } else {
        (expect.artifacts[1], "float baseline's")
    };
    if let Some(want) = want.filter(|w| *w != run.artifact_id) {
        out.push(Violation::new(
            Invariant::ArtifactMatches,
            "$.artifact_id",
            format!("artifact {:?}, not the {role} {want:?}", run.artifact_id),
        ));
    }
}

fn knob(run: &Run, expect: &Expect<'_>, out: &mut Vec<Violation>) {
    if let (Some(k), Some(rk)) = (expect.knob, run.candidate.knob.as_deref()) {
        if k != rk {
            out.push(Violation::new(
                Invariant::KnobMatches,
                "$.candidate.knob",
                format!("varies knob {rk:?}; the plan declares {k:?}"),
            ));
        }
    }
}

/// A search trial is a candidate run of a profile the plan's space serves, of one of its
/// configurations, named as the space names it, its server launched with each knob's value
/// where the command carries the knob as a flag.
fn in_space(expect: &Expect<'_>, run: &Run, out: &mut Vec<Violation>) {
    let mut bad = |path: &str, m: String| out.push(Violation::new(Invariant::InSpace, path, m));
    let Some(step) = &run.search else { return };
    if !is_candidate(run) {
        return bad(
            "$.role",
            "a search trial of the float baseline: the search is of candidates".into(),
        );
    }
    let Some((file, plan)) = expect.plan else {
        return;
    };
    let Some(spec) = &plan.space else {
        return bad(
            "$.search",
            format!("a search trial, but the plan {file} has no [space]"),
        );
    };
    if !spec.profiles.contains(&run.profile) {
        return bad(
            "$.search",
            format!(
                "a search trial of profile {:?}, which the plan's space does not serve",
                run.profile
            ),
        );
    }
    let Ok(space) = crate::check::space::Space::new(spec) else {
        return;
    };
    let Some(config) = space.config_of(&step.config) else {
        return bad(
            "$.search.config",
            format!(
                "{:?} is not a configuration of the plan's space (a knob, a value or a constraint)",
                step.config
            ),
        );
    };
    let name = space.name(&config);
    if run.candidate.name != name {
        return bad(
            "$.candidate.name",
            format!(
                "the trial measured {name} but is labelled {:?}",
                run.candidate.name
            ),
        );
    }
    // A server that never started ran no configuration: its command is the unfilled template.
    let Some(cmd) = run
        .server
        .as_ref()
        .filter(|s| s.startup_s.is_some())
        .map(|s| s.command.as_slice())
    else {
        return;
    };
    for (k, v) in &step.config {
        if let Some(said) = super::launch::flag_differs(cmd, k, v) {
            return bad(
                "$.server.command",
                format!("the server was launched with {k} {said}, but the trial is labelled {k} = {v}: another configuration than the one it is counted as"),
            );
        }
    }
}

/// A candidate run names a candidate of the plan, with the plan's knob value.
fn in_plan(file: &str, plan: &Plan, run: &Run, out: &mut Vec<Violation>) {
    let name = &run.candidate.name;
    let Some(c) = plan.candidates.iter().find(|c| &c.name == name) else {
        let known: Vec<&str> = plan.candidates.iter().map(|c| c.name.as_str()).collect();
        out.push(Violation::new(
            Invariant::InPlan,
            "$.candidate.name",
            format!(
                "candidate {name:?} is not in the plan {file} (its candidates: {})",
                known.join(", ")
            ),
        ));
        return;
    };
    if let Some(v) = run.candidate.value.as_ref().filter(|v| **v != c.value) {
        out.push(Violation::new(
            Invariant::KnobValueMatches,
            "$.candidate.value",
            format!(
                "candidate {name:?} ran with {} = {v}; the plan {file} gives it {}",
                plan.knob, c.value
            ),
        ));
    }
}

/// The run's workload (its id, its own statement of it, another tool's description of it) is
/// the profile's.
fn same_workload(spec: &ProfileSpec, run: &Run, out: &mut Vec<Violation>) {
    let mut mismatch = |path: &str, message: String| {
        out.push(Violation::new(Invariant::WorkloadMatches, path, message));
    };
    let wid = spec.workload.as_ref().and_then(|w| w.id.as_deref());
    if let Some(w) = wid.filter(|w| *w != run.workload_id) {
        mismatch(
            "$.workload_id",
            format!("workload {:?}, the profile's is {w:?}", run.workload_id),
        );
        return;
    }
    let Some(want) = spec.workload.as_ref() else {
        return;
    };
    if let Some(got) = run.profile_spec.as_ref().and_then(|s| s.workload.as_ref()) {
        let diffs = workload_diffs(want, got);
        if !diffs.is_empty() {
            mismatch(
                "$.profile_spec.workload",
                format!("workload differs from the profile: {}", diffs.join(", ")),
            );
        }
    }
    if let Some(imp) = run.import.as_ref() {
        let diffs = foreign_workload_diffs(want, &imp.workload);
        if !diffs.is_empty() {
            mismatch(
                "$.import.workload",
                format!(
                    "{} ran another workload than the profile's: {}",
                    imp.tool,
                    diffs.join(", ")
                ),
            );
        }
    }
}

/// Requests one repeat of this run should hold, and how many repeats: a trial holds
/// `trial_requests` per repeat and at most as many repeats as its request cap allows.
fn planned(
    w: &WorkloadSpec,
    search: Option<&Search>,
    run: &Run,
) -> (Option<i64>, Option<(i64, i64)>) {
    let per = w.requests_per_repeat;
    if let (Some(step), Some(per)) = (&run.search, per) {
        let n = (step.requests as i64 + per - 1) / per.max(1);
        return (Some(per), Some((n, n)));
    }
    match (&run.trial, search, per) {
        (Some(t), Some(s), Some(per)) => {
            let axis = if t.over == LoadAxis::RequestRateRps.as_str() {
                LoadAxis::RequestRateRps
            } else {
                LoadAxis::Concurrency
            };
            let per = trial_requests(axis, t.load, per).max(1);
            let most = (i64::from(s.max_requests_per_trial) / per).max(1);
            (Some(per), Some((1, most)))
        }
        (Some(_), _, _) => (per, None),
        (None, _, _) => (per, w.repeats.map(|r| (r, r))),
    }
}

/// Fewer or more repeats, or requests in a repeat, than the plan asks (flags).
fn counts(spec: &ProfileSpec, search: Option<&Search>, run: &Run, out: &mut Vec<Violation>) {
    let Some(w) = spec.workload.as_ref() else {
        return;
    };
    if run.repeats.is_empty() {
        return; // reported-only import: nothing to count
    }
    // A run that is not `ok` says itself that it is short (left out as partial or failed).
    if run.status != crate::schema::RunStatus::Ok {
        return;
    }
    let (per, repeats) = planned(w, search, run);
    // Another tool ran its own count (one benchmark, one repeat): fewer than the plan's is
    // flagged there; a run sloscope measured holds what the plan asked or says it is partial.
    let short = if run.source == crate::schema::RunSource::Imported {
        (Invariant::RepeatsAsPlanned, Invariant::RequestsAsPlanned)
    } else {
        (Invariant::RunComplete, Invariant::RunComplete)
    };
    let n = run.repeats.len() as i64;
    if let Some((least, most)) = repeats.filter(|(l, m)| n < *l || n > *m) {
        let planned = if least == most {
            least.to_string()
        } else {
            format!("{least}–{most}")
        };
        out.push(if n < least {
            Violation::new(
                short.0,
                "$.repeats",
                format!(
                    "{n} of {planned} planned repeats: not the measurement the plan asks for \
                     (an interrupted run is partial; this one says ok)"
                ),
            )
        } else {
            Violation::new(
                Invariant::RepeatsAsPlanned,
                "$.repeats",
                format!(
                    "{n} of {planned} planned repeats (more: repeats the plan did not ask for, \
                     reruns added or repeats duplicated)"
                ),
            )
        });
    }
    if let Some(per) = per {
        for (ri, rep) in run.repeats.iter().enumerate() {
            let k = rep.requests.len() as i64;
            if k < per {
                out.push(Violation::new(
                    short.1,
                    format!("$.repeats[{ri}].requests"),
                    format!(
                        "repeat {} has {k} of {per} planned requests: not the measurement the \
                         plan asks for (an interrupted run is partial; this one says ok)",
                        rep.index
                    ),
                ));
                return;
            }
            if k > per {
                out.push(Violation::new(
                    Invariant::RequestsAsPlanned,
                    format!("$.repeats[{ri}].requests"),
                    format!(
                        "repeat {} has {k} of {per} planned requests (more than planned: reruns \
                         or duplicated requests)",
                        rep.index
                    ),
                ));
            }
        }
    }
}

/// Where a run's own statement of its workload differs from the profile's: counts, rate,
/// traffic shape and replayed files; only what the profile states is compared.
fn workload_diffs(want: &WorkloadSpec, got: &WorkloadSpec) -> Vec<String> {
    let mut d = Vec::new();
    let mut cmp = |name: &str, a: Option<String>, b: Option<String>| {
        if a.is_some() && a != b {
            d.push(format!(
                "{name} {} (profile {})",
                b.unwrap_or_else(|| "unset".into()),
                a.unwrap_or_default()
            ));
        }
    };
    let s = |v: Option<i64>| v.map(|x| x.to_string());
    cmp("concurrency", s(want.concurrency), s(got.concurrency));
    cmp("prompt_tokens", s(want.prompt_tokens), s(got.prompt_tokens));
    cmp(
        "max_output_tokens",
        s(want.max_output_tokens),
        s(got.max_output_tokens),
    );
    cmp(
        "requests_per_repeat",
        s(want.requests_per_repeat),
        s(got.requests_per_repeat),
    );
    cmp(
        "request_rate_rps",
        want.request_rate_rps.map(|x| x.to_string()),
        got.request_rate_rps.map(|x| x.to_string()),
    );
    shape_diffs(want, got, &mut d);
    replay_diffs(want, got, &mut d);
    d
}

fn shape_diffs(want: &WorkloadSpec, got: &WorkloadSpec, d: &mut Vec<String>) {
    let mut cmp = |name: &str, a: Option<String>, b: Option<String>| {
        if a.is_some() && a != b {
            d.push(format!(
                "{name} {} (profile {})",
                b.unwrap_or_else(|| "unset".into()),
                a.unwrap_or_default()
            ));
        }
    };
    // The traffic shape: a profile that names one compares only runs sent with exactly it.
    // An unstated arrival process under a rate is Poisson.
    let arrival = |a: &Option<crate::base::traffic::Arrival>| {
        Some(a.unwrap_or(crate::base::traffic::Arrival::Poisson).label())
    };
    if want.arrival.is_some() {
        cmp("arrival", arrival(&want.arrival), arrival(&got.arrival));
    }
    for (name, a, b) in [
        ("prompt_length", &want.prompt_length, &got.prompt_length),
        ("output_length", &want.output_length, &got.output_length),
    ] {
        if a.is_some() && a != b {
            d.push(format!(
                "{name} {} (profile {})",
                b.as_ref().map_or("unset".into(), |l| l.label()),
                a.as_ref().map(|l| l.label()).unwrap_or_default()
            ));
        }
    }
}

fn replay_diffs(want: &WorkloadSpec, got: &WorkloadSpec, d: &mut Vec<String>) {
    // Replayed files compare by name, layout and parameters, and by content where both sides
    // state a hash; present on one side only is a difference too (synthetic vs replayed).
    let label = |x: Option<String>| x.unwrap_or_else(|| "unset".into());
    let file_diff =
        |a_id: Option<(String, Option<&str>)>, b_id: Option<(String, Option<&str>)>| match (
            &a_id, &b_id,
        ) {
            (Some((a, ah)), Some((b, bh))) => {
                a != b || matches!((ah, bh), (Some(x), Some(y)) if x != y)
            }
            (None, None) => false,
            _ => true,
        };
    fn dataset_id(w: &WorkloadSpec) -> Option<(String, Option<&str>)> {
        w.dataset.as_ref().map(|x| {
            (
                format!(
                    "{:?} {}",
                    x.format,
                    crate::schema::replay::file_name(&x.file)
                ),
                x.sha256.as_deref(),
            )
        })
    }
    if file_diff(dataset_id(want), dataset_id(got)) {
        d.push(format!(
            "dataset {} (profile {})",
            label(got.dataset.as_ref().map(|x| x.label())),
            label(want.dataset.as_ref().map(|x| x.label()))
        ));
    }
    fn trace_id(w: &WorkloadSpec) -> Option<(String, Option<&str>)> {
        w.trace.as_ref().map(|x| {
            (
                format!(
                    "{:?} {} {}",
                    x.format,
                    crate::schema::replay::file_name(&x.file),
                    x.time_scale.unwrap_or(1.0)
                ),
                x.sha256.as_deref(),
            )
        })
    }
    if file_diff(trace_id(want), trace_id(got)) {
        d.push(format!(
            "trace {} (profile {})",
            label(got.trace.as_ref().map(|x| x.label())),
            label(want.trace.as_ref().map(|x| x.label()))
        ));
    }
    if want.sessions != got.sessions {
        d.push(format!(
            "sessions {} (profile {})",
            label(got.sessions.as_ref().map(|x| x.label())),
            label(want.sessions.as_ref().map(|x| x.label()))
        ));
    }
    if want.shared_prefix != got.shared_prefix {
        d.push(format!(
            "shared_prefix {} (profile {})",
            label(got.shared_prefix.map(|x| x.label())),
            label(want.shared_prefix.map(|x| x.label()))
        ));
    }
}

/// Where a foreign workload differs from the profile's, in words. Only what the tool states is
/// compared; a stated value that differs excludes the run.
pub fn foreign_workload_diffs(spec: &WorkloadSpec, w: &ForeignWorkload) -> Vec<String> {
    let mut d = Vec::new();
    let int = |name: &str, want: Option<i64>, got: Option<u32>, d: &mut Vec<String>| {
        if let (Some(want), Some(got)) = (want, got) {
            if want != i64::from(got) {
                d.push(format!("{name} {got} (the profile's is {want})"));
            }
        }
    };
    int("concurrency", spec.concurrency, w.concurrency, &mut d);
    int("prompt_tokens", spec.prompt_tokens, w.prompt_tokens, &mut d);
    int(
        "max_output_tokens",
        spec.max_output_tokens,
        w.max_output_tokens,
        &mut d,
    );
    match (spec.request_rate_rps, w.request_rate_rps) {
        (Some(want), Some(got)) if (want - got).abs() > 1e-9 * want.abs().max(1.0) => {
            d.push(format!("request rate {got} rps (the profile's is {want})"))
        }
        (Some(want), None) => d.push(format!(
            "no arrival rate stated (the profile's is {want} rps)"
        )),
        (None, Some(got)) => d.push(format!(
            "arrival rate {got} rps (the profile is closed loop)"
        )),
        _ => {}
    }
    d
}
