//! The reader: reads, parses and keeps the dropped files and analyses them. It runs in a Web
//! Worker (the `sloscope-worker` binary, built by Trunk beside the page; [`start`]) so the
//! page's main thread only draws, or on the page itself where no worker can start (a downloaded
//! report opened from disk): the same code either way, talking in [`FromReader`] messages.
//! Files are read one after another in chunks; a cancel or a new file is taken between chunks.
//! Adding a file parses only that file; the analysis is redone over everything kept once no
//! file is waiting.

use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;

use sloscope_core::comparison::{compare, comparison_view, CompareOptions};
use sloscope_core::input::{Importer, StatedPlace, StatedProfile, Statement};
use sloscope_core::schema::Run;
use sloscope_core::view::report_view;
use sloscope_core::{analyze_all, AnalyzeOptions, LoadedFile};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::load::{self, ReadError};
use crate::protocol::{Compared, ComparedJs, FromReader, Side, StatedForm, ToReader};

/// The comparison of the before and after files (pooling reruns or not), with its view and
/// Markdown.
pub type Comparer = fn(&[&LoadedFile], &[&LoadedFile], bool) -> Option<ComparedJs>;

/// What a reader can do beyond analysing sloscope's own files. The page starts a reader
/// without these first (the `sloscope-lean-worker` binary, which holds none of their code, so
/// it is less to fetch); a file or a mode that needs them makes it ask for the full reader
/// (`sloscope-worker`), which the page then starts and hands every file again.
#[derive(Clone, Copy)]
pub struct Abilities {
    /// Reads other tools' result files.
    pub importer: Option<Importer>,
    /// Compares two collections.
    pub comparer: Option<Comparer>,
    /// Makes a plan of SLOs stated in the page for other tools' files.
    pub stater: Option<Stater>,
}

/// A plan made of SLOs stated in the page for other tools' files (each file's name and runs as
/// read without a plan), as JSON, or why it could not be made.
pub type Stater = fn(Vec<StatedForm>, Vec<StatedPlace>, &[Given<'_>]) -> Result<String, String>;

/// Another tool's file as read: its name and runs.
pub type Given<'a> = (&'a str, &'a [(String, Run)]);

impl Abilities {
    /// Everything: the full reader.
    pub fn full() -> Self {
        Self {
            importer: Some(sloscope_core::input::importer()),
            comparer: Some(compared),
            stater: Some(stated),
        }
    }

    /// sloscope's own files, analysed: the page's first reader.
    pub fn lean() -> Self {
        Self {
            importer: None,
            comparer: None,
            stater: None,
        }
    }
}

/// The limits as typed read as numbers, then the core's plan of the statement.
fn stated(
    profiles: Vec<StatedForm>,
    places: Vec<StatedPlace>,
    files: &[Given<'_>],
) -> Result<String, String> {
    let profiles = profiles
        .into_iter()
        .map(|p| {
            let slo = p
                .limits
                .iter()
                .map(|(metric, text)| {
                    text.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite() && *v >= 0.0)
                        // `-0` is 0.
                        .map(|v| (metric.clone(), v + 0.0))
                        .ok_or_else(|| {
                            format!(
                                "{}: {metric} is {:?}: expected a number, 0 or more",
                                p.name,
                                sloscope_core::view::Shown::new(text).to_string()
                            )
                        })
                })
                .collect::<Result<_, String>>()?;
            Ok(StatedProfile {
                name: p.name,
                primary_metric: p.primary_metric,
                slo,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let plan = sloscope_core::input::stated_plan(&Statement { profiles, places }, files)?;
    serde_json::to_string_pretty(&plan).map_err(|e| e.to_string())
}

fn compared(before: &[&LoadedFile], after: &[&LoadedFile], pool: bool) -> Option<ComparedJs> {
    let options = CompareOptions {
        pool_reruns: pool,
        ..CompareOptions::default()
    };
    let comparison = compare(before, after, &options);
    let view = comparison_view(&comparison);
    let markdown = sloscope_core::comparison::markdown(&comparison);
    ComparedJs::new(&Compared {
        comparison,
        view,
        markdown,
    })
    .ok()
}

/// A file's content as the page sent it.
pub enum Payload {
    /// A `File` or `Blob`, read in chunks.
    Blob(web_sys::Blob),
    /// Text already in memory (the example set, a report's embedded files).
    Text(String),
}

struct Job {
    id: u32,
    name: String,
    side: Option<Side>,
    payload: Payload,
}

struct Reader {
    sink: Rc<dyn Fn(FromReader)>,
    docs: Vec<(u32, Option<Side>, Rc<LoadedFile>)>,
    /// Files that could not be read, with why: a planned cell left without a run names them.
    refused: Vec<(u32, String)>,
    queue: VecDeque<Job>,
    busy: bool,
    cancelled: HashSet<u32>,
    pool: bool,
    /// Bumped by Clear: a read that started before it is dropped when it ends.
    epoch: u64,
    abilities: Abilities,
    /// Where the page placed other tools' files in the plan.
    places: crate::placing::Places,
    /// Asked the page for the full reader: takes nothing more.
    upgrading: bool,
}

/// Asks the page for the full reader (once), and takes nothing more.
fn upgrade(r: &mut Reader, why: String) {
    if !r.upgrading {
        r.upgrading = true;
        r.queue.clear();
        (r.sink)(FromReader::Upgrade { why });
    }
}

fn scope() -> web_sys::DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post_to_page(msg: FromReader) {
    let value = match crate::protocol::to_js(&msg) {
        Ok(v) => v,
        Err(e) => match crate::protocol::to_js(&FromReader::Notice {
            message: format!("the reader could not send its message: {e}"),
        }) {
            Ok(v) => v,
            Err(_) => return,
        },
    };
    let _ = scope().post_message(&value);
}

fn memory_bytes() -> f64 {
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .map(|m| {
            m.buffer()
                .unchecked_into::<js_sys::ArrayBuffer>()
                .byte_length() as f64
        })
        .unwrap_or(0.0)
}

/// In Compare mode (a file has a side): the comparison once both sides hold a file.
fn post_comparison(r: &Reader) -> bool {
    if r.docs.iter().all(|d| d.1.is_none()) {
        (r.sink)(FromReader::Comparison { comparison: None });
        return false;
    }
    let side = |s: Side| -> Vec<&LoadedFile> {
        r.docs
            .iter()
            .filter(|d| d.1 == Some(s))
            .map(|d| d.2.as_ref())
            .collect()
    };
    let (before, after) = (side(Side::Before), side(Side::After));
    let comparison = match r.abilities.comparer {
        Some(f) if !before.is_empty() && !after.is_empty() => f(&before, &after, r.pool),
        _ => None,
    };
    (r.sink)(FromReader::Comparison { comparison });
    (r.sink)(FromReader::Analysis {
        analysis: None,
        view: None,
        markdown: None,
        memory_bytes: memory_bytes(),
        analysis_ms: 0.0,
        assignable: None,
    });
    true
}

fn post_analysis(r: &Reader) {
    if post_comparison(r) {
        return;
    }
    let started = js_sys::Date::now();
    let (docs, assignable) = crate::placing::placed(&r.docs, &r.places);
    let analysis = (!docs.is_empty()).then(|| {
        let files: Vec<&LoadedFile> = docs.iter().map(|d| d.as_ref()).collect();
        let refused: Vec<String> = r.refused.iter().map(|(_, e)| e.clone()).collect();
        let a = analyze_all(
            &files,
            &refused,
            AnalyzeOptions {
                pool_reruns: r.pool,
            },
        );
        Box::new(a)
    });
    let view = analysis.as_ref().map(|a| Box::new(report_view(a)));
    let markdown = analysis
        .as_deref()
        .map(sloscope_core::view::summary_markdown);
    (r.sink)(FromReader::Analysis {
        analysis,
        view,
        markdown,
        memory_bytes: memory_bytes(),
        analysis_ms: js_sys::Date::now() - started,
        assignable,
    });
}

/// The reader, wherever it runs; what it has to say goes to `sink`.
#[derive(Clone)]
pub struct ReaderHandle(Rc<RefCell<Reader>>);

impl ReaderHandle {
    /// A reader with nothing kept.
    pub fn new(sink: Rc<dyn Fn(FromReader)>, abilities: Abilities) -> Self {
        Self(Rc::new(RefCell::new(Reader {
            sink,
            docs: Vec::new(),
            refused: Vec::new(),
            queue: VecDeque::new(),
            busy: false,
            cancelled: HashSet::new(),
            pool: false,
            epoch: 0,
            abilities,
            places: Default::default(),
            upgrading: false,
        })))
    }

    /// Takes one message (a load with its file).
    pub fn handle(&self, msg: ToReader, payload: Option<Payload>) {
        handle(&self.0, msg, payload)
    }
}

/// Starts the reader in this worker, with what it can do: installs the message handler and
/// says it is ready.
pub fn start(abilities: Abilities) {
    let reader = ReaderHandle::new(Rc::new(post_to_page), abilities);
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            let data = js_sys::Array::from(&e.data());
            let Some(msg) = data
                .get(0)
                .as_string()
                .and_then(|s| serde_json::from_str::<ToReader>(&s).ok())
            else {
                return;
            };
            let payload = data.get(1);
            let payload = match payload.as_string() {
                Some(text) => Some(Payload::Text(text)),
                None => payload.dyn_into::<web_sys::Blob>().ok().map(Payload::Blob),
            };
            reader.handle(msg, payload);
        });
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    post_to_page(FromReader::Ready);
}

fn handle(reader: &Rc<RefCell<Reader>>, msg: ToReader, payload: Option<Payload>) {
    let mut r = reader.borrow_mut();
    if r.upgrading {
        return;
    }
    match msg {
        ToReader::Load { side: Some(_), .. } if r.abilities.comparer.is_none() => {
            upgrade(&mut r, "comparing two collections".into())
        }
        ToReader::Load { id, name, side } => {
            let Some(payload) = payload else {
                (r.sink)(FromReader::Failed {
                    id,
                    error: format!("{name}: the page sent no file content"),
                });
                return;
            };
            r.queue.push_back(Job {
                id,
                name,
                side,
                payload,
            });
            if !r.busy {
                r.busy = true;
                wasm_bindgen_futures::spawn_local(drain(reader.clone()));
            }
        }
        ToReader::Cancel { id } => cancel(&mut r, id),
        ToReader::Pool { on } => {
            r.pool = on;
            if !r.busy {
                post_analysis(&r);
            }
        }
        ToReader::Assign {
            id,
            profile,
            candidate,
        } => {
            if profile.is_empty() || candidate.is_empty() {
                r.places.remove(&id);
            } else {
                r.places.insert(id, (profile, candidate));
            }
            if !r.busy {
                post_analysis(&r);
            }
        }
        ToReader::State { profiles, places } => {
            let answer = state(&r, profiles, &places);
            (r.sink)(FromReader::Stated {
                json: answer.as_ref().ok().cloned(),
                error: answer.err(),
                places,
            });
        }
        ToReader::Clear => {
            r.places.clear();
            r.docs.clear();
            r.refused.clear();
            r.queue.clear();
            r.cancelled.clear();
            r.epoch += 1;
        }
    }
}

/// The plan the page's statement makes of the other tools' files read.
fn state(
    r: &Reader,
    profiles: Vec<StatedForm>,
    places: &[(u32, String, String)],
) -> Result<String, String> {
    let stater = r
        .abilities
        .stater
        .ok_or("this reader reads no other tool's file")?;
    // Other tools' measurements as the analysis reads them (files of one run joined), in the
    // order read; a place names its unit by position (two files may share a name).
    let joined = crate::placing::joined(&r.docs);
    let units = crate::placing::units(&r.docs, &joined);
    let places = places
        .iter()
        .map(|(id, profile, candidate)| {
            let file = units
                .iter()
                .position(|u| u.id == *id)
                .ok_or_else(|| format!("file {id} is not another tool's file loaded"))?;
            Ok(StatedPlace {
                file,
                profile: profile.clone(),
                candidate: candidate.clone(),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let files: Vec<Given<'_>> = units.iter().map(|u| (u.name, u.runs)).collect();
    stater(profiles, places, &files)
}

/// Stops one file, wherever it is: still queued (dropped), being read (dropped between chunks)
/// or already read (forgotten, and the analysis redone without it). The page shows a Cancel
/// button until it hears the file was read, so a Cancel can cross that message: the user
/// asked while the file was shown as loading, and it is cancelled all the same.
fn cancel(r: &mut Reader, id: u32) {
    let (queued, kept) = (r.queue.len(), r.docs.len() + r.refused.len());
    r.queue.retain(|j| j.id != id);
    r.docs.retain(|d| d.0 != id);
    r.refused.retain(|d| d.0 != id);
    r.places.remove(&id);
    if r.queue.len() < queued {
        (r.sink)(FromReader::Cancelled { id });
    } else if r.docs.len() + r.refused.len() < kept {
        (r.sink)(FromReader::Cancelled { id });
        if !r.busy {
            post_analysis(r);
        }
    } else if r.busy {
        r.cancelled.insert(id);
    }
}

/// Reads the queued files one after another, then analyses.
async fn drain(reader: Rc<RefCell<Reader>>) {
    loop {
        let (job, epoch) = {
            let mut r = reader.borrow_mut();
            match r.queue.pop_front() {
                Some(j) => (j, r.epoch),
                None => {
                    r.busy = false;
                    post_analysis(&r);
                    return;
                }
            }
        };
        let id = job.id;
        let (sink, importer) = {
            let r = reader.borrow();
            (r.sink.clone(), r.abilities.importer)
        };
        let result = match &job.payload {
            Payload::Text(t) => load::parse(&job.name, t.clone().into_bytes(), importer),
            Payload::Blob(b) => {
                let rd = reader.clone();
                load::read_blob(
                    (&job.name, importer),
                    b,
                    |bytes, total, requests| {
                        sink(FromReader::Progress {
                            id,
                            bytes,
                            total,
                            requests,
                        })
                    },
                    move || {
                        let r = rd.borrow();
                        r.cancelled.contains(&id) || r.epoch != epoch
                    },
                )
                .await
            }
        };
        let mut r = reader.borrow_mut();
        if r.upgrading {
            return;
        }
        // A Cancel that arrived after the reader's last look (while the last bytes were parsed)
        // still cancels: the user asked before the file was shown.
        let asked = r.cancelled.remove(&id);
        if r.epoch != epoch {
            continue;
        }
        match result {
            Ok(_) if asked => sink(FromReader::Cancelled { id }),
            Ok(doc) => {
                sink(FromReader::Loaded {
                    id,
                    kind: load::kind_label(&doc),
                });
                r.docs.push((
                    id,
                    job.side,
                    Rc::new(LoadedFile {
                        name: job.name,
                        doc,
                    }),
                ));
            }
            Err(ReadError::Cancelled) => sink(FromReader::Cancelled { id }),
            Err(ReadError::Failed(error)) => {
                r.refused.push((id, error.clone()));
                sink(FromReader::Failed { id, error });
            }
            Err(ReadError::NoImporter(why)) => {
                upgrade(&mut r, why);
                return;
            }
        }
    }
}
