//! What a run says of itself as a record, held against itself: the status it states against
//! the failure it records, and its start and finish as times that can be read.

use crate::base::time::rfc3339_us;
use crate::check::invariant::{Invariant, Violation};
use crate::schema::{Run, RunStatus};

/// Characters of an unreadable stamp quoted back.
const QUOTED_CHARS: usize = 64;

pub(crate) fn check(run: &Run, out: &mut Vec<Violation>) {
    ok_without_failure(run, out);
    readable_stamps(run, out);
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
