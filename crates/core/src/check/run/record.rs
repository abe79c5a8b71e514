//! What a run says of itself as a record, held against itself: the status it states against
//! the failure it records, its start and finish as times that can be read, the outputs it
//! asked the server for (`ignore_eos`) against the ones the server counted, and the backend
//! version it states against the one the server gave.

use crate::base::time::rfc3339_us;
use crate::check::invariant::{Invariant, Violation};
use crate::schema::{Run, RunStatus, TokenSource};

/// Characters of an unreadable stamp quoted back.
const QUOTED_CHARS: usize = 64;

pub(crate) fn check(run: &Run, out: &mut Vec<Violation>) {
    ok_without_failure(run, out);
    readable_stamps(run, out);
    caps_generated(run, out);
    version_reported(run, out);
}

/// A run states its backend version (the deployment record's); a server that gives its own
/// (llama-server's `/props`, vLLM's `/version`, TGI's `/info`) and gives another says the run
/// measured another backend than the lineage vouches for.
fn version_reported(run: &Run, out: &mut Vec<Violation>) {
    let Some(rep) = run.endpoint.as_ref().and_then(|e| e.reported.as_ref()) else {
        return;
    };
    let Some(said) = rep.version.as_deref() else {
        return;
    };
    if same_version(said, &run.backend_version) {
        return;
    }
    let from = rep.version_from.as_deref().unwrap_or("its own endpoint");
    out.push(Violation::new(
        Invariant::BackendVersionMatches,
        "$.endpoint.reported.version",
        format!(
            "the server gave its version as {:?} ({from}), where the run states {:?}: another \
             backend than the lineage vouches for",
            quoted(said),
            quoted(&run.backend_version)
        ),
    ));
}

/// Two version strings name one version: equal (case, surrounding space and a leading `v`
/// aside), or one the other followed by more after a separator (`0.11.0` and `0.11.0+cu128`,
/// `0.11` and `0.11.0`).
pub(crate) fn same_version(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        let s = s.trim().to_lowercase();
        s.strip_prefix('v').map(str::to_string).unwrap_or(s)
    };
    let (a, b) = (norm(a), norm(b));
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    !short.is_empty()
        && long.starts_with(short.as_str())
        && long[short.len()..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_ascii_alphanumeric())
}

/// A run that asked the server to ignore end-of-sequence should see each successful request
/// generate its whole cap. Requests counted short of their cap — by the server itself
/// (`usage`), or from the stream's events where it gave no count — say it stopped early anyway
/// (it ignores the option, or cut the output at its context length), or, counted from events,
/// that it sent several tokens per event without a count. Either way the outputs measured are
/// shorter than the profile's, which flatters every time per request and every throughput a
/// reviewer compares.
fn caps_generated(run: &Run, out: &mut Vec<Violation>) {
    if run.endpoint.as_ref().and_then(|e| e.ignore_eos) != Some(true) {
        return;
    }
    let (mut short, mut counted, mut first) = (0_usize, 0_usize, None);
    for (ri, rep) in run.repeats.iter().enumerate() {
        let q = &rep.requests;
        let Some(caps) = q.max_output_tokens.as_ref() else {
            continue;
        };
        let rows = caps
            .iter()
            .zip(&q.output_tokens)
            .zip(&q.output_tokens_source)
            .zip(&q.error);
        for (i, (((cap, got), source), error)) in rows.enumerate() {
            let (
                Some(cap),
                Some(got),
                Some(source @ (TokenSource::Usage | TokenSource::Events)),
                None,
            ) = (cap, got, source, error)
            else {
                continue;
            };
            counted += 1;
            if got < cap {
                short += 1;
                first.get_or_insert((ri, i, *got, *cap, *source));
            }
        }
    }
    if let Some((ri, i, got, cap, source)) = first {
        let how = match source {
            TokenSource::Events => {
                "counted from its stream events, the server giving no count: it stopped early, \
                 or sent several tokens per event"
            }
            _ => "counted by the server",
        };
        out.push(Violation::new(
            Invariant::CapsGenerated,
            format!("$.repeats[{ri}].requests.output_tokens[{i}]"),
            format!(
                "{short} of {counted} successful requests ended before their output cap (the \
                 first: {got} of {cap} tokens, {how}), though the run asked the server to ignore \
                 end-of-sequence: it ignores the option or cut the output at its context length, \
                 and the outputs measured are shorter than the profile's"
            ),
        ));
    }
}

/// `ok` says every planned request was sent and accounted for; a failure recorded beside it says
/// the run stopped or could not be carried out. One of the two is false, and the file does not
/// say which.
fn ok_without_failure(run: &Run, out: &mut Vec<Violation>) {
    let Some(failure) = run.failure.as_deref().filter(|f| !f.trim().is_empty()) else {
        return;
    };
    if run.status == RunStatus::Ok {
        out.push(Violation::new(
            Invariant::OkRecordsNoFailure,
            "$.failure",
            format!(
                "the run's status is ok, yet it records a failure ({:?}): its status cannot be \
                 believed",
                quoted(failure)
            ),
        ));
    }
}

/// A start or finish that is not an RFC 3339 time leaves the run's window unchecked against its
/// requests (`window_too_short`): said, not guessed at.
fn readable_stamps(run: &Run, out: &mut Vec<Violation>) {
    for (field, stamp) in [
        ("started_at", &run.started_at),
        ("finished_at", &run.finished_at),
    ] {
        if let Some(s) = stamp.as_deref().filter(|s| rfc3339_us(s).is_none()) {
            out.push(Violation::new(
                Invariant::StampsReadable,
                format!("$.{field}"),
                format!(
                    "{:?}: expected an RFC 3339 time such as 2026-12-01T06:48:07Z; the run's \
                     window is not checked against its requests",
                    quoted(s)
                ),
            ));
        }
    }
}

fn quoted(s: &str) -> String {
    match s.char_indices().nth(QUOTED_CHARS) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::same_version;

    #[test]
    fn versions_are_the_same_up_to_a_v_and_a_build_suffix() {
        for (a, b) in [
            ("0.11.0", "0.11.0"),
            ("v0.11.0", "0.11.0"),
            ("0.11.0+cu128", "0.11.0"),
            ("b1-7e4c0a9", "b1-7e4c0a9"),
            (" 3.3.4 ", "3.3.4-dev"),
            ("0.11", "0.11.0"),
        ] {
            assert!(same_version(a, b), "{a} {b}");
        }
        for (a, b) in [
            ("0.11.0", "0.10.2"),
            ("0.1", "0.11.0"),
            ("b1-7e4c0a9", "b2-1234567"),
            ("", "0.11.0"),
        ] {
            assert!(!same_version(a, b), "{a} {b}");
        }
    }
}
