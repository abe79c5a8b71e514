//! The committed sample files read: every dataset and trace, every plan (with its profile
//! contracts).

/// The sample files read as their formats say, and the Azure CSV holds the Mooncake sample's
/// requests.
#[test]
fn the_sample_datasets_and_traces_read() {
    use sloscope_core::input::{Dataset, DatasetFormat, Trace, TraceFormat};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let trace = |file: &str, format| {
        let mut w = sloscope_core::schema::WorkloadSpec {
            trace: Some(Trace {
                file: file.into(),
                format,
                time_scale: None,
                sha256: None,
                block_tokens: None,
            }),
            ..Default::default()
        };
        sloscope_collector::plan::replay::load(&root, &mut w, 1)
            .unwrap()
            .unwrap()
    };
    let m = trace("traces/sample-mooncake.jsonl", TraceFormat::Mooncake);
    let a = trace("traces/sample-azure.csv", TraceFormat::Azure);
    assert_eq!(m.trace.len(), 64);
    assert_eq!(m.offsets_us, a.offsets_us);
    assert_eq!(
        m.trace
            .iter()
            .map(|e| (e.input_tokens, e.output_tokens))
            .collect::<Vec<_>>(),
        a.trace
            .iter()
            .map(|e| (e.input_tokens, e.output_tokens))
            .collect::<Vec<_>>()
    );
    for (file, format, n) in [
        ("datasets/sample-prompts.jsonl", DatasetFormat::Jsonl, 40),
        ("datasets/sample-sharegpt.json", DatasetFormat::Sharegpt, 12),
    ] {
        let mut w = sloscope_core::schema::WorkloadSpec {
            dataset: Some(Dataset {
                file: file.into(),
                format,
                sha256: None,
            }),
            ..Default::default()
        };
        let r = sloscope_collector::plan::replay::load(&root, &mut w, 1)
            .unwrap()
            .unwrap();
        assert_eq!((r.usable, r.records.len()), (n, n), "{file}");
    }
}

#[test]
fn every_committed_plan_parses_and_passes_its_profile_contracts() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let plans = [
        "examples/llama-cpu/plan.toml",
        "examples/vllm/plan.toml",
        "examples/sglang/plan.toml",
        "tests/fixtures/llama/plan.toml",
        "tests/fixtures/scripted/plan.toml",
    ];
    for p in plans {
        let text = std::fs::read_to_string(root.join(p)).unwrap();
        let plan: sloscope_collector::plan::config::CollectorPlan =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{p}: {e}"));
        assert_eq!(plan.plan.profiles.len(), 3, "{p}");
        for spec in &plan.plan.profiles {
            let mut prof = sloscope_core::checks::validate_profile(spec)
                .unwrap_or_else(|e| panic!("{p}: {e:?}"));
            // The datasets and traces it names exist and read cleanly.
            let dir = root.join(p);
            let dir = dir.parent().unwrap();
            let replay = sloscope_collector::plan::replay::load(dir, &mut prof.workload, 1)
                .unwrap_or_else(|e| panic!("{p}: {e}"));
            assert_eq!(
                replay.is_some(),
                prof.workload.trace.is_some() || prof.workload.dataset.is_some()
            );
            assert!(prof.workload.requests_per_repeat.is_some(), "{p}");
        }
        assert!(
            plan.target
                .server_command
                .as_deref()
                .unwrap_or("")
                .contains("{port}"),
            "{p}"
        );
    }
}
