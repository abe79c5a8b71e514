//! A measured quality gate, checked: its figures recomputed from its own per-position columns,
//! its decision made again from them and its thresholds, and everything it claims held against
//! what it holds. The same code makes the figures when `sloscope gate` writes the record.

use crate::base::stats::percentile_sorted;
use crate::schema::{GateDecision, GateEvidence, GateFigures, GateThresholds, PositionColumns};

/// Relative tolerance between stated and recomputed figures (rounding in the writer).
const TOLERANCE: f64 = 1e-6;

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (mut s, mut n) = (0.0, 0_usize);
    for x in v {
        s += x;
        n += 1;
    }
    (n > 0).then(|| s / n as f64)
}

fn sorted(v: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = v.collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The figures over every position.
pub fn figures(c: &PositionColumns) -> GateFigures {
    let kld = sorted(c.kld.iter().copied());
    let ppl = |lp: &[f64]| mean(lp.iter().copied()).map(|m| (-m).exp());
    let (ppl_float, ppl_quant) = (ppl(&c.ref_logprob_float), ppl(&c.ref_logprob_quant));
    let dp: Vec<f64> = c
        .ref_logprob_quant
        .iter()
        .zip(&c.ref_logprob_float)
        .map(|(q, f)| q.exp() - f.exp())
        .collect();
    let dps = sorted(dp.iter().copied());
    GateFigures {
        positions: c.kld.len() as u64,
        top1_agreement: mean(c.top1_match.iter().map(|&m| f64::from(u8::from(m)))),
        kld_mean: mean(kld.iter().copied()),
        kld_p99: percentile_sorted(&kld, 99.0),
        kld_p999: percentile_sorted(&kld, 99.9),
        kld_max: kld.last().copied(),
        ppl_float,
        ppl_quant,
        ppl_ratio: ppl_quant.zip(ppl_float).map(|(q, f)| q / f),
        delta_p_rms: mean(dp.iter().map(|d| d * d)).map(f64::sqrt),
        delta_p_p1: percentile_sorted(&dps, 1.0),
        delta_p_p99: percentile_sorted(&dps, 99.0),
        tail_max: c
            .tail_float
            .iter()
            .chain(&c.tail_quant)
            .copied()
            .max_by(f64::total_cmp),
    }
}

/// Each threshold a figure breaks, worded; empty when the figures pass.
pub fn breaches(f: &GateFigures, t: &GateThresholds) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |name: &str, v: Option<f64>, ok: &dyn Fn(f64) -> bool, limit: String| match v {
        None => out.push(format!("{name} could not be computed (no position scored)")),
        Some(v) if !ok(v) => out.push(format!("{name} {v:.4} against {limit}")),
        Some(_) => {}
    };
    check(
        "kld_mean",
        f.kld_mean,
        &|v| v <= t.kld_mean_max,
        format!("≤ {}", t.kld_mean_max),
    );
    check(
        "top1_agreement",
        f.top1_agreement,
        &|v| v >= t.top1_min,
        format!("≥ {}", t.top1_min),
    );
    check(
        "ppl_ratio",
        f.ppl_ratio,
        &|v| v <= t.ppl_ratio_max,
        format!("≤ {}", t.ppl_ratio_max),
    );
    out
}

/// The decision the figures and thresholds make: accept only with every position scored and
/// every figure within its threshold.
pub fn decide(f: &GateFigures, t: &GateThresholds, partial: bool) -> GateDecision {
    if partial || !breaches(f, t).is_empty() {
        GateDecision::Reject
    } else {
        GateDecision::Accept
    }
}

fn close(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => (a - b).abs() <= TOLERANCE * a.abs().max(b.abs()).max(1e-9),
        _ => false,
    }
}

/// The figures by their names in the record.
pub fn named(f: &GateFigures) -> [(&'static str, Option<f64>); 10] {
    [
        ("top1_agreement", f.top1_agreement),
        ("kld_mean", f.kld_mean),
        ("kld_p99", f.kld_p99),
        ("kld_p999", f.kld_p999),
        ("kld_max", f.kld_max),
        ("ppl_float", f.ppl_float),
        ("ppl_quant", f.ppl_quant),
        ("ppl_ratio", f.ppl_ratio),
        ("delta_p_rms", f.delta_p_rms),
        ("tail_max", f.tail_max),
    ]
}

/// Figures typed beside the evidence (the record's `quality`) under a figure's name that the
/// columns do not give: (name, stated, recomputed).
pub fn quality_misstated(
    quality: &std::collections::BTreeMap<String, f64>,
    real: &GateFigures,
) -> Vec<(&'static str, f64, Option<f64>)> {
    named(real)
        .into_iter()
        .filter_map(|(n, r)| {
            let s = *quality.get(n)?;
            (!close(Some(s), r)).then_some((n, s, r))
        })
        .collect()
}

/// Stated figures that the columns do not give, by name.
fn misstated(stated: &GateFigures, real: &GateFigures) -> Vec<&'static str> {
    let mut out: Vec<&str> = named(stated)
        .into_iter()
        .zip(named(real))
        .filter(|((_, s), (_, r))| !close(*s, *r))
        .map(|((n, _), _)| n)
        .collect();
    if stated.positions != real.positions {
        out.insert(0, "positions");
    }
    out
}

fn columns_agree(c: &PositionColumns) -> bool {
    let n = c.kld.len();
    [
        c.text.len(),
        c.top1_match.len(),
        c.ref_logprob_float.len(),
        c.ref_logprob_quant.len(),
        c.tail_float.len(),
        c.tail_quant.len(),
    ]
    .iter()
    .all(|&l| l == n)
}

fn plausible(c: &PositionColumns) -> bool {
    let prob = |v: &[f64]| {
        v.iter()
            .all(|x| x.is_finite() && (0.0..=1.0 + 1e-9).contains(x))
    };
    c.kld.iter().all(|k| k.is_finite() && *k >= 0.0)
        && c.ref_logprob_float
            .iter()
            .chain(&c.ref_logprob_quant)
            .all(|lp| lp.is_finite() && *lp <= 1e-9)
        && prob(&c.tail_float)
        && prob(&c.tail_quant)
}

/// What is wrong with a gate's limits, whoever set them (`sloscope gate`'s flags, a plan's
/// gate section, a record read back): `None` when each is a number in its range.
pub fn threshold_problem(t: &GateThresholds) -> Option<String> {
    if !(t.kld_mean_max.is_finite() && t.kld_mean_max >= 0.0) {
        return Some(format!(
            "kld_mean_max {}: expected a number ≥ 0 (nats)",
            t.kld_mean_max
        ));
    }
    if !(0.0..=1.0).contains(&t.top1_min) {
        return Some(format!(
            "top1_min {}: expected a share in [0, 1]",
            t.top1_min
        ));
    }
    if !(t.ppl_ratio_max.is_finite() && t.ppl_ratio_max >= 1.0) {
        return Some(format!(
            "ppl_ratio_max {}: expected a ratio ≥ 1",
            t.ppl_ratio_max
        ));
    }
    None
}

/// What a gate states about how it scored that its data or the rules contradict: limits out of
/// range, no top-K, positions in more texts than the evaluation set holds.
fn setup_contradictions(e: &GateEvidence, out: &mut Vec<String>) {
    if let Some(p) = threshold_problem(&e.thresholds) {
        out.push(format!("evidence.thresholds: {p}"));
    }
    if e.top_k == 0 {
        out.push("evidence.top_k: 0, expected 1 or more log-probabilities per position".into());
    }
    if let Some(&t) = e.positions.text.iter().max() {
        if t >= e.eval_set.texts {
            out.push(format!(
                "evidence.eval_set.texts: {}, but positions are scored in text {t} (counted from 0)",
                e.eval_set.texts
            ));
        }
    }
}

/// What a measured gate claims that its own data does not support; empty when it holds.
pub fn contradictions(e: &GateEvidence) -> Vec<String> {
    let mut out = Vec::new();
    setup_contradictions(e, &mut out);
    if !columns_agree(&e.positions) {
        out.push("evidence.positions: the per-position columns differ in length".to_string());
        return out;
    }
    if !plausible(&e.positions) {
        out.push("evidence.positions: a KL divergence below 0, a log-probability above 0, a tail mass outside [0, 1] or a value that is not a number".to_string());
        return out;
    }
    let real = figures(&e.positions);
    let wrong = misstated(&e.figures, &real);
    if !wrong.is_empty() {
        out.push(format!(
            "evidence.figures: {} not what the gate's own per-position data gives",
            wrong.join(", ")
        ));
    }
    let decided = decide(&real, &e.thresholds, e.partial.is_some());
    if e.decision == GateDecision::Accept && decided == GateDecision::Reject {
        let why = e.partial.clone().map_or_else(
            || breaches(&real, &e.thresholds).join("; "),
            |p| format!("the scoring is partial ({p})"),
        );
        out.push(format!("evidence.decision: accept, but {why}"));
    }
    if real.positions == 0 {
        out.push("evidence.positions: no position was scored".to_string());
    }
    noise_contradictions(e, &mut out);
    out
}

/// The noise floor a gate states against its own per-position noise data: a stated floor with
/// no data to give it, data that cannot be figures, or figures other than the data's.
fn noise_contradictions(e: &GateEvidence, out: &mut Vec<String>) {
    let Some(c) = e.noise_positions.as_ref() else {
        if e.noise_floor.is_some() {
            out.push(
                "evidence.noise_floor: stated, but the gate holds no per-position noise data \
                 (evidence.noise_positions) to give it"
                    .to_string(),
            );
        }
        return;
    };
    if !columns_agree(c) || !plausible(c) {
        out.push(
            "evidence.noise_positions: columns of different lengths, or a value out of range \
             (a KL divergence below 0, a log-probability above 0, a tail mass outside [0, 1])"
                .to_string(),
        );
        return;
    }
    let Some(stated) = e.noise_floor.as_ref() else {
        return;
    };
    let wrong = misstated(stated, &figures(c));
    if !wrong.is_empty() {
        out.push(format!(
            "evidence.noise_floor: {} not what the gate's own per-position noise data gives",
            wrong.join(", ")
        ));
    }
}

/// What a reader is shown of a measured gate: the figures recomputed from its per-position
/// data against its thresholds, the noise floor, and the spread of per-position KL divergence.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GateReport {
    /// The decision the recomputed figures make (reject when partial).
    pub decision: GateDecision,
    /// Recomputed from the per-position columns.
    pub figures: GateFigures,
    /// The limits.
    pub thresholds: GateThresholds,
    /// Which figures break their threshold, worded.
    pub breaches: Vec<String>,
    /// The float model against itself, recomputed, when measured.
    pub noise_floor: Option<GateFigures>,
    /// Log-probabilities per position and side.
    pub top_k: u32,
    /// The evaluation set's name, sha256 and text count.
    pub eval_set: crate::schema::EvalSet,
    /// Backend and version that served both models.
    pub backend: String,
    /// Why the scoring stopped early, when it did.
    pub partial: Option<String>,
    /// Per-position KL divergence in bins (the first from 0, then ×10 per bin from 1e-6).
    pub kld_histogram: Vec<KldBin>,
}

/// A bin of per-position KL divergence.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KldBin {
    /// From (inclusive), nats.
    pub from_nats: f64,
    /// To (exclusive), nats; `null` for the last, open bin.
    pub to_nats: Option<f64>,
    /// Positions in it.
    pub positions: u64,
}

/// Bins of per-position KL divergence: [0, 1e-6), then decades up to 10, then [10, ∞).
fn histogram(kld: &[f64]) -> Vec<KldBin> {
    let mut edges = vec![0.0];
    edges.extend((-6..=1).map(|e| 10f64.powi(e)));
    edges.push(f64::INFINITY);
    edges
        .windows(2)
        .map(|w| KldBin {
            from_nats: w[0],
            to_nats: w[1].is_finite().then_some(w[1]),
            positions: kld.iter().filter(|&&k| k >= w[0] && k < w[1]).count() as u64,
        })
        .collect()
}

/// The report of a measured gate (its columns assumed consistent: see [`contradictions`]).
pub fn report(e: &GateEvidence) -> GateReport {
    let f = figures(&e.positions);
    GateReport {
        decision: decide(&f, &e.thresholds, e.partial.is_some()),
        breaches: breaches(&f, &e.thresholds),
        figures: f,
        thresholds: e.thresholds,
        noise_floor: e.noise_positions.as_ref().map(figures),
        top_k: e.top_k,
        eval_set: e.eval_set.clone(),
        backend: format!("{} {}", e.backend, e.backend_version),
        partial: e.partial.clone(),
        kld_histogram: histogram(&e.positions.kld),
    }
}
