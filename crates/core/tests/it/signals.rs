//! What explains a configuration beyond its latency, read from the example set (collected on
//! llama-server, which reports its prompt cache) and from edits of it: prefix-cache hits and
//! TTFT by hit, GPU energy (null with a reason on this CPU-only set), cost at the plan's price.

use sloscope_core::show::view::report_view;
use sloscope_core::{analyze, Document, LoadedFile};

use crate::snapshots::example_files;

fn with_plan(edit: impl Fn(&mut sloscope_core::schema::Plan)) -> Vec<LoadedFile> {
    example_files()
        .into_iter()
        .map(|mut f| {
            if let Document::Plan(p) = &mut f.doc {
                edit(p);
            }
            f
        })
        .collect()
}

fn signal_lines(files: &[LoadedFile], profile: &str) -> Vec<String> {
    let v = report_view(&analyze(files));
    let p = v
        .profiles
        .iter()
        .find(|p| p.profile.to_string() == profile)
        .unwrap();
    p.signals.iter().map(|s| s.to_string()).collect()
}

#[test]
fn cost_follows_the_plans_price_and_each_candidates_throughput() {
    let files = with_plan(|p| {
        p.gpu_hour_usd = Some(2.0);
        p.gpus_per_server = Some(2);
    });
    let a = analyze(&files);
    let p = a
        .profiles
        .iter()
        .find(|p| p.profile == "throughput")
        .unwrap();
    for c in &p.candidates {
        let tps = c
            .metric(sloscope_core::base::metric::Metric::THROUGHPUT)
            .unwrap();
        let want = 2.0 * 2.0 / 3600.0 / tps * 1e6;
        let got = c.cost_per_million_output_tokens_usd.unwrap();
        assert!(
            (got - want).abs() < 1e-9 * want,
            "{} {got} vs {want}",
            c.name
        );
    }
    let lines = signal_lines(&files, "throughput");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("cost at $2 per GPU-hour × 2 GPU(s)")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .filter(|l| l.contains("per million output tokens"))
            .count()
            >= 2
    );
    // An unusable price is said, never turned into a cost.
    let bad = with_plan(|p| p.gpu_hour_usd = Some(-1.0));
    let lines = signal_lines(&bad, "throughput");
    assert!(
        lines.iter().any(|l| l
            .contains("cost not computed: the plan's gpu_hour_usd -1: expected a price above 0")),
        "{lines:?}"
    );
    let a = analyze(&bad);
    assert!(a
        .profiles
        .iter()
        .flat_map(|p| &p.candidates)
        .all(|c| c.cost_per_million_output_tokens_usd.is_none()));
}

#[test]
fn without_an_energy_counter_energy_is_null_and_the_page_says_why() {
    let files = example_files();
    let a = analyze(&files);
    for c in a.profiles.iter().flat_map(|p| &p.candidates) {
        let s = c.summary.as_ref().unwrap();
        assert_eq!(
            (
                s.gpu_energy_j,
                s.energy_per_output_token_j,
                s.mean_gpu_power_w
            ),
            (None, None, None)
        );
    }
    let lines = signal_lines(&files, "latency");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("GPU energy: not measured")),
        "{lines:?}"
    );
}
