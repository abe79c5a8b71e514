//! What a workload replays from files: datasets of prompts (JSON Lines, ShareGPT) and traces of
//! timestamped requests (Mooncake JSONL, Azure LLM inference CSV), and shared prefix groups.
//! Pure: the collector reads the file, hashes it and hands each record here; a record that is
//! not what the format says is an error naming the record and the field.
//!
//! A run names each file it replayed with its sha256, so runs are comparable only when they
//! replayed the same bytes ([`crate::analyse::compare`]).

pub use crate::schema::replay::{
    file_name, Dataset, DatasetFormat, SharedPrefix, Trace, TraceEntry, TraceFormat,
};

/// A prompt of a dataset.
#[derive(Debug, Clone, PartialEq)]
pub enum Prompt {
    /// Plain text (sent as the completion prompt, or as one user message).
    Text(String),
    /// Chat messages, kept as written (sent to the chat API; joined for completions).
    Messages(Vec<(String, String)>),
}

/// One usable record of a dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetRecord {
    /// What is sent.
    pub prompt: Prompt,
    /// The output cap the record asks for, in tokens.
    pub output_tokens: Option<u32>,
    /// Words of the expected reply (ShareGPT), for a cap when no token count is given.
    pub output_words: Option<u32>,
    /// The conversation's later user turns, in order: a multi-turn session sends them after
    /// the first, each with the conversation so far (the server's own answers, not the
    /// dataset's).
    pub follow_ups: Vec<FollowUp>,
}

/// A later user turn of a dataset's conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct FollowUp {
    /// What the user says.
    pub text: String,
    /// Words of the dataset's reply to it, for an output cap.
    pub reply_words: Option<u32>,
}

impl DatasetRecord {
    /// What a session's first turn sends: chat messages up to the first user message (a
    /// system message before it is kept); the later user messages are [`Self::follow_ups`].
    pub fn opening(&self) -> Prompt {
        match &self.prompt {
            Prompt::Messages(m) if !self.follow_ups.is_empty() => {
                let first = m
                    .iter()
                    .position(|(r, _)| r == "user")
                    .unwrap_or(m.len() - 1);
                Prompt::Messages(m[..=first].to_vec())
            }
            p => p.clone(),
        }
    }
}

fn words(text: &str) -> u32 {
    text.split_whitespace().count().max(1) as u32
}

/// The user messages after the first, each with the words of the reply that follows it.
fn later_user_turns(m: &[(String, String)]) -> Vec<FollowUp> {
    let users: Vec<usize> = (0..m.len()).filter(|&i| m[i].0 == "user").collect();
    users
        .iter()
        .skip(1)
        .filter(|&&i| !m[i].1.trim().is_empty())
        .map(|&i| FollowUp {
            text: m[i].1.clone(),
            reply_words: m
                .get(i + 1)
                .filter(|(r, c)| r == "assistant" && !c.trim().is_empty())
                .map(|(_, c)| words(c)),
        })
        .collect()
}

fn count(v: &serde_json::Value, field: &str) -> Result<Option<u32>, String> {
    match v.get(field) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(x) => match x.as_u64() {
            Some(n) if (1..=u32::MAX as u64).contains(&n) => Ok(Some(n as u32)),
            _ => Err(format!(
                "{field} is {x}: expected a positive whole number of tokens"
            )),
        },
    }
}

/// A JSON Lines dataset record; `Ok(None)` for a blank line.
pub fn jsonl_record(line: &str) -> Result<Option<DatasetRecord>, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    if !v.is_object() {
        return Err("expected a JSON object with prompt or messages".into());
    }
    let prompt = match (v.get("prompt").or_else(|| v.get("text")), v.get("messages")) {
        (Some(serde_json::Value::String(s)), _) if !s.is_empty() => Prompt::Text(s.clone()),
        (Some(x), _) => return Err(format!("prompt is {}: expected non-empty text", short(x))),
        (None, Some(m)) => Prompt::Messages(messages(m)?),
        (None, None) => {
            return Err("no prompt, text or messages field: expected one of them".into())
        }
    };
    let output_tokens = match count(&v, "output_tokens")? {
        Some(n) => Some(n),
        None => match count(&v, "output_length")? {
            Some(n) => Some(n),
            None => count(&v, "max_tokens")?,
        },
    };
    let follow_ups = match &prompt {
        Prompt::Messages(m) => later_user_turns(m),
        Prompt::Text(_) => Vec::new(),
    };
    Ok(Some(DatasetRecord {
        prompt,
        output_tokens,
        output_words: None,
        follow_ups,
    }))
}

fn messages(m: &serde_json::Value) -> Result<Vec<(String, String)>, String> {
    let arr = m
        .as_array()
        .ok_or_else(|| format!("messages is {}: expected an array", short(m)))?;
    if arr.is_empty() {
        return Err("messages is empty: expected at least one message".into());
    }
    arr.iter()
        .enumerate()
        .map(|(i, msg)| {
            let role = msg.get("role").and_then(|r| r.as_str());
            let content = msg.get("content").and_then(|c| c.as_str());
            match (role, content) {
                (Some(r), Some(c)) => Ok((r.to_string(), c.to_string())),
                _ => Err(format!(
                    "messages[{i}] is {}: expected {{\"role\": text, \"content\": text}}",
                    short(msg)
                )),
            }
        })
        .collect()
}

/// A ShareGPT conversation; `Ok(None)` when it has no human turn followed by a reply (such
/// conversations are skipped, as vLLM's bench skips them).
pub fn sharegpt_record(v: &serde_json::Value) -> Result<Option<DatasetRecord>, String> {
    let turns = v
        .get("conversations")
        .or_else(|| v.get("conversation"))
        .and_then(|c| c.as_array())
        .ok_or_else(|| {
            format!(
                "{}: expected an object with a conversations array",
                short(v)
            )
        })?;
    let text = |t: &serde_json::Value| t.get("value").and_then(|x| x.as_str()).map(str::to_owned);
    let from = |t: &serde_json::Value| {
        t.get("from")
            .or_else(|| t.get("role"))
            .and_then(|x| x.as_str())
            .unwrap_or("")
            .to_ascii_lowercase()
    };
    let Some(i) = turns
        .iter()
        .position(|t| matches!(from(t).as_str(), "human" | "user"))
    else {
        return Ok(None);
    };
    let (Some(prompt), Some(reply)) = (text(&turns[i]), turns.get(i + 1).and_then(text)) else {
        return Ok(None);
    };
    if prompt.trim().is_empty() || reply.trim().is_empty() {
        return Ok(None);
    }
    let human = |t: &serde_json::Value| matches!(from(t).as_str(), "human" | "user");
    let follow_ups = (i + 2..turns.len())
        .filter(|&j| human(&turns[j]))
        .filter_map(|j| {
            let (ask, reply) = (text(&turns[j])?, turns.get(j + 1).and_then(text)?);
            (!ask.trim().is_empty() && !reply.trim().is_empty()).then(|| FollowUp {
                text: ask,
                reply_words: Some(words(&reply)),
            })
        })
        .collect();
    Ok(Some(DatasetRecord {
        prompt: Prompt::Text(prompt),
        output_tokens: None,
        output_words: Some(words(&reply)),
        follow_ups,
    }))
}

/// A Mooncake trace line; `Ok(None)` for a blank line.
pub fn mooncake_entry(line: &str) -> Result<Option<TraceEntry>, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let ts = v
        .get("timestamp")
        .ok_or("no timestamp: expected milliseconds")?;
    let ms = ts
        .as_f64()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| format!("timestamp is {}: expected milliseconds ≥ 0", short(ts)))?;
    let input = count(&v, "input_length")?.ok_or("no input_length: expected tokens")?;
    let output = count(&v, "output_length")?.ok_or("no output_length: expected tokens")?;
    Ok(Some(TraceEntry {
        at_us: (ms * 1000.0).round() as u64,
        input_tokens: input,
        output_tokens: output,
        hash_ids: hash_ids(&v)?,
    }))
}

/// At most this many blocks per request (a million-token prompt in Mooncake's 512-token blocks
/// is 2,048).
pub const MAX_HASH_IDS: usize = 65_536;

/// Mooncake's `hash_ids`: a list of non-negative whole numbers, or absent.
fn hash_ids(v: &serde_json::Value) -> Result<Vec<u64>, String> {
    let Some(x) = v.get("hash_ids").filter(|x| !x.is_null()) else {
        return Ok(Vec::new());
    };
    let list = x
        .as_array()
        .ok_or_else(|| format!("hash_ids is {}: expected a list of block ids", short(x)))?;
    if list.len() > MAX_HASH_IDS {
        return Err(format!(
            "hash_ids has {} entries: expected at most {MAX_HASH_IDS}",
            list.len()
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, id)| {
            id.as_u64().ok_or_else(|| {
                format!(
                    "hash_ids[{i}] is {}: expected a non-negative whole number",
                    short(id)
                )
            })
        })
        .collect()
}

/// The column positions of an Azure trace CSV, from its header.
#[derive(Debug, Clone, Copy)]
pub struct AzureColumns {
    time: usize,
    context: usize,
    generated: usize,
}

impl AzureColumns {
    /// Reads the header line.
    pub fn from_header(line: &str) -> Result<AzureColumns, String> {
        let cols: Vec<String> = line
            .trim()
            .split(',')
            .map(|c| c.trim().to_ascii_lowercase())
            .collect();
        let find = |name: &str| {
            cols.iter()
                .position(|c| c == name)
                .ok_or_else(|| format!("header {:?} has no {name} column: expected TIMESTAMP,ContextTokens,GeneratedTokens", line.trim()))
        };
        Ok(AzureColumns {
            time: find("timestamp")?,
            context: find("contexttokens")?,
            generated: find("generatedtokens")?,
        })
    }

    /// One data line; `Ok(None)` for a blank line.
    pub fn entry(&self, line: &str) -> Result<Option<TraceEntry>, String> {
        let line = line.trim();
        if line.is_empty() {
            return Ok(None);
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let cell = |i: usize, name: &str| {
            cells.get(i).copied().ok_or_else(|| {
                format!(
                    "no {name} (column {}): expected {} columns",
                    i + 1,
                    self.width()
                )
            })
        };
        let tokens = |i: usize, name: &str| -> Result<u32, String> {
            let c = cell(i, name)?;
            c.parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{name} is {c:?}: expected a positive whole number"))
        };
        let t = cell(self.time, "TIMESTAMP")?;
        Ok(Some(TraceEntry {
            at_us: datetime_us(t).ok_or_else(|| {
                format!("TIMESTAMP is {t:?}: expected YYYY-MM-DD HH:MM:SS[.fraction]")
            })?,
            input_tokens: tokens(self.context, "ContextTokens")?,
            output_tokens: tokens(self.generated, "GeneratedTokens")?,
            hash_ids: Vec::new(),
        }))
    }

    fn width(&self) -> usize {
        1 + self.time.max(self.context).max(self.generated)
    }
}

/// `YYYY-MM-DD HH:MM:SS[.fraction]` (or with `T`), as µs since 1970 (UTC, no zone).
fn datetime_us(s: &str) -> Option<u64> {
    let s = s.trim().trim_end_matches('Z');
    let (date, time) = s.split_once([' ', 'T'])?;
    let mut d = date.split('-');
    let (y, m, day): (i64, i64, i64) = (
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
    );
    if d.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&day) || y < 1970 {
        return None;
    }
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.split(':');
    let (h, mi, sec): (u64, u64, u64) = (
        t.next()?.parse().ok()?,
        t.next()?.parse().ok()?,
        t.next()?.parse().ok()?,
    );
    if t.next().is_some() || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let micros: u64 = format!("{:0<6}", &frac[..frac.len().min(6)]).parse().ok()?;
    // Days from civil (proleptic Gregorian).
    let (y2, m2) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * m2 + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days as u64 * 86_400 + h * 3600 + mi * 60 + sec) * 1_000_000) + micros)
}

fn short(v: &serde_json::Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests;
