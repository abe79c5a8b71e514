//! A cancellation flag that tasks can await, with the first [`StopReason`] given (or a later one
//! that explains it: [`StopReason::explains`]).
//!
//! Two levels: the collection's flag (Ctrl-C, SIGTERM, SIGHUP, a journal or run file that
//! cannot be written: everything stops) and one child flag per target (its server exited, its
//! endpoint stopped answering or rejected the key: that target stops, the next one runs). A
//! child is cancelled whenever its parent is.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

use crate::failure::StopReason;

#[derive(Default)]
struct Flag {
    set: AtomicBool,
    notify: Notify,
    reason: std::sync::Mutex<Option<StopReason>>,
}

impl Flag {
    fn set(&self, why: StopReason) {
        if let Ok(mut r) = self.reason.lock() {
            match r.as_ref() {
                None => *r = Some(why),
                Some(first) if why.explains(first) => *r = Some(why),
                Some(_) => {}
            }
        }
        self.set.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    fn is_set(&self) -> bool {
        self.set.load(Ordering::SeqCst)
    }

    fn reason(&self) -> Option<StopReason> {
        self.reason.lock().ok().and_then(|r| r.clone())
    }

    async fn wait(&self) {
        loop {
            let n = self.notify.notified();
            if self.is_set() {
                return;
            }
            n.await;
        }
    }
}

/// A cancellation flag that tasks can await.
#[derive(Clone, Default)]
pub struct Cancel {
    own: Arc<Flag>,
    parent: Option<Arc<Flag>>,
}

impl Cancel {
    /// A flag for one target: cancelled with this one, or on its own.
    pub fn child(&self) -> Cancel {
        Cancel {
            own: Arc::new(Flag::default()),
            parent: Some(self.parent.clone().unwrap_or_else(|| self.own.clone())),
        }
    }

    /// Cancels this flag, remembering the first reason given (a child whose parent is already
    /// cancelled keeps the parent's reason).
    pub fn cancel(&self, why: StopReason) {
        if self.parent.as_ref().is_some_and(|p| p.is_set()) {
            return;
        }
        self.own.set(why);
    }

    /// Cancels the whole collection (the parent of a child flag).
    pub fn cancel_all(&self, why: StopReason) {
        self.parent.as_ref().unwrap_or(&self.own).set(why);
    }

    /// Whether cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.own.is_set() || self.parent.as_ref().is_some_and(|p| p.is_set())
    }

    /// Whether the whole collection is cancelled (not only this target).
    pub fn all_cancelled(&self) -> bool {
        self.parent.as_ref().unwrap_or(&self.own).is_set()
    }

    /// Why it was cancelled.
    pub fn reason(&self) -> Option<StopReason> {
        self.own
            .reason()
            .or_else(|| self.parent.as_ref().and_then(|p| p.reason()))
    }

    /// The reason as the run file writes it.
    pub fn message(&self) -> String {
        self.reason()
            .map(|r| r.message())
            .unwrap_or_else(|| "interrupted".into())
    }

    /// Resolves once cancelled.
    pub async fn cancelled(&self) {
        match &self.parent {
            Some(p) => tokio::select! {
                _ = self.own.wait() => {}
                _ = p.wait() => {}
            },
            None => self.own.wait().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_stops_alone_and_with_its_parent() {
        let all = Cancel::default();
        let a = all.child();
        let b = all.child();
        a.cancel(StopReason::ServerExited("signal 9".into()));
        assert!(a.is_cancelled() && !b.is_cancelled() && !all.is_cancelled());
        all.cancel(StopReason::Interrupted(crate::failure::Signal::Interrupt));
        assert!(b.is_cancelled());
        assert_eq!(
            b.reason(),
            Some(StopReason::Interrupted(crate::failure::Signal::Interrupt))
        );
        // The first reason wins: a's server exit came before the interruption.
        assert_eq!(
            a.reason(),
            Some(StopReason::ServerExited("signal 9".into()))
        );
        // Once the whole collection is cancelled, a child keeps the parent's reason.
        b.cancel(StopReason::EndpointUnreachable(8));
        assert_eq!(
            b.reason(),
            Some(StopReason::Interrupted(crate::failure::Signal::Interrupt))
        );
    }

    #[test]
    fn a_server_exit_replaces_the_refusals_it_caused_and_nothing_else() {
        let exited = || StopReason::ServerExited("killed by SIGKILL".into());
        let a = Cancel::default().child();
        a.cancel(StopReason::EndpointUnreachable(6));
        a.cancel(exited());
        assert_eq!(a.reason(), Some(exited()));
        // Refusals after the exit do not replace it, and an exit does not replace another cause.
        a.cancel(StopReason::EndpointUnreachable(9));
        assert_eq!(a.reason(), Some(exited()));
        let b = Cancel::default().child();
        b.cancel(StopReason::AuthRejected(401, 6));
        b.cancel(exited());
        assert_eq!(b.reason(), Some(StopReason::AuthRejected(401, 6)));
    }

    #[test]
    fn cancel_all_from_a_child_reaches_every_target() {
        let all = Cancel::default();
        let a = all.child();
        let b = all.child();
        a.cancel_all(StopReason::JournalWrite("No space left on device".into()));
        assert!(all.is_cancelled() && b.is_cancelled() && a.all_cancelled());
    }
}
