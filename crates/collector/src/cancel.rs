//! A cancellation flag that tasks can await (Ctrl-C, a crashed server, a full disk), with the
//! first [`StopReason`] given.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

use crate::failure::StopReason;

/// A cancellation flag that tasks can await.
#[derive(Clone, Default)]
pub struct Cancel(Arc<(AtomicBool, Notify, std::sync::Mutex<Option<StopReason>>)>);

impl Cancel {
    /// Cancels, remembering the first reason given.
    pub fn cancel(&self, why: StopReason) {
        if let Ok(mut r) = self.0 .2.lock() {
            r.get_or_insert(why);
        }
        self.0 .0.store(true, Ordering::SeqCst);
        self.0 .1.notify_waiters();
    }

    /// Whether cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0 .0.load(Ordering::SeqCst)
    }

    /// Why it was cancelled.
    pub fn reason(&self) -> Option<StopReason> {
        self.0 .2.lock().ok().and_then(|r| r.clone())
    }

    /// The reason as the run file writes it.
    pub fn message(&self) -> String {
        self.reason()
            .map(|r| r.message())
            .unwrap_or_else(|| "interrupted".into())
    }

    /// Resolves once cancelled.
    pub async fn cancelled(&self) {
        loop {
            let n = self.0 .1.notified();
            if self.is_cancelled() {
                return;
            }
            n.await;
        }
    }
}
