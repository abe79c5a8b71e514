//! A measured quality gate as a reader sees it, first in the lineage section: the decision,
//! each figure against its threshold, the noise floor, and per-position KL divergence in bins.

use crate::check::gate::GateReport;
use crate::check::lineage_gate::OtherGate;
use crate::schema::{GateDecision, GateFigures};

use super::{column, Cell, Row, Shown, TableView};

/// The gate's section.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GateView {
    /// `ACCEPT` or `REJECT`, as the recomputed figures decide.
    pub decision_label: Shown,
    /// Headline, then one line per figure against its threshold, then the noise floor.
    pub lines: Vec<Shown>,
    /// Per-position KL divergence: bin and positions.
    pub histogram: TableView,
}

fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{v:.4}"))
}

fn mark(ok: bool) -> &'static str {
    if ok {
        "✓"
    } else {
        "✗"
    }
}

fn figure_lines(f: &GateFigures, r: &GateReport) -> Vec<String> {
    let t = &r.thresholds;
    let le = |v: Option<f64>, max: f64| v.is_some_and(|v| v <= max);
    vec![
        format!(
            "KL divergence float → quantized, mean {} nats {} (limit ≤ {}); p99 {}, p99.9 {}, max {} — a lower bound per position over the shared top-{} tokens and a tail bucket (largest tail mass {}; exact at 0)",
            num(f.kld_mean), mark(le(f.kld_mean, t.kld_mean_max)), t.kld_mean_max,
            num(f.kld_p99), num(f.kld_p999), num(f.kld_max), r.top_k, num(f.tail_max)
        ),
        format!(
            "top-1 agreement {} {} (limit ≥ {})",
            num(f.top1_agreement),
            mark(f.top1_agreement.is_some_and(|v| v >= t.top1_min)),
            t.top1_min
        ),
        format!(
            "perplexity float {}, quantized {}, ratio {} {} (limit ≤ {})",
            num(f.ppl_float), num(f.ppl_quant), num(f.ppl_ratio),
            mark(le(f.ppl_ratio, t.ppl_ratio_max)), t.ppl_ratio_max
        ),
        format!(
            "reference token's probability, quantized − float: RMS {}, p1 {}, p99 {}",
            num(f.delta_p_rms), num(f.delta_p_p1), num(f.delta_p_p99)
        ),
    ]
}

fn histogram(r: &GateReport) -> TableView {
    let columns = vec![
        column("KL divergence (nats)", true, false),
        column("positions", true, true),
    ];
    let rows = r
        .kld_histogram
        .iter()
        .map(|b| {
            let (lo, n) = (b.from_nats, b.positions);
            let bin = match b.to_nats {
                Some(hi) => format!("[{lo}, {hi})"),
                None => format!("≥ {lo}"),
            };
            Row {
                key: Shown::new(&bin),
                highlighted: false,
                cells: vec![Cell::text(&bin), Cell::text(n.to_string())],
            }
        })
        .collect();
    TableView { columns, rows }
}

/// The view of a measured gate.
pub(super) fn view(r: &GateReport) -> GateView {
    let f = &r.figures;
    let label = match r.decision {
        GateDecision::Accept => "ACCEPT",
        GateDecision::Reject => "REJECT",
    };
    let mut lines = vec![format!(
        "Quality gate measured: {label} — {} positions of {} texts ({}, sha256 {}), {}",
        f.positions,
        r.eval_set.texts,
        r.eval_set.name,
        r.eval_set.sha256.get(..12).unwrap_or(&r.eval_set.sha256),
        r.backend
    )];
    lines.extend(figure_lines(f, r));
    if let Some(n) = &r.noise_floor {
        lines.push(format!(
            "noise floor (the float model against itself): KL divergence mean {}, top-1 agreement {} — no difference below it is real",
            num(n.kld_mean), num(n.top1_agreement)
        ));
    }
    lines.extend(r.breaches.iter().map(|b| format!("✗ {b}")));
    if let Some(p) = &r.partial {
        lines.push(format!("✗ partial: {p} — never an accept"));
    }
    GateView {
        decision_label: Shown::new(label),
        lines: lines.iter().map(Shown::new).collect(),
        histogram: histogram(r),
    }
}

/// Lines for another artifact's gate: which artifact and file, then its decision and figures
/// against their limits, then what does not hold in it.
pub(super) fn other_lines(o: &OtherGate) -> Vec<Shown> {
    let format = o.format.as_deref().unwrap_or("format not recorded");
    let mut lines = vec![format!(
        "Also gated, not deployed: {} ({format}, {})",
        o.artifact_id, o.file
    )];
    lines.push(match &o.measured {
        Some(r) => {
            let (f, t) = (&r.figures, &r.thresholds);
            let label = match r.decision {
                GateDecision::Accept => "ACCEPT",
                GateDecision::Reject => "REJECT",
            };
            let le = |v: Option<f64>, max: f64| mark(v.is_some_and(|v| v <= max));
            format!(
                "measured {label} over {} positions: KL divergence mean {} {} (limit ≤ {}), top-1 agreement {} {} (limit ≥ {}), perplexity ratio {} {} (limit ≤ {})",
                f.positions,
                num(f.kld_mean), le(f.kld_mean, t.kld_mean_max), t.kld_mean_max,
                num(f.top1_agreement), mark(f.top1_agreement.is_some_and(|v| v >= t.top1_min)), t.top1_min,
                num(f.ppl_ratio), le(f.ppl_ratio, t.ppl_ratio_max), t.ppl_ratio_max
            )
        }
        None => format!("{:?}, asserted (no measurement)", o.decision.as_str()),
    });
    lines.extend(o.problems.iter().map(|p| format!("✗ {p}")));
    lines.iter().map(Shown::new).collect()
}
