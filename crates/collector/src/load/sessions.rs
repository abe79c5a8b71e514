//! Multi-turn sessions: `workers` sessions in flight, each a conversation whose turns are sent
//! one after another — turn k+1 carries every earlier user message and the server's own
//! answers (as a chat client resends them), and is sent a think time after turn k's answer
//! ended. A turn that fails is left out of the conversation (its user message and the missing
//! answer), as a user re-asks after an error; the next turn goes on from the last good one.
//!
//! A repeat's sessions are planned before it starts (the same on every candidate): sessions
//! are taken in order until `requests` turns, the last session cut to the budget. Each row
//! records its session (numbered within the repeat) and turn (from 1).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sloscope_core::measure::LengthDist;
use sloscope_core::schema::SessionTurn;
use sloscope_core::schema::Sessions;

use crate::load::body::{Bodies, UserTurn};
use crate::load::lane::Lane;
use crate::wire::client::Observed;

/// What a profile's sessions are made of.
pub struct SessionLoad {
    bodies: Arc<Bodies>,
    turns: Option<LengthDist>,
    think_ms: Option<LengthDist>,
    salt: u64,
}

impl std::fmt::Debug for SessionLoad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionLoad")
            .field("turns", &self.turns)
            .field("think_ms", &self.think_ms)
            .finish_non_exhaustive()
    }
}

/// One planned session.
struct Session {
    index: u32,
    g: u64,
    turns: Vec<UserTurn>,
}

impl SessionLoad {
    pub(crate) fn new(bodies: Arc<Bodies>, spec: &Sessions, salt: u64) -> SessionLoad {
        SessionLoad {
            bodies,
            turns: spec.turns.clone(),
            think_ms: spec.think_time_ms.clone(),
            salt,
        }
    }

    /// Sessions from body index `base` on, until `requests` turns.
    fn plan(&self, base: u64, requests: usize) -> Vec<Session> {
        let mut left = requests;
        let mut out = Vec::new();
        let mut index = 0u32;
        while left > 0 {
            let g = base + u64::from(index);
            let mut turns = self.bodies.session_turns(g, self.turns.as_ref());
            turns.truncate(left);
            left -= turns.len();
            out.push(Session { index, g, turns });
            index += 1;
        }
        out
    }

    /// The pause before turn `t` (from 0) of session `g`.
    fn think(&self, g: u64, t: usize) -> Duration {
        let ms = self.think_ms.as_ref().map_or(0, |d| {
            d.sample(self.salt ^ 0x7468_696E_6B00, g.wrapping_mul(256) + t as u64)
        });
        Duration::from_millis(u64::from(ms))
    }
}

/// Sends the sessions of `requests` turns from body index `base`, `workers` sessions at a
/// time; request ids are `{prefix}s{session}.{turn}`.
pub(crate) fn run(
    load: Arc<SessionLoad>,
    lane: Lane,
    base: u64,
    requests: usize,
    workers: usize,
    prefix: &str,
) -> tokio::task::JoinHandle<()> {
    let sessions = Arc::new(load.plan(base, requests));
    let next = Arc::new(AtomicUsize::new(0));
    let lane = Arc::new(Lane {
        client: lane.client.keeping_text(),
        ..lane
    });
    let tasks: Vec<_> = (0..workers.min(sessions.len()).max(1))
        .map(|_| {
            let (load, lane, sessions, next) =
                (load.clone(), lane.clone(), sessions.clone(), next.clone());
            let prefix = prefix.to_string();
            tokio::spawn(async move {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(s) = sessions.get(k) else { break };
                    if lane.cancel.is_cancelled() {
                        break;
                    }
                    converse(&load, &lane, s, &prefix).await;
                }
            })
        })
        .collect();
    tokio::spawn(async move {
        futures_util::future::join_all(tasks).await;
    })
}

/// One session, turn by turn.
async fn converse(load: &SessionLoad, lane: &Lane, s: &Session, prefix: &str) {
    let mut history: Vec<(String, String)> = Vec::new();
    for (t, turn) in s.turns.iter().enumerate() {
        if t > 0 {
            tokio::select! {
                _ = tokio::time::sleep(load.think(s.g, t)) => {}
                _ = lane.cancel.cancelled() => return,
            }
        }
        if lane.cancel.is_cancelled() {
            return;
        }
        let body = load.bodies.turn_body(&history, turn);
        let mut obs = Observed::default();
        let id = format!("{prefix}s{}.{}", s.index, t + 1);
        let (mut row, kind) = lane
            .client
            .stream(body, lane.t0, &id, &lane.cancel, &mut obs)
            .await;
        row.turn = SessionTurn {
            session: Some(s.index),
            turn: Some(t as u32 + 1),
        };
        if row.error.is_none() {
            history.extend(turn.messages());
            history.push(("assistant".into(), obs.text.take().unwrap_or_default()));
        }
        if lane.tx.send((row, kind, obs)).is_err() {
            return;
        }
    }
}
