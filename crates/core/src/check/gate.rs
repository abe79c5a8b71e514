//! A measured quality gate, checked: its figures recomputed from its own per-position columns,
//! its decision made again from them and its thresholds, and everything it claims held against
//! what it holds. The same code makes the figures when `sloscope gate` writes the record.
//!
//! **How sure**: neighbouring positions of one text are not independent, so each figure's
//! interval is Student t over blocks of [`BLOCK_POSITIONS`] consecutive positions of a text
//! (each block's mean one value), from [`MIN_BLOCKS`] blocks on. The artifact is accepted only
//! when each figure's one-sided 95% bound is within its threshold; a figure past its threshold
//! rejects it; anything between is `not_enough_evidence`, with what would decide it.
//!
//! **The KL divergence from top-K lists** is a lower bound of the true one (tokens outside the
//! shared lists are merged into one bucket). A lower bound within the limit does not show the
//! true figure is: the bound counts the unlisted mass `T` of each position at most
//! `T·ln 100 − T·ln(T/T_q)` — what it adds if no unlisted token is more than 100 times less
//! (or more) likely under the quantized model than under the float one, a stated assumption —
//! and accepts on KL only when that upper bound is within the limit too; otherwise it says how
//! little unlisted mass (a larger `--top-k`) would decide. Every figure is of the served
//! distributions (the servers' kernels and their numerics included), not of the weights alone.

use crate::base::confidence::{t_bounds, ALPHA as SIDE};
use crate::base::stats::{percentile_sorted, Interval, IntervalMethod};
use crate::schema::{
    GateDecision, GateEvidence, GateFigures, GateIntervals, GateThresholds, PositionColumns,
};

/// Consecutive positions of one text in a block.
pub const BLOCK_POSITIONS: usize = 8;
/// Fewest blocks the figures are bounded from.
pub const MIN_BLOCKS: usize = 10;
/// Fewest positions the figures are bounded from (as many as [`MIN_BLOCKS`] whole blocks: one
/// position per text does not make a block of evidence).
pub const MIN_POSITIONS: usize = MIN_BLOCKS * BLOCK_POSITIONS;
/// The most unlisted float mass at which a position's listed tokens speak for its unlisted
/// ones (their largest change bounds the unlisted tokens'): above it, the stated
/// [`TAIL_RATIO`] is assumed instead.
pub const LISTED_TAIL_MAX: f64 = 0.1;
/// The most an unlisted token's probability is assumed to change between the models (a ratio).
pub const TAIL_RATIO: f64 = 100.0;

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

/// The decision the figures, their intervals and the thresholds make: reject with a figure past
/// its threshold or the scoring partial; accept only with every figure's one-sided 95% bound
/// within its threshold; else not enough evidence.
pub fn decide(
    f: &GateFigures,
    iv: Option<&GateIntervals>,
    t: &GateThresholds,
    partial: bool,
) -> GateDecision {
    if partial || !breaches(f, t).is_empty() {
        GateDecision::Reject
    } else if insufficient(f, iv, t).is_empty() {
        GateDecision::Accept
    } else {
        GateDecision::NotEnoughEvidence
    }
}

/// Blocks of consecutive positions of one text, in the columns' order (each a range).
fn blocks(c: &PositionColumns) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=c.text.len() {
        let ends = i == c.text.len() || c.text[i] != c.text[start] || i - start == BLOCK_POSITIONS;
        if ends {
            out.push(start..i);
            start = i;
        }
    }
    out
}

/// Student t bounds over the block means of `value`, each tail missing with `tail`.
fn over_blocks(
    b: &[std::ops::Range<usize>],
    value: &dyn Fn(usize) -> f64,
    tail: f64,
) -> Option<(f64, f64, f64)> {
    let means: Vec<f64> = b
        .iter()
        .map(|r| r.clone().map(value).sum::<f64>() / r.len() as f64)
        .collect();
    let k = means.len() as f64;
    let mean = means.iter().sum::<f64>() / k;
    let sd = (means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt();
    let (lo, hi) = t_bounds(mean, sd, k, tail)?;
    Some((mean, lo, hi))
}

/// The figures' intervals over blocks of positions; `None` below [`MIN_BLOCKS`] blocks.
pub fn intervals(c: &PositionColumns) -> Option<GateIntervals> {
    let b = blocks(c);
    if b.len() < MIN_BLOCKS || c.kld.len() < MIN_POSITIONS || c.kld.len() != c.text.len() {
        return None;
    }
    let n = c.kld.len();
    let both = |value: &dyn Fn(usize) -> f64, estimate: f64, lo_clamp: f64| {
        let (_, lo, hi) = over_blocks(&b, value, SIDE / 2.0)?;
        let mut iv = Interval::both(
            estimate,
            lo.max(lo_clamp),
            hi,
            n,
            IntervalMethod::TOverRepeats,
        );
        iv.n = b.len() as u32;
        iv.n_effective = b.len() as f64;
        Some(iv)
    };
    let f = figures(c);
    let kld = |i: usize| c.kld[i];
    let moved = |i: usize| c.shared_log_ratio_max.get(i).copied();
    let with_tail = |i: usize| c.kld[i] + tail_gap(c.tail_float[i], c.tail_quant[i], moved(i));
    let top1 = |i: usize| f64::from(u8::from(c.top1_match[i]));
    let lr = |i: usize| c.ref_logprob_float[i] - c.ref_logprob_quant[i];
    let mut ppl = both(&lr, f.ppl_ratio?.ln(), f64::NEG_INFINITY)?;
    ppl.estimate = ppl.estimate.exp();
    ppl.low = ppl.low.map(f64::exp);
    ppl.high = ppl.high.map(f64::exp);
    let mut agree = both(&top1, f.top1_agreement?, 0.0)?;
    agree.high = agree.high.map(|h| h.min(1.0));
    widen_as_proportion(c, &mut agree);
    Some(GateIntervals {
        block_positions: BLOCK_POSITIONS as u32,
        blocks: b.len() as u32,
        kld_mean: both(&kld, f.kld_mean?, 0.0)?,
        kld_mean_upper_with_tail: over_blocks(&b, &with_tail, SIDE / 2.0)?.2,
        tail_float_mean: c.tail_float.iter().sum::<f64>() / n as f64,
        top1_agreement: agree,
        ppl_ratio: ppl,
    })
}

/// The top-1 agreement's interval at least as wide as a proportion's (Clopper–Pearson over the
/// positions, counted down by how strongly those of one text hang together): a t interval over
/// blocks that all agree has no width, though 80 agreements of 80 show only about 95.5%.
fn widen_as_proportion(c: &PositionColumns, iv: &mut Interval) {
    let mut texts: Vec<Vec<f64>> = Vec::new();
    for (i, &m) in c.top1_match.iter().enumerate() {
        if i == 0 || c.text[i] != c.text[i - 1] {
            texts.push(Vec::new());
        }
        if let Some(t) = texts.last_mut() {
            t.push(f64::from(u8::from(m)));
        }
    }
    let parts: Vec<&[f64]> = texts.iter().map(Vec::as_slice).collect();
    let dep = crate::base::confidence::dependence(&parts);
    let n = c.top1_match.len() as f64 / dep.design_effect;
    let (lo, hi) = crate::base::confidence::proportion_bounds(iv.estimate * n, n, SIDE / 2.0);
    iv.low = Some(iv.low.map_or(lo, |l| l.min(lo)));
    iv.high = Some(iv.high.map_or(hi, |h| h.max(hi)));
}

/// The most a position's unlisted mass (float `tf`, quantized `tq`) can add to its KL
/// divergence beyond the tail bucket's own share, if no unlisted token's log-probability
/// changes more than twice the most a listed one's does (`moved`), or [`TAIL_RATIO`]-fold
/// where that was not recorded or the listed tokens hold too little of the mass to speak for
/// the rest (over [`LISTED_TAIL_MAX`] unlisted): `Σ p·ln(p/q)` over the unlisted tokens is at most `tf` times
/// that change.
fn tail_gap(tf: f64, tq: f64, moved: Option<f64>) -> f64 {
    if tf <= 0.0 {
        return 0.0;
    }
    let most = moved
        .filter(|_| tf <= LISTED_TAIL_MAX)
        .map_or(TAIL_RATIO.ln(), |m| 2.0 * m);
    let bucket = if tq > 0.0 { tf * (tf / tq).ln() } else { 0.0 };
    (tf * most - bucket).max(0.0)
}

/// Why the figures, within their thresholds, are not enough evidence to accept: each figure
/// whose one-sided 95% bound is not, worded with what would decide it; too few positions to
/// bound them at all. Empty when they are enough.
pub fn insufficient(
    f: &GateFigures,
    iv: Option<&GateIntervals>,
    t: &GateThresholds,
) -> Vec<String> {
    let Some(iv) = iv else {
        return vec![format!(
            "{} positions cannot bound the figures: at least {MIN_POSITIONS} positions in \
             {MIN_BLOCKS} blocks of up to {BLOCK_POSITIONS} consecutive positions of a text are \
             needed",
            f.positions
        )];
    };
    let mut out = Vec::new();
    // Decided on the ends of the two-sided 95% intervals the record states (each a one-sided
    // 97.5% bound): wider than the one-sided 95% bound, so erring on the safe side.
    if iv.kld_mean.high.is_none_or(|h| h > t.kld_mean_max) {
        out.push(format!(
            "KL divergence mean {} {} its limit {} (95% interval {}–{})",
            fmt(f.kld_mean),
            past(iv.kld_mean.low.is_some_and(|l| l > t.kld_mean_max), "above"),
            t.kld_mean_max,
            fmt(iv.kld_mean.low),
            fmt(iv.kld_mean.high)
        ));
    } else if iv.kld_mean_upper_with_tail > t.kld_mean_max {
        let room = t.kld_mean_max - iv.kld_mean.high.unwrap_or(t.kld_mean_max);
        out.push(format!(
            "the top-K lists leave {:.1}% of the float model's mass unlisted on average, so the \
             KL divergence could be up to {} (with the unlisted tail counted, assuming no \
             unlisted token's log-probability changes more than twice the most a listed one's \
             does) against its limit {}: a larger --top-k, leaving less unlisted, would decide \
             it ({} of room below the limit)",
            100.0 * iv.tail_float_mean,
            crate::base::fmt::format_number(iv.kld_mean_upper_with_tail),
            t.kld_mean_max,
            crate::base::fmt::format_number(room.max(0.0))
        ));
    }
    if iv.top1_agreement.low.is_none_or(|l| l < t.top1_min) {
        out.push(format!(
            "top-1 agreement {} {} its limit {} (95% interval {}–{})",
            fmt(f.top1_agreement),
            past(
                iv.top1_agreement.high.is_some_and(|h| h < t.top1_min),
                "below"
            ),
            t.top1_min,
            fmt(iv.top1_agreement.low),
            fmt(iv.top1_agreement.high)
        ));
    }
    if iv.ppl_ratio.high.is_none_or(|h| h > t.ppl_ratio_max) {
        out.push(format!(
            "perplexity ratio {} {} its limit {} (95% interval {}–{})",
            fmt(f.ppl_ratio),
            past(
                iv.ppl_ratio.low.is_some_and(|l| l > t.ppl_ratio_max),
                "above"
            ),
            t.ppl_ratio_max,
            fmt(iv.ppl_ratio.low),
            fmt(iv.ppl_ratio.high)
        ));
    }
    out
}

/// `is above` when the whole interval is past the limit, `may be above` when it straddles it.
fn past(whole: bool, side: &str) -> String {
    if whole {
        format!("is {side}")
    } else {
        format!("may be {side}")
    }
}

fn fmt(v: Option<f64>) -> String {
    v.map_or_else(|| "none".into(), crate::base::fmt::format_number)
}

/// Stated intervals equal to the recomputed ones (to the writer's rounding).
fn same_intervals(a: Option<&GateIntervals>, b: Option<&GateIntervals>) -> bool {
    let (Some(a), Some(b)) = (a, b) else {
        return a.is_none() && b.is_none();
    };
    let iv = |x: &Interval, y: &Interval| {
        close(Some(x.estimate), Some(y.estimate)) && close(x.low, y.low) && close(x.high, y.high)
    };
    a.blocks == b.blocks
        && a.block_positions == b.block_positions
        && iv(&a.kld_mean, &b.kld_mean)
        && iv(&a.top1_agreement, &b.top1_agreement)
        && iv(&a.ppl_ratio, &b.ppl_ratio)
        && close(
            Some(a.kld_mean_upper_with_tail),
            Some(b.kld_mean_upper_with_tail),
        )
        && close(Some(a.tail_float_mean), Some(b.tail_float_mean))
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
        && (c.shared_log_ratio_max.is_empty() || c.shared_log_ratio_max.len() == n)
}

/// One position's whole measurement, for telling copies apart.
fn position_key(c: &PositionColumns, i: usize) -> [u64; 6] {
    [
        c.kld[i].to_bits(),
        u64::from(c.top1_match[i]),
        c.ref_logprob_float[i].to_bits(),
        c.ref_logprob_quant[i].to_bits(),
        c.tail_float[i].to_bits(),
        c.tail_quant[i].to_bits(),
    ]
}

/// Positions that are copies of others: every figure of a position bit for bit another's. Two
/// teacher-forced positions have different contexts, so at most a few coincide (a token whose
/// probability rounds to 1 under both models); more than a twentieth copied (and at least 4)
/// is data repeated to look like more.
fn copied(c: &PositionColumns) -> Option<String> {
    let n = c.kld.len();
    let mut seen = std::collections::HashSet::with_capacity(n);
    let copies = (0..n).filter(|&i| !seen.insert(position_key(c, i))).count();
    (copies >= 4 && copies * 20 > n).then(|| {
        format!(
            "{copies} of {n} positions repeat another position bit for bit (every figure equal): \
             positions copied to look like more evidence, not scored"
        )
    })
}

/// Whether two gates hold the same per-position measurement (under two artifacts, one of the
/// two is not what it says): every column equal, or half their positions bit for bit.
pub fn same_positions(a: &PositionColumns, b: &PositionColumns) -> bool {
    if a.kld.is_empty() || b.kld.is_empty() {
        return false;
    }
    if a == b {
        return true;
    }
    let keys: std::collections::HashSet<[u64; 6]> =
        (0..b.kld.len()).map(|i| position_key(b, i)).collect();
    let shared = (0..a.kld.len())
        .filter(|&i| keys.contains(&position_key(a, i)))
        .count();
    shared >= 8 && shared * 2 >= a.kld.len().min(b.kld.len())
}

/// A position whose stated largest listed change is smaller than its own shared tokens'
/// divergence requires: the shared part of the KL divergence, `Σ p·(ln p − ln q)` over the
/// shared tokens, is at most their float mass times that change.
fn moved_too_little(c: &PositionColumns) -> Option<usize> {
    c.shared_log_ratio_max
        .iter()
        .enumerate()
        .position(|(i, &m)| {
            let (tf, tq) = (c.tail_float[i], c.tail_quant[i]);
            // The bucket's term as the divergence computes it (a zero quantized tail as 1e-9).
            let bucket = if tf > 0.0 {
                tf * (tf / tq.max(1e-9)).ln()
            } else {
                0.0
            };
            let shared = c.kld[i] - bucket;
            shared > (1.0 - tf) * m + 1e-6 * (1.0 + shared.abs())
        })
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
        && c.shared_log_ratio_max
            .iter()
            .all(|m| m.is_finite() && *m >= 0.0)
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
    if let Some(why) = copied(&e.positions) {
        out.push(format!("evidence.positions: {why}"));
    }
    if e.noise_positions.as_ref() == Some(&e.positions) && !e.positions.kld.is_empty() {
        out.push(
            "evidence.noise_positions: the float model's second scoring is the quantized \
             scoring itself (every column equal): one of them was not measured"
                .to_string(),
        );
    }
    if let Some(i) = moved_too_little(&e.positions) {
        out.push(format!(
            "evidence.positions.shared_log_ratio_max[{i}]: smaller than position {i}'s own \
             divergence over its shared tokens requires (it bounds what the unlisted tokens may \
             add, so it cannot be understated)"
        ));
    }
    let real = figures(&e.positions);
    let wrong = misstated(&e.figures, &real);
    if !wrong.is_empty() {
        out.push(format!(
            "evidence.figures: {} not what the gate's own per-position data gives",
            wrong.join(", ")
        ));
    }
    let real_iv = intervals(&e.positions);
    if e.intervals.is_some() && !same_intervals(e.intervals.as_ref(), real_iv.as_ref()) {
        out.push("evidence.intervals: not what the gate's own per-position data gives".to_string());
    }
    let decided = decide(&real, real_iv.as_ref(), &e.thresholds, e.partial.is_some());
    if e.decision != GateDecision::Reject && decided == GateDecision::Reject {
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
    /// Why the figures, within their thresholds, are not enough to accept on, worded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub insufficient: Vec<String>,
    /// The figures' intervals over blocks of positions (`null` below 10 blocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals: Option<GateIntervals>,
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
    let iv = intervals(&e.positions);
    GateReport {
        decision: decide(&f, iv.as_ref(), &e.thresholds, e.partial.is_some()),
        insufficient: insufficient(&f, iv.as_ref(), &e.thresholds),
        intervals: iv,
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
