//! Reading what a workload replays: a dataset's prompts and a trace's requests, streamed from
//! the file (hashed as it is read, so the run names the bytes it replayed). Memory does not grow
//! with the file: a dataset keeps a deterministic sample of at most [`MAX_KEPT`] records, a
//! trace the requests it will send. Each record is interpreted by the core
//! ([`sloscope_core::input`]); an error names the file, the line (or array element) and the
//! field.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use sha2::{Digest, Sha256};
use sloscope_core::input::{
    jsonl_record, mooncake_entry, sharegpt_record, AzureColumns, Dataset, DatasetFormat,
    DatasetRecord, Trace, TraceEntry, TraceFormat,
};
use sloscope_core::schema::WorkloadSpec;

/// Dataset records kept at most (a deterministic sample when the file has more).
pub const MAX_KEPT: usize = 65_536;

/// What one profile replays.
#[derive(Debug, Default)]
pub struct Replay {
    /// Dataset records, in file order: a sample of the usable ones.
    pub records: Vec<DatasetRecord>,
    /// Usable records in the whole file.
    pub usable: usize,
    /// The trace's requests to send, in time order.
    pub trace: Vec<TraceEntry>,
    /// Send offsets (µs from the first) of `trace`, time-scaled.
    pub offsets_us: Vec<u64>,
}

impl Replay {
    /// The dataset record of body index `i` (sampled from `seed`).
    pub fn record(&self, seed: u64, i: u64) -> Option<&DatasetRecord> {
        if self.records.is_empty() {
            return None;
        }
        let k = mix(seed ^ 0x6461_7461, i) % self.records.len() as u64;
        self.records.get(k as usize)
    }

    /// The trace entry of request `i` within a repeat (warm-ups wrap around).
    pub fn entry(&self, i: u64) -> Option<&TraceEntry> {
        if self.trace.is_empty() {
            return None;
        }
        self.trace.get((i % self.trace.len() as u64) as usize)
    }
}

/// A reader that hashes what passes through it.
struct Hashing<R> {
    inner: R,
    hash: Sha256,
    bytes: u64,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

fn open(path: &Path) -> Result<BufReader<Hashing<std::fs::File>>, String> {
    let f =
        std::fs::File::open(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    Ok(BufReader::with_capacity(
        1 << 20,
        Hashing {
            inner: f,
            hash: Sha256::new(),
            bytes: 0,
        },
    ))
}

/// Reads to the end (so the hash covers the whole file) and returns the hex digest.
fn finish(mut r: BufReader<Hashing<std::fs::File>>, path: &Path) -> Result<String, String> {
    std::io::copy(&mut r, &mut std::io::sink())
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let h = r.into_inner().hash.finalize();
    Ok(h.iter().map(|b| format!("{b:02x}")).collect())
}

fn check_hash(path: &Path, stated: Option<&str>, got: &str) -> Result<(), String> {
    match stated {
        Some(s) if !s.eq_ignore_ascii_case(got) => Err(format!(
            "{}: sha256 is {got}, the plan states {s}: the file changed since the plan was written",
            path.display()
        )),
        _ => Ok(()),
    }
}

/// Reads the dataset and trace of `w` (paths relative to `dir`), writes their hashes into `w`
/// and returns what to replay; `None` when the workload replays nothing. `requests` is how many
/// trace requests a repeat sends (0: the whole trace, which then sets `requests_per_repeat`).
pub fn load(dir: &Path, w: &mut WorkloadSpec, seed: u64) -> Result<Option<Replay>, String> {
    if w.dataset.is_none() && w.trace.is_none() {
        return Ok(None);
    }
    let mut replay = Replay::default();
    if let Some(d) = w.dataset.as_mut() {
        let path = dir.join(&d.file);
        let (records, usable, hash) = read_dataset(&path, d, seed)?;
        check_hash(&path, d.sha256.as_deref(), &hash)?;
        d.sha256 = Some(hash);
        replay.records = records;
        replay.usable = usable;
    }
    if let Some(t) = w.trace.as_mut() {
        let path = dir.join(&t.file);
        let (mut entries, hash) = read_trace(&path, t)?;
        check_hash(&path, t.sha256.as_deref(), &hash)?;
        t.sha256 = Some(hash);
        entries.sort_by_key(|e| e.at_us);
        let want = w.requests_per_repeat.unwrap_or(entries.len() as i64) as usize;
        if want > entries.len() {
            return Err(format!(
                "{}: {} requests in the trace, workload.requests_per_repeat is {want}: expected at most the trace's (or leave it out to replay the whole trace)",
                path.display(),
                entries.len()
            ));
        }
        entries.truncate(want);
        w.requests_per_repeat = Some(want as i64);
        replay.offsets_us = t.offsets_us(&entries);
        replay.trace = entries;
    }
    Ok(Some(replay))
}

/// Kept records with their priority: the `MAX_KEPT` lowest priorities are a deterministic
/// uniform sample whatever the file's size.
struct Kept {
    priority: u64,
    index: usize,
    record: DatasetRecord,
}

impl PartialEq for Kept {
    fn eq(&self, o: &Self) -> bool {
        (self.priority, self.index) == (o.priority, o.index)
    }
}
impl Eq for Kept {}
impl PartialOrd for Kept {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Kept {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.priority, self.index).cmp(&(o.priority, o.index))
    }
}

struct Sampler {
    seed: u64,
    heap: std::collections::BinaryHeap<Kept>,
    usable: usize,
}

impl Sampler {
    fn offer(&mut self, record: DatasetRecord) {
        let k = Kept {
            priority: mix(self.seed, self.usable as u64),
            index: self.usable,
            record,
        };
        self.usable += 1;
        if self.heap.len() < MAX_KEPT {
            self.heap.push(k);
        } else if self.heap.peek().is_some_and(|top| k < *top) {
            self.heap.pop();
            self.heap.push(k);
        }
    }

    fn records(self) -> Vec<DatasetRecord> {
        let mut kept = self.heap.into_vec();
        kept.sort_by_key(|k| k.index);
        kept.into_iter().map(|k| k.record).collect()
    }
}

fn read_dataset(
    path: &Path,
    d: &Dataset,
    seed: u64,
) -> Result<(Vec<DatasetRecord>, usize, String), String> {
    let mut r = open(path)?;
    let mut s = Sampler {
        seed,
        heap: std::collections::BinaryHeap::new(),
        usable: 0,
    };
    match d.format {
        DatasetFormat::Jsonl => {
            let mut line = String::new();
            let mut n = 0usize;
            loop {
                line.clear();
                let got = r
                    .read_line(&mut line)
                    .map_err(|e| format!("{}: line {}: {e}", path.display(), n + 1))?;
                if got == 0 {
                    break;
                }
                n += 1;
                match jsonl_record(&line) {
                    Ok(Some(rec)) => s.offer(rec),
                    Ok(None) => {}
                    Err(e) => return Err(format!("{}: line {n}: {e}", path.display())),
                }
            }
        }
        DatasetFormat::Sharegpt => {
            let mut de = serde_json::Deserializer::from_reader(&mut r);
            let seen = serde::de::Deserializer::deserialize_seq(
                &mut de,
                Conversations {
                    sampler: &mut s,
                    error: None,
                },
            )
            .map_err(|e| {
                format!(
                    "{}: {e}: expected a JSON array of conversations",
                    path.display()
                )
            })?;
            if let Some(e) = seen {
                return Err(format!("{}: {e}", path.display()));
            }
            de.end()
                .map_err(|e| format!("{}: after the array: {e}", path.display()))?;
        }
    }
    if s.usable == 0 {
        return Err(format!(
            "{}: no usable record: expected at least one prompt",
            path.display()
        ));
    }
    let usable = s.usable;
    let records = s.records();
    Ok((records, usable, finish(r, path)?))
}

/// Streams a ShareGPT array one conversation at a time; returns the first bad one's error.
struct Conversations<'a> {
    sampler: &'a mut Sampler,
    error: Option<String>,
}

impl<'de> serde::de::Visitor<'de> for Conversations<'_> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON array of conversations")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        mut self,
        mut seq: A,
    ) -> Result<Self::Value, A::Error> {
        let mut i = 0usize;
        while let Some(v) = seq.next_element::<serde_json::Value>()? {
            if self.error.is_none() {
                match sharegpt_record(&v) {
                    Ok(Some(rec)) => self.sampler.offer(rec),
                    Ok(None) => {}
                    Err(e) => self.error = Some(format!("element {i}: {e}")),
                }
            }
            i += 1;
        }
        Ok(self.error)
    }
}

fn read_trace(path: &Path, t: &Trace) -> Result<(Vec<TraceEntry>, String), String> {
    let mut r = open(path)?;
    let mut entries = Vec::new();
    let mut line = String::new();
    let mut n = 0usize;
    let mut azure: Option<AzureColumns> = None;
    loop {
        line.clear();
        let got = r
            .read_line(&mut line)
            .map_err(|e| format!("{}: line {}: {e}", path.display(), n + 1))?;
        if got == 0 {
            break;
        }
        n += 1;
        let parsed = match t.format {
            TraceFormat::Mooncake => mooncake_entry(&line),
            TraceFormat::Azure => match &azure {
                None if line.trim().is_empty() => Ok(None),
                None => {
                    azure = Some(
                        AzureColumns::from_header(&line)
                            .map_err(|e| format!("{}: line {n}: {e}", path.display()))?,
                    );
                    Ok(None)
                }
                Some(cols) => cols.entry(&line),
            },
        };
        match parsed {
            Ok(Some(e)) => entries.push(e),
            Ok(None) => {}
            Err(e) => return Err(format!("{}: line {n}: {e}", path.display())),
        }
    }
    if entries.is_empty() {
        return Err(format!(
            "{}: no requests: expected at least one timestamped request",
            path.display()
        ));
    }
    Ok((entries, finish(r, path)?))
}

/// A well-mixed 64-bit hash of `(seed, i)` (SplitMix64's finalizer).
fn mix(seed: u64, i: u64) -> u64 {
    sloscope_core::measure::finalize(
        seed ^ i
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(0x632B_E59B_D9B4_E019),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "sloscope-replay-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn workload() -> WorkloadSpec {
        WorkloadSpec::default()
    }

    #[test]
    fn a_big_dataset_is_sampled_within_the_bound_and_hashed() {
        let d = dir();
        let mut text = String::new();
        for i in 0..(MAX_KEPT + 5000) {
            text.push_str(&format!(
                "{{\"prompt\": \"p{i}\", \"output_tokens\": {}}}\n",
                i % 7 + 1
            ));
        }
        std::fs::write(d.join("big.jsonl"), &text).unwrap();
        let mut w = workload();
        w.dataset = Some(Dataset {
            file: "big.jsonl".into(),
            format: DatasetFormat::Jsonl,
            sha256: None,
        });
        let r = load(&d, &mut w, 7).unwrap().unwrap();
        assert_eq!(r.usable, MAX_KEPT + 5000);
        assert_eq!(r.records.len(), MAX_KEPT);
        let want: String = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            w.dataset.as_ref().unwrap().sha256.as_deref(),
            Some(want.as_str())
        );
        // Deterministic; and a stated hash that differs is refused.
        let mut w2 = workload();
        w2.dataset = w.dataset.clone();
        let r2 = load(&d, &mut w2, 7).unwrap().unwrap();
        assert_eq!(r.records, r2.records);
        assert_eq!(r.record(3, 99), r2.record(3, 99));
        w2.dataset.as_mut().unwrap().sha256 = Some("0".repeat(64));
        assert!(load(&d, &mut w2, 7)
            .unwrap_err()
            .contains("the file changed"));
    }

    #[test]
    fn bad_records_name_the_file_and_line() {
        let d = dir();
        std::fs::write(
            d.join("bad.jsonl"),
            "{\"prompt\": \"ok\"}\n\n{\"prompt\": 4}\n",
        )
        .unwrap();
        let mut w = workload();
        w.dataset = Some(Dataset {
            file: "bad.jsonl".into(),
            format: DatasetFormat::Jsonl,
            sha256: None,
        });
        let e = load(&d, &mut w, 1).unwrap_err();
        assert!(e.contains("bad.jsonl: line 3: prompt is 4"), "{e}");

        std::fs::write(d.join("s.json"), r#"[{"conversations": []}, {"x": 1}]"#).unwrap();
        w.dataset = Some(Dataset {
            file: "s.json".into(),
            format: DatasetFormat::Sharegpt,
            sha256: None,
        });
        let e = load(&d, &mut w, 1).unwrap_err();
        assert!(e.contains("s.json: element 1"), "{e}");
        std::fs::write(d.join("s.json"), r#"{"conversations": []}"#).unwrap();
        let e = load(&d, &mut w, 1).unwrap_err();
        assert!(e.contains("expected a JSON array"), "{e}");

        std::fs::write(d.join("t.csv"), "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.5,10,3\n2023-11-16 18:15:47,x,3\n").unwrap();
        let mut w = workload();
        w.trace = Some(Trace {
            file: "t.csv".into(),
            format: TraceFormat::Azure,
            time_scale: None,
            sha256: None,
            block_tokens: None,
        });
        let e = load(&d, &mut w, 1).unwrap_err();
        assert!(e.contains("t.csv: line 3: ContextTokens is \"x\""), "{e}");
    }

    #[test]
    fn a_trace_sets_the_requests_and_their_times() {
        let d = dir();
        std::fs::write(
            d.join("m.jsonl"),
            "{\"timestamp\": 1000, \"input_length\": 30, \"output_length\": 4}\n{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 2}\n{\"timestamp\": 3000, \"input_length\": 50, \"output_length\": 6}\n",
        )
        .unwrap();
        let mut w = workload();
        w.trace = Some(Trace {
            file: "m.jsonl".into(),
            format: TraceFormat::Mooncake,
            time_scale: Some(2.0),
            sha256: None,
            block_tokens: None,
        });
        let r = load(&d, &mut w, 1).unwrap().unwrap();
        assert_eq!(r.offsets_us, vec![0, 2_000_000, 6_000_000]);
        assert_eq!(r.trace[0].input_tokens, 10);
        assert_eq!(w.requests_per_repeat, Some(3));
        w.requests_per_repeat = Some(4);
        assert!(load(&d, &mut w, 1)
            .unwrap_err()
            .contains("3 requests in the trace"));
        w.requests_per_repeat = Some(2);
        assert_eq!(load(&d, &mut w, 1).unwrap().unwrap().trace.len(), 2);
    }
}
