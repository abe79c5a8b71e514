//! The lineage panel: the status line, the records' table (every value made inert, shown
//! whole) and the records' own notes.

use super::*;
use crate::analyse::report::Analysis;

pub(super) fn view(a: &Analysis) -> LineageView {
    let l = &a.lineage;
    let field = |name: &str| {
        l.fields
            .iter()
            .find(|f| f.field == name)
            .and_then(|f| f.deployment.clone())
            .unwrap_or_else(|| MISSING.into())
    };
    // Nothing loaded is not something broken: another tool's file read alone has summaries
    // only, and says what a verdict needs.
    let absent = l.gate_file.is_none()
        && l.baseline_file.is_none()
        && l.deployment_file.is_none()
        && l.issues
            .iter()
            .all(|p| p.code == crate::base::problem::ProblemCode::MissingRecord);
    let status_line = if l.ready {
        format!(
            "Lineage: ready — artifact {} on backend version {}",
            field("artifact_id"),
            field("backend_version")
        )
    } else if absent {
        "Lineage: no records loaded — summaries only; a verdict needs the quality-gate, \
         float-baseline and deployment records"
            .to_string()
    } else {
        "Lineage: BROKEN — no profile is accepted on these records".to_string()
    };
    LineageView {
        ready: l.ready,
        absent,
        status_line: Shown::new(status_line),
        issues: if absent {
            Vec::new()
        } else {
            all(l.issues.iter().map(|p| &p.message))
        },
        warnings: all(l.warnings.iter().map(|p| &p.message)),
        notes: all(&l.notes),
        table: lineage_table(l),
        gate: l.gate.as_ref().map(|g| {
            // A record that contradicts its own per-position data, or measured another
            // artifact, is no measurement of this one: its recomputed decision is not shown as
            // the gate's answer.
            let unbelievable = l.issues.iter().any(|p| {
                matches!(
                    p.code,
                    crate::base::problem::ProblemCode::GateEvidenceContradicted
                        | crate::base::problem::ProblemCode::GateArtifactMismatch
                )
            });
            gate::view(g, !unbelievable)
        }),
        other_gates: l.other_gates.iter().flat_map(gate::other_lines).collect(),
    }
}

/// The lineage field by field: each record's value whole (the page wraps it; no value is
/// shortened out of sight), the check with its mark.
fn lineage_table(l: &crate::check::lineage::LineageReport) -> TableView {
    use crate::check::lineage::FieldStatus;
    if l.fields.is_empty() {
        return TableView::default();
    }
    let file = |what: &str, f: &Option<String>| match f {
        Some(f) => format!("{what} ({f})"),
        None => what.to_string(),
    };
    let columns = vec![
        column("field", true, false),
        column(&file("quality gate", &l.gate_file), true, false),
        column(&file("float baseline", &l.baseline_file), true, false),
        column(&file("deployment", &l.deployment_file), true, false),
        column("check", true, false),
    ];
    let value = |v: &Option<String>| Cell::text(v.as_deref().unwrap_or(MISSING));
    let rows = l
        .fields
        .iter()
        .map(|f| {
            let (mark, words) = match f.status {
                FieldStatus::Match => (Mark::Pass, "✓ same"),
                FieldStatus::ExpectedDifference => (Mark::Pass, "✓ differs as expected"),
                FieldStatus::NotRecorded => (Mark::None, "! not recorded"),
                FieldStatus::Mismatch => (Mark::Fail, "✗"),
            };
            let note = f
                .note
                .as_deref()
                .map(|n| format!(" {n}"))
                .unwrap_or_default();
            Row {
                key: Shown::new(&f.field),
                highlighted: false,
                cells: vec![
                    Cell::text(&f.field),
                    value(&f.gate),
                    value(&f.baseline),
                    value(&f.deployment),
                    Cell {
                        mark,
                        ..Cell::text(format!("{words}{note}"))
                    },
                ],
            }
        })
        .collect();
    TableView { columns, rows }
}
