//! Multi-turn sessions as a run records them (`session` and `turn` columns): both columns or
//! neither, both set or both null per request, and per session turns 1, 2, 3 … in send order,
//! each sent after the previous one ended (the next turn needs its answer), its prompt longer
//! than the previous turn's when that one succeeded (it resends the conversation so far). A run
//! that breaks this is refused when it is read, whatever wrote it.

use std::collections::HashMap;

use crate::check::invariant::{Invariant, Violation};
use crate::schema::RequestColumns;

/// What is known of a session's latest turn.
#[derive(Clone, Copy)]
struct Last {
    index: usize,
    turn: u32,
}

fn broken(path: String, message: String) -> Violation {
    Violation::new(Invariant::SessionTurns, path, message)
}

/// The sessions of one repeat's requests; `base` is the repeat's JSON path.
pub fn turns(base: &str, r: &RequestColumns) -> Result<(), Violation> {
    let (sessions, turns) = match (&r.session, &r.turn) {
        (None, None) => return Ok(()),
        (Some(s), Some(t)) => (s, t),
        (Some(_), None) | (None, Some(_)) => {
            let missing = if r.turn.is_none() { "turn" } else { "session" };
            return Err(broken(
                format!("{base}.{missing}"),
                "absent while the other session column is present: expected both or neither".into(),
            ));
        }
    };
    let mut last: HashMap<u32, Last> = HashMap::new();
    for (i, (&s, &t)) in sessions.iter().zip(turns).enumerate() {
        let (s, t) = match (s, t) {
            (None, None) => continue,
            (Some(s), Some(t)) => (s, t),
            _ => {
                return Err(broken(
                    format!("{base}.turn[{i}]"),
                    format!("session {s:?} with turn {t:?}: expected both set or both null"),
                ))
            }
        };
        let prev = last.insert(s, Last { index: i, turn: t });
        follows(base, r, i, s, t, prev)?;
    }
    Ok(())
}

/// Request `i`, turn `t` of session `s`, against the session's previous request.
fn follows(
    base: &str,
    r: &RequestColumns,
    i: usize,
    s: u32,
    t: u32,
    prev: Option<Last>,
) -> Result<(), Violation> {
    let want = prev.map_or(1, |p| p.turn.saturating_add(1));
    if t != want {
        return Err(broken(
            format!("{base}.turn[{i}]"),
            format!("turn {t} of session {s}: expected turn {want} (turns are numbered from 1 in send order)"),
        ));
    }
    let Some(p) = prev else { return Ok(()) };
    let sent = r.send_offset_us[i];
    if let Some(e2e) = r.e2e_us[p.index] {
        let ended = r.send_offset_us[p.index].saturating_add(e2e);
        if sent < ended {
            return Err(broken(
                format!("{base}.send_offset_us[{i}]"),
                format!(
                    "turn {t} of session {s} sent at {sent} µs, before turn {} ended at {ended} µs: expected each turn after the previous answer",
                    p.turn
                ),
            ));
        }
    }
    let ok = r.error[p.index].is_none();
    if let (true, Some(before), Some(now)) = (ok, r.prompt_tokens[p.index], r.prompt_tokens[i]) {
        if now <= before {
            return Err(broken(
                format!("{base}.prompt_tokens[{i}]"),
                format!(
                    "turn {t} of session {s} has {now} prompt tokens, turn {} had {before}: expected a longer prompt (the conversation so far)",
                    p.turn
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{RequestRow, SessionTurn};

    /// (session, turn, send µs, e2e µs, prompt tokens)
    fn cols(rows: &[(u32, u32, u64, u64, u32)]) -> RequestColumns {
        RequestColumns::from_rows(
            rows.iter()
                .map(|&(session, turn, send, e2e, prompt)| RequestRow {
                    send_offset_us: send,
                    ttft_us: Some(1),
                    e2e_us: Some(e2e),
                    prompt_tokens: Some(prompt),
                    output_tokens: Some(1),
                    turn: SessionTurn {
                        session: Some(session),
                        turn: Some(turn),
                    },
                    ..RequestRow::default()
                })
                .collect(),
        )
    }

    fn why(rows: &[(u32, u32, u64, u64, u32)]) -> Option<String> {
        turns("$", &cols(rows))
            .err()
            .map(|v| format!("{}: {}", v.path, v.message))
    }

    #[test]
    fn turns_follow_each_other_after_the_answer_with_a_longer_prompt() {
        // Two sessions interleaved, each turn after the previous one ended.
        let good = [
            (0, 1, 0, 50, 10),
            (1, 1, 5, 50, 10),
            (0, 2, 60, 50, 30),
            (1, 2, 70, 9, 25),
        ];
        assert_eq!(why(&good), None);
        let early = [(0, 1, 0, 50, 10), (0, 2, 40, 50, 30)];
        assert!(why(&early).unwrap().contains(
            "send_offset_us[1]: turn 2 of session 0 sent at 40 µs, before turn 1 ended at 50 µs"
        ));
        let shorter = [(0, 1, 0, 50, 10), (0, 2, 60, 50, 10)];
        assert!(why(&shorter)
            .unwrap()
            .contains("prompt_tokens[1]: turn 2 of session 0 has 10 prompt tokens, turn 1 had 10"));
        let skipped = [(0, 1, 0, 50, 10), (0, 3, 60, 50, 30)];
        assert!(why(&skipped)
            .unwrap()
            .contains("turn[1]: turn 3 of session 0: expected turn 2"));
        let mut half = cols(&good);
        half.turn = None;
        assert!(turns("$", &half).unwrap_err().path.ends_with(".turn"));
    }
}
