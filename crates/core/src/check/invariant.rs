//! The invariant catalogue: every rule a trustworthy input obeys, each with a stable code and
//! what breaking it does. The checks themselves live beside this file (`run`, `plan`,
//! `names`); this list is what the guide's invariant table
//! (docs/src/reference/invariants.md) is generated from (a test fails when the two differ), and what the generated-violation tests walk: each
//! invariant has one mutation that breaks exactly it.

use serde::{Deserialize, Serialize};

/// What breaking an invariant does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The file is refused when it is read, naming the file, the JSON path and what was
    /// expected. Nothing in it is analysed.
    Refuse,
    /// The run is left out of its profile's comparison with the reason, before anything is
    /// pooled, selected or ranked.
    Exclude,
    /// The run is compared, and the profile carries a flag a reviewer reads before signing.
    Flag,
}

impl Outcome {
    /// The word the guide's table uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Refuse => "refuse the file",
            Outcome::Exclude => "exclude the run",
            Outcome::Flag => "flag the run",
        }
    }
}

macro_rules! catalogue {
    ($($(#[$doc:meta])* $name:ident = $code:literal, $outcome:ident, $rule:literal;)*) => {
        /// One invariant. Serialized as its code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Invariant {
            $($(#[$doc])* $name,)*
        }

        impl Invariant {
            /// Every invariant, in the catalogue's order.
            pub const ALL: &'static [Invariant] = &[$(Invariant::$name,)*];

            /// The stable code.
            pub fn code(self) -> &'static str {
                match self { $(Invariant::$name => $code,)* }
            }

            /// What breaking it does.
            pub fn outcome(self) -> Outcome {
                match self { $(Invariant::$name => Outcome::$outcome,)* }
            }

            /// The rule in one sentence.
            pub fn rule(self) -> &'static str {
                match self { $(Invariant::$name => $rule,)* }
            }
        }
    };
}

catalogue! {
    /// A JSON object names each key once.
    UniqueKeys = "unique_keys", Refuse,
        "a key appears once in each JSON object (never first- or last-wins), and nothing follows the document";
    /// Names and identifiers are bounded.
    TextBounded = "text_bounded", Refuse,
        "names and identifiers (candidates, profiles, workloads, artifacts, backends, hardware) are at most 1,024 characters; free text (notes, errors, logs) is cut to 4,096 when read";
    /// A shard reference is within its split.
    ShardBounded = "shard_bounded", Refuse,
        "a shard reference (on a run, a shard record or its marker) names an index below its shard count, and a count of 1 to 4,096";
    /// A plan's names are distinct, also after case, spaces and look-alike letters.
    PlanNamesUnique = "plan_names_unique", Refuse,
        "a plan's candidate and profile names are distinct, also after folding case, surrounding space, invisible characters and look-alike letters";
    /// An `ok` run holds requests.
    OkRunHasRequests = "ok_run_has_requests", Refuse,
        "a run whose status is ok holds at least one repeat, each with at least one request (or another tool's reported summaries)";
    /// Repeat indices are distinct.
    RepeatIndicesUnique = "repeat_indices_unique", Refuse,
        "each repeat of a run has its own index";
    /// Request ids are distinct.
    RequestIdsUnique = "request_ids_unique", Refuse,
        "another tool's file names each request (and each benchmark) once";
    /// Every column has one entry per request.
    ColumnsAligned = "columns_aligned", Refuse,
        "every per-request column has one entry per request";
    /// Requests are in send order.
    SendOrder = "send_order", Refuse,
        "requests are listed in send order";
    /// Every time is bounded.
    TimesBounded = "times_bounded", Refuse,
        "every offset and duration is at most 7 days";
    /// An open-loop request is not sent before its time.
    SentAfterIntended = "sent_after_intended", Refuse,
        "an open-loop request is sent at or after its intended time";
    /// A success has its times and its token count.
    SuccessComplete = "success_complete", Refuse,
        "a successful request has a time to first token, an end-to-end time and an output token count";
    /// The first token comes after the send.
    FirstTokenAfterSend = "first_token_after_send", Refuse,
        "a successful request's first token arrives after it was sent (TTFT > 0)";
    /// The end comes no earlier than the first token.
    EndAfterFirstToken = "end_after_first_token", Refuse,
        "a request ends no earlier than its first token";
    /// n content events carry at least n tokens.
    GapsFitTokens = "gaps_fit_tokens", Refuse,
        "a request has fewer inter-token gaps than output tokens (n events carry at least n tokens) and, measured here, fewer than its content events; a count taken from the events equals them; another tool, which times every chunk and may count tokens by re-tokenizing, at most twice its count plus two";
    /// The gaps fit between the first token and the end.
    GapsFitRequest = "gaps_fit_request", Refuse,
        "a request's inter-token gaps fit between its first token and its end";
    /// What a server reports of its cache and draft model fits the request.
    ServerCountsFit = "server_counts_fit", Refuse,
        "a request's prompt tokens served from the prefix cache are at most its prompt tokens, and its accepted draft tokens at most the drafted ones";
    /// A multi-turn session's turns follow each other.
    SessionTurns = "session_turns", Refuse,
        "a multi-turn session's turns are numbered 1, 2, 3 … in send order, each sent after the previous turn ended, and a turn after a successful one carries a longer prompt (the conversation so far)";
    /// Sizes and reported values are non-negative numbers.
    ValuesNonNegative = "values_non_negative", Refuse,
        "memory samples (at most 1 EiB), GPU energy and reported summaries are non-negative numbers, reported under known metric names";
    /// Another tool's stated counts match its rows.
    StatedCountsMatch = "stated_counts_match", Refuse,
        "another tool's stated request counts (completed, failed) match the per-request records it holds, and its stated rates (output tokens and requests per second) its own totals over its duration, within 1 %";
    /// Shares are shares and goodput is part of throughput.
    SignalsBounded = "signals_bounded", Refuse,
        "a reported failure rate or goodput ratio is a share in [0, 1], and reported goodput (tokens or requests per second) is at most the throughput it is part of";
    /// Another tool's stated duration covers its requests.
    StatedDurationCovers = "stated_duration_covers", Refuse,
        "another tool's stated benchmark duration is at least its longest request";
    /// The run names a candidate of the plan.
    InPlan = "not_in_plan", Exclude,
        "a candidate run (fixed load or capacity trial) names a candidate of the plan";
    /// A search trial measures a configuration of the plan's space.
    InSpace = "not_in_space", Exclude,
        "a configuration-search trial measures a configuration of the plan's space, named as the space names it, for a profile the space serves, launched with its values";
    /// The run varies the plan's knob.
    KnobMatches = "knob_mismatch", Exclude,
        "a run varies the knob the plan declares";
    /// The run's knob value is the plan's for that candidate.
    KnobValueMatches = "knob_value_mismatch", Exclude,
        "a run's knob value is the plan's value for its candidate (4 and 4.0 are equal)";
    /// The run measured the profile's workload.
    WorkloadMatches = "workload_mismatch", Exclude,
        "a run (candidate, trial, float baseline or import) measured the profile's workload — the plan's, never the run's own copy of it: id, counts, lengths, arrivals, replayed files, (measured here) the output caps its seed draws, the caps it records against the one cap the profile sends, each session turn sent no sooner after the previous answer than the shortest think time the profile draws, and (another tool's file) turns recorded for a profile of multi-turn sessions";
    /// The server's own version is the run's.
    BackendVersionMatches = "backend_version_mismatch", Exclude,
        "a measured run's server, where it gives its version (llama-server's `/props`, vLLM's `/version`, TGI's `/info`), gives the backend version the run states (the same up to a leading `v` and a build suffix)";
    /// The launch record says the configuration and artifact the labels say.
    LaunchMatches = "launch_mismatch", Exclude,
        "a run's recorded server command gives the knob the candidate's value (`--parallel 4` for parallel = 4, in either spelling), and the model it loaded (its `-m`/`--model`, or what the server says it serves), where its name carries a weight format, is of the format the run's lineage record serves";
    /// The run measured the deployed artifact.
    ArtifactMatches = "artifact_mismatch", Exclude,
        "a run measured its role's artifact: a candidate the deployed one, the float baseline's run the float baseline record's (a run of another artifact is not comparable)";
    /// The run holds every repeat and request the plan asks for.
    RunComplete = "run_short", Exclude,
        "a run sloscope measured that says ok holds every repeat the plan asks for and every request of each (one with fewer is not the measurement planned: an interrupted run is `partial`; it is left out and its cell is missing)";
    /// Names that look alike are not two candidates.
    NamesDistinct = "ambiguous_name", Exclude,
        "candidate names that differ only by case, surrounding space, invisible characters or look-alike letters are one ambiguous name, not two candidates";
    /// Never deeper than the stated streams.
    ConcurrencyRespected = "concurrency_exceeded", Exclude,
        "requests in flight, rebuilt from send and end times, are never more than the stated streams (at one stream, no overlap)";
    /// A closed loop reaches its stated depth.
    ConcurrencyReached = "concurrency_not_reached", Exclude,
        "a closed loop of N streams has N requests in flight at some point when it sent enough requests";
    /// Open-loop sends follow the stated rate.
    ArrivalMatchesRate = "arrival_rate_mismatch", Exclude,
        "open-loop intended send times follow the stated request rate (within what chance explains)";
    /// A stated window covers the requests.
    WindowCoversRequests = "window_too_short", Exclude,
        "a run's stated start and end (and an import's reported window) span all of its requests";
    /// Outputs stay within the cap sent.
    OutputsWithinCap = "outputs_exceed_cap", Exclude,
        "no request produced more output tokens than the cap the workload sent (another tool's re-tokenized count: by at most two tokens or a tenth; llmperf's, made by a Llama tokenizer class whatever the model's, by at most half); a run that records no cap per request has no more long outputs than the caps the profile draws allow (one-sided binomial test, chance under one in a million)";
    /// Prompts are about as long as the workload asked.
    PromptsMatchWorkload = "prompt_length_mismatch", Exclude,
        "the realised prompt lengths are within a factor of two (plus a chat template) of what the workload asked, on average, and spread as it asked: one length for a workload of one length, not one length for a workload of spread lengths (10th to 90th percentile, from 10 first-turn prompts)";
    /// Gaps add up to the decode time.
    GapsSpanDecode = "gaps_do_not_span_decode", Exclude,
        "a run's inter-token gaps add up to its decode times (gaps in another unit add up to a thousandth)";
    /// A stream streamed.
    Streamed = "not_streamed", Exclude,
        "a streamed run streamed: most of its multi-token requests neither end at their first token nor carry every token in one event";
    /// A request leaves the server's queue before its first token.
    QueueWithinFirstToken = "queue_exceeds_first_token", Exclude,
        "a server's reported queue wait of a successful request is at most its time to first token (the request leaves the queue before its first token is made)";
    /// Latencies an HTTP round trip can produce.
    PlausibleLatency = "implausible_latency", Exclude,
        "a run's times to first token are ones an HTTP round trip and a model step can produce (median at least 100 µs, and at least a tenth of the median gap between tokens)";
    /// One trial per load, and per position in the search.
    OneTrialPerLoad = "trials_conflict", Exclude,
        "a candidate's capacity search has one trial per load and one per position in the search (`trial.index`: two trials at one position come from two searches)";
    /// One measurement is one run.
    MeasuredOnce = "measurements_reused", Exclude,
        "a repeat's requests belong to one run and one repeat: the same requests (a repeat with every column equal, or two requests or more with the same gaps between tokens — at least 8 gaps of 4 distinct values, each within 3 µs, which no two measurements share — whole, a subset or spliced in) in two different runs — another candidate, the baseline, a trial — mean one of them is mislabelled, and both are left out; in two repeats of one run, a repeat copied; `compare` holds each side's runs to the other's the same way";
    /// An ok run records no failure.
    OkRecordsNoFailure = "ok_with_failure", Exclude,
        "a run whose status is ok records no failure (a failure beside `ok` means one of the two is false, and the file does not say which)";
    /// Each measured request was sent once.
    SentOnce = "request_resent", Flag,
        "each measured request was sent once (one sent again after the server closed a reused connection as it went out is flagged: the server may have received it twice)";
    /// Repeats as planned.
    RepeatsAsPlanned = "repeat_count", Flag,
        "a run has no more repeats than the plan asks (more are flagged: reruns added, or repeats duplicated), and an import, which ran its tool's own count, as many (fewer are flagged)";
    /// Requests as planned.
    RequestsAsPlanned = "request_count", Flag,
        "each repeat has no more requests than the plan asks, and an import's as many (more, or an import's fewer, are flagged)";
    /// Asked to ignore end-of-sequence, each request generated its cap.
    CapsGenerated = "stopped_before_cap", Flag,
        "a run that asked the server to ignore end-of-sequence (`endpoint.ignore_eos`) has each successful request generate its whole output cap, by the server's count or, where it gives none, its stream events (requests that stop short are flagged: the server ignored the option or cut the output at its context length, and the outputs measured are shorter than the profile's)";
    /// A measured stream ends at its last token.
    StreamEndsAtLastToken = "stream_tail", Flag,
        "a measured request's stream ends soon after its last token (a median wait from the last token to the stream's end over 10 ms and a tenth of the decode time is flagged: TPOT and end-to-end times include it, inter-token latency does not)";
    /// GPU energy is energy the recorded hardware drew.
    EnergyBounded = "energy_bounded", Flag,
        "GPU energy readings belong to a run on GPU hardware that measured them, each repeat's mean power within what its GPUs draw (5 to 1,500 W each); otherwise the run is flagged and its energy figures are null in every output";
    /// Sampled shares lie in [0, 1].
    SharesBounded = "shares_bounded", Flag,
        "a share the server samples (its KV cache's fill) lies in [0, 1]; a run with a sample outside it is flagged and its KV cache peak is null in every output";
    /// The run's start and finish are readable times.
    StampsReadable = "unreadable_time", Flag,
        "a run's `started_at` and `finished_at`, where given, are RFC 3339 times (one that is not is flagged: the run's window is then not checked against its requests)";
}

impl Serialize for Invariant {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for Invariant {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Invariant::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown invariant code {s:?}")))
    }
}

impl Invariant {
    /// The invariant with this code.
    pub fn parse(code: &str) -> Option<Invariant> {
        Invariant::ALL.iter().copied().find(|i| i.code() == code)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Invariant {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Invariant".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let codes: Vec<&str> = Invariant::ALL.iter().map(|i| i.code()).collect();
        schemars::json_schema!({
            "description": "An invariant of the catalogue, by its stable code.",
            "type": "string",
            "enum": codes,
        })
    }
}

/// One broken invariant: which, where (a JSON path in the file, or `$` for the run as a whole)
/// and what was found against what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The invariant.
    pub invariant: Invariant,
    /// JSON path, e.g. `$.repeats[0].requests.e2e_us[3]`.
    pub path: String,
    /// What was found and what was expected.
    pub message: String,
}

impl Violation {
    /// A violation of `invariant` at `path`.
    pub fn new(invariant: Invariant, path: impl Into<String>, message: impl Into<String>) -> Self {
        Violation {
            invariant,
            path: path.into(),
            message: message.into(),
        }
    }
}

/// The guide's table of the catalogue (Markdown), generated from [`Invariant::ALL`].
pub fn catalogue_markdown() -> String {
    let mut out = String::from("| code | the rule | when broken |\n|---|---|---|\n");
    for i in Invariant::ALL {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            i.code(),
            i.rule(),
            i.outcome().as_str()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_parse_back() {
        let mut codes: Vec<&str> = Invariant::ALL.iter().map(|i| i.code()).collect();
        codes.sort_unstable();
        let n = codes.len();
        codes.dedup();
        assert_eq!(codes.len(), n, "duplicate invariant code");
        for i in Invariant::ALL {
            assert_eq!(Invariant::parse(i.code()), Some(*i));
            let json = serde_json::to_string(i).unwrap();
            assert_eq!(serde_json::from_str::<Invariant>(&json).unwrap(), *i);
        }
    }
}
