//! The cells: a profile's candidate (by knob value) on both sides under the same workload, and
//! per metric its change with an interval and a label. A candidate without a partner, or whose
//! workload differs, is not comparable, with why: never a regression.

use crate::analyse::compare::Kept;
use crate::analyse::report::{Analysis, CandidateReport, ProfileReport};
use crate::base::metric::Metric;
use crate::base::stats::difference_interval_95;
use crate::schema::Run;

use super::data::{per_request, same_requests, units, METRICS};
use super::stats::{change, label};
use super::types::{
    Cell, CellCurves, Label, MetricChange, NotComparable, NotComparableKind as Kind, Pairing,
    Threshold,
};

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
            (Some(b), Some(a)) => profile_cells(&b, &a, threshold, &mut cells, &mut nc),
            (Some(only), None) | (None, Some(only)) => {
                let side = if part(before).is_some() {
                    "before"
                } else {
                    "after"
                };
                for c in &only.report.candidates {
                    nc.push(not_comparable(
                        name,
                        &c.name,
                        Kind::OneSideOnly,
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
    let single = bc.len() == 1 && ac.len() == 1 && bc[0].value.is_none() && ac[0].value.is_none();
    let partner = |c: &CandidateReport| {
        if single {
            return ac.first();
        }
        ac.iter().find(|x| key(x) == key(c))
    };
    for c in bc {
        match partner(c) {
            Some(d) => match cell(b, c, a, d, threshold) {
                Ok(cell) => cells.push(cell),
                Err((kind, why)) => nc.push(not_comparable(profile, &c.name, kind, why)),
            },
            None => nc.push(left_out(a.report, c, true).unwrap_or_else(|| {
                not_comparable(
                    profile,
                    &c.name,
                    Kind::OneSideOnly,
                    format!("{} is only in the before collection", describe(c)),
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
    let changes: Vec<MetricChange> = metrics
        .into_iter()
        .filter_map(|m| metric_change(m, (cb, rb), (ca, ra), paired.is_ok(), threshold(m)))
        .collect();
    let ok = |c: &CandidateReport| c.summary.as_ref().map_or(0, |s| s.requests_ok);
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
        curves: curves(cb, ca),
    })
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

/// The cell's label: a regression anywhere, else anything inconclusive, else an improvement
/// anywhere, else no change.
fn worst(changes: &[MetricChange]) -> Label {
    let has = |l: Label| changes.iter().any(|c| c.label == l);
    [Label::Regression, Label::Inconclusive, Label::Improvement]
        .into_iter()
        .find(|&l| has(l))
        .unwrap_or(Label::NoChange)
}

fn metric_change(
    m: Metric,
    (cb, rb): (&CandidateReport, &Run),
    (ca, ra): (&CandidateReport, &Run),
    paired: bool,
    threshold: Threshold,
) -> Option<MetricChange> {
    let (before, after) = (cb.metric(m)?, ca.metric(m)?);
    let (interval, ratio_interval, method) = match per_request(m) {
        Some(stat) => {
            let c = change(&units(rb, m), &units(ra, m), stat, paired);
            let how = if paired {
                "bootstrap over requests within repeats, paired by index"
            } else {
                "bootstrap over requests within repeats, each side on its own"
            };
            match c {
                Some(c) => (Some(c.difference), c.ratio, how.to_string()),
                None => (
                    None,
                    None,
                    format!(
                        "too few values on a side for this statistic's interval (it needs {} \
                         values and 8 requests a side)",
                        super::stats::min_values(stat)
                    ),
                ),
            }
        }
        None => per_repeat_change(m, cb, ca, before),
    };
    let mut label = interval.map_or(Label::Inconclusive, |iv| label(m, before, &iv, threshold));
    // One run a side cannot show how much one run differs from the next (on a real server, more
    // than its requests differ): no change, either way, is called from it.
    let mut method = method;
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
        label,
        method,
    })
}

/// A run-level metric: one value per repeat, a Welch interval of the difference of the means
/// (3 repeats or more a side); the ratio's bounds are the difference's over the before value.
fn per_repeat_change(
    m: Metric,
    cb: &CandidateReport,
    ca: &CandidateReport,
    before: f64,
) -> (
    Option<crate::base::stats::Interval>,
    Option<[f64; 2]>,
    String,
) {
    let values = |c: &CandidateReport| -> Vec<f64> {
        c.per_repeat.iter().filter_map(|s| s.metric(m)).collect()
    };
    let (vb, va) = (values(cb), values(ca));
    if vb.len() < 3 || va.len() < 3 {
        return (
            None,
            None,
            format!(
                "one value per repeat and {} repeats before, {} after: 3 a side are needed for an \
                 interval",
                vb.len(),
                va.len()
            ),
        );
    }
    let iv = difference_interval_95(&va, &vb);
    let ratio = iv
        .filter(|_| before != 0.0)
        .and_then(|iv| iv.ends())
        .map(|(lo, hi)| [1.0 + lo / before, 1.0 + hi / before]);
    (
        iv,
        ratio,
        format!(
            "Welch t over per-repeat values ({} before, {} after)",
            vb.len(),
            va.len()
        ),
    )
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
