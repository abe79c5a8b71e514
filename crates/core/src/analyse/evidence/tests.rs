//! Unit tests of what a metric rests on and how an SLO is decided from it.
use super::*;
use crate::schema::{Gaps, Repeat, TokenSource};

/// A run of `repeats` repeats whose requests have these TTFTs (ms), `failed` of them failing.
fn run(ttft_ms: &[Vec<f64>], failed: usize) -> Run {
    let mut run: Run = serde_json::from_value(crate::analyse::evidence::tests::skeleton())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut left = failed;
    for (k, values) in ttft_ms.iter().enumerate() {
        let mut r = RequestColumns::default();
        let mut gaps = Gaps::new();
        for (i, &t) in values.iter().enumerate() {
            let fail = left > 0;
            left = left.saturating_sub(1);
            let us = (t * 1000.0) as u64;
            r.send_offset_us.push(i as u64 * 1_000_000);
            r.ttft_us.push((!fail).then_some(us));
            r.e2e_us.push((!fail).then_some(us + 100_000));
            r.prompt_tokens.push(Some(10));
            r.prompt_tokens_source.push(Some(TokenSource::Usage));
            r.output_tokens.push((!fail).then_some(11));
            r.output_tokens_source
                .push((!fail).then_some(TokenSource::Usage));
            r.server_queue_us.push(None);
            r.error.push(fail.then(|| "http 500".to_string()));
            gaps.push(if fail { &[] } else { &[10_000; 10] });
        }
        r.itl_us = gaps;
        run.repeats.push(Repeat {
            index: k as u32,
            requests: r,
            ..Default::default()
        });
    }
    run
}

fn skeleton() -> serde_json::Value {
    serde_json::json!({
        "kind": "run", "schema_version": "1.0", "tool": {"name": "sloscope", "version": "0"},
        "artifact_id": "x", "role": "candidate", "profile": "latency", "workload_id": "w",
        "candidate": {"name": "a"}, "backend": "b", "backend_version": "1", "hardware": "h",
        "endpoint": {"url": "http://127.0.0.1:1", "api": "completions", "model": "m"},
        "status": "ok", "evidence_level": "real_backend_profile", "source": "measured",
        "repeats": []
    })
}

/// `n` TTFTs spread evenly over [100, 200) ms in a shuffled order (no trend, no repeat
/// differing from another), in `k` repeats.
fn spread(n: usize, k: usize) -> Vec<Vec<f64>> {
    let mut values: Vec<f64> = (0..n)
        .map(|i| 100.0 + 100.0 * i as f64 / n as f64)
        .collect();
    let mut rng = crate::base::rng::Rng::new(n as u64);
    for i in (1..n).rev() {
        values.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut out = vec![Vec::new(); k];
    for (i, v) in values.into_iter().enumerate() {
        out[i % k].push(v);
    }
    out
}

fn decide_ttft(run: &Run, stat: Stat, limit: f64) -> Decided {
    let m = Metric::Latency(Quantity::Ttft, stat);
    let (s, per) = crate::analyse::summary::summarize(&run.repeats, &Default::default());
    let b = basis(run, &per, m);
    decide(&b, m, s.metric(m).unwrap_or(f64::NAN), limit)
}

#[test]
fn a_p95_from_18_requests_is_not_enough_data_and_names_what_would_be() {
    let r = run(&spread(18, 3), 0);
    let d = decide_ttft(&r, Stat::P95, 250.0);
    assert_eq!(d.outcome, SloOutcome::NotEnoughData, "{d:?}");
    assert_eq!(d.bounds[1], None, "no upper bound from 18: {d:?}");
    assert_eq!(d.needed_requests, Some(59), "{d:?}");
    // The same data against a limit they exceed with their lower bound: a confident miss.
    let d = decide_ttft(&r, Stat::P95, 120.0);
    assert_eq!(d.outcome, SloOutcome::Fail, "{d:?}");
}

#[test]
fn a_p95_from_90_requests_far_below_its_limit_passes_and_near_it_does_not() {
    let r = run(&spread(90, 3), 0);
    let d = decide_ttft(&r, Stat::P95, 250.0);
    assert_eq!(d.outcome, SloOutcome::Pass, "{d:?}");
    assert!(d.bounds[1].is_some_and(|h| h <= 200.0), "{d:?}");
    // p95 ≈ 195; a limit at 196 lies inside what the data allow.
    let d = decide_ttft(&r, Stat::P95, 196.0);
    assert_eq!(d.outcome, SloOutcome::NotEnoughData, "{d:?}");
    assert!(d.needed_requests.is_some_and(|n| n > 90), "{d:?}");
}

#[test]
fn the_interval_of_a_p95_has_no_upper_end_below_72_requests() {
    let r = run(&spread(18, 3), 0);
    let (s, per) = crate::analyse::summary::summarize(&r.repeats, &Default::default());
    let b = basis(&r, &per, Metric::TTFT_P95);
    let iv = interval(&b, Metric::TTFT_P95, s.ttft.p95_ms.unwrap_or_default()).unwrap();
    assert_eq!(iv.high, None, "{iv:?}");
    assert!(iv.low.is_some(), "{iv:?}");
    assert_eq!(iv.needed, Some(72), "{iv:?}");
    let r = run(&spread(300, 3), 0);
    let (s, per) = crate::analyse::summary::summarize(&r.repeats, &Default::default());
    let b = basis(&r, &per, Metric::TTFT_P95);
    let iv = interval(&b, Metric::TTFT_P95, s.ttft.p95_ms.unwrap_or_default()).unwrap();
    let (lo, hi) = iv.ends().unwrap();
    assert!(lo <= iv.estimate && iv.estimate <= hi, "{iv:?}");
}

#[test]
fn no_failure_against_a_limit_of_zero_passes_on_the_count_and_says_the_bound() {
    let r = run(&spread(18, 3), 0);
    let (s, per) = crate::analyse::summary::summarize(&r.repeats, &Default::default());
    let b = basis(&r, &per, Metric::FAILURE_RATE);
    let d = decide(&b, Metric::FAILURE_RATE, s.failure_rate.unwrap_or(1.0), 0.0);
    assert_eq!(d.outcome, SloOutcome::Pass);
    assert!(d.basis.contains("up to 15.3"), "{}", d.basis);
    // Against 5%, 0 of 18 cannot show the rate is below it: 59 requests would.
    let d = decide(&b, Metric::FAILURE_RATE, 0.0, 0.05);
    assert_eq!(d.outcome, SloOutcome::NotEnoughData, "{d:?}");
    assert_eq!(d.needed_requests, Some(59));
    let r = run(&spread(18, 3), 1);
    let (s, per) = crate::analyse::summary::summarize(&r.repeats, &Default::default());
    let b = basis(&r, &per, Metric::FAILURE_RATE);
    let d = decide(&b, Metric::FAILURE_RATE, s.failure_rate.unwrap_or(0.0), 0.0);
    assert_eq!(d.outcome, SloOutcome::Fail);
}

#[test]
fn repeats_that_differ_widen_the_interval_by_how_much_they_differ() {
    // Three repeats far apart: the p50's interval spans what the repeats disagree on.
    let far = |at: f64| -> Vec<f64> {
        let mut rng = crate::base::rng::Rng::new(at as u64);
        (0..40).map(|_| at + rng.unit_open()).collect()
    };
    let r = run(&[far(100.0), far(200.0), far(300.0)], 0);
    let (s, per) = crate::analyse::summary::summarize(&r.repeats, &Default::default());
    let b = basis(&r, &per, Metric::TTFT_P50);
    assert!(matches!(
        &b,
        Basis::Values {
            repeats: Some(_),
            ..
        }
    ));
    let iv = interval(&b, Metric::TTFT_P50, s.ttft.p50_ms.unwrap()).unwrap();
    let (lo, hi) = iv.ends().unwrap();
    assert!(lo < 100.0 && hi > 300.0, "{iv:?}");
    // A steady server: repeats that differ significantly, but by a hundredth of a millisecond,
    // widen a TTFT of 4 ms by little — far from any limit, still decided.
    let steady = |at: f64| -> Vec<f64> {
        let mut rng = crate::base::rng::Rng::new((at * 1e4) as u64);
        (0..40).map(|_| at + 0.001 * rng.unit_open()).collect()
    };
    let r = run(&[steady(4.00), steady(4.01), steady(4.02)], 0);
    let (s, per) = crate::analyse::summary::summarize(&r.repeats, &Default::default());
    let b = basis(&r, &per, Metric::TTFT_P95);
    assert!(matches!(
        &b,
        Basis::Values {
            repeats: Some(_),
            ..
        }
    ));
    let iv = interval(&b, Metric::TTFT_P95, s.ttft.p95_ms.unwrap()).unwrap();
    let (lo, hi) = iv.ends().unwrap();
    assert!(hi - lo < 0.2, "{iv:?}");
    let d = decide(&b, Metric::TTFT_P95, s.ttft.p95_ms.unwrap(), 5.0);
    assert_eq!(d.outcome, SloOutcome::Pass, "{d:?}");
}

#[test]
fn a_maximum_is_decided_as_observed_and_says_so() {
    let r = run(&spread(18, 3), 0);
    let d = decide_ttft(&r, Stat::Max, 250.0);
    assert_eq!(d.outcome, SloOutcome::Pass);
    assert!(d.basis.starts_with("as observed"), "{}", d.basis);
}
