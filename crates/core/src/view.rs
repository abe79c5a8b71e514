//! Door: an [`crate::analysis::Analysis`] as the one view-model every output lays out (text,
//! Markdown, JSON, the page), and its text and Markdown printers.

pub use crate::show::render::{markdown, summary_markdown, text};
pub use crate::show::view::*;
