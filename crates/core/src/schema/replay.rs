//! What a workload replays from files, as a plan names it: a dataset of prompts (JSON Lines,
//! ShareGPT), a trace of timestamped requests (Mooncake JSONL, Azure CSV) and shared prefix
//! groups. The files' records are parsed in `crate::read::replay`.

use serde::{Deserialize, Serialize};

/// The layout of a dataset file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DatasetFormat {
    /// One JSON object per line: `prompt` (or `text`) or chat `messages`, optionally
    /// `output_tokens` (or `output_length`, `max_tokens`).
    Jsonl,
    /// A JSON array of conversations, `{"conversations": [{"from": "human", "value": …},
    /// {"from": "gpt", "value": …}]}`: the first human turn is the prompt, the reply's length
    /// sets the output cap.
    Sharegpt,
}

/// Prompts read from a file, sampled per request from the profile's seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Dataset {
    /// The file, relative to the plan (a run records its name).
    pub file: String,
    /// Its layout.
    pub format: DatasetFormat,
    /// SHA-256 of the file's bytes, hex; written by the collector into the run (a plan may
    /// state it, and then the file must match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// The layout of a trace file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// Mooncake's JSON Lines: `timestamp` (ms), `input_length`, `output_length` (tokens).
    Mooncake,
    /// Azure LLM inference trace CSV: `TIMESTAMP` (`2023-11-16 18:15:46.6805900`),
    /// `ContextTokens`, `GeneratedTokens`.
    Azure,
}

/// Requests replayed at the times and lengths of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Trace {
    /// The file, relative to the plan (a run records its name).
    pub file: String,
    /// Its layout.
    pub format: TraceFormat,
    /// Trace times are multiplied by this: 0.5 replays twice as fast (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_scale: Option<f64>,
    /// SHA-256 of the file's bytes, hex; written by the collector into the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Tokens per block of a Mooncake trace's `hash_ids` (default 512, Mooncake's): requests
    /// that name the same hash id share that block of prompt tokens, so the trace's prefix-cache
    /// behaviour is replayed, not only its lengths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_tokens: Option<u32>,
}

/// Mooncake's block size, tokens per hash id.
pub const MOONCAKE_BLOCK_TOKENS: u32 = 512;

/// Prompts that start with one of `groups` shared prefixes of `tokens` tokens (request `i` is
/// in group `i mod groups`), followed by a suffix of the workload's prompt length: what prefix
/// caching is compared on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SharedPrefix {
    /// Prefix groups.
    pub groups: u32,
    /// Prefix length in tokens.
    pub tokens: u32,
}

/// Multi-turn sessions: each session is a conversation of several turns, each turn's request
/// carrying the whole conversation so far (the server's own earlier answers included, as a chat
/// client sends them), the next turn sent a think time after the answer ended. `concurrency` is
/// the number of sessions in flight; `requests_per_repeat` counts turns.
///
/// ```toml
/// sessions = { turns = { kind = "uniform", min = 2, max = 5 }, think_time_ms = { kind = "fixed", tokens = 500 } }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Sessions {
    /// Turns per session, drawn per session (a distribution of counts, its `tokens` read as
    /// turns). With a dataset, a session is one conversation of the dataset, cut to this many
    /// user turns when given; without one it is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<crate::base::traffic::LengthDist>,
    /// Think time between an answer's end and the next turn, milliseconds, drawn per turn;
    /// absent: the next turn is sent at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_time_ms: Option<crate::base::traffic::LengthDist>,
}

impl Sessions {
    /// What is wrong with the parameters (`None`: fine).
    pub fn problem(&self) -> Option<String> {
        let turns = self.turns.as_ref().and_then(|d| d.problem());
        let think = self.think_time_ms.as_ref().and_then(|d| d.problem());
        match (turns, think) {
            (Some(why), _) => Some(format!("turns: {why}")),
            (None, Some(why)) => Some(format!("think_time_ms: {why}")),
            (None, None) => None,
        }
    }

    /// `sessions of uniform 2–5 turns, think time 500 ms`.
    pub fn label(&self) -> String {
        let turns = self
            .turns
            .as_ref()
            .map_or_else(|| "the dataset's".into(), |d| d.label());
        let think = self
            .think_time_ms
            .as_ref()
            .map_or_else(|| "none".into(), |d| format!("{} ms", d.label()));
        format!("sessions of {turns} turns, think time {think}")
    }
}

/// One request of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEntry {
    /// Its time in the trace, µs (from any origin).
    pub at_us: u64,
    /// Prompt tokens.
    pub input_tokens: u32,
    /// Output tokens.
    pub output_tokens: u32,
    /// Mooncake's `hash_ids`: the prompt's blocks, in order; requests naming the same id share
    /// that block's tokens. Empty when the trace has none.
    pub hash_ids: Vec<u64>,
}

impl Trace {
    /// What is wrong with the parameters (`None`: fine).
    pub fn problem(&self) -> Option<String> {
        match (self.time_scale, self.block_tokens) {
            (Some(s), _) if !(s.is_finite() && s > 0.0) => {
                Some(format!("time_scale {s}: expected a positive factor"))
            }
            (_, Some(0)) => Some("block_tokens 0: expected at least 1 token per block".into()),
            _ => file_problem(&self.file, self.sha256.as_deref()),
        }
    }

    /// `mooncake trace conv.jsonl (sha256 1a2b3c4d…), time ×0.5`.
    pub fn label(&self) -> String {
        let scale = match self.time_scale {
            Some(s) if s != 1.0 => format!(", time ×{s}"),
            _ => String::new(),
        };
        let format = match self.format {
            TraceFormat::Mooncake => "Mooncake",
            TraceFormat::Azure => "Azure",
        };
        format!(
            "{format} trace {}{scale}",
            file_label(&self.file, self.sha256.as_deref())
        )
    }

    /// Send offsets (µs from the first request) of `entries`, time-scaled; entries are
    /// replayed in time order.
    pub fn offsets_us(&self, entries: &[TraceEntry]) -> Vec<u64> {
        let scale = self.time_scale.unwrap_or(1.0);
        let first = entries.iter().map(|e| e.at_us).min().unwrap_or(0);
        entries
            .iter()
            .map(|e| ((e.at_us - first) as f64 * scale).round() as u64)
            .collect()
    }
}

impl Dataset {
    /// What is wrong with the parameters (`None`: fine).
    pub fn problem(&self) -> Option<String> {
        file_problem(&self.file, self.sha256.as_deref())
    }

    /// `ShareGPT dataset chats.json (sha256 1a2b3c4d…)`.
    pub fn label(&self) -> String {
        let format = match self.format {
            DatasetFormat::Jsonl => "JSONL",
            DatasetFormat::Sharegpt => "ShareGPT",
        };
        format!(
            "{format} dataset {}",
            file_label(&self.file, self.sha256.as_deref())
        )
    }
}

impl SharedPrefix {
    /// What is wrong with the parameters (`None`: fine).
    pub fn problem(&self) -> Option<String> {
        if self.groups == 0 {
            Some("groups is 0: expected 1 or more prefix groups".into())
        } else if self.tokens == 0 {
            Some("tokens is 0: expected a positive prefix length".into())
        } else {
            None
        }
    }

    /// `8 groups × 512-token prefix`.
    pub fn label(&self) -> String {
        format!("{} groups × {}-token prefix", self.groups, self.tokens)
    }
}

fn file_problem(file: &str, sha256: Option<&str>) -> Option<String> {
    if file.trim().is_empty() {
        return Some("file is empty: expected a path relative to the plan".into());
    }
    match sha256 {
        Some(h) if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Some(format!("sha256 {h:?}: expected 64 hexadecimal digits"))
        }
        _ => None,
    }
}

/// The file's name (not its directory: runs collected elsewhere compare) and short hash.
fn file_label(file: &str, sha256: Option<&str>) -> String {
    let name = file_name(file);
    match sha256 {
        Some(h) => format!("{name} (sha256 {}…)", &h[..h.len().min(12)]),
        None => name.to_string(),
    }
}

/// The name part of a dataset's or trace's file, as runs compare it.
pub fn file_name(file: &str) -> &str {
    file.rsplit(['/', '\\']).next().unwrap_or(file)
}
