//! Header names sloscope's client sends and its scripted test server answers with, defined once
//! for both sides.

/// Request header: the request's id within a repeat (`{repeat}-{index}`, `w{index}` for
/// warm-ups), so a server's log can be joined with the run file.
pub const REQUEST_ID_HEADER: &str = "x-sloscope-request";

/// Response header a simulated backend sets; a run against it can never be accepted.
pub const SIMULATION_HEADER: &str = "x-sloscope-simulation";
