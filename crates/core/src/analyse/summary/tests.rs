//! Unit tests of the recomputed summaries.
use super::curves::PREFILL_BINS;
use super::*;
use crate::schema::{Gaps, MemorySample, MetricSample, RequestColumns};

/// send, TTFT, e2e, output tokens, error, gaps
type Row<'a> = (
    u64,
    Option<u64>,
    Option<u64>,
    Option<u32>,
    Option<&'a str>,
    &'a [u32],
);

fn repeat(rows: &[Row<'_>]) -> Repeat {
    let mut r = RequestColumns::default();
    let mut gaps = Gaps::new();
    for &(send, ttft, e2e, out, err, g) in rows {
        r.send_offset_us.push(send);
        r.ttft_us.push(ttft);
        r.e2e_us.push(e2e);
        r.prompt_tokens.push(Some(10));
        r.prompt_tokens_source.push(Some(TokenSource::Usage));
        r.output_tokens.push(out);
        r.output_tokens_source.push(out.map(|_| TokenSource::Usage));
        r.server_queue_us.push(None);
        r.error.push(err.map(str::to_string));
        gaps.push(g);
    }
    r.itl_us = gaps;
    Repeat {
        requests: r,
        ..Default::default()
    }
}

#[test]
fn recomputes_by_the_shared_definitions() {
    // two ok requests and one failure; window = 0 .. 1_000_000 + 200_000
    let rep = repeat(&[
        (
            0,
            Some(100_000),
            Some(400_000),
            Some(4),
            None,
            &[100_000, 100_000, 100_000],
        ),
        (
            1_000_000,
            Some(50_000),
            Some(200_000),
            Some(2),
            None,
            &[150_000],
        ),
        (1_100_000, None, None, None, Some("http 500"), &[]),
    ]);
    let (s, per) = summarize(std::slice::from_ref(&rep), &Thresholds::default());
    assert_eq!(per.len(), 1);
    assert_eq!(
        (s.requests_sent, s.requests_ok, s.requests_failed),
        (3, 2, 1)
    );
    assert!((s.failure_rate.unwrap() - 1.0 / 3.0).abs() < 1e-12);
    // TPOT: (400-100)/3 = 100 ms, (200-50)/1 = 150 ms
    assert_eq!(s.tpot.mean_ms, Some(125.0));
    assert_eq!(s.ttft.p50_ms, Some(75.0));
    assert_eq!(s.itl.count, 4);
    assert_eq!(s.window_s, Some(1.2));
    assert!((s.throughput_tps.unwrap() - 6.0 / 1.2).abs() < 1e-9);
    assert_eq!(s.queue_wait.count, 0);
    assert_eq!(s.queue_wait.p95_ms, None);
    assert_eq!(s.queue_wait_source, None);
    assert_eq!(
        s.peak_memory_mb, None,
        "no memory samples means null, not 0"
    );
}

#[test]
fn goodput_uses_the_tightest_limit_per_quantity() {
    let rep = repeat(&[
        (0, Some(100_000), Some(400_000), Some(4), None, &[]),
        (0, Some(50_000), Some(200_000), Some(2), None, &[]),
    ]);
    let th = Thresholds::from_slo(&[
        (Metric::parse("ttft_p95_ms").unwrap(), 90.0),
        (Metric::parse("ttft_p99_ms").unwrap(), 200.0),
    ]);
    let (s, _) = summarize(&[rep], &th);
    assert_eq!(s.goodput_ratio, Some(0.5));
    // The good request carries 2 output tokens over the 0.4 s window.
    assert!((s.goodput_tps.unwrap() - 2.0 / s.window_s.unwrap()).abs() < 1e-9);
    assert!(s.goodput_tps < s.throughput_tps);
}

#[test]
fn telemetry_peaks_and_sources() {
    let mut rep = repeat(&[(0, Some(1), Some(2), Some(1), None, &[])]);
    rep.memory = vec![
        MemorySample {
            offset_us: 0,
            gpu_used_mb: None,
            server_rss_mb: Some(300.0),
        },
        MemorySample {
            offset_us: 1,
            gpu_used_mb: None,
            server_rss_mb: Some(340.0),
        },
    ];
    let mut values = BTreeMap::new();
    values.insert("llamacpp:requests_deferred".to_string(), 4.0);
    rep.server_metrics = vec![MetricSample {
        offset_us: 0,
        values,
    }];
    let (s, _) = summarize(&[rep], &Thresholds::default());
    assert_eq!(s.peak_memory_mb, Some(340.0));
    assert_eq!(s.memory_source.as_deref(), Some("server_rss"));
    assert_eq!(s.queue_depth_max, Some(4.0));
}

#[test]
fn pooled_differs_from_per_repeat() {
    let a = repeat(&[(0, Some(10_000), Some(20_000), Some(2), None, &[10_000])]);
    let b = repeat(&[(0, Some(30_000), Some(40_000), Some(2), None, &[10_000])]);
    let (s, per) = summarize(&[a, b], &Thresholds::default());
    assert_eq!(per.len(), 2);
    assert_eq!(per[0].ttft.mean_ms, Some(10.0));
    assert_eq!(per[1].ttft.mean_ms, Some(30.0));
    assert_eq!(s.ttft.mean_ms, Some(20.0));
    assert_eq!(s.window_s, Some(0.06));
}

#[test]
fn prefill_bins_never_split_a_prompt_length_and_ignore_request_order() {
    // 3 lengths, 100 requests each: at most 3 bins, one per length, whatever the order.
    let mut pairs: Vec<(u32, u64)> = (0..300u64)
        .map(|i| ((10 + (i * 7) % 3 * 10) as u32, 1_000 * (i % 50 + 1)))
        .collect();
    let bins = prefill_bins(&mut pairs.clone());
    assert_eq!(bins.len(), 3);
    assert_eq!(
        bins.iter().map(|b| b.prompt_tokens).collect::<Vec<_>>(),
        [10.0, 20.0, 30.0]
    );
    assert!(bins.iter().all(|b| b.requests == 100));
    pairs.reverse();
    assert_eq!(prefill_bins(&mut pairs), bins);

    // Many distinct lengths: PREFILL_BINS bins of equal count, prompt medians rising.
    let mut many: Vec<(u32, u64)> = (0..10_000u32).map(|i| (i, u64::from(i))).collect();
    let bins = prefill_bins(&mut many);
    assert_eq!(bins.len(), PREFILL_BINS);
    assert!(bins.iter().all(|b| b.requests == 500));
    assert!(bins
        .windows(2)
        .all(|w| w[0].prompt_tokens < w[1].prompt_tokens));
    assert!((bins[0].ttft_p50_ms - 0.2495).abs() < 1e-12);

    // Counting sort agrees with a comparison sort, also past the table limit.
    let mut big: Vec<u32> = (0..1000u32)
        .map(|i| (i * 7919) % 997 + (i % 2) * (1 << 23))
        .collect();
    let mut want = big.clone();
    want.sort_unstable();
    sort_counts(&mut big, |x| *x);
    assert_eq!(big, want);
    let mut small: Vec<u32> = (0..1000u32).map(|i| (i * 7919) % 997).collect();
    let mut want = small.clone();
    want.sort_unstable();
    sort_counts(&mut small, |x| *x);
    assert_eq!(small, want);
}

#[test]
fn energy_per_token_needs_every_repeat_read_and_is_null_otherwise() {
    let mut a = repeat(&[(0, Some(100_000), Some(400_000), Some(4), None, &[])]);
    let mut b = repeat(&[(0, Some(100_000), Some(600_000), Some(6), None, &[])]);
    a.gpu_energy_j = Some(30.0);
    b.gpu_energy_j = Some(50.0);
    let (s, _) = summarize(&[a.clone(), b.clone()], &Thresholds::default());
    assert_eq!(s.gpu_energy_j, Some(80.0));
    assert_eq!(s.energy_per_output_token_j, Some(8.0));
    assert!((s.mean_gpu_power_w.unwrap() - 80.0 / s.window_s.unwrap()).abs() < 1e-9);
    b.gpu_energy_j = None;
    let (s, _) = summarize(&[a, b], &Thresholds::default());
    assert_eq!(
        (
            s.gpu_energy_j,
            s.energy_per_output_token_j,
            s.mean_gpu_power_w
        ),
        (None, None, None)
    );
}
