//! Which OpenAI-compatible API a target streams from.

use serde::{Deserialize, Serialize};

/// Which OpenAI-compatible API to stream from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// `/v1/completions`, `choices[0].text`.
    #[default]
    Completions,
    /// `/v1/chat/completions`, `choices[0].delta.content`.
    Chat,
}

impl Api {
    /// Request path.
    pub fn path(self) -> &'static str {
        match self {
            Api::Completions => "/v1/completions",
            Api::Chat => "/v1/chat/completions",
        }
    }

    /// Name recorded in run files.
    pub fn as_str(self) -> &'static str {
        match self {
            Api::Completions => "completions",
            Api::Chat => "chat",
        }
    }
}
