//! Other tools' files as the measurements they hold: one unit per run the analysis makes of
//! them — a file alone, or a run joined from several (llmperf's records and summary of one
//! invocation, an AIPerf artifact's exports, one run written in two formats) under its first
//! file. Whatever places a file (the page, `sloscope import`) places a unit, so one measurement
//! is one run wherever it goes.

use super::artifact::Joined;
use crate::read::document::Document;
use crate::schema::Run;
use crate::LoadedFile;

/// One measurement of another tool.
#[derive(Debug)]
pub struct Unit<'a> {
    /// Its first file's position in the files given.
    pub index: usize,
    /// Its first file's name.
    pub name: &'a str,
    /// Its runs: the joined run where files were joined.
    pub runs: &'a [(String, Run)],
    /// The positions of the other files it holds.
    pub parts: Vec<usize>,
}

/// The units `joined` (the core's join of `files`) makes of the imported files among `files`,
/// in the order given. A file set aside (AIPerf's warm-up phase) is in none.
pub fn units<'a>(files: &[&'a LoadedFile], joined: &'a Joined) -> Vec<Unit<'a>> {
    // The file whose run holds `name` (a chain: a copy of a joined summary).
    let root = |name: &'a str| {
        // Bounded: a chain is a copy of a joined summary at most; never a cycle, but a file
        // given twice under one name must not make one.
        let mut at = name;
        for _ in 0..8 {
            match joined.part_of.get(at) {
                Some(next) if next != at => at = next.as_str(),
                _ => break,
            }
        }
        at
    };
    let mut out: Vec<Unit<'a>> = Vec::new();
    for (index, f) in files.iter().enumerate() {
        let Document::Imported(own) = &f.doc else {
            continue;
        };
        let name = f.name.as_str();
        let joined_run = joined.files.iter().find(|j| j.name == name).map(|j| &j.doc);
        if joined.part_of.contains_key(name)
            || (joined.consumed.contains(name) && joined_run.is_none())
        {
            continue;
        }
        let runs = match joined_run {
            Some(Document::Imported(r)) => r.as_slice(),
            _ => own.as_slice(),
        };
        out.push(Unit {
            index,
            name,
            runs,
            parts: Vec::new(),
        });
    }
    for (index, f) in files.iter().enumerate() {
        if joined.part_of.contains_key(f.name.as_str()) {
            let r = root(f.name.as_str());
            if let Some(u) = out.iter_mut().find(|u| u.name == r) {
                u.parts.push(index);
            }
        }
    }
    out
}
