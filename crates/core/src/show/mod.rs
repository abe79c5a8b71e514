//! Showing: the view-model a reader sees of an analysis (`view`: lines, tables and cells with
//! their wording decided) and its printers (`render`: text and Markdown). Depends on every
//! stage before it; nothing depends on it but the CLI and the page.

pub mod comparison;
pub mod render;
pub mod view;
