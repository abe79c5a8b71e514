//! `sloscope gate` held against an independent reference: llama.cpp's own `llama-perplexity
//! --kl-divergence` (full vocabulary) of the Q4_0 quantization against the F16 over
//! `tests/fixtures/gate/reference/text.txt`, in chunks of 128 tokens
//! (`scripts/reference-perplexity.sh` built it and wrote the fixtures; the commands are in the
//! fixture's header). sloscope scores the same positions with `--chunk 128`.
//!
//! Tolerances, and why: perplexities and their ratio are exact on both sides (the reference
//! token's own log-probability), so they agree to the arithmetic of the build — 0.5 % on the same
//! build, 2 % across builds (other CPU kernels round Q4_0 matmuls differently: 0.75 % measured
//! between the prebuilt AVX-512 server and the AVX2 reference build); top-1 agreement within the
//! reference's own standard error (a near-tie flips with the arithmetic); sloscope's KL divergence
//! is a lower bound of the full-vocabulary one (top-K plus a tail bucket), so it may not exceed it
//! (1 % slack for the arithmetic) — on this 135M model, whose distributions are flat, top-20
//! captures 59 % of it (top-100: 77 %), so it is held at ≥ 50 %.

use std::path::Path;

use sloscope_core::gate::figures;
use sloscope_core::schema::{GateFigures, PositionColumns};

use crate::common::{repo, scratch, sloscope, stderr};
use crate::gate::{gate_args, lineage_of, llama_with};

/// llama-perplexity's statistics: value and its stated uncertainty, by line label.
struct Reference(String);

impl Reference {
    fn load() -> Self {
        let p = repo().join("tests/fixtures/gate/reference/llama-perplexity-q4_0.txt");
        Reference(std::fs::read_to_string(p).unwrap())
    }

    /// `(value, ±)` of the line starting with `label` (percentages as shares).
    fn get(&self, label: &str) -> (f64, f64) {
        let line = self
            .0
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no line {label:?} in the reference"));
        let rest = line[label.len()..].trim_start_matches([' ', ':']);
        let nums: Vec<f64> = rest
            .split(['±', '%'])
            .filter_map(|x| x.trim().parse().ok())
            .collect();
        let scale = if line.ends_with('%') { 0.01 } else { 1.0 };
        (nums[0] * scale, nums.get(1).copied().unwrap_or(0.0) * scale)
    }
}

/// Holds `f` (sloscope's figures) against the reference with `ppl_tol` relative tolerance.
fn agrees(f: &GateFigures, ppl_tol: f64) {
    let r = Reference::load();
    let rel = |a: f64, b: f64| (a / b - 1.0).abs();
    let (ppl_q, _) = r.get("Mean PPL(Q) ");
    let (ppl_base, _) = r.get("Mean PPL(base)");
    let (ratio, _) = r.get("Mean PPL(Q)/PPL(base)");
    let (kld, _) = r.get("Mean    KLD");
    let (top1, top1_se) = r.get("Same top p");
    let (rms, rms_se) = r.get("RMS Δp");
    assert_eq!(
        f.positions, 252,
        "4 chunks × 63 predictions, as llama-perplexity scores"
    );
    let ours = |v: Option<f64>| v.expect("a figure");
    assert!(
        rel(ours(f.ppl_float), ppl_base) < ppl_tol,
        "{:?} vs {ppl_base}",
        f.ppl_float
    );
    assert!(
        rel(ours(f.ppl_quant), ppl_q) < ppl_tol,
        "{:?} vs {ppl_q}",
        f.ppl_quant
    );
    assert!(
        rel(ours(f.ppl_ratio), ratio) < ppl_tol,
        "{:?} vs {ratio}",
        f.ppl_ratio
    );
    let t = ours(f.top1_agreement);
    assert!(
        (t - top1).abs() <= top1_se,
        "top-1 {t} vs {top1} ± {top1_se}"
    );
    let d = ours(f.delta_p_rms);
    assert!((d - rms).abs() <= rms_se, "RMS Δp {d} vs {rms} ± {rms_se}");
    let k = ours(f.kld_mean);
    assert!(k <= kld * 1.01, "a lower bound: {k} vs {kld}");
    assert!(
        k >= 0.5 * kld,
        "top-20 holds at least half of it here: {k} vs {kld}"
    );
    assert!(ours(f.kld_max) <= r.get("Maximum KLD").0 * 1.01);
}

#[test]
fn the_committed_same_build_scoring_agrees_with_llama_perplexity() {
    let p = repo().join("tests/fixtures/gate/reference/sloscope-q4_0.gate.json");
    let g: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    let e = &g["evidence"];
    assert_eq!(e["chunk_tokens"], 128);
    // Recomputed from the per-position columns, not read from the stated figures.
    let cols: PositionColumns = serde_json::from_value(e["positions"].clone()).unwrap();
    agrees(&figures(&cols), 0.005);
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh (it runs scripts/setup-llama.sh)"]
fn gate_on_llama_server_agrees_with_llama_perplexity_on_the_same_text() {
    let _cores = crate::common::llama_cores(1); // two servers of one thread, scored in turn
    let d = scratch("gate-reference");
    let l = lineage_of(&d, "Q4_0");
    let (_q, qurl) = llama_with("SLOSCOPE_Q4_0_GGUF", "1");
    let (_f, furl) = llama_with("SLOSCOPE_F16_GGUF", "1");
    let text = repo().join("tests/fixtures/gate/reference/text.txt");
    let out = d.join("gate.json");
    let mut args = gate_args(&qurl, &furl, &l, &out, &text);
    args.extend(["--chunk", "128", "--max-tokens", "4096"].map(String::from));
    let r = sloscope(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    assert_eq!(r.status.code(), Some(1), "Q4_0 is rejected: {}", stderr(&r));
    let g: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let cols: PositionColumns = serde_json::from_value(g["evidence"]["positions"].clone()).unwrap();
    agrees(&figures(&cols), 0.02);
    assert!(Path::new(&out).exists());
}
