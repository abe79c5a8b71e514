//! Page state: the files and where each stands, and the analysis the reader sent, changed only
//! through [`Action`]s. The documents themselves live in the reader ([`crate::engine`]).

use std::rc::Rc;

use crate::protocol::Compared;
use sloscope_core::analysis::ProfileReport;
use sloscope_core::view::{ProfileView, ReportView};
use sloscope_core::Analysis;

use crate::protocol::Side;
use wasm_bindgen::JsValue;
use yew::Reducible;

/// A file the user gave the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The page's id for it.
    pub id: u32,
    /// File name.
    pub name: String,
    /// Size in bytes.
    pub size: f64,
    /// Where it stands.
    pub status: Status,
    /// Bytes read and requests parsed so far, while it is read in chunks.
    pub progress: Option<Progress>,
    /// In Compare mode, its collection.
    pub side: Option<Side>,
}

/// How far a streamed read has come.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Bytes read.
    pub bytes: f64,
    /// Of this many.
    pub total: f64,
    /// Requests parsed.
    pub requests: u64,
}

/// Loading state of one file.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// Being read and parsed.
    Loading,
    /// Parsed: its kind.
    Loaded(String),
    /// Refused, with the specific error.
    Failed(String),
    /// Its reading was stopped by the user; not analysed.
    Cancelled,
}

/// Everything on the page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State {
    /// Files in the order given.
    pub entries: Vec<Entry>,
    /// The analysis of the files kept.
    pub analysis: Option<Rc<Analysis>>,
    /// What the reader sees of it.
    pub view: Option<Rc<ReportView>>,
    /// Its Markdown summary (made in the reader).
    pub markdown: Option<Rc<str>>,
    /// The analysis, view and Markdown as a JS object with those keys (as the reader posted
    /// them, or as a downloaded report carried them): a report downloaded from the page
    /// carries it written out by `JSON.stringify`, so the page compiles no serializer of them.
    pub posted: Option<JsValue>,
    /// Each profile's numbers (for its charts) and view, shared once per analysis: a render
    /// passes pointers, never copies.
    pub profiles: Rc<Vec<(Rc<ProfileReport>, Rc<ProfileView>)>>,
    /// Bumped at every new analysis (charts redraw).
    pub generation: u32,
    /// Reruns of one candidate pooled (asked for with the toolbar's check box).
    pub pool_reruns: bool,
    /// Something the page must say that belongs to no file.
    pub notice: Option<String>,
    /// A file was read (or an option changed) since the last analysis arrived.
    pub analysing: bool,
    /// The reader's wasm memory at its last analysis, in bytes (what the files cost to keep).
    pub reader_memory_bytes: f64,
    /// How long the reader's last analysis took, ms.
    pub analysis_ms: f64,
    /// Compare mode: the collection new files join (`None`: one collection, analysed).
    pub side: Option<Side>,
    /// In Compare mode, the comparison of the two collections.
    pub comparison: Option<Rc<Compared>>,
    /// The comparison as the JS object the reader posted (what a downloaded report carries).
    pub compared_posted: Option<JsValue>,
    /// Other tools' files the page can place in the loaded plan.
    pub assignable: Option<Rc<crate::protocol::Assignable>>,
    /// Why the SLOs stated in the page made no plan (the last statement's answer).
    pub stated_error: Option<String>,
}

impl State {
    /// Whether the analysis has reruns that pooling would change (or already pooled).
    pub fn has_reruns(&self) -> bool {
        use sloscope_core::analysis::Code;
        self.analysis.as_ref().is_some_and(|a| {
            a.profiles.iter().any(|p| {
                p.excluded.iter().any(|e| e.code == Code::ConflictingRuns)
                    || p.flags.iter().any(|f| f.code == Code::PooledRuns)
            })
        })
    }

    /// Files kept on each side in Compare mode (before, after).
    pub fn side_counts(&self) -> (usize, usize) {
        let n = |s: Side| {
            self.entries
                .iter()
                .filter(|e| e.side == Some(s) && matches!(e.status, Status::Loaded(_)))
                .count()
        };
        (n(Side::Before), n(Side::After))
    }

    /// Whether any file is still being read.
    pub fn busy(&self) -> bool {
        self.entries.iter().any(|e| e.status == Status::Loading)
    }

    /// Whether what the page shows is the analysis of every file read (nothing is being read
    /// or analysed).
    pub fn settled(&self) -> bool {
        !self.busy() && !self.analysing
    }
}

/// What can happen.
pub enum Action {
    /// A file was handed to the reader.
    Loading {
        /// Id.
        id: u32,
        /// Name.
        name: String,
        /// Size in bytes.
        size: f64,
        /// In Compare mode, its collection.
        side: Option<Side>,
    },
    /// A streamed read came further.
    Progress {
        /// Id.
        id: u32,
        /// Bytes read.
        bytes: f64,
        /// Of this many.
        total: f64,
        /// Requests parsed.
        requests: u64,
    },
    /// A file was read: its kind, or why it is refused.
    Done {
        /// Id.
        id: u32,
        /// Kind or error.
        result: Result<String, String>,
    },
    /// A file's reading was stopped.
    Cancelled {
        /// Id.
        id: u32,
    },
    /// The reader's analysis of every file kept (`None`: no file kept), its view and Markdown
    /// summary (made in the reader, or carried by a downloaded report: the page builds
    /// neither, so their code is not in its payload), the three as one JS object (see
    /// [`State::posted`]), the reader's wasm memory in bytes, and how long the analysis took
    /// (ms).
    Analyzed(
        Option<Rc<Analysis>>,
        Option<Rc<ReportView>>,
        Option<Rc<str>>,
        Option<JsValue>,
        f64,
        f64,
    ),
    /// Pool reruns, or not.
    SetPool(bool),
    /// Compare mode: the collection new files join, or off.
    SetSide(Option<Side>),
    /// Every file joins this collection (Compare mode switched on with files loaded).
    AllOnSide(Side),
    /// Other tools' files the page can place in the plan (with the analysis).
    Assignable(Option<Rc<crate::protocol::Assignable>>),
    /// The reader's comparison (Compare mode), and the JS object it was posted as.
    Compared(Option<Rc<Compared>>, Option<JsValue>),
    /// A message for the reader.
    Notice(String),
    /// The answer to the SLOs stated in the page: why no plan was made, or `None` (made).
    Stated(Option<String>),
    /// Forget every file.
    Clear,
}

impl Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut s = (*self).clone();
        let entry = |s: &mut State, id: u32| s.entries.iter_mut().position(|e| e.id == id);
        match action {
            Action::Loading {
                id,
                name,
                size,
                side,
            } => s.entries.push(Entry {
                id,
                name,
                size,
                status: Status::Loading,
                progress: None,
                side,
            }),
            Action::Progress {
                id,
                bytes,
                total,
                requests,
            } => {
                if let Some(i) = entry(&mut s, id) {
                    s.entries[i].progress = Some(Progress {
                        bytes,
                        total,
                        requests,
                    });
                }
            }
            Action::Done { id, result } => {
                if let Some(i) = entry(&mut s, id) {
                    s.entries[i].status = match result {
                        Ok(kind) => {
                            s.analysing = true;
                            Status::Loaded(kind)
                        }
                        Err(e) => Status::Failed(e),
                    };
                    s.entries[i].progress = None;
                }
            }
            Action::Cancelled { id } => {
                if let Some(i) = entry(&mut s, id) {
                    s.entries[i].status = Status::Cancelled;
                    s.entries[i].progress = None;
                }
            }
            Action::Analyzed(a, view, markdown, posted, memory, took) => {
                s.reader_memory_bytes = memory;
                s.analysis_ms = took;
                s.view = view;
                s.markdown = markdown;
                s.posted = posted.filter(|_| a.is_some() && s.view.is_some());
                s.profiles = Rc::new(profiles(a.as_deref(), s.view.as_deref()));
                s.analysis = a;
                s.generation += 1;
                s.analysing = false;
            }
            Action::SetPool(on) => {
                s.analysing |= s.pool_reruns != on && !s.entries.is_empty();
                s.pool_reruns = on;
            }
            Action::Notice(n) => s.notice = Some(n),
            Action::Stated(e) => s.stated_error = e,
            Action::Assignable(a) => s.assignable = a,
            Action::SetSide(side) => s.side = side,
            Action::AllOnSide(side) => {
                for e in &mut s.entries {
                    e.side = Some(side);
                }
                s.analysis = None;
                s.view = None;
                s.markdown = None;
                s.posted = None;
                s.profiles = Rc::default();
                s.assignable = None;
                s.analysing = true;
                s.generation += 1;
            }
            Action::Compared(c, posted) => {
                s.compared_posted = posted.filter(|_| c.is_some());
                s.comparison = c;
            }
            Action::Clear => {
                s = State {
                    generation: s.generation + 1,
                    pool_reruns: s.pool_reruns,
                    side: s.side,
                    ..State::default()
                }
            }
        }
        Rc::new(s)
    }
}

/// Each profile's report and view, each behind its own pointer.
fn profiles(
    a: Option<&Analysis>,
    v: Option<&ReportView>,
) -> Vec<(Rc<ProfileReport>, Rc<ProfileView>)> {
    match (a, v) {
        (Some(a), Some(v)) => a
            .profiles
            .iter()
            .zip(&v.profiles)
            .map(|(p, pv)| (Rc::new(p.clone()), Rc::new(pv.clone())))
            .collect(),
        _ => Vec::new(),
    }
}
