//! The request each backend needs to score a token context, and how its answer becomes the
//! top-K log-probabilities and the reference token's log-probability at each position. Pure:
//! tested against recorded answers in each server's documented format.
//!
//! - **llama-server** (`POST /completion`): one request per position — the prefix as token ids,
//!   `n_predict` 1, `n_probs` K, the reference token forced by `logit_bias` (the returned
//!   `logprob` and `top_logprobs` are the model's distribution before sampling, so the forced
//!   token's own log-probability is returned), with the prompt cache on so each position costs
//!   one token of compute.
//! - **vLLM** (`POST /v1/completions`): one request per text, `prompt_logprobs` K (the server
//!   needs `--max-logprobs` ≥ K): every position's top-K and the prompt token's own entry.
//! - **SGLang** (`POST /generate`): one request per text with `input_ids`, `return_logprob`,
//!   `logprob_start_len` 0 and `top_logprobs_num` K.

use serde_json::{json, Value};
use sloscope_core::measure::Side;

/// The serving backend that scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// llama.cpp's llama-server.
    Llama,
    /// vLLM's OpenAI-compatible server.
    Vllm,
    /// SGLang's native API.
    Sglang,
}

impl Backend {
    /// The name used in records.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Llama => "llama.cpp llama-server",
            Backend::Vllm => "vllm",
            Backend::Sglang => "sglang",
        }
    }

    /// What the server needs for probabilities, for the refusal when it returns none.
    pub fn needs(self) -> &'static str {
        match self {
            Backend::Llama => "llama-server returns them with `n_probs` on /completion (no flag needed; a build that answers without `completion_probabilities` is too old)",
            Backend::Vllm => "start vLLM with `--max-logprobs K` (at least --top-k) so `prompt_logprobs` is answered",
            Backend::Sglang => "SGLang answers `return_logprob` with `logprob_start_len` 0 and `top_logprobs_num` on /generate",
        }
    }
}

/// Where the answer did not hold what was asked.
pub type ShapeError = String;

/// llama-server: the request scoring the token after `prefix`, forcing `reference`.
pub fn llama_request(prefix: &[u32], reference: u32, k: u32, cache: bool) -> Value {
    json!({
        "prompt": prefix,
        "n_predict": 1,
        "n_probs": k,
        "temperature": 0,
        "cache_prompt": cache,
        "logit_bias": [[reference, 100.0]],
    })
}

fn id_logprob(v: &Value, at: &str) -> Result<(u32, f64), ShapeError> {
    let id = v["id"]
        .as_u64()
        .ok_or_else(|| format!("{at}.id: expected a token id"))?;
    let lp = v["logprob"]
        .as_f64()
        .ok_or_else(|| format!("{at}.logprob: expected a number"))?;
    Ok((id as u32, lp))
}

/// llama-server's answer: the top-K and the forced reference token's log-probability.
pub fn llama_position(answer: &Value, reference: u32) -> Result<Side, ShapeError> {
    let p = answer["completion_probabilities"]
        .get(0)
        .ok_or("completion_probabilities: missing or empty")?;
    let (id, lp) = id_logprob(p, "completion_probabilities[0]")?;
    if id != reference {
        return Err(format!(
            "completion_probabilities[0].id: the server returned token {id}, not the forced reference {reference} (logit_bias ignored?)"
        ));
    }
    let top = p["top_logprobs"]
        .as_array()
        .ok_or("completion_probabilities[0].top_logprobs: expected a list")?
        .iter()
        .enumerate()
        .map(|(i, t)| id_logprob(t, &format!("completion_probabilities[0].top_logprobs[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Side { top, reference: lp })
}

/// vLLM: the request scoring every position of `tokens`.
pub fn vllm_request(model: &str, tokens: &[u32], k: u32) -> Value {
    json!({
        "model": model,
        "prompt": tokens,
        "max_tokens": 1,
        "temperature": 0,
        "prompt_logprobs": k,
    })
}

/// vLLM's answer: per position from 1, the entries ranked ≤ K and the prompt token's own.
pub fn vllm_positions(answer: &Value, tokens: &[u32], k: u32) -> Result<Vec<Side>, ShapeError> {
    let list = answer["choices"][0]["prompt_logprobs"]
        .as_array()
        .ok_or("choices[0].prompt_logprobs: missing (is --max-logprobs set?)")?;
    if list.len() != tokens.len() {
        return Err(format!(
            "choices[0].prompt_logprobs: {} entries for {} prompt tokens",
            list.len(),
            tokens.len()
        ));
    }
    let mut out = Vec::with_capacity(tokens.len().saturating_sub(1));
    for (i, entry) in list.iter().enumerate().skip(1) {
        let at = format!("choices[0].prompt_logprobs[{i}]");
        let map = entry
            .as_object()
            .ok_or_else(|| format!("{at}: expected an object of token ids"))?;
        let mut top = Vec::new();
        let mut reference = None;
        for (key, v) in map {
            let id: u32 = key
                .parse()
                .map_err(|_| format!("{at}: key {key:?} is not a token id"))?;
            let lp = v["logprob"]
                .as_f64()
                .ok_or_else(|| format!("{at}.{key}.logprob: expected a number"))?;
            if id == tokens[i] {
                reference = Some(lp);
            }
            if v["rank"]
                .as_u64()
                .is_some_and(|r| r >= 1 && r <= u64::from(k))
            {
                top.push((id, lp));
            }
        }
        let reference = reference
            .ok_or_else(|| format!("{at}: no entry for the prompt token {}", tokens[i]))?;
        out.push(Side { top, reference });
    }
    Ok(out)
}

/// SGLang: the request scoring every position of `tokens`.
pub fn sglang_request(tokens: &[u32], k: u32) -> Value {
    json!({
        "input_ids": tokens,
        "sampling_params": {"max_new_tokens": 1, "temperature": 0},
        "return_logprob": true,
        "logprob_start_len": 0,
        "top_logprobs_num": k,
    })
}

fn triple(v: &Value, at: &str) -> Result<(u32, f64), ShapeError> {
    let lp = v[0]
        .as_f64()
        .ok_or_else(|| format!("{at}[0]: expected a log-probability"))?;
    let id = v[1]
        .as_u64()
        .ok_or_else(|| format!("{at}[1]: expected a token id"))?;
    Ok((id as u32, lp))
}

/// SGLang's answer: per position from 1, `input_top_logprobs` and `input_token_logprobs`.
pub fn sglang_positions(answer: &Value, tokens: &[u32]) -> Result<Vec<Side>, ShapeError> {
    let meta = &answer["meta_info"];
    let own = meta["input_token_logprobs"]
        .as_array()
        .ok_or("meta_info.input_token_logprobs: missing (return_logprob not honoured?)")?;
    let tops = meta["input_top_logprobs"]
        .as_array()
        .ok_or("meta_info.input_top_logprobs: missing (top_logprobs_num not honoured?)")?;
    if own.len() != tokens.len() || tops.len() != tokens.len() {
        return Err(format!(
            "meta_info: {} and {} entries for {} input tokens",
            own.len(),
            tops.len(),
            tokens.len()
        ));
    }
    let mut out = Vec::new();
    for i in 1..tokens.len() {
        let at = format!("meta_info.input_token_logprobs[{i}]");
        let (id, reference) = triple(&own[i], &at)?;
        if id != tokens[i] {
            return Err(format!(
                "{at}: token {id}, not the input token {}",
                tokens[i]
            ));
        }
        let top = tops[i]
            .as_array()
            .ok_or_else(|| format!("meta_info.input_top_logprobs[{i}]: expected a list"))?
            .iter()
            .enumerate()
            .map(|(j, t)| triple(t, &format!("meta_info.input_top_logprobs[{i}][{j}]")))
            .collect::<Result<Vec<_>, _>>()?;
        out.push(Side { top, reference });
    }
    Ok(out)
}

/// The token ids a `/tokenize` answer holds (llama-server and vLLM: `tokens`).
pub fn tokens_of(answer: &Value) -> Result<Vec<u32>, ShapeError> {
    answer["tokens"]
        .as_array()
        .ok_or("tokens: expected a list of token ids")?
        .iter()
        .map(|t| {
            t.as_u64()
                .or_else(|| t["id"].as_u64())
                .map(|x| x as u32)
                .ok_or_else(|| "tokens: expected token ids".to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let path = format!(
            "{}/../../tests/fixtures/gate/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_slice(&std::fs::read(path).unwrap_or_default()).unwrap_or(Value::Null)
    }

    const PROMPT: [u32; 4] = [504, 3575, 282, 4649];

    #[test]
    fn llama_server_answer_gives_the_forced_token_and_the_top_k() {
        let side = llama_position(&fixture("llama-completion.json"), 7042).unwrap();
        assert_eq!(side.top.len(), 3);
        assert_eq!(side.top[0].0, 7042, "the most likely token is listed first");
        assert!((side.reference - side.top[0].1).abs() < 1e-12);
        let wrong = llama_position(&fixture("llama-completion.json"), 30).unwrap_err();
        assert!(wrong.contains("not the forced reference 30"), "{wrong}");
        let none = llama_position(&json!({"content": "x"}), 1).unwrap_err();
        assert!(none.contains("completion_probabilities"), "{none}");
        let r = llama_request(&PROMPT, 7042, 3, true);
        assert_eq!(r["logit_bias"][0][0], 7042);
        assert_eq!(r["n_predict"], 1);
    }

    #[test]
    fn vllm_prompt_logprobs_give_every_position_from_the_second() {
        let s = vllm_positions(&fixture("vllm-prompt-logprobs.json"), &PROMPT, 2).unwrap();
        assert_eq!(s.len(), 3);
        // The prompt token ranked 12th is its own entry, not one of the top 2.
        assert_eq!(s[0].reference, -6.1);
        assert_eq!(s[0].top.len(), 2);
        assert!(s[0].top.iter().all(|t| t.0 != 3575));
        assert_eq!(s[2].reference, -0.9);
        let short =
            vllm_positions(&fixture("vllm-prompt-logprobs.json"), &PROMPT[..3], 2).unwrap_err();
        assert!(short.contains("4 entries for 3 prompt tokens"), "{short}");
        let r = vllm_request("m", &PROMPT, 2);
        assert_eq!(r["prompt_logprobs"], 2);
        assert!(vllm_positions(&json!({"choices": [{}]}), &PROMPT, 2)
            .unwrap_err()
            .contains("--max-logprobs"));
    }

    #[test]
    fn sglang_input_logprobs_give_every_position_from_the_second() {
        let s = sglang_positions(&fixture("sglang-generate.json"), &PROMPT).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].reference, -6.1);
        assert_eq!(s[0].top, vec![(260, -1.2), (1078, -2.3)]);
        let mut other = PROMPT;
        other[2] = 9;
        let e = sglang_positions(&fixture("sglang-generate.json"), &other).unwrap_err();
        assert!(e.contains("not the input token 9"), "{e}");
        let r = sglang_request(&PROMPT, 2);
        assert_eq!(
            (
                r["logprob_start_len"].clone(),
                r["top_logprobs_num"].clone()
            ),
            (json!(0), json!(2))
        );
    }

    #[test]
    fn tokenize_answers_of_both_shapes() {
        assert_eq!(tokens_of(&json!({"tokens": [1, 2]})).unwrap(), vec![1, 2]);
        assert_eq!(
            tokens_of(&json!({"tokens": [{"id": 5, "piece": "x"}]})).unwrap(),
            vec![5]
        );
        assert!(tokens_of(&json!({"count": 2})).is_err());
    }
}
