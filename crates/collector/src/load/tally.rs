//! When to give up on an endpoint during a repeat: the failures of one kind in a row (refused
//! connections, rejected keys, timeouts and stalls) that say it is down, hung or refusing the
//! key, and the counts a repeat keeps as it runs.

use sloscope_core::schema::RequestRow;

use crate::cancel::Cancel;
use crate::failure::{FailureKind, StopReason};

/// Counts of one repeat as it runs.
#[derive(Default)]
pub(crate) struct Tally {
    /// Requests failed.
    pub(crate) failed: u64,
    /// Output tokens of the successful ones.
    pub(crate) tokens: u64,
    /// Connection errors in a row: an endpoint that refuses every connection is down.
    unreachable: usize,
    /// HTTP 401 or 403 in a row: the key is wrong or missing.
    rejected: usize,
    /// Timeouts and stalls in a row: the endpoint answers nothing.
    silent: usize,
}

/// How many failures of one kind in a row end a target's collection.
#[derive(Clone, Copy)]
pub(crate) struct GiveUp {
    /// Refused connections, or HTTP 401/403.
    refused: usize,
    /// Timeouts and stalls: each costs a whole timeout, so fewer.
    silent: usize,
}

impl GiveUp {
    /// An endpoint that refuses (or rejects) this many in a row is down (or the key is wrong):
    /// eight, or as many as the concurrency, or every request of a short repeat. One whose
    /// requests time out or stall is hung after three (or as many as the concurrency): each
    /// costs a whole timeout, and a hung server would hold every remaining request for one.
    pub(crate) fn for_repeat(requests: usize, concurrency: usize) -> GiveUp {
        let all = requests.max(1);
        GiveUp {
            refused: concurrency.max(8).min(all),
            silent: concurrency.max(3).min(all),
        }
    }
}

impl Tally {
    /// Counts request `row` (failed as `kind`), and stops the target's collection through
    /// `cancel` once the failures of one kind in a row reach `give_up`'s.
    pub(crate) fn count(
        &mut self,
        row: &RequestRow,
        kind: Option<FailureKind>,
        give_up: GiveUp,
        cancel: &Cancel,
    ) {
        let in_a_row = |n: usize, same: bool| if same { n + 1 } else { 0 };
        match kind {
            Some(k) => {
                self.failed += 1;
                self.unreachable = in_a_row(self.unreachable, k == FailureKind::Connection);
                self.rejected = in_a_row(self.rejected, matches!(k, FailureKind::Http(401 | 403)));
                let silent = matches!(k, FailureKind::Timeout | FailureKind::Stalled);
                self.silent = in_a_row(self.silent, silent);
                if self.unreachable >= give_up.refused {
                    cancel.cancel(StopReason::EndpointUnreachable(self.unreachable));
                }
                if let (true, FailureKind::Http(code)) = (self.rejected >= give_up.refused, k) {
                    cancel.cancel(StopReason::AuthRejected(code, self.rejected));
                }
                if self.silent >= give_up.silent {
                    cancel.cancel(StopReason::EndpointSilent(self.silent));
                }
            }
            None => {
                self.unreachable = 0;
                self.rejected = 0;
                self.silent = 0;
                self.tokens += u64::from(row.output_tokens.unwrap_or(0));
            }
        }
    }
}
