//! What every sending task of one load loop shares: the client, the bodies, the cancellation,
//! the repeat's start and where finished requests go.

use std::time::Instant;

use sloscope_core::schema::RequestRow;
use tokio::sync::mpsc;

use crate::cancel::Cancel;
use crate::failure::FailureKind;
use crate::load::body::BodyFn;
use crate::wire::client::{Client, Observed};

/// A finished request: its row, the kind of failure if it failed, what the server said.
pub type Finished = (RequestRow, Option<FailureKind>, Observed);

/// What every sending task of one loop shares.
pub(crate) struct Lane {
    pub(crate) client: Client,
    pub(crate) body: BodyFn,
    pub(crate) cancel: Cancel,
    pub(crate) t0: Instant,
    pub(crate) tx: mpsc::UnboundedSender<Finished>,
}

impl Lane {
    pub(crate) fn new(
        client: &Client,
        body: &BodyFn,
        cancel: &Cancel,
        t0: Instant,
        tx: mpsc::UnboundedSender<Finished>,
    ) -> Lane {
        Lane {
            client: client.clone(),
            body: body.clone(),
            cancel: cancel.clone(),
            t0,
            tx,
        }
    }
}
