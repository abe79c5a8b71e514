//! The wire: one request to an OpenAI-compatible endpoint and its stream, timed as bytes arrive.
//!
//! `client` sends one request and stamps each event (over `http1`, the exchange written for its
//! timing); `stream` and `sse` split the bytes into events; `api` names the API shape and
//! `secret` holds the key it sends. Nothing here knows a plan, a profile or a file.

pub mod api;
pub mod client;
pub(crate) mod http1;
pub mod secret;
pub mod sse;
pub mod stream;
