//! Request bodies: one JSON template per profile, the prompt of request `i` generated from the
//! profile's salt and `i`. Under a prompt length distribution, request `i` gets its drawn
//! length in words at the calibrated words per token; under an output length distribution, its
//! drawn `max_tokens`. A trace sets both lengths per request; a dataset sends its sampled
//! record's prompt (and output cap, unless the workload draws one); a shared prefix goes in
//! front of the synthetic prompt. Serializing a `serde_json::Value` cannot fail, so no body is
//! ever empty.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Map, Value};
use sloscope_core::input::Prompt;
use sloscope_core::measure::LengthDist;
use sloscope_core::schema::{TraceEntry, MOONCAKE_BLOCK_TOKENS};

use crate::load::prompt;
use crate::plan::replay::Replay;
use crate::wire::api::Api;

/// Builds the body of request `i` (warm-ups use indices past the measured ones).
pub type BodyFn = Arc<dyn Fn(u64) -> Bytes + Send + Sync>;

/// Body index of repeat `rep`'s first measured request. Each repeat has its own range, so no
/// request repeats an earlier one's prompt within a server instance (a prompt cache would
/// otherwise serve later repeats from memory), while every candidate gets the same sequence.
pub fn measured_base(rep: u32) -> u64 {
    u64::from(rep) << 32
}

/// One user turn of a session: its message and output cap (`None`: the template's).
#[derive(Debug, Clone)]
pub(crate) struct UserTurn {
    pub(crate) message: Prompt,
    pub(crate) max_tokens: Option<u32>,
}

impl UserTurn {
    /// The turn's messages, role and content (a dataset's system message included).
    pub(crate) fn messages(&self) -> Vec<(String, String)> {
        match &self.message {
            Prompt::Text(t) => vec![("user".into(), t.clone())],
            Prompt::Messages(m) => m.clone(),
        }
    }
}

/// The body index of turn `t` (from 0) of session `g`: apart from every request's index
/// (the turn in the top byte).
fn turn_index(g: u64, t: u64) -> u64 {
    g ^ ((t + 1) << 56)
}

/// What a profile's requests carry besides their prompts.
pub(crate) struct Template<'a> {
    /// The profile's workload.
    pub(crate) workload: &'a sloscope_core::schema::WorkloadSpec,
    /// `model` of every request.
    pub(crate) model: Option<&'a str>,
    /// Which API.
    pub(crate) api: Api,
    /// Send `ignore_eos`.
    pub(crate) ignore_eos: bool,
    /// Extra fields of every body.
    pub(crate) extra: &'a std::collections::BTreeMap<String, Value>,
    /// What the profile replays.
    pub(crate) replay: Option<Arc<Replay>>,
}

/// What every body of a profile shares.
pub(crate) struct Bodies {
    base: Map<String, Value>,
    api: Api,
    prompt_length: Option<LengthDist>,
    output_length: Option<LengthDist>,
    /// Words of a prompt at the workload's length (calibrated).
    words: usize,
    words_per_token: f64,
    replay: Option<Arc<Replay>>,
    has_trace: bool,
    /// One prefix text per group, seeded by the group.
    prefixes: Vec<String>,
    /// Tokens per block of a trace's `hash_ids`.
    block_tokens: u32,
    salt: u64,
}

/// Request `i`'s index within its repeat (measured and warm-up indices carry their repeat in
/// the high bits, see [`measured_base`]).
fn within_repeat(i: u64) -> u64 {
    i & 0xFFFF_FFFF
}

impl Bodies {
    /// The bodies of a profile: `words` is the calibrated length for `target_tokens`.
    pub(crate) fn new(ctx: Template<'_>, words: usize, target_tokens: u32, salt: u64) -> Bodies {
        let w = ctx.workload;
        let mut base = Map::new();
        if let Some(m) = ctx.model {
            base.insert("model".into(), m.into());
        }
        base.insert(
            "max_tokens".into(),
            w.max_output_tokens.unwrap_or(16).into(),
        );
        base.insert("stream".into(), true.into());
        base.insert("stream_options".into(), json!({"include_usage": true}));
        base.insert("temperature".into(), 0.into());
        if ctx.ignore_eos {
            base.insert("ignore_eos".into(), true.into());
        }
        for (k, v) in ctx.extra {
            base.insert(k.clone(), v.clone());
        }
        let mut b = Bodies {
            base,
            api: ctx.api,
            prompt_length: w.prompt_length.clone(),
            output_length: w.output_length.clone(),
            words,
            words_per_token: words as f64 / f64::from(target_tokens.max(1)),
            replay: ctx.replay,
            has_trace: w.trace.is_some(),
            prefixes: Vec::new(),
            block_tokens: w
                .trace
                .as_ref()
                .and_then(|t| t.block_tokens)
                .unwrap_or(MOONCAKE_BLOCK_TOKENS)
                .max(1),
            salt,
        };
        if let Some(p) = w.shared_prefix {
            b.prefixes = (0..p.groups)
                .map(|g| {
                    prompt::text(
                        b.to_words(p.tokens),
                        salt ^ 0x7072_6566 ^ (u64::from(g) << 20),
                    )
                })
                .collect();
        }
        b
    }

    /// As the load loop takes them.
    pub(crate) fn into_fn(this: Arc<Bodies>) -> BodyFn {
        Arc::new(move |i| this.body(i))
    }

    fn to_words(&self, tokens: u32) -> usize {
        ((f64::from(tokens) * self.words_per_token).round() as usize).max(1)
    }

    /// The body of request `i`.
    fn body(&self, i: u64) -> Bytes {
        let mut b = self.base.clone();
        let entry = self
            .replay
            .as_ref()
            .filter(|_| self.has_trace)
            .and_then(|r| r.entry(within_repeat(i)));
        let message = match self.replay.as_ref().and_then(|r| r.record(self.salt, i)) {
            Some(rec) => {
                if self.output_length.is_none() {
                    let cap = rec.output_tokens.or_else(|| {
                        rec.output_words.map(|w| {
                            ((f64::from(w) / self.words_per_token.max(1e-9)).round() as u32).max(1)
                        })
                    });
                    if let Some(cap) = cap {
                        b.insert("max_tokens".into(), cap.into());
                    }
                }
                rec.prompt.clone()
            }
            None => Prompt::Text(match entry.filter(|e| !e.hash_ids.is_empty()) {
                Some(e) => self.blocks(e, i),
                None => self.synthetic(i, entry.map(|e| e.input_tokens)),
            }),
        };
        if let Some(e) = entry {
            b.insert("max_tokens".into(), e.output_tokens.into());
        } else if let Some(d) = &self.output_length {
            b.insert(
                "max_tokens".into(),
                d.sample(self.salt ^ 0x6F75_7470, i).into(),
            );
        }
        self.insert_message(&mut b, message);
        Bytes::from(Value::Object(b).to_string())
    }

    /// The synthetic prompt of request `i`: a trace's length, a drawn one or the workload's,
    /// behind its group's shared prefix.
    fn synthetic(&self, i: u64, trace_tokens: Option<u32>) -> String {
        let words = match (trace_tokens, &self.prompt_length) {
            (Some(t), _) => self.to_words(t),
            (None, Some(d)) => self.to_words(d.sample(self.salt, i)),
            (None, None) => self.words,
        };
        let text = prompt::text(words, self.salt ^ i.wrapping_mul(0x2545_F491_4F6C_DD1D));
        match self
            .prefixes
            .get((i % self.prefixes.len().max(1) as u64) as usize)
        {
            Some(p) => format!("{p} {text}"),
            None => text,
        }
    }

    /// A trace request's prompt from its blocks, in order: a hash id's text is the same in every
    /// request of the repeat that names it (seeded by the profile's salt, the id and the
    /// repeat), so requests that share ids share those blocks of prompt tokens, as the trace's
    /// did. Each repeat (and each repeat's warm-up) has its own blocks: a later repeat does not
    /// find an earlier one's in the server's cache, so every repeat replays the trace from the
    /// same cold cache. The last block is cut to the request's length (its first words: the
    /// same prefix); tokens beyond the blocks the ids cover are the request's own.
    fn blocks(&self, e: &TraceEntry, i: u64) -> String {
        // The body index's high bits: the repeat (measured) or the repeat's warm-up range.
        let epoch = (i >> 32).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        let mut left = e.input_tokens;
        let mut parts = Vec::with_capacity(e.hash_ids.len() + 1);
        for &id in &e.hash_ids {
            if left == 0 {
                break;
            }
            let t = left.min(self.block_tokens);
            left -= t;
            let seed =
                self.salt ^ 0x626C_6F63_6B00 ^ epoch ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            parts.push(prompt::text(self.to_words(t), seed));
        }
        if left > 0 {
            let own = self.salt ^ epoch ^ e.at_us.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x006F_776E;
            parts.push(prompt::text(self.to_words(left), own));
        }
        parts.join(" ")
    }

    /// The turns of session `g` (its body index): a dataset conversation's user turns (cut to
    /// the drawn count when `turns` is given), or a drawn number of synthetic prompts. The
    /// first turn goes behind the session's shared prefix, if any.
    pub(crate) fn session_turns(&self, g: u64, turns: Option<&LengthDist>) -> Vec<UserTurn> {
        let drawn = turns.map(|d| d.sample(self.salt ^ 0x7475_726E, g) as usize);
        let mut out: Vec<UserTurn> = match self.replay.as_ref().and_then(|r| r.record(self.salt, g))
        {
            Some(rec) => {
                let first = UserTurn {
                    message: rec.opening(),
                    max_tokens: self.dataset_cap(rec.output_tokens, rec.output_words, g, 0),
                };
                let later = rec.follow_ups.iter().enumerate().map(|(k, f)| UserTurn {
                    message: Prompt::Text(f.text.clone()),
                    max_tokens: self.dataset_cap(None, f.reply_words, g, k as u64 + 1),
                });
                std::iter::once(first).chain(later).collect()
            }
            None => (0..drawn.unwrap_or(1) as u64)
                .map(|t| {
                    let i = turn_index(g, t);
                    let text = match t {
                        0 => self.synthetic(g, None),
                        _ => self.synthetic_suffix(i),
                    };
                    UserTurn {
                        message: Prompt::Text(text),
                        max_tokens: self.drawn_cap(i),
                    }
                })
                .collect(),
        };
        out.truncate(drawn.unwrap_or(usize::MAX).max(1));
        out
    }

    /// A dataset turn's cap: the workload's drawn one, else the record's tokens or reply words.
    fn dataset_cap(&self, tokens: Option<u32>, words: Option<u32>, g: u64, t: u64) -> Option<u32> {
        if self.output_length.is_some() {
            return self.drawn_cap(turn_index(g, t));
        }
        tokens.or_else(|| {
            words.map(|w| ((f64::from(w) / self.words_per_token.max(1e-9)).round() as u32).max(1))
        })
    }

    /// A drawn output cap (`None`: the template's).
    fn drawn_cap(&self, i: u64) -> Option<u32> {
        self.output_length
            .as_ref()
            .map(|d| d.sample(self.salt ^ 0x6F75_7470, i))
    }

    /// A synthetic prompt without a shared prefix (a later turn's: the conversation before it
    /// is its prefix).
    fn synthetic_suffix(&self, i: u64) -> String {
        let words = match &self.prompt_length {
            Some(d) => self.to_words(d.sample(self.salt, i)),
            None => self.words,
        };
        prompt::text(words, self.salt ^ i.wrapping_mul(0x2545_F491_4F6C_DD1D))
    }

    /// A session turn's body: the conversation so far (`history`, role and content), then the
    /// turn's message.
    pub(crate) fn turn_body(&self, history: &[(String, String)], turn: &UserTurn) -> Bytes {
        let mut b = self.base.clone();
        if let Some(cap) = turn.max_tokens {
            b.insert("max_tokens".into(), cap.into());
        }
        let mut messages = history.to_vec();
        messages.extend(turn.messages());
        self.insert_message(&mut b, Prompt::Messages(messages));
        Bytes::from(Value::Object(b).to_string())
    }

    fn insert_message(&self, b: &mut Map<String, Value>, message: Prompt) {
        match (self.api, message) {
            (Api::Completions, Prompt::Text(text)) => b.insert("prompt".into(), text.into()),
            (Api::Completions, Prompt::Messages(msgs)) => {
                let joined: Vec<String> = msgs.into_iter().map(|(_, c)| c).collect();
                b.insert("prompt".into(), joined.join("\n").into())
            }
            (Api::Chat, Prompt::Text(text)) => b.insert(
                "messages".into(),
                json!([{"role": "user", "content": text}]),
            ),
            (Api::Chat, Prompt::Messages(msgs)) => b.insert(
                "messages".into(),
                msgs.into_iter()
                    .map(|(role, content)| json!({"role": role, "content": content}))
                    .collect::<Vec<_>>()
                    .into(),
            ),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sloscope_core::schema::{Trace, TraceFormat};

    fn bodies(entries: Vec<TraceEntry>) -> Bodies {
        let mut w: sloscope_core::schema::WorkloadSpec =
            serde_json::from_value(json!({"id": "trace", "concurrency": 1})).unwrap();
        w.trace = Some(Trace {
            file: "t.jsonl".into(),
            format: TraceFormat::Mooncake,
            time_scale: None,
            sha256: None,
            block_tokens: Some(4),
        });
        let replay = Replay {
            offsets_us: entries.iter().map(|e| e.at_us).collect(),
            trace: entries,
            ..Replay::default()
        };
        let extra = std::collections::BTreeMap::new();
        let t = Template {
            workload: &w,
            model: None,
            api: Api::Completions,
            ignore_eos: false,
            extra: &extra,
            replay: Some(Arc::new(replay)),
        };
        // One word per token, so a block is 4 words.
        Bodies::new(t, 8, 8, 42)
    }

    fn prompt_of(b: &Bodies, i: u64) -> Vec<String> {
        let v: Value = serde_json::from_slice(&b.body(i)).unwrap();
        v["prompt"]
            .as_str()
            .unwrap()
            .split(' ')
            .map(String::from)
            .collect()
    }

    fn entry(at_us: u64, input_tokens: u32, hash_ids: &[u64]) -> TraceEntry {
        TraceEntry {
            at_us,
            input_tokens,
            output_tokens: 2,
            hash_ids: hash_ids.to_vec(),
        }
    }

    #[test]
    fn requests_that_share_a_hash_id_share_that_block_exactly() {
        let b = bodies(vec![
            entry(0, 8, &[7, 8]),
            entry(1, 8, &[7, 9]),
            entry(2, 6, &[8, 7]),
            entry(3, 10, &[7]),
        ]);
        let (p0, p1, p2, p3) = (
            prompt_of(&b, 0),
            prompt_of(&b, 1),
            prompt_of(&b, 2),
            prompt_of(&b, 3),
        );
        assert_eq!(p0.len(), 8);
        // Block 7 first in both: the same 4 words; their second blocks differ.
        assert_eq!(p0[..4], p1[..4]);
        assert_ne!(p0[4..], p1[4..]);
        // Block 8 is the same text wherever it sits; block 7 cut to 2 tokens is its prefix.
        assert_eq!(p2[..4], p0[4..]);
        assert_eq!(p2[4..], p0[..2]);
        // Tokens beyond the blocks the ids cover are the request's own.
        assert_eq!(p3.len(), 10);
        assert_eq!(p3[..4], p0[..4]);
        assert_ne!(p3[4..8], p0[4..]);
        // The next repeat replays the trace with its own blocks: shared within it, new to the
        // server's cache.
        let next = measured_base(1);
        let (q0, q1) = (prompt_of(&b, next), prompt_of(&b, next + 1));
        assert_eq!(q0[..4], q1[..4]);
        assert_ne!(q0[..4], p0[..4]);
    }
}
