//! The special functions the intervals need, written out (the core takes no numerics
//! dependency and must compute the same digits natively and in the page): the log-gamma
//! function, the regularized incomplete beta function and the distributions built on it
//! (binomial, Student t, F), and the standard normal's quantile.
//!
//! Accuracy: about 1e-13 relative for `ln_gamma` (Lanczos, g = 7, n = 9) and 1e-12 for the
//! incomplete beta (Lentz's continued fraction), which is far below the rounding of any bound
//! a reader sees; the tests hold them to known values.

/// ln Γ(x) for x > 0.
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Γ(x) = Γ(x + 1) / x (no reflection: it would need a sine, and the page's payload the
        // platform's trigonometry).
        return ln_gamma(x + 1.0) - x.ln();
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// cos(2πt), written out: the platform's cosine brings its argument reduction into the page
/// (about 3 KB gzipped) where a fraction of a turn reduces exactly — to a quadrant and an
/// eighth of a turn by exact binary steps — and a series does the rest (within 1e-15 of the
/// true value).
pub fn cos_turns(t: f64) -> f64 {
    let f = 4.0 * (t - t.floor());
    let q = f.floor();
    let r = f - q;
    let (c, s) = if r <= 0.5 {
        let x = r * std::f64::consts::FRAC_PI_2;
        (cos_series(x), sin_series(x))
    } else {
        let x = (1.0 - r) * std::f64::consts::FRAC_PI_2;
        (sin_series(x), cos_series(x))
    };
    match q as u8 {
        0 => c,
        1 => -s,
        2 => -c,
        _ => s,
    }
}

/// cos x for |x| ≤ π/4, its Taylor series to x¹⁸ nested (the rest below 1e-17).
fn cos_series(x: f64) -> f64 {
    let x2 = x * x;
    (1..=9u32)
        .rev()
        .fold(1.0, |s, k| 1.0 - x2 / f64::from((2 * k - 1) * (2 * k)) * s)
}

/// sin x for |x| ≤ π/4, its Taylor series to x¹⁹ nested.
fn sin_series(x: f64) -> f64 {
    let x2 = x * x;
    x * (1..=9u32)
        .rev()
        .fold(1.0, |s, k| 1.0 - x2 / f64::from((2 * k) * (2 * k + 1)) * s)
}

/// The regularized incomplete beta function I_x(a, b), for a, b > 0 and x in [0, 1].
pub fn inc_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    // The continued fraction converges fast for x < (a + 1)/(a + b + 2); use the symmetry
    // I_x(a, b) = 1 − I_{1−x}(b, a) on the other side.
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=10_000 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// P(B ≤ k) for B ~ Binomial(n, p); `n` and `k` may be fractional (an effective sample size).
pub fn binom_cdf(k: f64, n: f64, p: f64) -> f64 {
    if k < 0.0 {
        return 0.0;
    }
    if k >= n {
        return 1.0;
    }
    if p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return 0.0;
    }
    // P(B ≤ k) = I_{1−p}(n − k, k + 1).
    inc_beta(1.0 - p, n - k, k + 1.0)
}

/// The quantile `prob` of Beta(a, b), by bisection on [`inc_beta`].
pub fn beta_quantile(prob: f64, a: f64, b: f64) -> f64 {
    bisect(0.0, 1.0, |x| inc_beta(x, a, b) - prob)
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * inc_beta(df / (df + t * t), df / 2.0, 0.5);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The quantile `prob` (in (0, 1)) of Student's t with `df` degrees of freedom.
pub fn t_quantile(prob: f64, df: f64) -> f64 {
    if prob == 0.5 {
        return 0.0;
    }
    // The quantile lies within ±1e7 for every df ≥ 1 and prob in [1e-9, 1 − 1e-9].
    bisect(-1e7, 1e7, |t| t_cdf(t, df) - prob)
}

/// P(F > f) for the F distribution with `d1`, `d2` degrees of freedom.
pub fn f_sf(f: f64, d1: f64, d2: f64) -> f64 {
    if f <= 0.0 {
        return 1.0;
    }
    inc_beta(d2 / (d2 + d1 * f), d2 / 2.0, d1 / 2.0)
}

/// The standard normal distribution function.
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// The standard normal's quantile, by bisection on [`normal_cdf`].
pub fn normal_quantile(prob: f64) -> f64 {
    bisect(-40.0, 40.0, |z| normal_cdf(z) - prob)
}

/// The complementary error function (Numerical Recipes' Chebyshev fit, relative error below
/// 1.2e-7 everywhere: ample for a z that only rounds a bound).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// The root of an increasing `f` on [lo, hi] (to 1e-12 of the bracket, or 200 halvings).
fn bisect(mut lo: f64, mut hi: f64, f: impl Fn(f64) -> f64) -> f64 {
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * (1.0 + mid.abs()) {
            break;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + b.abs())
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        let mut f = 1.0f64;
        for n in 1..30 {
            assert!(close(ln_gamma(n as f64), f.ln(), 1e-12), "{n}");
            f *= n as f64;
        }
        // Γ(1/2) = √π
        assert!(close(
            ln_gamma(0.5),
            std::f64::consts::PI.sqrt().ln(),
            1e-12
        ));
    }

    #[test]
    fn ln_gamma_below_one_half() {
        // Γ(1/4) and Γ(1/10), to 16 digits.
        assert!(close(ln_gamma(0.25), 3.625_609_908_221_908_f64.ln(), 1e-12));
        assert!(close(ln_gamma(0.1), 9.513_507_698_668_732_f64.ln(), 1e-12));
    }

    #[test]
    fn cos_turns_is_the_cosine_of_a_fraction_of_a_turn() {
        let mut worst = 0.0f64;
        for i in 0..200_000u32 {
            let t = f64::from(i) / 200_000.0 + 1e-7 * f64::from(i % 7);
            worst = worst.max((cos_turns(t) - (std::f64::consts::TAU * t).cos()).abs());
        }
        // The reference rounds 2πt first (up to 4.4e-16 near a whole turn).
        assert!(worst < 1e-15, "{worst:e}");
        for (t, want) in [
            (0.0, 1.0),
            (0.25, 0.0),
            (0.5, -1.0),
            (0.75, 0.0),
            (1.0, 1.0),
        ] {
            assert!((cos_turns(t) - want).abs() < 1e-16, "{t}");
        }
    }

    #[test]
    fn binomial_cdf_matches_the_sum_of_its_terms() {
        let naive = |k: u64, n: u64, p: f64| -> f64 {
            let mut c = 1.0f64;
            let mut s = 0.0;
            for i in 0..=n {
                if i <= k {
                    s += c * p.powi(i as i32) * (1.0 - p).powi((n - i) as i32);
                }
                c = c * (n - i) as f64 / (i + 1) as f64;
            }
            s
        };
        for (n, p) in [(18, 0.95), (60, 0.95), (40, 0.5), (300, 0.99), (7, 0.1)] {
            for k in 0..n {
                let (a, b) = (binom_cdf(k as f64, n as f64, p), naive(k, n, p));
                assert!(close(a, b, 1e-9), "n {n} p {p} k {k}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn t_and_normal_quantiles_match_tables() {
        assert!(close(t_quantile(0.975, 2.0), 4.302_652_7, 1e-6));
        assert!(close(t_quantile(0.975, 10.0), 2.228_138_9, 1e-6));
        assert!(close(t_quantile(0.95, 2.0), 2.919_986, 1e-6));
        assert!(close(t_quantile(0.025, 5.0), -2.570_581_8, 1e-6));
        assert!(close(normal_quantile(0.975), 1.959_964, 1e-6));
        assert!(close(normal_quantile(0.8), 0.841_621, 1e-6));
        // F(2, 57) at 3.159: the 5% point.
        assert!(close(f_sf(3.159, 2.0, 57.0), 0.05, 1e-3));
    }

    #[test]
    fn beta_quantile_inverts_the_incomplete_beta() {
        for (p, a, b) in [(0.05, 1.0, 18.0), (0.975, 3.5, 40.0), (0.5, 2.0, 2.0)] {
            let x = beta_quantile(p, a, b);
            assert!(close(inc_beta(x, a, b), p, 1e-9), "{p} {a} {b}");
        }
        // Clopper–Pearson's upper end at 0 of 18 (one-sided 95%): 1 − 0.05^(1/18).
        assert!(close(
            beta_quantile(0.95, 1.0, 18.0),
            1.0 - 0.05f64.powf(1.0 / 18.0),
            1e-9
        ));
    }
}
