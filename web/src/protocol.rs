//! What the page and its reader (the Web Worker of [`crate::worker`]) say to each other. Every
//! message is a JS array `[json, payload]`: the JSON of one of these enums, and for a load the
//! file itself (a `Blob`, passed by reference, never copied) or its text.

use serde::{Deserialize, Serialize};

/// Page → reader.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ToReader {
    /// Read, parse and keep this file (the payload), then analyse everything kept.
    Load {
        /// The page's id for the file.
        id: u32,
        /// File name, for errors and the report.
        name: String,
    },
    /// Stop reading this file (it is dropped if not yet started).
    Cancel {
        /// Which.
        id: u32,
    },
    /// Pool reruns of one candidate, or not; analyses again.
    Pool {
        /// On or off.
        on: bool,
    },
    /// Forget every file.
    Clear,
}

/// Reader → page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum FromReader {
    /// The reader's wasm is running and takes messages.
    Ready,
    /// A file is being read.
    Progress {
        /// Which.
        id: u32,
        /// Bytes read so far.
        bytes: f64,
        /// The file's size.
        total: f64,
        /// Requests parsed so far.
        requests: u64,
    },
    /// A file was read and kept.
    Loaded {
        /// Which.
        id: u32,
        /// What it is ("run", "plan", "vllm result (1 run)" …).
        kind: String,
    },
    /// A file was refused.
    Failed {
        /// Which.
        id: u32,
        /// The specific error (names the file and the field).
        error: String,
    },
    /// A file's reading was stopped at the user's request.
    Cancelled {
        /// Which.
        id: u32,
    },
    /// The analysis of every file kept (JSON of [`sloscope_core::Analysis`]; `None` when no
    /// file is kept).
    Analysis {
        /// The analysis.
        json: Option<String>,
        /// The reader's wasm memory in bytes (what the files cost to keep).
        memory_bytes: f64,
    },
}
