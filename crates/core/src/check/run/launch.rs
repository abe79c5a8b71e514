//! A run's launch record against its labels. The server command the collector recorded says
//! which configuration was served: where it carries the knob as a flag (`--parallel 4`,
//! `--max-num-seqs=64`, `-np 4`), its value is the candidate's; and where the model it loaded
//! (the command's `-m`/`--model`, or what the server said it serves) names a weight format
//! (`…-q4_0.gguf`, `…-awq`), it is the format the run's role serves: the deployment's for a
//! candidate, the float baseline's for the baseline. A name that says nothing of its format
//! (a served-model alias) is not checked: no guess is made.

use crate::check::invariant::{Invariant, Violation};
use crate::schema::{KnobValue, Run};

/// The value the command gives the flag of `knob`, when it gives one.
fn flag_value<'a>(command: &'a [String], knob: &str) -> Option<&'a str> {
    let dashed = knob.replace('_', "-");
    let names = [format!("--{knob}"), format!("--{dashed}")];
    for (i, arg) in command.iter().enumerate() {
        for n in &names {
            if arg == n {
                return command.get(i + 1).map(String::as_str);
            }
            if let Some(v) = arg
                .strip_prefix(n.as_str())
                .and_then(|r| r.strip_prefix('='))
            {
                return Some(v);
            }
        }
    }
    None
}

fn same_value(said: &str, want: &KnobValue) -> bool {
    match want {
        KnobValue::Text(t) => said == t,
        _ => said
            .parse::<f64>()
            .is_ok_and(|v| want.number().is_some_and(|w| (v - w).abs() < 1e-9)),
    }
}

/// Weight formats a file or model name may carry, lower case, longest first.
const FORMATS: [&str; 20] = [
    "q4_k_m", "q4_k_s", "q5_k_m", "q5_k_s", "q6_k", "q3_k_m", "q2_k", "iq4_xs", "q4_0", "q4_1",
    "q5_0", "q5_1", "q8_0", "bf16", "f16", "fp16", "f32", "fp8", "awq", "gptq",
];

/// The weight format a model name carries, when it names exactly one.
pub fn format_named(name: &str) -> Option<&'static str> {
    let base = name
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase();
    let tokens: Vec<&str> = base
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    let found: Vec<&'static str> = FORMATS
        .iter()
        .copied()
        .filter(|f| {
            tokens
                .iter()
                .any(|t| t == f || t.ends_with(&format!("_{f}")))
        })
        .collect();
    match found.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

fn same_format(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        let s = s.to_ascii_lowercase();
        match s.as_str() {
            "fp16" => "f16".to_string(),
            _ => s,
        }
    };
    norm(a) == norm(b)
}

/// The models the run's launch record and server name.
fn models(run: &Run) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    if let Some(cmd) = run.server.as_ref().map(|s| s.command.as_slice()) {
        for flag in ["-m", "--model"] {
            if let Some(i) = cmd.iter().position(|a| a == flag) {
                out.extend(cmd.get(i + 1).map(String::as_str));
            }
        }
    }
    if let Some(rep) = run.endpoint.as_ref().and_then(|e| e.reported.as_ref()) {
        out.extend(rep.models.iter().map(String::as_str));
    }
    out
}

/// The launch record's knob value and model format against the run's labels; `format` is the
/// weight format the run's role serves, when its lineage record states one.
/// What the command gives `knob`'s flag, when it gives it another value than `want`.
pub(crate) fn flag_differs<'a>(
    command: &'a [String],
    knob: &str,
    want: &KnobValue,
) -> Option<&'a str> {
    flag_value(command, knob).filter(|s| !same_value(s, want))
}

pub(crate) fn check(run: &Run, knob: Option<&str>, format: Option<&str>, out: &mut Vec<Violation>) {
    if let (Some(cmd), Some(k), Some(want)) = (
        run.server.as_ref().map(|s| s.command.as_slice()),
        knob,
        run.candidate.value.as_ref(),
    ) {
        if let Some(said) = flag_value(cmd, k).filter(|s| !same_value(s, want)) {
            out.push(Violation::new(
                Invariant::LaunchMatches,
                "$.server.command",
                format!(
                    "the server was launched with {k} {said}, but the run is labelled {} = {want}: \
                     another configuration than the one it is compared as",
                    run.candidate.name
                ),
            ));
            return;
        }
    }
    let Some(want) = format else { return };
    for m in models(run) {
        if let Some(f) = format_named(m).filter(|f| !same_format(f, want)) {
            out.push(Violation::new(
                Invariant::LaunchMatches,
                "$.server.command",
                format!(
                    "the server loaded {m:?}, a {} model by its name, but the run's lineage serves \
                     {want}: another artifact than the one it is labelled with",
                    f.to_ascii_uppercase()
                ),
            ));
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_read_from_names_that_carry_one() {
        assert_eq!(
            format_named("/models/smollm2-135m-instruct-q8_0.gguf"),
            Some("q8_0")
        );
        assert_eq!(format_named("Llama-3-8B-Instruct-AWQ"), Some("awq"));
        assert_eq!(format_named("model.Q4_K_M.gguf"), Some("q4_k_m"));
        assert_eq!(format_named("served-model"), None);
        assert_eq!(format_named("smollm2-f16"), Some("f16"));
    }

    #[test]
    fn a_flag_is_read_in_either_spelling() {
        let cmd: Vec<String> = ["srv", "--parallel", "4", "--max-num-seqs=64"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(flag_value(&cmd, "parallel"), Some("4"));
        assert_eq!(flag_value(&cmd, "max_num_seqs"), Some("64"));
        assert_eq!(flag_value(&cmd, "kv_cache_mb"), None);
        assert!(same_value("4", &KnobValue::Int(4)) && same_value("4.0", &KnobValue::Int(4)));
    }
}
