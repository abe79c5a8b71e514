//! The cells: a profile's candidate (by knob value) on both sides under the same workload, and
//! per metric its change with an interval and a label. A candidate without a partner, or whose
//! workload differs, is not comparable, with why: never a regression.

use crate::analyse::compare::Kept;
use crate::analyse::report::{Analysis, CandidateReport, ProfileReport};
use crate::base::metric::Metric;
use crate::schema::Run;

use super::change::{change_of, Measured};
use super::data::{same_requests, units, METRICS};
use super::stats::{label, Shift};
use super::types::{
    Cell, CellCurves, Label, MetricChange, NotComparable, NotComparableKind as Kind, Pairing,
    ShiftChange, Threshold,
};
use crate::base::metric::{Quantity, Stat};

/// One side of a profile: its report and the runs its candidates rest on.
struct Part<'a> {
    report: &'a ProfileReport,
    kept: &'a [Kept],
}

impl<'a> Part<'a> {
    fn run(&self, c: &CandidateReport) -> Option<&'a Run> {
        self.kept
            .iter()
            .find(|k| k.profile.as_str() == self.report.profile && k.candidate == c.name)
            .map(|k| &k.run)
    }
}

/// Every cell of the two analyses, and what could not be compared.
pub(crate) fn cells<'a>(
    before: (&'a Analysis, &'a [Kept]),
    after: (&'a Analysis, &'a [Kept]),
    before_runs: &[&Run],
    threshold: &dyn Fn(Metric) -> Threshold,
) -> (Vec<Cell>, Vec<NotComparable>) {
    let (mut cells, mut nc) = (Vec::new(), Vec::new());
    let mut names: Vec<&str> = Vec::new();
    for p in before.0.profiles.iter().chain(&after.0.profiles) {
        if !names.contains(&p.profile.as_str()) {
            names.push(&p.profile);
        }
    }
    for name in names {
        let part = |(a, kept): (&'a Analysis, &'a [Kept])| {
            a.profiles
                .iter()
                .find(|p| p.profile == name)
                .map(|report| Part { report, kept })
        };
        match (part(before), part(after)) {
            (Some(b), Some(a)) => {
                profile_cells(&b, &a, before_runs, threshold, &mut cells, &mut nc)
            }
            (Some(only), None) | (None, Some(only)) => {
                let side = if part(before).is_some() {
                    "before"
                } else {
                    "after"
                };
                let kind = if side == "before" {
                    Kind::MissingAfter
                } else {
                    Kind::OneSideOnly
                };
                for c in &only.report.candidates {
                    nc.push(not_comparable(
                        name,
                        &c.name,
                        kind,
                        format!("the {name} profile is only in the {side} collection"),
                    ));
                }
            }
            (None, None) => {}
        }
    }
    (cells, nc)
}

fn not_comparable(profile: &str, candidate: &str, kind: Kind, reason: String) -> NotComparable {
    NotComparable {
        profile: profile.to_string(),
        candidate: candidate.to_string(),
        kind,
        reason,
    }
}

/// A candidate of one side whose partner on the other side was measured but left out of that
/// side's analysis: a failure of the after side is a regression, anything else leaves the
/// comparison incomplete.
fn left_out(
    other: &ProfileReport,
    c: &CandidateReport,
    other_is_after: bool,
) -> Option<NotComparable> {
    use crate::analyse::report::Code;
    let e = other.excluded.iter().find(|e| e.candidate == c.name)?;
    let failed = matches!(
        e.code,
        Code::AllFailed | Code::FailedRun | Code::FailedBackend | Code::NoData
    );
    let side = if other_is_after { "after" } else { "before" };
    let kind = if failed && other_is_after {
        Kind::FailedAfter
    } else {
        Kind::LeftOut
    };
    Some(not_comparable(
        &other.profile,
        &c.name,
        kind,
        format!("its {side} run ({}) was left out: {}", e.file, e.reason),
    ))
}

/// A candidate's key: its knob value, else its name.
fn key(c: &CandidateReport) -> String {
    c.value
        .as_ref()
        .map_or_else(|| c.name.clone(), |v| format!("={v}"))
}

fn profile_cells(
    b: &Part<'_>,
    a: &Part<'_>,
    before_runs: &[&Run],
    threshold: &dyn Fn(Metric) -> Threshold,
    cells: &mut Vec<Cell>,
    nc: &mut Vec<NotComparable>,
) {
    let profile = b.report.profile.as_str();
    if let Some(why) = workload_differs(b.report, a.report) {
        let mut names: Vec<&str> = Vec::new();
        for c in b.report.candidates.iter().chain(&a.report.candidates) {
            if !names.contains(&c.name.as_str()) {
                names.push(&c.name);
                nc.push(not_comparable(
                    profile,
                    &c.name,
                    Kind::WorkloadDiffers,
                    why.clone(),
                ));
            }
        }
        return;
    }
    let (bc, ac) = (&b.report.candidates, &a.report.candidates);
    // One unnamed measurement on each side (another tool's files, no knob) is one cell.
    // So is a configuration search on each side: its one candidate is the chosen configuration,
    // whichever it is (two searches are compared by what each chose).
    let searched = b.report.search.is_some() && a.report.search.is_some();
    let single = bc.len() == 1
        && ac.len() == 1
        && (searched || (bc[0].value.is_none() && ac[0].value.is_none()));
    let partner = |c: &CandidateReport| {
        if single {
            return ac.first();
        }
        ac.iter().find(|x| key(x) == key(c))
    };
    for c in bc {
        match partner(c) {
            Some(d) => {
                match cell(b, c, a, d, threshold).and_then(|x| fresh(a, d, before_runs, x)) {
                    Ok(mut cell) => {
                        if searched && c.name != d.name {
                            let note = format!(
                                "the searches chose different configurations: {} before, {} after",
                                c.name, d.name
                            );
                            cell.pairing_note = Some(match cell.pairing_note.take() {
                                Some(n) => format!("{n}; {note}"),
                                None => note,
                            });
                        }
                        cells.push(cell)
                    }
                    Err((kind, why)) => nc.push(not_comparable(profile, &c.name, kind, why)),
                }
            }
            None => nc.push(left_out(a.report, c, true).unwrap_or_else(|| {
                not_comparable(
                    profile,
                    &c.name,
                    Kind::MissingAfter,
                    format!(
                        "{} is only in the before collection: the after side lost it",
                        describe(c)
                    ),
                )
            })),
        }
    }
    for d in ac {
        if !single && !bc.iter().any(|c| key(c) == key(d)) {
            nc.push(left_out(b.report, d, false).unwrap_or_else(|| {
                not_comparable(
                    profile,
                    &d.name,
                    Kind::OneSideOnly,
                    format!("{} is only in the after collection", describe(d)),
                )
            }));
        }
    }
}

fn describe(c: &CandidateReport) -> String {
    match (&c.knob, &c.value) {
        (Some(k), Some(v)) => format!("{k} = {v}"),
        _ => format!("candidate {}", c.name),
    }
}

/// Why the profile's workloads differ, or `None` when they are the same.
fn workload_differs(b: &ProfileReport, a: &ProfileReport) -> Option<String> {
    if b.workload == a.workload {
        return None;
    }
    let fields = |p: &ProfileReport| {
        serde_json::to_value(&p.workload)
            .ok()
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default()
    };
    let (fb, fa) = (fields(b), fields(a));
    let mut keys: Vec<&String> = fb.keys().chain(fa.keys()).collect();
    keys.sort();
    keys.dedup();
    let diffs: Vec<String> = keys
        .into_iter()
        .filter(|k| fb.get(*k) != fa.get(*k))
        .map(|k| {
            let v = |m: &serde_json::Map<String, serde_json::Value>| {
                m.get(k)
                    .map_or_else(|| "not set".into(), ToString::to_string)
            };
            format!("{k} {} before, {} after", v(&fb), v(&fa))
        })
        .collect();
    Some(format!(
        "the {} workload differs ({}): only the same workload is compared",
        b.profile,
        diffs.join("; ")
    ))
}

fn cell(
    b: &Part<'_>,
    cb: &CandidateReport,
    a: &Part<'_>,
    ca: &CandidateReport,
    threshold: &dyn Fn(Metric) -> Threshold,
) -> Result<Cell, (Kind, String)> {
    let (Some(rb), Some(ra)) = (b.run(cb), a.run(ca)) else {
        return Err((
            Kind::LeftOut,
            "no run found for the candidate's report".into(),
        ));
    };
    if cb.summary.is_none() || ca.summary.is_none() {
        return Err((
            Kind::SummariesOnly,
            "summaries only (no per-request data) on a side: no interval can be made".into(),
        ));
    }
    if let Some(why) = foreign_workload_differs(rb, ra) {
        return Err((Kind::WorkloadDiffers, why));
    }
    let paired = same_requests(rb, ra);
    let mut metrics: Vec<Metric> = METRICS.to_vec();
    for m in b
        .report
        .slo
        .iter()
        .map(|s| s.metric)
        .chain(b.report.primary_metric.as_deref().and_then(Metric::parse))
    {
        if !metrics.contains(&m) {
            metrics.push(m);
        }
    }
    let moved = shifts(rb, ra, paired.is_ok());
    let changes: Vec<MetricChange> = metrics
        .into_iter()
        .filter_map(|m| metric_change(m, (cb, rb), (ca, ra), &moved, threshold(m)))
        .collect();
    let ok = |c: &CandidateReport| c.summary.as_ref().map_or(0, |s| s.requests_ok);
    let shifts = shift_changes(cb, &moved, paired.is_ok(), threshold);
    Ok(Cell {
        profile: b.report.profile.clone(),
        candidate: ca.name.clone(),
        knob: ca.knob.clone(),
        value: ca.value.clone(),
        pairing: if paired.is_ok() {
            Pairing::Paired
        } else {
            Pairing::Unpaired
        },
        pairing_note: paired.err(),
        requests_before: ok(cb),
        requests_after: ok(ca),
        label: worst(&changes),
        metrics: changes,
        shifts,
        curves: curves(cb, ca),
    })
}

/// A cell whose after run holds measurements of a before run — its own cell's, or another
/// candidate's relabelled — shows nothing that changed: not comparable, with which.
fn fresh(
    a: &Part<'_>,
    ca: &CandidateReport,
    before: &[&Run],
    c: Cell,
) -> Result<Cell, (Kind, String)> {
    let Some(ra) = a.run(ca) else {
        return Ok(c);
    };
    match before
        .iter()
        .find(|rb| crate::check::run::fingerprint::same_runs(ra, rb))
    {
        Some(rb) => Err((
            Kind::SameMeasurements,
            format!(
                "its after run holds measurements of the before collection's {} / {} run (the \
                 same requests, whole, a subset, nudged or relabelled): nothing that changed can \
                 show",
                rb.profile, rb.candidate.name
            ),
        )),
        None => Ok(c),
    }
}

/// Another tool's runs (no profile definition of their own) compare only under the same stated
/// load.
fn foreign_workload_differs(b: &Run, a: &Run) -> Option<String> {
    let (Some(ib), Some(ia)) = (&b.import, &a.import) else {
        return None;
    };
    let (wb, wa) = (&ib.workload, &ia.workload);
    let same = wb.concurrency == wa.concurrency
        && wb.request_rate_rps == wa.request_rate_rps
        && wb.prompt_tokens == wa.prompt_tokens
        && wb.max_output_tokens == wa.max_output_tokens;
    (!same).then(|| {
        format!(
            "the tools' stated workloads differ ({} before, {} after): only the same workload is \
             compared",
            wb.description.as_deref().unwrap_or("not described"),
            wa.description.as_deref().unwrap_or("not described")
        )
    })
}

/// The cell's label: a regression anywhere, else anything inconclusive, else a change near
/// its threshold, else an improvement anywhere, else no change.
fn worst(changes: &[MetricChange]) -> Label {
    let has = |l: Label| changes.iter().any(|c| c.label == l);
    [
        Label::Regression,
        Label::Inconclusive,
        Label::Borderline,
        Label::Improvement,
    ]
    .into_iter()
    .find(|&l| has(l))
    .unwrap_or(Label::NoChange)
}

/// One side of a cell: the candidate's report and the run it rests on.
type SideOf<'a> = (&'a CandidateReport, &'a Run);

pub(crate) fn metric_change(
    m: Metric,
    (cb, rb): SideOf<'_>,
    (ca, ra): SideOf<'_>,
    shifts: &[(Quantity, Shift)],
    threshold: Threshold,
) -> Option<MetricChange> {
    let (before, after) = (cb.metric(m)?, ca.metric(m)?);
    let (interval, ratio_interval, mut method) = change_of(
        m,
        Measured {
            run: rb,
            per_repeat: &cb.per_repeat,
        },
        Measured {
            run: ra,
            per_repeat: &ca.per_repeat,
        },
        before,
        after,
    );
    let mut label = interval.map_or(Label::Inconclusive, |iv| label(m, before, &iv, threshold));
    if matches!(label, Label::Inconclusive | Label::Borderline) {
        if let Some((l, why)) = by_shift(m, before, shifts, threshold) {
            label = l;
            method = format!("{method}; {why}");
        }
    }
    // One run a side cannot show how much one run differs from the next (on a real server, more
    // than its requests differ): no change, either way, is called from it.
    if rb.repeats.len() < 2 || ra.repeats.len() < 2 {
        label = Label::Inconclusive;
        method.push_str(
            "; one repeat on a side: run-to-run variation is not measured, so no change is called \
             (plan 2 repeats or more)",
        );
    }
    Some(MetricChange {
        metric: m,
        before: Some(before),
        after: Some(after),
        difference: Some(after - before),
        difference_interval: interval,
        ratio: (before != 0.0).then(|| after / before),
        ratio_interval,
        threshold,
        detectable_change: interval.as_ref().and_then(super::stats::detectable),
        label,
        method,
    })
}

/// A percentile's label from its quantity's whole-distribution shift, when the shift is past
/// the threshold and the shapes agree (the distribution moved as a whole, its tail with it).
fn by_shift(
    m: Metric,
    before: f64,
    shifts: &[(Quantity, Shift)],
    threshold: Threshold,
) -> Option<(Label, String)> {
    let Metric::Latency(q, stat) = m else {
        return None;
    };
    if matches!(stat, Stat::Max | Stat::Mean) {
        return None;
    }
    let (_, s) = shifts.iter().find(|(k, _)| *k == q)?;
    let l = label(m, before, &s.interval, threshold);
    if !matches!(l, Label::Regression | Label::Improvement) || s.shape_p < 0.05 {
        return None;
    }
    let (lo, hi) = s.interval.ends()?;
    Some((
        l,
        format!(
            "the whole {} distribution moved by {} ms [{}, {}] (Hodges–Lehmann, {} requests) \
             with its shape unchanged (Kolmogorov–Smirnov p = {:.2}), so this percentile moved \
             with it",
            q.as_str(),
            fmt(s.interval.estimate),
            fmt(lo),
            fmt(hi),
            s.interval.n,
            s.shape_p
        ),
    ))
}

fn fmt(v: f64) -> String {
    crate::base::fmt::format_number(v)
}

/// Each per-request quantity's whole-distribution shift.
pub(crate) fn shifts(rb: &Run, ra: &Run, paired: bool) -> Vec<(Quantity, Shift)> {
    [Quantity::Ttft, Quantity::Tpot, Quantity::E2e]
        .into_iter()
        .filter_map(|q| {
            let m = Metric::Latency(q, Stat::P50);
            let s = super::stats::shift(&units(rb, m), &units(ra, m), paired)?;
            Some((q, s))
        })
        .collect()
}

/// The shifts as the cell shows them, each labelled against its median's threshold.
fn shift_changes(
    cb: &CandidateReport,
    shifts: &[(Quantity, Shift)],
    paired: bool,
    threshold: &dyn Fn(Metric) -> Threshold,
) -> Vec<ShiftChange> {
    shifts
        .iter()
        .map(|(q, s)| {
            let m = Metric::Latency(*q, Stat::P50);
            let before = cb.metric(m).unwrap_or(0.0);
            ShiftChange {
                quantity: q.as_str().to_string(),
                shift: s.interval,
                paired,
                shape_p: s.shape_p,
                label: label(m, before, &s.interval, threshold(m)),
            }
        })
        .collect()
}

/// Both sides' distributions, when both have them.
fn curves(cb: &CandidateReport, ca: &CandidateReport) -> Option<CellCurves> {
    let (b, a) = (
        cb.summary.as_ref()?.curves.as_ref()?,
        ca.summary.as_ref()?.curves.as_ref()?,
    );
    Some(CellCurves {
        ttft_ms: [b.ttft_ms.clone(), a.ttft_ms.clone()],
        tpot_ms: [b.tpot_ms.clone(), a.tpot_ms.clone()],
        e2e_ms: [b.e2e_ms.clone(), a.e2e_ms.clone()],
    })
}
