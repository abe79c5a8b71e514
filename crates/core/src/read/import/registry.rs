//! The one list of other tools' formats: what each file is called, which tool writes it,
//! whether sloscope imports it, and per tool how its users produce the file and how its
//! definitions map to sloscope's. Detection names files from it, refusals list it, the CLI's
//! help names its tools, and the guide's importer table (docs/src/reference/importers.md) is generated from it (a test fails when the two
//! differ). Adding a format: its importer's module, and one entry here.

/// The foreign formats sloscope recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// vLLM `bench serve --save-result` JSON.
    Vllm,
    /// SGLang `bench_serving --output-file` JSON Lines.
    Sglang,
    /// GuideLLM `benchmarks.json`.
    GuideLlm,
    /// AIPerf `profile_export_aiperf.json`.
    AiperfSummary,
    /// AIPerf `profile_export.jsonl`.
    AiperfRecords,
    /// AIPerf `profile_export_aiperf.csv`.
    AiperfCsv,
    /// GenAI-Perf `profile_export_genai_perf.json` (recognised, not imported).
    GenaiPerf,
    /// GuideLLM `benchmarks.yaml` (the same model as its JSON).
    GuideLlmYaml,
    /// GuideLLM `benchmarks.csv` (summaries only).
    GuideLlmCsv,
    /// llmperf `*_individual_responses.json`.
    LlmperfIndividual,
    /// llmperf `*_summary.json`.
    LlmperfSummary,
}

impl Format {
    /// The tool.
    pub fn tool(self) -> &'static str {
        of(self).tool
    }

    /// The file, as the tool's users call it.
    pub fn name(self) -> &'static str {
        of(self).name
    }
}

/// One format.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// The format.
    pub format: Format,
    /// The tool that writes it.
    pub tool: &'static str,
    /// The file, as the tool's users call it.
    pub name: &'static str,
    /// Whether sloscope imports it (else it is only named, with what to do instead).
    pub imported: bool,
}

/// Every format sloscope recognises.
pub const FORMATS: [Entry; 11] = [
    entry(Format::Vllm, "vLLM", "vllm bench serve --save-result", true),
    entry(
        Format::Sglang,
        "SGLang",
        "sglang bench_serving --output-file",
        true,
    ),
    entry(
        Format::GuideLlm,
        "GuideLLM",
        "guidellm benchmarks.json",
        true,
    ),
    entry(
        Format::GuideLlmYaml,
        "GuideLLM",
        "guidellm benchmarks.yaml",
        true,
    ),
    entry(
        Format::GuideLlmCsv,
        "GuideLLM",
        "guidellm benchmarks.csv",
        true,
    ),
    entry(
        Format::AiperfRecords,
        "AIPerf",
        "aiperf profile_export.jsonl",
        true,
    ),
    entry(
        Format::AiperfSummary,
        "AIPerf",
        "aiperf profile_export_aiperf.json",
        true,
    ),
    entry(
        Format::AiperfCsv,
        "AIPerf",
        "aiperf profile_export_aiperf.csv",
        true,
    ),
    entry(
        Format::LlmperfIndividual,
        "llmperf",
        "llmperf individual_responses.json",
        true,
    ),
    entry(
        Format::LlmperfSummary,
        "llmperf",
        "llmperf summary.json",
        true,
    ),
    entry(
        Format::GenaiPerf,
        "GenAI-Perf",
        "genai-perf profile_export_genai_perf.json",
        false,
    ),
];

const fn entry(format: Format, tool: &'static str, name: &'static str, imported: bool) -> Entry {
    Entry {
        format,
        tool,
        name,
        imported,
    }
}

/// How a tool computes a percentile of its raw values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PercentileRule {
    /// numpy's default, linear interpolation between the ranks around `q (n − 1)` (sloscope's,
    /// vLLM's, SGLang's, AIPerf's).
    Linear,
    /// No interpolation: the first sorted value whose cumulative weight (1/n added value by
    /// value, in floating point) reaches `q` — GuideLLM's. The float sum decides ties: with 12
    /// values six weights sum to just under 0.5, so p50 is the 7th value, with 4 values two sum
    /// to 0.5 exactly, so p50 is the 2nd. Checked against every percentile (p1 … p99) GuideLLM
    /// reports for every benchmark of the committed fixtures (4 and 12 requests).
    CumulativeRank,
}

impl PercentileRule {
    /// The `q` percentile (0–100) of `sorted` values by this rule; `None` for no values or for
    /// the linear rule (the summaries' own).
    pub fn percentile(self, sorted: &[f64], q: f64) -> Option<f64> {
        match self {
            PercentileRule::Linear => None,
            PercentileRule::CumulativeRank => {
                let weight = 1.0 / sorted.len() as f64;
                let mut cumulative = 0.0;
                let at = sorted.iter().position(|_| {
                    cumulative += weight;
                    cumulative >= q / 100.0
                });
                at.map_or(sorted.last().copied(), |i| sorted.get(i).copied())
            }
        }
    }
}

/// The percentile rule of `tool`'s reported figures.
pub fn percentile_rule(tool: &str) -> PercentileRule {
    match tool {
        "GuideLLM" => PercentileRule::CumulativeRank,
        _ => PercentileRule::Linear,
    }
}

/// One tool, as the guide's importer table shows it.
#[derive(Debug, Clone, Copy)]
pub struct Peer {
    /// The tool.
    pub tool: &'static str,
    /// How its users produce the file sloscope reads.
    pub produce: &'static str,
    /// What sloscope recomputes from it, and how the tool's definitions are mapped.
    pub mapping: &'static str,
}

/// Every tool sloscope imports, in the guide's order.
pub const PEERS: [Peer; 5] = [
    Peer {
        tool: "vLLM",
        produce: "`vllm bench serve … --save-result --save-detailed`",
        mapping: "everything from `ttfts`, `itls`, `latencies`, `start_times` (equal to vLLM's figures; its throughput is a little lower because its duration includes the wait before the first send). Without `--save-detailed`, or without `start_times`, summaries as reported.",
    },
    Peer {
        tool: "SGLang",
        produce: "`python -m sglang.bench_serving … --output-file F.jsonl --output-details` (also the Rust client, `sglang.benchmark.rust_client`)",
        mapping: "TTFT, chunk gaps, TPOT from the details; e2e as TTFT + Σ gaps (SGLang's runs to the stream's end, < 0.5 % later); no send times, so throughput over SGLang's `duration`; output counts that are the requested length (no usage from the server) labelled `requested`. Every appended line is its own run.",
    },
    Peer {
        tool: "GuideLLM",
        produce: "`guidellm run … --output kind=json,path=benchmarks.json` (or `kind=yaml`, read by the CLI only; `kind=csv` holds summaries only)",
        mapping: "every request from its timings, one run per benchmark. Its percentiles are not interpolated (the nearest rank: with few requests they differ from sloscope's, and are checked against the tool's own rule before a difference is said); its `time_per_output_token_ms` includes TTFT and its `inter_token_latency_ms` is weighted by tokens, so neither is taken over; no chunk gaps, so ITL unknown.",
    },
    Peer {
        tool: "AIPerf",
        produce: "`aiperf profile … --artifact-dir D` → the directory `D` given whole (one run), or `D/profile_export.jsonl` (or the summaries `profile_export_aiperf.json` / `.csv`)",
        mapping: "every record (warm-up left out); AIPerf's ITL is sloscope's TPOT, `inter_chunk_latency` the chunk gaps; token counts from the server's usage. Its throughput divides by the profiling phase's window, as sloscope's does by its measured window.",
    },
    Peer {
        tool: "llmperf",
        produce: "`token_benchmark_ray.py … --results-dir D` → `*_individual_responses.json` (or `*_summary.json`)",
        mapping: "TTFT and e2e per request; its `inter_token_latency_s` includes TTFT and is not taken over; no send times: throughput only from the summary.",
    },
];

/// The entry of `format`.
pub fn of(format: Format) -> &'static Entry {
    FORMATS
        .iter()
        .find(|e| e.format == format)
        .unwrap_or(&FORMATS[0])
}

/// The tools sloscope imports: `vLLM, SGLang, GuideLLM, AIPerf, llmperf`.
pub fn tools() -> String {
    PEERS.iter().map(|p| p.tool).collect::<Vec<_>>().join(", ")
}

/// The files sloscope imports, for refusals.
pub fn importable() -> String {
    FORMATS
        .iter()
        .filter(|e| e.imported)
        .map(|e| e.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The guide's table of tools (Markdown).
pub fn readme_table() -> String {
    let mut out = String::from(
        "| tool | produce the file | what sloscope recomputes, and how definitions are mapped |\n|---|---|---|\n",
    );
    for p in PEERS {
        out.push_str(&format!("| {} | {} | {} |\n", p.tool, p.produce, p.mapping));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_once_and_every_imported_tool_has_a_row() {
        for (i, e) in FORMATS.iter().enumerate() {
            assert!(FORMATS[..i].iter().all(|x| x.format != e.format), "{e:?}");
            assert!(
                !e.imported || PEERS.iter().any(|p| p.tool == e.tool),
                "{} has no row in the guide's importer table",
                e.tool
            );
        }
        assert_eq!(tools(), "vLLM, SGLang, GuideLLM, AIPerf, llmperf");
    }
}
