//! How far a quantized model's next-token distribution is from its float model's at one
//! position, from what servers return: each side's top-K log-probabilities and the reference
//! token's log-probability (teacher forcing: the reference is the text's own next token).
//!
//! KL divergence float → quantized is computed over the tokens both lists hold, plus one tail
//! bucket for everything else on each side. Merging tokens into a bucket can only lower a KL
//! divergence (the data-processing inequality), so the figure is a **lower bound** of the true
//! one, exact when the listed tokens hold all the mass; each position's tail masses are kept so
//! a reader sees how close to exact it is.

/// One side at one position.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// Top-K `(token id, log-probability)`, any order.
    pub top: Vec<(u32, f64)>,
    /// Log-probability of the reference token.
    pub reference: f64,
}

/// The comparison at one position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Position {
    /// KL(float ‖ quantized) over the shared tokens and a tail bucket, nats (a lower bound).
    pub kld: f64,
    /// Both sides' most likely token is the same.
    pub top1_match: bool,
    /// The reference token's log-probability under the float model.
    pub ref_logprob_float: f64,
    /// … under the quantized model.
    pub ref_logprob_quant: f64,
    /// The float model's mass outside the shared tokens.
    pub tail_float: f64,
    /// The quantized model's mass outside the shared tokens.
    pub tail_quant: f64,
    /// The largest change of log-probability, |ln q − ln p|, among the shared tokens: how far
    /// the models move a listed token, the yardstick for what the unlisted ones may do.
    pub shared_log_ratio_max: f64,
}

/// Probabilities below this count as zero in the tail bucket (rounding of a sum near 1).
const TAIL_EPSILON: f64 = 1e-9;

fn argmax(top: &[(u32, f64)]) -> Option<u32> {
    top.iter()
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|t| t.0)
}

/// Compares the float side with the quantized side at one position.
pub fn compare(float: &Side, quant: &Side) -> Position {
    let mut kld = 0.0;
    let (mut shared_p, mut shared_q, mut moved) = (0.0, 0.0, 0.0f64);
    for &(id, lp) in &float.top {
        if let Some(&(_, lq)) = quant.top.iter().find(|t| t.0 == id) {
            let p = lp.exp();
            kld += p * (lp - lq);
            shared_p += p;
            shared_q += lq.exp();
            moved = moved.max((lq - lp).abs());
        }
    }
    let tail = |s: f64| {
        let t = 1.0 - s;
        if t < TAIL_EPSILON {
            0.0
        } else {
            t
        }
    };
    let (tp, tq) = (tail(shared_p), tail(shared_q));
    if tp > 0.0 {
        kld += tp * (tp / tq.max(TAIL_EPSILON)).ln();
    }
    Position {
        kld: kld.max(0.0),
        top1_match: argmax(&float.top).is_some() && argmax(&float.top) == argmax(&quant.top),
        ref_logprob_float: float.reference,
        ref_logprob_quant: quant.reference,
        tail_float: tp,
        tail_quant: tq,
        shared_log_ratio_max: moved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(ps: &[(u32, f64)], reference: f64) -> Side {
        Side {
            top: ps.iter().map(|&(i, p)| (i, p.ln())).collect(),
            reference: reference.ln(),
        }
    }

    #[test]
    fn identical_distributions_diverge_by_nothing() {
        let a = side(&[(1, 0.7), (2, 0.2), (3, 0.1)], 0.2);
        let c = compare(&a, &a);
        assert!(c.kld.abs() < 1e-12 && c.top1_match);
        assert_eq!((c.tail_float, c.tail_quant), (0.0, 0.0));
    }

    #[test]
    fn exact_when_the_lists_hold_all_the_mass() {
        let (p, q): ([f64; 3], [f64; 3]) = ([0.5, 0.3, 0.2], [0.4, 0.4, 0.2]);
        let exact: f64 = p.iter().zip(q).map(|(p, q)| p * (p / q).ln()).sum();
        let f = side(&[(1, p[0]), (2, p[1]), (3, p[2])], p[0]);
        let g = side(&[(1, q[0]), (2, q[1]), (3, q[2])], q[0]);
        assert!((compare(&f, &g).kld - exact).abs() < 1e-12);
    }

    #[test]
    fn a_cut_list_gives_a_lower_bound_and_says_its_tail() {
        let p: [f64; 5] = [0.5, 0.2, 0.15, 0.1, 0.05];
        let q: [f64; 5] = [0.3, 0.3, 0.05, 0.05, 0.3];
        let exact: f64 = p.iter().zip(q).map(|(p, q)| p * (p / q).ln()).sum();
        let f = side(&[(1, p[0]), (2, p[1]), (3, p[2])], p[0]);
        let g = side(&[(1, q[0]), (2, q[1]), (5, q[4])], q[0]);
        let c = compare(&f, &g);
        assert!(
            c.kld <= exact + 1e-12 && c.kld > 0.0,
            "{} vs {exact}",
            c.kld
        );
        assert!((c.tail_float - 0.3).abs() < 1e-12 && (c.tail_quant - 0.4).abs() < 1e-12);
        assert!(!c.top1_match || p[0] > p[1]);
    }

    #[test]
    fn a_different_first_choice_is_counted() {
        let f = side(&[(1, 0.6), (2, 0.4)], 0.6);
        let g = side(&[(1, 0.4), (2, 0.6)], 0.4);
        assert!(!compare(&f, &g).top1_match);
    }
}
