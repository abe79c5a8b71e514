//! sloscope-collector: drives serving profiles against an OpenAI-compatible streaming endpoint
//! and writes run files.
//!
//! Time is measured here, once, at the edge: every event is stamped with a monotonic clock as
//! its bytes arrive. Everything computed from those stamps lives in `sloscope-core`.
//!
//! Modules, from the top: `runner` (the whole plan: targets, servers, output [`layout`]) →
//! `collect` (one profile: calibration, bodies, repeats, journal) → `drive` (one repeat's
//! closed or open loop) → `client` (one request: send, stream, stamp; over `http1`) →
//! `stream`, `sse`. Beside them: `spill` (the rows on disk, the run file streamed from there),
//! `sampler` and `telemetry` (memory, `/metrics`), `server` (launch and stop), `journal` and
//! `write` (nothing lost), `failure` and `error` (typed reasons), `config`, `api` and
//! `template` (the plan).

pub mod api;
mod body;
pub mod cancel;
pub mod client;
pub mod clock;
pub mod collect;
pub mod config;
pub mod drive;
pub mod error;
pub mod external;
pub mod failure;
pub mod gate;
mod http1;
pub mod identity;
pub mod journal;
mod lane;
pub mod layout;
pub mod progress;
pub mod prometheus;
pub mod prompt;
pub mod replay;
pub mod runner;
pub mod sampler;
pub mod secret;
pub mod server;
pub mod sessions;
pub mod shard;
pub mod spill;
pub mod sse;
pub mod stream;
mod tally;
pub mod target;
pub mod telemetry;
pub mod template;
pub mod write;
