//! Prompts of a requested length. Each request gets different words (so no prefix cache makes
//! prefill free) drawn from a fixed list with a seeded generator; the number of words is
//! calibrated with the server's `/tokenize` (vLLM, SGLang, llama-server), and the server's
//! `usage.prompt_tokens` is recorded as the truth.

use sloscope_core::measure::Rng;
use sloscope_core::schema::TokenSource;

use std::time::Duration;

use crate::wire::client::Client;

const WORDS: [&str; 64] = [
    "river", "stone", "lantern", "orbit", "meadow", "copper", "signal", "harbor", "violet",
    "engine", "forest", "marble", "thunder", "pencil", "canyon", "silver", "garden", "rocket",
    "window", "paper", "winter", "summer", "bridge", "castle", "planet", "mirror", "anchor",
    "falcon", "island", "candle", "desert", "valley", "museum", "ticket", "spiral", "basket",
    "rhythm", "velvet", "glacier", "harvest", "quartz", "saddle", "tunnel", "beacon", "compass",
    "feather", "granite", "horizon", "journal", "kettle", "ladder", "magnet", "nectar", "oyster",
    "pepper", "quiver", "riddle", "shadow", "timber", "umbrella", "voyage", "walnut", "yellow",
    "zephyr",
];

/// A prompt generator calibrated for one target length.
#[derive(Debug, Clone)]
pub struct Prompts {
    /// Words per prompt.
    pub words: usize,
    /// Tokens the calibration measured for that many words (on a sample prompt).
    pub calibrated_tokens: Option<u32>,
    /// How the length was established.
    pub source: TokenSource,
    /// A note for the run file when calibration was not possible.
    pub note: Option<String>,
}

/// The words of request `seed`, deterministic. The seed is mixed first: seeds that differ only
/// in their high bits (a repeat's or a turn's index) would otherwise start with the same words
/// — a shared prefix a prompt cache would serve.
pub fn text(words: usize, seed: u64) -> String {
    let mut rng = Rng::new(sloscope_core::measure::finalize(seed));
    let mut out = String::with_capacity(words * 8);
    for i in 0..words {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
    }
    out
}

async fn count_tokens(
    client: &Client,
    model: Option<&str>,
    text: &str,
    timeout: Duration,
) -> Result<u32, String> {
    let url = format!("{}/tokenize", client.base());
    let mut body = serde_json::json!({"content": text, "prompt": text, "add_special": false});
    if let Some(m) = model {
        body["model"] = serde_json::Value::String(m.to_string());
    }
    let resp = client
        .http()
        .post(&url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .timeout(timeout)
        .send()
        .await
        .map_err(|e| format!("POST /tokenize: {e}"))?;
    if !resp.status().is_success() {
        let to = resp
            .headers()
            .get("location")
            .and_then(|l| l.to_str().ok())
            .map(|l| format!(" (a redirect to {l}, not followed)"))
            .unwrap_or_default();
        return Err(format!(
            "POST /tokenize: HTTP {}{to}",
            resp.status().as_u16()
        ));
    }
    let bytes = resp
        .bytes()
        .await
        .map_err(|e| format!("POST /tokenize: {e}"))?;
    let v: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("POST /tokenize: {e}"))?;
    if let Some(n) = v["count"].as_u64() {
        return Ok(n as u32);
    }
    v["tokens"]
        .as_array()
        .map(|t| t.len() as u32)
        .ok_or_else(|| "POST /tokenize: no `tokens` or `count` in the answer".to_string())
}

/// Tokens per word a real tokenizer gives these common English words (byte-level BPE: 1–2;
/// character-level: up to about 8).
const PLAUSIBLE_TOKENS_PER_WORD: std::ops::RangeInclusive<f64> = 0.5..=10.0;

fn plausible(tokens: u32, words: usize) -> bool {
    PLAUSIBLE_TOKENS_PER_WORD.contains(&(f64::from(tokens) / words.max(1) as f64))
}

/// Finds the word count whose prompts come closest to `target` tokens. A `/tokenize` whose
/// counts no tokenizer could give is not believed: the prompts are then uncalibrated, and
/// said so (the server's `usage.prompt_tokens` is still recorded per request, and the
/// analysis checks it against the workload).
pub async fn calibrate(
    client: &Client,
    model: Option<&str>,
    target: u32,
    timeout: Duration,
) -> Prompts {
    let target = target.max(1);
    let probe = text(200, 1);
    let count = |t: String| async move { count_tokens(client, model, &t, timeout).await };
    match count(probe).await {
        Err(e) => uncalibrated(target, &e),
        Ok(n200) if !plausible(n200, 200) => uncalibrated(
            target,
            &format!(
                "the server's /tokenize counted {n200} tokens for 200 common English words, \
                 which no tokenizer does ({PLAUSIBLE_TOKENS_PER_WORD:?} per word expected): not believed"
            ),
        ),
        Ok(n200) => {
            let per_word = (n200 as f64 / 200.0).max(0.1);
            let mut words = ((target as f64 / per_word).round() as usize).max(1);
            let mut got = count(text(words, 1))
                .await
                .ok()
                .filter(|&g| plausible(g, words))
                .unwrap_or(target);
            // A few corrective steps: token counts are near-linear in words.
            for _ in 0..4 {
                if got == target {
                    break;
                }
                let step = ((target as f64 - got as f64) / per_word).round() as i64;
                let step = if step == 0 {
                    (target as i64 - got as i64).signum()
                } else {
                    step
                };
                let next = (words as i64 + step).max(1) as usize;
                if next == words {
                    break;
                }
                words = next;
                got = count(text(words, 1))
                    .await
                    .ok()
                    .filter(|&g| plausible(g, words))
                    .unwrap_or(got);
            }
            Prompts {
                words,
                calibrated_tokens: Some(got),
                source: TokenSource::Tokenizer,
                note: None,
            }
        }
    }
}

/// Prompts of one word per token, with a note saying why they were not calibrated.
pub fn uncalibrated(target: u32, why: &str) -> Prompts {
    Prompts {
        // Without a tokenizer, assume one token per word (these words are common English).
        words: target.max(1) as usize,
        calibrated_tokens: None,
        source: TokenSource::Requested,
        note: Some(format!(
            "prompt length not calibrated ({why}); assumed one token per word"
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn seeds_that_differ_in_high_bits_give_different_first_words() {
        let first = |seed: u64| super::text(4, seed);
        assert_ne!(first(7), first(7 ^ (1 << 56)));
        assert_ne!(first(7), first(7 + (1 << 32)));
    }

    use super::*;

    #[test]
    fn prompts_are_deterministic_and_differ_per_request() {
        assert_eq!(text(5, 3), text(5, 3));
        assert_ne!(text(5, 3), text(5, 4));
        assert_eq!(text(7, 1).split(' ').count(), 7);
    }
}
