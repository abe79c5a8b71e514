//! The load: the whole collection (`runner`: targets, servers, output) → one profile
//! (`collect`: calibration, bodies, repeats, journal) → one repeat (`drive`, or `sessions` for
//! multi-turn conversations), with the request `body`s and `prompt`s, what the sending tasks
//! share (`lane`) and when to give up on an endpoint (`tally`).

pub(crate) mod body;
pub mod collect;
pub mod drive;
pub(crate) mod lane;
pub mod prompt;
pub mod runner;
pub mod sessions;
pub(crate) mod tally;
