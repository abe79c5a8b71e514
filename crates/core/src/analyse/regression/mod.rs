//! `compare`: did it get worse? Two collections (before, after) are each analysed as `analyze`
//! would, then matched cell by cell — a profile's candidate by knob value, under the same
//! workload only — and each metric's change is given with a 95% bootstrap interval and labelled
//! against a threshold in the metric's own direction. What else differs between the
//! collections (lineage, backend version, hardware, server command) is listed first, with the
//! verdict flips, capacity changes and binding SLO margins a reviewer reads before the table.
//!
//! Labels: `regression` when the whole interval is worse than the threshold (a change counts
//! only beyond both its relative and its absolute part), `improvement` when it is wholly better
//! beyond it, `no change` when it lies wholly within it, else `inconclusive`. Only a regression
//! fails the comparison (one-sided). Under no real change the chance that one metric's
//! interval lies wholly beyond a positive threshold is below the interval's 2.5% tail, so false
//! alarms stay under the nominal 5% (measured by the calibration test).

pub(crate) mod cells;
pub(crate) mod change;
mod changes;
pub mod data;
mod stats;
pub mod types;

use std::collections::BTreeMap;

use crate::analyse::{analyze_keeping, AnalyzeOptions};
use crate::base::metric::Metric;
use crate::read::json::LoadedFile;
use types::{Comparison, Label, Outcome, Threshold};

/// Choices of a comparison.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompareOptions {
    /// As `analyze --pool-reruns`, on both sides.
    pub pool_reruns: bool,
    /// Thresholds that replace a metric's default ([`data::default_threshold`]).
    pub thresholds: BTreeMap<Metric, Threshold>,
}

impl CompareOptions {
    /// The threshold of `m`.
    pub fn threshold(&self, m: Metric) -> Threshold {
        self.thresholds
            .get(&m)
            .copied()
            .unwrap_or_else(|| data::default_threshold(m))
    }
}

/// What each side judges, label by label, in the before side's order.
fn subject(before: &crate::Analysis, after: &crate::Analysis) -> Vec<types::SubjectChange> {
    let lines = |x: &crate::Analysis| {
        if x.subject.is_empty() {
            Vec::new()
        } else {
            x.subject.lines()
        }
    };
    let (b, a) = (lines(before), lines(after));
    let mut out: Vec<types::SubjectChange> = b
        .iter()
        .map(|(label, v)| types::SubjectChange {
            label: (*label).to_string(),
            before: Some(v.clone()),
            after: a.iter().find(|x| x.0 == *label).map(|x| x.1.clone()),
        })
        .collect();
    out.extend(
        a.iter()
            .filter(|x| !b.iter().any(|y| y.0 == x.0))
            .map(|(label, v)| types::SubjectChange {
                label: (*label).to_string(),
                before: None,
                after: Some(v.clone()),
            }),
    );
    out
}

/// Compares the `after` collection with the `before` one.
pub fn compare<F: std::borrow::Borrow<LoadedFile>>(
    before: &[F],
    after: &[F],
    options: &CompareOptions,
) -> Comparison {
    let (fb, fa) = (sorted(before), sorted(after));
    let opts = AnalyzeOptions {
        pool_reruns: options.pool_reruns,
    };
    let (ab, kb) = analyze_keeping(&fb, opts);
    let (aa, ka) = analyze_keeping(&fa, opts);
    let sb = changes::Side {
        files: fb,
        analysis: &ab,
    };
    let sa = changes::Side {
        files: fa,
        analysis: &aa,
    };
    let mut c = Comparison {
        sloscope_version: env!("CARGO_PKG_VERSION").to_string(),
        outcome: Outcome::NothingComparable,
        refused: refusals(&sb, &sa),
        changed: changes::changed(&sb, &sa),
        verdicts: changes::verdicts(&ab, &aa),
        capacity: changes::capacity(&ab, &aa),
        cells: Vec::new(),
        not_comparable: Vec::new(),
        notes: notes(&ab, &aa),
        subject: subject(&ab, &aa),
    };
    if !has_records(&sb) && !has_records(&sa) {
        c.notes.push(
            "no lineage records on either side: what changed is read from the runs only".into(),
        );
    }
    if !c.refused.is_empty() {
        c.outcome = Outcome::Refused;
        return c;
    }
    let before_runs = sb.runs();
    let (cells, nc) = cells::cells((&ab, &kb), (&aa, &ka), &before_runs, &|m| {
        options.threshold(m)
    });
    c.outcome = outcome(&cells, &nc);
    if c.outcome == Outcome::NoRegression && after_incomplete(&aa) {
        c.outcome = Outcome::Incomplete;
    }
    if c.capacity
        .iter()
        .any(|k| k.candidates.iter().any(|x| x.worse))
    {
        c.outcome = Outcome::Regression;
    }
    c.cells = cells;
    c.not_comparable = nc;
    c
}

fn sorted<F: std::borrow::Borrow<LoadedFile>>(files: &[F]) -> Vec<&LoadedFile> {
    let mut v: Vec<&LoadedFile> = files.iter().map(std::borrow::Borrow::borrow).collect();
    crate::base::order::sort_by(&mut v, |a, b| a.name.cmp(&b.name));
    v
}

/// The answer: a regression (a metric, or an after run that failed), else incomplete (a run
/// of a side left out), else no regression, or nothing comparable.
fn outcome(cells: &[types::Cell], nc: &[types::NotComparable]) -> Outcome {
    use types::NotComparableKind as K;
    if cells.iter().any(|x| x.label == Label::Regression)
        || nc.iter().any(|n| n.kind == K::FailedAfter)
    {
        Outcome::Regression
    } else if nc
        .iter()
        .any(|n| matches!(n.kind, K::LeftOut | K::SameMeasurements | K::MissingAfter))
    {
        Outcome::Incomplete
    } else if cells.is_empty() {
        Outcome::NothingComparable
    } else if cells
        .iter()
        .all(|c| c.label == Label::Inconclusive && decided(c) == 0)
    {
        Outcome::Inconclusive
    } else {
        Outcome::NoRegression
    }
}

/// Whether the after side is itself incomplete (a cell its plan asks for not measured): it
/// cannot vouch for what it did not measure.
fn after_incomplete(a: &crate::analyse::report::Analysis) -> bool {
    a.profiles.iter().any(|p| !p.missing.is_empty())
}

/// How many of a cell's metrics the data decided (regression, improvement or no change).
fn decided(c: &types::Cell) -> usize {
    c.metrics
        .iter()
        .filter(|m| {
            matches!(
                m.label,
                Label::Regression | Label::Improvement | Label::NoChange
            )
        })
        .count()
}

/// Whether a side holds lineage records (without any, its lineage is not checked: the runs
/// alone are compared).
fn has_records(s: &changes::Side<'_>) -> bool {
    use crate::read::json::Document;
    s.files.iter().any(|f| {
        matches!(
            f.doc,
            Document::QualityGate(_) | Document::FloatBaseline(_) | Document::Deployment(_)
        )
    })
}

/// How many different plans a side holds.
fn plans(s: &changes::Side<'_>) -> usize {
    use crate::read::json::Document;
    let mut seen: Vec<&crate::schema::Plan> = Vec::new();
    for f in &s.files {
        if let Document::Plan(p) = &f.doc {
            if !seen.contains(&p) {
                seen.push(p);
            }
        }
    }
    seen.len()
}

/// Why the two collections cannot be compared at all.
fn refusals(b: &changes::Side<'_>, a: &changes::Side<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for (side, s) in [("before", b), ("after", a)] {
        if s.runs().is_empty() {
            out.push(format!("the {side} collection holds no run"));
        }
        if plans(s) > 1 {
            out.push(format!(
                "the {side} collection holds {} different plans: no verdict or cell can say \
                 which one its runs are measured against; keep one",
                plans(s)
            ));
        }
        if has_records(s) && !s.analysis.lineage.ready && !s.analysis.lineage.issues.is_empty() {
            let first = &s.analysis.lineage.issues[0].message;
            out.push(format!(
                "the {side} collection's lineage is broken: {first} (fix it, or compare the \
                 runs without the lineage records)"
            ));
        }
        if let Some(sh) = s.analysis.shards.as_ref().filter(|sh| !sh.complete) {
            let first = sh
                .problems
                .first()
                .map_or("not every shard finished", String::as_str);
            out.push(format!(
                "the {side} collection is a sharded run that does not stand for its whole plan: {first}"
            ));
        }
    }
    // The same measurements on both sides, whatever the headers say (a port, a stamp, a
    // candidate's name): nothing that changed between them can show.
    let (rb, ra) = (b.runs(), a.runs());
    let measuring: Vec<&&crate::schema::Run> =
        ra.iter().filter(|r| !r.repeats.is_empty()).collect();
    if !measuring.is_empty()
        && measuring.iter().all(|x| {
            rb.iter()
                .any(|y| crate::check::run::fingerprint::same_runs(x, y))
        })
    {
        out.push(
            "every run of the after collection holds measurements of the before collection (the \
             same requests, whole, a subset, nudged or relabelled): give the collection before \
             the change and the one after it"
                .into(),
        );
    }
    out
}

fn notes(
    b: &crate::analyse::report::Analysis,
    a: &crate::analyse::report::Analysis,
) -> Vec<String> {
    let mut out = Vec::new();
    for (side, an) in [("before", b), ("after", a)] {
        out.extend(an.notes.iter().map(|n| format!("{side}: {n}")));
        for p in &an.profiles {
            for e in &p.excluded {
                out.push(format!(
                    "{side}: {}: {} ({}) left out: {}",
                    p.profile, e.candidate, e.file, e.reason
                ));
            }
        }
    }
    out
}
