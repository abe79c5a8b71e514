//! What reading a file gives: a typed document, and the name it is reported under.

use crate::schema::{
    Deployment, FloatBaseline, Kind, Plan, QualityGate, Run, ShardDone, ShardRecord,
};

/// A parsed sloscope file.
#[derive(Debug, Clone, PartialEq)]
pub enum Document {
    /// Quality-gate record.
    QualityGate(QualityGate),
    /// Float baseline record.
    FloatBaseline(FloatBaseline),
    /// Deployment record.
    Deployment(Deployment),
    /// Plan.
    Plan(Plan),
    /// Run.
    Run(Box<Run>),
    /// Another tool's result file, imported without a plan: one run per benchmark it holds,
    /// each with the name it is reported under (`FILE`, or `FILE#N` when there are several).
    Imported(Vec<(String, Run)>),
    /// One attempt of a shard (`shard.json`).
    Shard(Box<ShardRecord>),
    /// A shard attempt's completion marker (`done.json`).
    ShardDone(ShardDone),
    /// A file another tool writes beside its results that holds no measurement of its own
    /// (AIPerf's `inputs.json`, phase manifest, results-ready marker, a warm-up phase's
    /// summary): recognised and set aside, with what it is.
    Aside(String),
}

impl Document {
    /// The document's kind (none for a file set aside).
    pub fn kind(&self) -> Option<Kind> {
        Some(match self {
            Document::QualityGate(_) => Kind::QualityGate,
            Document::FloatBaseline(_) => Kind::FloatBaseline,
            Document::Deployment(_) => Kind::Deployment,
            Document::Plan(_) => Kind::Plan,
            Document::Run(_) | Document::Imported(_) => Kind::Run,
            Document::Shard(_) => Kind::Shard,
            Document::ShardDone(_) => Kind::ShardDone,
            Document::Aside(_) => return None,
        })
    }
}

/// A file that was read, with the name it is reported under.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedFile {
    /// File name or path as the user gave it.
    pub name: String,
    /// Its contents.
    pub doc: Document,
}
