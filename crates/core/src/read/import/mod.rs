//! Importers of other tools' result files: vLLM `bench serve`, SGLang `bench_serving`,
//! GuideLLM, AIPerf and llmperf. The format is recognised by content ([`crate::read::import::detect`]),
//! never by file name.
//!
//! Raw per-request data becomes sloscope's request columns (integer microseconds, send order),
//! so every summary is recomputed with sloscope's one set of definitions; the tool's own
//! summaries are kept under sloscope's metric names as `reported`, and used as reported (and
//! labelled so) only when the file has no per-request data. Each tool's definitions are mapped
//! here, per importer: see the module of each tool. A value that cannot be recovered is `None`,
//! never 0.

mod aiperf;
pub mod artifact;
pub mod assign;
mod columns;
pub mod detect;
pub mod distinct;
mod guidellm;
mod llmperf;
pub mod registry;
mod sglang;
mod stated;
pub mod units;
pub mod vllm;
mod workload;

use std::collections::BTreeMap;

pub use crate::check::run::conformance::foreign_workload_diffs as workload_diffs;
pub use stated::{
    default_candidates, default_primary, stated_plan, StatedPlace, StatedProfile, Statement,
    STATED_KNOB, STATED_PLAN_NAME,
};
pub use workload::{guess_profile, workload_label};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::read::error::{LoadError, LoadErrorKind};
use crate::schema::{
    CandidateRef, ForeignWorkload, ImportSource, Kind, Repeat, RequestColumns, Run, RunSource,
    RunStatus, ToolInfo, SCHEMA_VERSION,
};
use detect::Format;

/// One benchmark found in a foreign file (a file may hold several: GuideLLM's benchmarks,
/// SGLang's appended lines).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Benchmark {
    /// Per-request data, when the file carries it.
    pub requests: Option<RequestColumns>,
    /// The tool's summaries under sloscope's metric names.
    pub reported: BTreeMap<String, Option<f64>>,
    /// The load the tool generated, as it describes it.
    pub workload: ForeignWorkload,
    /// The model name the tool sent, when stated.
    pub model: Option<String>,
    /// The backend the tool says it measured, when stated.
    pub backend: Option<String>,
    /// What could not be taken over, and how definitions were mapped.
    pub notes: Vec<String>,
    /// The file records no send times: the requests' latencies are kept, throughput comes
    /// from `reported_window_us` only.
    pub send_times_unknown: bool,
    /// The tool's measured window, µs (used only when send times are unknown).
    pub reported_window_us: Option<u64>,
}

/// What an importer recovered from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The tool, e.g. `vLLM`.
    pub tool: &'static str,
    /// The file format, e.g. `vllm bench serve --save-result`.
    pub format: &'static str,
    /// The tool's version, when the file states it.
    pub tool_version: Option<String>,
    /// sha256 of the file's bytes.
    pub sha256: String,
    /// The benchmarks, in file order (at least one).
    pub benchmarks: Vec<Benchmark>,
}

/// An importer's failure: the JSON path (or `line N`) and what was expected there.
pub(crate) type Fail = (String, String);

pub(crate) fn fail<T>(path: impl Into<String>, msg: impl Into<String>) -> Result<T, Fail> {
    Err((path.into(), msg.into()))
}

/// sha256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in d {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Whether sloscope imports this format (GenAI-Perf's files are only named).
pub fn importable_format(f: Format) -> bool {
    registry::of(f).imported
}

/// Reads another tool's result file. Errors name the file, the JSON path and what was expected.
pub fn import(file: &str, original: &[u8]) -> Result<Imported, LoadError> {
    let bytes = &*detect::nonfinite_to_null(original);
    let err = |(path, msg): Fail| LoadError::new(file, path, msg, LoadErrorKind::Invalid);
    let Some(found) = detect::identify_bytes(bytes).or_else(|| detect::identify_text(bytes)) else {
        return Err(LoadError::new(
            file,
            "$",
            format!(
                "this is {}, not a result file of a tool sloscope imports: expected {}",
                looks_like(bytes),
                registry::importable()
            ),
            LoadErrorKind::Syntax,
        ));
    };
    let json = |b: &[u8]| -> Result<Value, LoadError> {
        crate::read::strict::value(b).map_err(|e| match e.line {
            Some(line) => LoadError::new(
                file,
                format!("line {line}"),
                format!("not JSON: {}", e.message),
                LoadErrorKind::Syntax,
            ),
            None => LoadError::new(file, e.path, e.message, LoadErrorKind::Invalid),
        })
    };
    let (tool_version, benchmarks) = match found.format {
        Format::Vllm => (None, vec![vllm::read(&json(bytes)?).map_err(err)?]),
        Format::Sglang => (None, sglang::read(bytes).map_err(err)?),
        Format::GuideLlm => guidellm::read(&json(bytes)?).map_err(err)?,
        Format::AiperfSummary => {
            let (version, b) = aiperf::summary(&json(bytes)?).map_err(err)?;
            (version, vec![b])
        }
        Format::AiperfRecords => (None, vec![aiperf::records(bytes).map_err(err)?]),
        Format::LlmperfIndividual => (None, vec![llmperf::individual(&json(bytes)?).map_err(err)?]),
        Format::LlmperfSummary => llmperf::summary(&json(bytes)?).map_err(err)?,
        Format::AiperfCsv => (None, vec![aiperf::csv(bytes).map_err(err)?]),
        Format::GuideLlmYaml => guidellm::read(&yaml(file, bytes)?).map_err(err)?,
        Format::GuideLlmCsv => (None, guidellm::csv(bytes).map_err(err)?),
        Format::GenaiPerf => {
            return Err(LoadError::new(
                file,
                "$",
                format!("this is {}'s result file: {}", found.tool, found.how),
                LoadErrorKind::Invalid,
            ))
        }
    };
    for (i, b) in benchmarks.iter().enumerate() {
        if let Some(msg) = units_mismatch(b) {
            let at = if benchmarks.len() > 1 {
                format!("benchmark {i}")
            } else {
                "$".into()
            };
            return Err(LoadError::new(file, at, msg, LoadErrorKind::Invalid));
        }
    }
    if benchmarks.is_empty() {
        return Err(LoadError::new(
            file,
            "$",
            format!("{} holds no benchmark", found.tool),
            LoadErrorKind::Invalid,
        ));
    }
    Ok(Imported {
        tool: found.format.tool(),
        format: found.format.name(),
        tool_version,
        sha256: sha256_hex(original),
        benchmarks,
    })
}

/// GuideLLM's YAML as a JSON value.
#[cfg(feature = "yaml")]
fn yaml(file: &str, bytes: &[u8]) -> Result<Value, LoadError> {
    serde_norway::from_slice(bytes).map_err(|e| {
        LoadError::new(
            file,
            e.location()
                .map_or("$".into(), |l| format!("line {}", l.line())),
            format!("not YAML GuideLLM wrote (a truncated file?): {e}"),
            LoadErrorKind::Syntax,
        )
    })
}

/// Without YAML (the page): said, with what to give instead.
#[cfg(not(feature = "yaml"))]
fn yaml(file: &str, _: &[u8]) -> Result<Value, LoadError> {
    Err(LoadError::new(
        file,
        "$",
        "this is GuideLLM's YAML output: the page reads GuideLLM's JSON (`--output kind=json,path=benchmarks.json`, the same data), and `sloscope analyze` reads either",
        LoadErrorKind::Invalid,
    ))
}

/// A per-request array in another unit than the tool writes (milliseconds where seconds
/// belong, or the reverse) shows as a mean TTFT about 1000 times off the tool's own mean:
/// refused rather than recomputed into nonsense.
fn units_mismatch(b: &Benchmark) -> Option<String> {
    let reported = b.reported.get("ttft_mean_ms").copied().flatten()?;
    let r = b.requests.as_ref()?;
    let ttfts: Vec<f64> = r
        .ttft_us
        .iter()
        .flatten()
        .map(|&t| t as f64 / 1000.0)
        .collect();
    if ttfts.is_empty() || reported <= 0.0 {
        return None;
    }
    let mean = ttfts.iter().sum::<f64>() / ttfts.len() as f64;
    let ratio = mean / reported;
    let off = |f: f64| (ratio / f - 1.0).abs() < 0.2;
    (off(1000.0) || off(0.001)).then(|| {
        format!(
            "the per-request TTFTs average {mean:.3} ms but the file's own mean TTFT is {reported:.3} ms: \
             the per-request values are about 1000 times {} than the tool's summary, written in \
             another unit than the tool writes",
            if ratio > 1.0 { "larger" } else { "smaller" }
        )
    })
}

/// What an unrecognised file looks like, for its refusal: its shape and, for JSON, its first
/// keys.
fn looks_like(bytes: &[u8]) -> String {
    let shape = crate::read::sniff(bytes);
    let first_line = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let value = serde_json::from_slice::<Value>(bytes)
        .or_else(|_| serde_json::from_slice::<Value>(first_line))
        .ok();
    let keys = match value.as_ref() {
        Some(Value::Object(o)) => Some(o.keys().take(6).cloned().collect::<Vec<_>>()),
        Some(Value::Array(a)) => a
            .first()
            .and_then(Value::as_object)
            .map(|o| o.keys().take(6).cloned().collect()),
        _ => None,
    };
    match keys {
        Some(k) if !k.is_empty() => format!("{} with keys {}", shape.described(), k.join(", ")),
        _ => shape.described().to_string(),
    }
}

/// The file's name without its directory (either separator).
pub fn base_name(file: &str) -> &str {
    file.rsplit(['/', '\\']).next().unwrap_or(file)
}

/// Fills `run` (a skeleton: plan, profile, candidate) with benchmark `index` of `im`.
pub fn fill(run: &mut Run, file: &str, im: &Imported, index: usize) {
    let b = &im.benchmarks[index];
    run.source = RunSource::Imported;
    run.imported_from = Some(format!("{} ({})", base_name(file), im.format));
    run.import = Some(ImportSource {
        tool: im.tool.to_string(),
        format: im.format.to_string(),
        tool_version: im.tool_version.clone(),
        file: base_name(file).to_string(),
        sha256: im.sha256.clone(),
        benchmark: (im.benchmarks.len() > 1).then_some(index as u32),
        stated_model: None,
        workload: b.workload.clone(),
    });
    run.notes.extend(b.notes.iter().cloned());
    // When sloscope read the file says nothing of when the tool measured: no window is
    // stated for the run (the tool's own duration, where it states one, is in `reported`).
    run.started_at = None;
    run.finished_at = None;
    run.reported = Some(b.reported.clone());
    run.repeats.clear();
    if let Some(req) = &b.requests {
        run.repeats.push(Repeat {
            index: 0,
            requests: req.clone(),
            send_times_unknown: b.send_times_unknown,
            reported_window_us: b.reported_window_us,
            ..Default::default()
        });
    }
}

/// What the note of a run read without a plan says after the tool's name.
pub(crate) const UNPLANNED: &str = " file read without a plan: ";

/// Runs for a foreign file read without a plan (`analyze` and the page): one per benchmark,
/// named `FILE` or `FILE#N`, under a guessed profile, with the tool's model as the artifact.
/// They get summaries; a verdict needs the plan and lineage records (`sloscope import`).
pub fn standalone_runs(file: &str, bytes: &[u8]) -> Result<Vec<(String, Run)>, LoadError> {
    let im = import(file, bytes)?;
    let many = im.benchmarks.len() > 1;
    let mut out = Vec::with_capacity(im.benchmarks.len());
    for (i, b) in im.benchmarks.iter().enumerate() {
        let profile = guess_profile(&b.workload);
        let label = workload_label(&b.workload);
        let mut run = Run {
            kind: Kind::Run,
            schema_version: SCHEMA_VERSION.into(),
            // The program that wrote this run is sloscope; the tool is in `import`.
            tool: ToolInfo {
                name: "sloscope".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            artifact_id: b.model.clone().unwrap_or_else(|| "unknown".into()),
            role: crate::schema::Role::Candidate,
            profile: profile.into(),
            workload_id: format!("{} {label}", im.tool).trim_end().to_string(),
            profile_spec: None,
            candidate: CandidateRef {
                name: if many {
                    format!("{} #{i} {label}", im.tool).trim_end().to_string()
                } else {
                    format!("{} {label}", im.tool).trim_end().to_string()
                },
                knob: None,
                value: None,
            },
            backend: b.backend.clone().unwrap_or_else(|| "unknown".into()),
            backend_version: "unknown".into(),
            hardware: "unknown".into(),
            endpoint: None,
            status: RunStatus::Ok,
            failure: None,
            evidence_level: crate::schema::EvidenceLevel::RealBackendProfile,
            source: RunSource::Imported,
            imported_from: None,
            import: None,
            started_at: None,
            finished_at: None,
            server: None,
            notes: vec![format!(
                "{}{UNPLANNED}shown under the {profile} profile (guessed from its workload) with summaries only; for a verdict, import it into a plan's profile with `sloscope import FILE --out DIR --plan PLAN --profile NAME --candidate NAME` and analyse it with the lineage records",
                im.tool
            )],
            repeats: Vec::new(),
            reported: None,
            trial: None,
            search: None,
            shard: None,
            plan_content_sha256: None,
        };
        fill(&mut run, file, &im, i);
        let name = if many {
            format!("{file}#{i}")
        } else {
            file.to_string()
        };
        out.push((name, run));
    }
    Ok(out)
}

/// A number at `key`, finite.
pub(crate) fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64).filter(|x| x.is_finite())
}

/// A non-negative integer at `key` that fits `u32`.
pub(crate) fn count(v: &Value, key: &str) -> Option<u32> {
    v.get(key)
        .and_then(|x| {
            x.as_u64().or_else(|| {
                x.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                    .map(|f| f as u64)
            })
        })
        .and_then(|x| u32::try_from(x).ok())
}

/// An array at `key`.
pub(crate) fn arr<'a>(v: &'a Value, key: &str) -> Option<&'a Vec<Value>> {
    v.get(key).and_then(Value::as_array)
}

/// Inserts `value` under `metric` when present.
pub(crate) fn put(b: &mut Benchmark, metric: &str, value: Option<f64>) {
    if let Some(x) = value.filter(|x| x.is_finite()) {
        b.reported.insert(metric.to_string(), Some(x));
    }
}

/// The summaries vLLM and SGLang write alike: `mean_{q}_ms`, `median_{q}_ms`, `p90/95/99_{q}_ms`
/// for each (their name, sloscope's quantity), and `output_throughput`, `request_throughput`.
pub(crate) fn put_serving_summaries(b: &mut Benchmark, v: &Value, quantities: &[(&str, &str)]) {
    if num(v, "completed") == Some(0.0) {
        // No request completed: the tools write 0.0 for every latency statistic then.
        b.notes.push(
            "no request completed: the file's latency summaries (written as 0) are not taken over"
                .into(),
        );
        put(b, "throughput_tps", num(v, "output_throughput"));
        return;
    }
    for (theirs, ours) in quantities {
        put(
            b,
            &format!("{ours}_mean_ms"),
            num(v, &format!("mean_{theirs}_ms")),
        );
        put(
            b,
            &format!("{ours}_p50_ms"),
            num(v, &format!("median_{theirs}_ms")),
        );
        for p in ["90", "95", "99"] {
            put(
                b,
                &format!("{ours}_p{p}_ms"),
                num(v, &format!("p{p}_{theirs}_ms")),
            );
        }
    }
    put(b, "throughput_tps", num(v, "output_throughput"));
    put(b, "request_throughput_rps", num(v, "request_throughput"));
    // The total the throughput is made of, so the two can be held against each other.
    put(b, "output_tokens_total", num(v, "total_output_tokens"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::WorkloadSpec;

    #[test]
    fn sha256_is_the_standard_one() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn stated_workload_differences_are_named() {
        let spec = WorkloadSpec {
            concurrency: Some(4),
            prompt_tokens: Some(64),
            max_output_tokens: Some(32),
            ..Default::default()
        };
        let same = ForeignWorkload {
            concurrency: Some(4),
            prompt_tokens: Some(64),
            max_output_tokens: Some(32),
            ..Default::default()
        };
        assert!(workload_diffs(&spec, &same).is_empty());
        let unstated = ForeignWorkload::default();
        assert!(workload_diffs(&spec, &unstated).is_empty());
        let other = ForeignWorkload {
            concurrency: Some(8),
            request_rate_rps: Some(2.0),
            ..same
        };
        let d = workload_diffs(&spec, &other);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].contains("concurrency 8 (the profile's is 4)"));
        assert!(d[1].contains("closed loop"));
    }

    #[test]
    fn profiles_are_guessed_from_the_load() {
        let w = |c, out| ForeignWorkload {
            concurrency: Some(c),
            max_output_tokens: Some(out),
            ..Default::default()
        };
        assert_eq!(guess_profile(&w(1, 32)), "latency");
        assert_eq!(guess_profile(&w(4, 32)), "balanced");
        assert_eq!(guess_profile(&w(64, 512)), "throughput");
    }
}
