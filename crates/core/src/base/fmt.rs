//! How numbers are written for people: one function, used by the text and Markdown printers,
//! the page and the verdict sentences, so they cannot disagree on a digit.

/// Formats a number for reports: up to two decimals, trailing zeros dropped; very small or
/// very large magnitudes in scientific notation.
pub fn format_number(v: f64) -> String {
    if v == 0.0 || (v.abs() >= 0.01 && v.abs() < 1e6) {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.3e}")
    }
}

/// A missing value.
pub const MISSING: &str = "–";

/// An optional number; [`MISSING`] when absent.
pub fn optional(v: Option<f64>) -> String {
    v.map(format_number).unwrap_or_else(|| MISSING.into())
}

/// A number with its unit (`28.6 ms`, `151.7 tok/s`; unitless ratios bare).
pub fn with_unit(v: Option<f64>, unit: &str) -> String {
    match v {
        None => MISSING.into(),
        Some(v) if unit.is_empty() => format_number(v),
        Some(v) => format!("{} {unit}", format_number(v)),
    }
}

/// An interval as a reader sees it: `[101.94, 121.81]`, or with a missing end said in words
/// (`[101.94, no upper bound]`).
pub fn interval(low: Option<f64>, high: Option<f64>) -> String {
    let lo = low.map_or_else(|| "no lower bound".to_string(), format_number);
    let hi = high.map_or_else(|| "no upper bound".to_string(), format_number);
    format!("[{lo}, {hi}]")
}

/// An interval after a value, in parentheses: `(95% 101.94–121.81)`, or what is missing and
/// how many values would give it (`(95% from 101.94; no upper bound from 18 requests: 72
/// needed)`).
pub fn interval_note(iv: &crate::base::stats::Interval, what: &str) -> String {
    let needed = iv
        .needed
        .map(|k| format!(": {k} needed"))
        .unwrap_or_default();
    match (iv.low, iv.high) {
        (Some(l), Some(h)) => format!("(95% {}–{})", format_number(l), format_number(h)),
        (Some(l), None) => format!(
            "(95% from {}; no upper bound from {} {what}{needed})",
            format_number(l),
            iv.n
        ),
        (None, Some(h)) => format!(
            "(95% up to {}; no lower bound from {} {what}{needed})",
            format_number(h),
            iv.n
        ),
        (None, None) => format!("(no 95% interval from {} {what}{needed})", iv.n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(format_number(28.6), "28.6");
        assert_eq!(format_number(0.0), "0");
        assert_eq!(format_number(151.666), "151.67");
        assert_eq!(format_number(0.001), "1.000e-3");
        assert_eq!(with_unit(Some(2.0), "ms"), "2 ms");
        assert_eq!(with_unit(Some(0.5), ""), "0.5");
        assert_eq!(with_unit(None, "ms"), "–");
    }
}
