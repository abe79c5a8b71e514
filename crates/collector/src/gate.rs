//! `sloscope gate`: the quantized artifact measured against its float baseline through the
//! servers. For every text of an evaluation set, the same token contexts (the text itself,
//! teacher-forced) are scored by both servers with the top-K log-probabilities at every
//! position; the float server is scored twice, the second time without its prompt cache, for
//! the noise floor (on llama-server at [`NOISE_POSITIONS`] positions of each sequence: there that
//! scoring processes each position's whole context again). The figures and the decision are the
//! core's ([`sloscope_core::gate`]).

pub mod flow;
pub mod plan;
pub mod settings;
pub mod shapes;

use std::time::Duration;

use serde_json::Value;
use sha2::{Digest, Sha256};
use sloscope_core::measure::{divergence, Side};
use sloscope_core::schema::PositionColumns;

use shapes::Backend;

/// One server to score with.
#[derive(Debug, Clone)]
pub struct Server {
    /// Base URL, e.g. `http://127.0.0.1:8080`.
    pub url: String,
    /// `model` of requests (vLLM).
    pub model: String,
}

/// What to score and how.
#[derive(Debug, Clone)]
pub struct Job {
    /// The backend both servers run.
    pub backend: Backend,
    /// The quantized model's server.
    pub quantized: Server,
    /// The float model's server.
    pub float: Server,
    /// Log-probabilities per position.
    pub top_k: u32,
    /// Each text is cut to this many tokens.
    pub max_tokens: usize,
    /// Score as llama-perplexity does: each text cut into chunks of this many tokens (a shorter
    /// remainder dropped), each chunk scored from its own start, only the tokens after its first
    /// half + 1 counted (as its `-c N`).
    pub chunk: Option<usize>,
    /// Per request.
    pub timeout: Duration,
}

/// The texts of an evaluation set: a `.jsonl` file (`{"text": …}` per line) or plain text
/// (texts separated by blank lines); its name and sha256.
pub fn read_eval_set(path: &std::path::Path) -> Result<(Vec<String>, String), String> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    let sha: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "{shown}: not UTF-8 text (byte {}): expected text or JSON Lines",
            e.utf8_error().valid_up_to()
        )
    })?;
    let texts: Vec<String> = if path.extension().is_some_and(|e| e == "jsonl") {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                let v: Value =
                    serde_json::from_str(l).map_err(|e| format!("{shown}:{}: {e}", i + 1))?;
                v["text"].as_str().map(str::to_string).ok_or_else(|| {
                    format!(
                        "{shown}:{}: expected an object with a \"text\" string",
                        i + 1
                    )
                })
            })
            .collect::<Result<_, String>>()?
    } else {
        text.split("\n\n")
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect()
    };
    if texts.is_empty() {
        return Err(format!("{shown}: no text in it: expected texts separated by blank lines, or JSON Lines with \"text\""));
    }
    Ok((texts, sha))
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    body: &Value,
    t: Duration,
) -> Result<Value, String> {
    let r = http
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .timeout(t)
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let status = r.status();
    let bytes = r.bytes().await.map_err(|e| format!("{url}: {e}"))?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&bytes);
        let cut: String = text.chars().take(300).collect();
        return Err(format!("{url}: HTTP {status}: {cut}"));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("{url}: not JSON: {e}"))
}

/// Token ids of `text` as `server` tokenizes it (llama-server and vLLM `/tokenize`).
pub async fn tokenize(
    http: &reqwest::Client,
    job: &Job,
    s: &Server,
    text: &str,
) -> Result<Vec<u32>, String> {
    let body = match job.backend {
        Backend::Llama => serde_json::json!({"content": text}),
        Backend::Vllm | Backend::Sglang => serde_json::json!({"model": s.model, "prompt": text}),
    };
    let url = format!("{}/tokenize", s.url);
    let v = post(http, &url, &body, job.timeout).await?;
    shapes::tokens_of(&v).map_err(|e| format!("{url}: {e}"))
}

/// One token sequence to score: its text, its tokens, and the first position counted (the
/// earlier tokens are context only).
#[derive(Debug, Clone, PartialEq)]
pub struct Sequence {
    /// Index of the text in the evaluation set.
    pub text: u32,
    /// Token ids.
    pub tokens: Vec<u32>,
    /// Positions from this one (≥ 1) predict a counted token.
    pub from: usize,
}

/// The sequences of one text's tokens: the text whole, or (`chunk`) llama-perplexity's chunks.
pub fn sequences(text: u32, tokens: Vec<u32>, chunk: Option<usize>) -> Vec<Sequence> {
    match chunk {
        None => vec![Sequence {
            text,
            tokens,
            from: 1,
        }],
        Some(n) => tokens
            .chunks_exact(n)
            .map(|c| Sequence {
                text,
                tokens: c.to_vec(),
                // llama-perplexity's logits from position n/2 predict tokens n/2 + 1 onwards.
                from: n / 2 + 1,
            })
            .collect(),
    }
}

/// The noise floor's positions per sequence on llama-server. Its second scoring of the float
/// model, prompt cache off, processes each position's whole context again: quadratic in the
/// sequence's length (a 4,096-token text is 8.4 million tokens of prompt processing, against
/// 4,096 with the cache). vLLM and SGLang score a whole sequence in one request: every position.
pub const NOISE_POSITIONS: usize = 16;

/// Which of `n` scored positions the noise floor takes: all, or on llama-server at most
/// [`NOISE_POSITIONS`] evenly spaced ones, the last (the longest context) included.
pub fn noise_picks(backend: Backend, n: usize) -> Vec<usize> {
    let m = NOISE_POSITIONS;
    if backend != Backend::Llama || n <= m {
        return (0..n).collect();
    }
    (1..=m).map(|j| j * n / m - 1).collect()
}

/// The positions of `seq` from `seq.from` scored by `s`; with `only`, those of its indices
/// (among the positions counted) alone, on llama-server.
async fn score(
    http: &reqwest::Client,
    job: &Job,
    s: &Server,
    seq: &Sequence,
    cache: bool,
    only: Option<&[usize]>,
) -> Result<Vec<Side>, String> {
    let all = score_all(http, job, s, seq, cache, only).await?;
    // vLLM and SGLang answer every position from the second; llama-server only those asked.
    let skip = if job.backend == Backend::Llama {
        0
    } else {
        seq.from - 1
    };
    Ok(all.into_iter().skip(skip).collect())
}

async fn score_all(
    http: &reqwest::Client,
    job: &Job,
    s: &Server,
    seq: &Sequence,
    cache: bool,
    only: Option<&[usize]>,
) -> Result<Vec<Side>, String> {
    let (k, tokens) = (job.top_k, &seq.tokens[..]);
    match job.backend {
        Backend::Llama => {
            let url = format!("{}/completion", s.url);
            let counted: Vec<usize> = (seq.from.max(1)..tokens.len()).collect();
            let at = match only {
                Some(picks) => picks.iter().map(|&j| counted[j]).collect(),
                None => counted,
            };
            let mut out = Vec::with_capacity(at.len());
            for i in at {
                let body = shapes::llama_request(&tokens[..i], tokens[i], k, cache);
                let v = post(http, &url, &body, job.timeout).await?;
                out.push(
                    shapes::llama_position(&v, tokens[i]).map_err(|e| missing(job, &url, &e))?,
                );
            }
            Ok(out)
        }
        Backend::Vllm => {
            let url = format!("{}/v1/completions", s.url);
            let v = post(
                http,
                &url,
                &shapes::vllm_request(&s.model, tokens, k),
                job.timeout,
            )
            .await?;
            shapes::vllm_positions(&v, tokens, k).map_err(|e| missing(job, &url, &e))
        }
        Backend::Sglang => {
            let url = format!("{}/generate", s.url);
            let v = post(http, &url, &shapes::sglang_request(tokens, k), job.timeout).await?;
            shapes::sglang_positions(&v, tokens).map_err(|e| missing(job, &url, &e))
        }
    }
}

fn missing(_job: &Job, url: &str, e: &str) -> String {
    format!("{url}: {e}")
}

/// What the scoring gave: per position columns, the noise floor's (at [`noise_picks`]),
/// and why it stopped early.
pub use sloscope_core::gate::Scored;

fn push(c: &mut PositionColumns, text: u32, f: &Side, q: &Side) {
    let p = divergence(f, q);
    c.text.push(text);
    c.kld.push(p.kld);
    c.top1_match.push(p.top1_match);
    c.ref_logprob_float.push(p.ref_logprob_float);
    c.ref_logprob_quant.push(p.ref_logprob_quant);
    c.tail_float.push(p.tail_float);
    c.tail_quant.push(p.tail_quant);
    c.shared_log_ratio_max.push(p.shared_log_ratio_max);
}

/// The token ids of text `i`, the same on both servers (or why not), cut to `max_tokens`.
async fn same_tokens(
    http: &reqwest::Client,
    job: &Job,
    i: usize,
    text: &str,
) -> Result<Vec<u32>, String> {
    let f = tokenize(http, job, &job.float, text).await?;
    if job.backend != Backend::Sglang {
        let q = tokenize(http, job, &job.quantized, text).await?;
        if q != f {
            let at = f
                .iter()
                .zip(&q)
                .position(|(a, b)| a != b)
                .unwrap_or(f.len().min(q.len()));
            let cut: String = text.chars().take(80).collect();
            return Err(format!(
                "the servers tokenize text {i} ({cut:?}…) differently (first difference at token {at}): a vocabulary mismatch; the gate compares the same token contexts only"
            ));
        }
    }
    let need = job.chunk.unwrap_or(2);
    if f.len() < need {
        return Err(format!(
            "text {i} is {} token(s): at least {need} are needed",
            f.len()
        ));
    }
    Ok(f.into_iter().take(job.max_tokens).collect())
}

/// Scores every text. A tokenizer mismatch is an error (nothing is scored); a server that dies
/// or errs part-way leaves the positions scored so far, marked partial.
pub async fn run(job: &Job, texts: &[String]) -> Result<Scored, String> {
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| e.to_string())?;
    let mut seqs = Vec::with_capacity(texts.len());
    for (i, t) in texts.iter().enumerate() {
        let tokens = same_tokens(&http, job, i, t).await?;
        seqs.extend(sequences(i as u32, tokens, job.chunk));
    }
    let mut out = Scored::default();
    for seq in &seqs {
        let i = seq.text;
        let scored = async {
            let f = score(&http, job, &job.float, seq, true, None).await?;
            let q = score(&http, job, &job.quantized, seq, true, None).await?;
            let picks = noise_picks(job.backend, f.len());
            let again = score(&http, job, &job.float, seq, false, Some(&picks)).await?;
            Ok::<_, String>((f, q, picks, again))
        };
        match scored.await {
            Ok((f, q, picks, again)) => {
                for (f, q) in f.iter().zip(&q) {
                    push(&mut out.positions, i, f, q);
                }
                for (&j, a) in picks.iter().zip(&again) {
                    push(&mut out.noise, i, &f[j], a);
                }
            }
            // A server that cannot score at all is refused, with what it needs.
            Err(e) if out.positions.kld.is_empty() => {
                return Err(format!("{e} — {}", job.backend.needs()));
            }
            Err(e) => {
                out.partial = Some(format!("text {i} of {}: {e}", texts.len()));
                break;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_count_what_llama_perplexity_counts() {
        let whole = sequences(3, (0..10).collect(), None);
        assert_eq!(whole.len(), 1);
        assert_eq!(
            (whole[0].text, whole[0].from, whole[0].tokens.len()),
            (3, 1, 10)
        );
        // 10 tokens in chunks of 4: two chunks, the remainder dropped; in each, logits from
        // position 2 predict tokens 3 onwards: one prediction per chunk (n − 1 − n/2).
        let c = sequences(0, (0..10).collect(), Some(4));
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].tokens, vec![4, 5, 6, 7]);
        assert!(c
            .iter()
            .all(|s| s.from == 3 && s.tokens.len() - s.from == 1));
    }

    #[test]
    fn the_noise_floor_samples_llama_servers_positions_evenly_to_the_last() {
        assert_eq!(noise_picks(Backend::Llama, 3), vec![0, 1, 2]);
        assert_eq!(noise_picks(Backend::Vllm, 100).len(), 100);
        for n in [NOISE_POSITIONS + 1, 63, 4095] {
            let p = noise_picks(Backend::Llama, n);
            assert_eq!(p.len(), NOISE_POSITIONS, "{n}");
            assert_eq!(p.last(), Some(&(n - 1)), "{n}");
            assert!(p.windows(2).all(|w| w[0] < w[1]), "{n}: {p:?}");
            // Evenly spaced: no gap more than one position wider than another.
            let gaps: Vec<usize> = p.windows(2).map(|w| w[1] - w[0]).collect();
            let (lo, hi) = (gaps.iter().min().unwrap(), gaps.iter().max().unwrap());
            assert!(hi - lo <= 1, "{n}: {gaps:?}");
        }
    }
}
