//! Finding and reading result files: file-system I/O only. Which files a walk takes, each
//! once, and their bytes moved into the core's one reader ([`sloscope_core::input`]),
//! which decides how each is read.

use std::collections::BTreeSet;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use sloscope_core::Document;

/// Bytes per read.
const CHUNK: usize = 8 << 20;

/// A file's identity on disk: hard links and symlinks to it share it.
type Identity = (u64, u64);

fn identity(m: &std::fs::Metadata) -> Identity {
    (m.dev(), m.ino())
}

/// What a file that is not a regular one is, for the message that skips it.
fn not_regular(m: &std::fs::Metadata) -> Option<&'static str> {
    let t = m.file_type();
    if t.is_file() || t.is_dir() {
        None
    } else if t.is_fifo() {
        Some("a named pipe")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_char_device() || t.is_block_device() {
        Some("a device")
    } else {
        Some("not a regular file")
    }
}

/// Reads and parses one file through the core's reader; the error names the file (and, for
/// bad content, the JSON path). Reads stop at the size the file had when opened, so a file
/// that grows while read cannot make the read endless.
pub fn read_file(path: &Path, name: &str) -> Result<Document, String> {
    let cannot = |e: std::io::Error| format!("{name}: cannot read: {e}");
    let mut f = std::fs::File::open(path).map_err(cannot)?;
    let meta = f.metadata().map_err(cannot)?;
    if let Some(what) = not_regular(&meta) {
        return Err(format!("{name}: {what}, not a regular file: skipped"));
    }
    let size = meta.len();
    let read = |at: u64, buf: &mut [u8]| -> std::io::Result<usize> {
        if at >= size {
            return Ok(0);
        }
        f.seek(SeekFrom::Start(at))?;
        let room = (size - at).min(buf.len() as u64) as usize;
        f.read(&mut buf[..room])
    };
    sloscope_core::input::read_with(name, size, None, CHUNK, read)
        .map_err(cannot)?
        .map_err(|e| e.to_string())
}

/// Files found under the given paths, and what could not be read.
#[derive(Debug, Default)]
pub struct Found {
    /// Files to read, each once (by its resolved path), in argument order, sorted per directory.
    pub files: Vec<PathBuf>,
    /// Paths that could not be listed or resolved, with why.
    pub errors: Vec<String>,
    /// Paths seen more than once (an alias, a symlink, a repeated argument), skipped.
    pub duplicates: Vec<String>,
    /// Files a directory walk passed over that sloscope reads when named (`*.csv`, `*.yaml`:
    /// other tools' summaries, usually twins of a JSON file beside them).
    pub passed_over: Vec<String>,
}

/// Whether a directory walk picks up this file. Explicitly named files are always read.
fn wanted(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e == "json" || e == "jsonl")
}

/// Whether sloscope reads this file when it is named (a walk reads JSON and JSON Lines only).
fn readable_if_named(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e == "csv" || e == "yaml" || e == "yml")
}

/// Collects files under `paths`. Symlinks are resolved; every file and directory is visited
/// once by its identity on disk (device and inode), so a link to a parent, an alias
/// (`latest -> 2026-11-30`) or a hard link cannot repeat files; only regular files are read (a
/// named pipe, socket or device is named and skipped, so nothing can hang or stream forever);
/// unreadable entries are reported by name and the rest is still collected.
pub fn find_files(paths: &[PathBuf]) -> Found {
    let mut found = Found::default();
    let mut seen_files = BTreeSet::new();
    let mut seen_dirs = BTreeSet::new();
    for p in paths {
        let real = match std::fs::canonicalize(p) {
            Ok(r) => r,
            Err(e) => {
                found
                    .errors
                    .push(format!("{}: cannot read: {e}", p.display()));
                continue;
            }
        };
        let meta = match std::fs::metadata(&real) {
            Ok(m) => m,
            Err(e) => {
                found
                    .errors
                    .push(format!("{}: cannot read: {e}", p.display()));
                continue;
            }
        };
        if let Some(what) = not_regular(&meta) {
            found.errors.push(format!(
                "{}: {what}, not a regular file: skipped",
                p.display()
            ));
            continue;
        }
        if real.is_dir() {
            let before = (
                found.files.len(),
                found.errors.len(),
                found.duplicates.len(),
            );
            let new = !seen_dirs.contains(&real);
            walk(p, &real, &mut seen_dirs, &mut seen_files, &mut found);
            // Files already read through another path (hard links) are files found.
            let after = (
                found.files.len(),
                found.errors.len(),
                found.duplicates.len(),
            );
            if new && after == before {
                found.errors.push(format!(
                    "{}: no *.json files in this directory",
                    p.display()
                ));
            }
        } else if seen_files.insert(identity(&meta)) {
            found.files.push(p.clone());
        } else {
            found.duplicates.push(p.display().to_string());
        }
    }
    found
}

impl Found {
    /// What a walk passed over, in one line (none when nothing was).
    pub fn passed_over_line(&self) -> Option<String> {
        self.passed_over.first()?;
        let named = self
            .passed_over
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        let more = match self.passed_over.len() {
            n if n > 10 => format!(" and {} more", n - 10),
            _ => String::new(),
        };
        Some(format!(
            "{named}{more}: not read (a directory is read for *.json and *.jsonl; the CSV and YAML summaries other tools write beside their JSON are read when named)"
        ))
    }
}

fn walk(
    shown: &Path,
    real: &Path,
    seen_dirs: &mut BTreeSet<PathBuf>,
    seen_files: &mut BTreeSet<Identity>,
    found: &mut Found,
) {
    if !seen_dirs.insert(real.to_path_buf()) {
        found.duplicates.push(shown.display().to_string());
        return;
    }
    let entries = match std::fs::read_dir(real) {
        Ok(e) => e,
        Err(e) => {
            found
                .errors
                .push(format!("{}: cannot list: {e}", shown.display()));
            return;
        }
    };
    let mut names: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    names.sort();
    for name in names {
        let shown_child = shown.join(&name);
        let real_child = match std::fs::canonicalize(real.join(&name)) {
            Ok(r) => r,
            Err(e) => {
                found
                    .errors
                    .push(format!("{}: cannot resolve: {e}", shown_child.display()));
                continue;
            }
        };
        let meta = match std::fs::metadata(&real_child) {
            Ok(m) => m,
            Err(e) => {
                found
                    .errors
                    .push(format!("{}: cannot read: {e}", shown_child.display()));
                continue;
            }
        };
        if meta.is_dir() {
            walk(&shown_child, &real_child, seen_dirs, seen_files, found);
        } else if !wanted(&shown_child) {
            if readable_if_named(&shown_child) {
                found.passed_over.push(shown_child.display().to_string());
            }
        } else if let Some(what) = not_regular(&meta) {
            found.errors.push(format!(
                "{}: {what}, not a regular file: skipped",
                shown_child.display()
            ));
        } else if seen_files.insert(identity(&meta)) {
            found.files.push(shown_child);
        } else {
            found.duplicates.push(shown_child.display().to_string());
        }
    }
}
