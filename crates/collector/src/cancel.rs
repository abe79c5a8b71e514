//! A cancellation flag that tasks can await (Ctrl-C, a crashed server, a full disk).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

/// A cancellation flag that tasks can await.
#[derive(Clone, Default)]
pub struct Cancel(Arc<(AtomicBool, Notify, std::sync::Mutex<Option<String>>)>);

impl Cancel {
    /// Cancels, remembering the first reason given.
    pub fn cancel(&self, why: &str) {
        if let Ok(mut r) = self.0 .2.lock() {
            r.get_or_insert_with(|| why.to_string());
        }
        self.0 .0.store(true, Ordering::SeqCst);
        self.0 .1.notify_waiters();
    }

    /// Whether cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0 .0.load(Ordering::SeqCst)
    }

    /// Why it was cancelled.
    pub fn reason(&self) -> Option<String> {
        self.0 .2.lock().ok().and_then(|r| r.clone())
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
