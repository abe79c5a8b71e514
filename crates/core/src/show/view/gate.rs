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

/// ` (95% 0.0031–0.0045)`, or nothing without an interval.
fn ci(iv: Option<&crate::base::stats::Interval>) -> String {
    iv.and_then(crate::base::stats::Interval::ends)
        .map(|(l, h)| format!(" (95% {}–{})", num(Some(l)), num(Some(h))))
        .unwrap_or_default()
}

fn figure_lines(f: &GateFigures, r: &GateReport) -> Vec<String> {
    let t = &r.thresholds;
    let le = |v: Option<f64>, max: f64| v.is_some_and(|v| v <= max);
    let iv = r.intervals.as_ref();
    let mut out = vec![format!(
        "KL divergence float → quantized, mean {} nats{} {} (limit ≤ {}); p99 {}, p99.9 {}, max {} — a lower bound per position over the shared top-{} tokens and a tail bucket (largest tail mass {}; exact at 0)",
        num(f.kld_mean), ci(iv.map(|i| &i.kld_mean)), mark(le(f.kld_mean, t.kld_mean_max)), t.kld_mean_max,
        num(f.kld_p99), num(f.kld_p999), num(f.kld_max), r.top_k, num(f.tail_max)
    )];
    if let Some(i) = iv {
        out.push(format!(
            "KL divergence with the unlisted tail counted: at most {} {} (95% upper end; {:.2}% of the float mass unlisted on average, no unlisted token's log-probability assumed to change more than twice the most a listed one's does)",
            num(Some(i.kld_mean_upper_with_tail)),
            mark(i.kld_mean_upper_with_tail <= t.kld_mean_max),
            100.0 * i.tail_float_mean
        ));
    }
    out.extend([
        format!(
            "top-1 agreement {}{} {} (limit ≥ {})",
            num(f.top1_agreement),
            ci(iv.map(|i| &i.top1_agreement)),
            mark(f.top1_agreement.is_some_and(|v| v >= t.top1_min)),
            t.top1_min
        ),
        format!(
            "perplexity float {}, quantized {}, ratio {}{} {} (limit ≤ {})",
            num(f.ppl_float),
            num(f.ppl_quant),
            num(f.ppl_ratio),
            ci(iv.map(|i| &i.ppl_ratio)),
            mark(le(f.ppl_ratio, t.ppl_ratio_max)),
            t.ppl_ratio_max
        ),
        format!(
            "reference token's probability, quantized − float: RMS {}, p1 {}, p99 {}",
            num(f.delta_p_rms),
            num(f.delta_p_p1),
            num(f.delta_p_p99)
        ),
    ]);
    out
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

/// `ACCEPT`, `REJECT` or `NOT ENOUGH EVIDENCE`.
pub fn gate_label(d: GateDecision) -> &'static str {
    match d {
        GateDecision::Accept => "ACCEPT",
        GateDecision::Reject => "REJECT",
        GateDecision::NotEnoughEvidence => "NOT ENOUGH EVIDENCE",
    }
}

/// What a gate record that cannot be believed is labelled, whatever its data would decide.
pub const NOT_BELIEVED: &str = "NOT BELIEVED";

/// The view of a measured gate; `believed`: the record does not contradict itself (else its
/// data's decision is shown as what the data would say, never as the gate's answer).
pub(super) fn view(r: &GateReport, believed: bool) -> GateView {
    let f = &r.figures;
    let label = if believed {
        gate_label(r.decision)
    } else {
        NOT_BELIEVED
    };
    let blocks = r.intervals.as_ref().map_or_else(
        || "too few to bound its figures".to_string(),
        |i| {
            format!(
                "{} blocks of up to {} consecutive positions",
                i.blocks, i.block_positions
            )
        },
    );
    let said = if believed {
        label.to_string()
    } else {
        format!(
            "{label} (the record contradicts itself: see the lineage; its per-position data alone would give {})",
            gate_label(r.decision)
        )
    };
    let mut lines = vec![format!(
        "Quality gate measured: {said} — {} positions of {} texts ({}, sha256 {}; {blocks}), {} — the served distributions, the server's kernels included, not the weights alone",
        f.positions,
        r.eval_set.texts,
        r.eval_set.name,
        r.eval_set.sha256.get(..12).unwrap_or(&r.eval_set.sha256),
        r.backend
    )];
    lines.extend(figure_lines(f, r));
    lines.extend(
        r.insufficient
            .iter()
            .map(|b| format!("? not enough evidence: {b}")),
    );
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
            let label = gate_label(r.decision);
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
