//! The page's end of the reader: starts the reader worker (the lean one first,
//! `sloscope-lean-worker_loader.js`, built by Trunk beside the page, or a downloaded report's
//! inlined copy of the full one), hands it each file by reference, and turns what it says into
//! [`Action`]s. When the lean reader meets what only the full one reads (another tool's file,
//! Compare mode), the page starts the full reader (`sloscope-worker_loader.js`) in its place and
//! hands it every file again: the importers and the comparison are fetched only when used. The page itself never parses a file, so
//! its wasm holds no parser. If the worker cannot start (a page opened from disk: browsers start
//! no worker there) the files are refused with that reason; if it dies (out of memory: wasm32
//! has 4 GiB), the file it was reading is refused with that reason, a fresh worker starts and
//! the files already read are handed to it again.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::{Rc, Weak};

use wasm_bindgen::prelude::*;
use yew::UseReducerDispatcher;

use crate::protocol::{ComparedJs, FromReader, Side, ToReader};
use crate::state::{Action, State};

mod life;
pub mod stated;

/// The full reader's script, next to the page.
pub const WORKER_URL: &str = "./sloscope-worker_loader.js";
/// The lean reader's script (sloscope's own files only), the one the page starts first.
pub const LEAN_WORKER_URL: &str = "./sloscope-lean-worker_loader.js";

/// A file given to the page.
#[derive(Clone)]
pub enum Source {
    /// Dropped or browsed: read by the reader in chunks.
    File(web_sys::File),
    /// Already text (the example set, a report's embedded files).
    Text(String),
}

impl Source {
    fn payload(&self) -> JsValue {
        match self {
            Source::File(f) => f.clone().into(),
            Source::Text(t) => JsValue::from_str(t),
        }
    }

    /// The content as text (for a report that carries the raw files).
    pub async fn text(&self) -> Result<String, String> {
        match self {
            Source::Text(t) => Ok(t.clone()),
            Source::File(f) => wasm_bindgen_futures::JsFuture::from(f.text())
                .await
                .map(|v| v.as_string().unwrap_or_default())
                .map_err(|e| crate::load::js_message(&e)),
        }
    }
}

enum Mode {
    /// The worker is loading its wasm; loads wait.
    Starting(web_sys::Worker, Vec<u32>),
    /// The worker takes messages.
    Worker(web_sys::Worker),
    /// No worker could start: files are refused with this reason.
    Unavailable(String),
}

/// The page's reader, wherever it runs.
pub struct Engine {
    dispatch: UseReducerDispatcher<State>,
    /// Files handed to the reader and not refused, cancelled or cleared, in order.
    kept: RefCell<Vec<(u32, String, Source)>>,
    /// Files the reader refused: a reader started in its place is handed them again, so its
    /// analysis names a planned cell left without a run by the file that could not be read.
    refused: RefCell<Vec<(u32, String, Source)>>,
    /// Files being read (not yet loaded, refused or cancelled).
    reading: RefCell<HashSet<u32>>,
    mode: RefCell<Option<Mode>>,
    /// The running reader's script.
    url: RefCell<String>,
    /// The full reader's script, while the lean one runs.
    full_url: RefCell<Option<String>>,
    /// Bumped by each start of a reader: what an older one still says is not heard.
    generation: Cell<u32>,
    /// Where the page placed other tools' files in the plan (file id → profile, candidate):
    /// said again to a reader started in the running one's place.
    places: RefCell<HashMap<u32, (String, String)>>,
    next_id: Cell<u32>,
    pool: Cell<bool>,
    /// In Compare mode, the collection new files join.
    side: Cell<Option<Side>>,
    /// The collection of each file given in Compare mode.
    sides: RefCell<HashMap<u32, Side>>,
    /// Whether the loaded set is kept for the next load of the page (`crate::keep`).
    keep: Cell<bool>,
    me: RefCell<Weak<Engine>>,
}

impl Engine {
    /// Starts the reader worker from the first of `urls`, the second being the full reader's
    /// that it may ask for (none: this page reads no file).
    pub fn new(
        dispatch: UseReducerDispatcher<State>,
        urls: Option<(String, Option<String>)>,
    ) -> Rc<Self> {
        let (url, full_url) = match urls {
            Some((first, full)) => (Some(first), full),
            None => (None, None),
        };
        let e = Rc::new(Engine {
            dispatch,
            kept: RefCell::default(),
            refused: RefCell::default(),
            reading: RefCell::default(),
            mode: RefCell::new(None),
            url: RefCell::new(url.clone().unwrap_or_default()),
            full_url: RefCell::new(full_url),
            generation: Cell::new(0),
            places: RefCell::default(),
            next_id: Cell::new(1),
            pool: Cell::new(false),
            side: Cell::new(None),
            sides: RefCell::default(),
            keep: Cell::new(false),
            me: RefCell::new(Weak::new()),
        });
        *e.me.borrow_mut() = Rc::downgrade(&e);
        let mode = match url {
            Some(_) => e.spawn(),
            None => Self::unavailable("this report carries no files to read"),
        };
        *e.mode.borrow_mut() = Some(mode);
        e
    }

    fn send(&self, msg: ToReader, id: Option<u32>) {
        let source = id.and_then(|id| self.file(id)).map(|f| f.2);
        let refused = match (&*self.mode.borrow(), id, &msg) {
            (Some(Mode::Unavailable(why)), Some(id), ToReader::Load { name, .. }) => {
                Some((id, format!("{name}: {why}")))
            }
            _ => None,
        };
        if let Some((id, error)) = refused {
            self.heard(FromReader::Failed { id, error }, None);
            return;
        }
        let mut mode = self.mode.borrow_mut();
        match mode.as_mut() {
            Some(Mode::Starting(_, queue)) => {
                if let Some(id) = id {
                    queue.push(id)
                }
            }
            Some(Mode::Worker(w)) => {
                let json = serde_json::to_string(&msg).unwrap_or_default();
                let payload = source.map_or(JsValue::NULL, |s| s.payload());
                let _ = w.post_message(&js_sys::Array::of2(&JsValue::from_str(&json), &payload));
            }
            Some(Mode::Unavailable(_)) | None => {}
        }
    }

    /// A file given to the reader, kept or refused.
    fn file(&self, id: u32) -> Option<(u32, String, Source)> {
        let find = |v: &RefCell<Vec<(u32, String, Source)>>| {
            v.borrow().iter().find(|k| k.0 == id).cloned()
        };
        find(&self.kept).or_else(|| find(&self.refused))
    }

    fn load_msg(&self, id: u32) -> Option<ToReader> {
        let (_, name, _) = self.file(id)?;
        Some(ToReader::Load {
            id,
            name,
            side: self.sides.borrow().get(&id).copied(),
        })
    }

    /// Hands files to the reader; their ids, in order.
    pub fn load(&self, files: Vec<(String, f64, Source)>) -> Vec<u32> {
        let mut ids = Vec::with_capacity(files.len());
        for (name, size, source) in files {
            let id = self.next_id.get();
            ids.push(id);
            self.next_id.set(id + 1);
            let side = self.side.get();
            self.dispatch.dispatch(Action::Loading {
                id,
                name: name.clone(),
                size,
                side,
            });
            if let Some(s) = side {
                self.sides.borrow_mut().insert(id, s);
            }
            self.kept.borrow_mut().push((id, name, source));
            self.reading.borrow_mut().insert(id);
            if let Some(m) = self.load_msg(id) {
                self.send(m, Some(id));
            }
        }
        self.persist();
        ids
    }

    /// From now on, keeps the loaded set for the next load of the page (and keeps it now).
    pub fn keep_across_reloads(&self) {
        self.keep.set(true);
    }

    /// Saves what a reload restores, when this page keeps it: the files read and those
    /// refused (read again, refused again: a planned cell stays named by its unreadable file).
    fn persist(&self) {
        if !self.keep.get() {
            return;
        }
        let sides = self.sides.borrow();
        let mut all: Vec<(u32, String, Source)> = self.kept.borrow().clone();
        all.extend(self.refused.borrow().iter().cloned());
        all.sort_by_key(|f| f.0);
        let places: Vec<(usize, String, String)> = {
            let placed = self.places.borrow();
            all.iter()
                .enumerate()
                .filter_map(|(i, f)| placed.get(&f.0).map(|(p, c)| (i, p.clone(), c.clone())))
                .collect()
        };
        let files = all
            .iter()
            .map(|(id, n, s)| {
                let content = match s {
                    Source::File(f) => crate::keep::Content::File(f.clone()),
                    Source::Text(t) => crate::keep::Content::Text(t.clone()),
                };
                (n.clone(), sides.get(id).copied(), content)
            })
            .collect();
        crate::keep::save(files, self.pool.get(), &places);
    }

    /// Places another tool's file in the plan's `profile` and `candidate` (both empty: takes
    /// it out again), as `sloscope import --plan --profile --candidate` does.
    pub fn place(&self, id: u32, profile: String, candidate: String) {
        if profile.is_empty() || candidate.is_empty() {
            self.places.borrow_mut().remove(&id);
        } else {
            self.places
                .borrow_mut()
                .insert(id, (profile.clone(), candidate.clone()));
        }
        self.say_place(id, profile, candidate);
        self.persist();
    }

    /// Tells the reader where file `id` is placed (both empty: nowhere).
    fn say_place(&self, id: u32, profile: String, candidate: String) {
        let msg = ToReader::Assign {
            id,
            profile,
            candidate,
        };
        self.send(msg, None);
    }

    /// Every file given to the reader and not cancelled or cleared (read or refused), in the
    /// order given.
    fn given_ids(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self.kept.borrow().iter().map(|k| k.0).collect();
        ids.extend(self.refused.borrow().iter().map(|k| k.0));
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Stops reading one file.
    pub fn cancel(&self, id: u32) {
        let waiting = match self.mode.borrow_mut().as_mut() {
            Some(Mode::Starting(_, queue)) => {
                let before = queue.len();
                queue.retain(|q| *q != id);
                queue.len() < before
            }
            _ => false,
        };
        if waiting {
            self.heard(FromReader::Cancelled { id }, None);
        } else {
            self.send(ToReader::Cancel { id }, None);
        }
    }

    /// Pools reruns, or not.
    pub fn set_pool(&self, on: bool) {
        self.pool.set(on);
        self.dispatch.dispatch(Action::SetPool(on));
        self.send(ToReader::Pool { on }, None);
        self.persist();
    }

    /// Compare mode on (new files join `side`) or off (`None`). Switched on with files
    /// loaded, they become the before collection; switched off, every file is forgotten (one
    /// analysis cannot hold two collections).
    pub fn set_side(&self, side: Option<Side>) {
        let (was, now) = (self.side.get().is_some(), side.is_some());
        let keep = !was && now && !self.kept.borrow().is_empty();
        if was != now && !keep {
            self.clear();
        }
        self.side.set(side);
        self.dispatch.dispatch(Action::SetSide(side));
        if keep {
            self.all_before();
        }
    }

    /// The files loaded become the before collection, read again with that side.
    fn all_before(&self) {
        let ids = self.given_ids();
        for id in &ids {
            self.sides.borrow_mut().insert(*id, Side::Before);
        }
        self.places.borrow_mut().clear();
        self.dispatch.dispatch(Action::AllOnSide(Side::Before));
        let starting = match self.mode.borrow_mut().as_mut() {
            Some(Mode::Starting(_, queue)) => {
                queue.clear();
                true
            }
            _ => false,
        };
        if !starting {
            self.send(ToReader::Clear, None);
        }
        for id in ids {
            self.reading.borrow_mut().insert(id);
            if let Some(m) = self.load_msg(id) {
                self.send(m, Some(id));
            }
        }
        self.persist();
    }

    /// Forgets every file.
    pub fn clear(&self) {
        self.sides.borrow_mut().clear();
        self.kept.borrow_mut().clear();
        self.refused.borrow_mut().clear();
        self.places.borrow_mut().clear();
        self.reading.borrow_mut().clear();
        if let Some(Mode::Starting(_, queue)) = self.mode.borrow_mut().as_mut() {
            queue.clear();
        }
        self.send(ToReader::Clear, None);
        self.dispatch.dispatch(Action::Clear);
        self.persist();
    }

    /// The files kept, in order, for a report that carries them.
    pub fn sources(&self) -> Vec<(String, Source)> {
        self.kept
            .borrow()
            .iter()
            .map(|(_, n, s)| (n.clone(), s.clone()))
            .collect()
    }

    fn forget(&self, id: u32) {
        self.places.borrow_mut().remove(&id);
        self.kept.borrow_mut().retain(|k| k.0 != id);
        self.reading.borrow_mut().remove(&id);
        self.persist();
    }

    /// A message from the reader; `posted`, for an analysis, is the message's JS object (what
    /// a downloaded report carries, written out by the browser).
    fn heard(&self, msg: FromReader, posted: Option<JsValue>) {
        match msg {
            FromReader::Ready => self.ready(),
            FromReader::Progress {
                id,
                bytes,
                total,
                requests,
            } => self.dispatch.dispatch(Action::Progress {
                id,
                bytes,
                total,
                requests,
            }),
            FromReader::Loaded { id, kind } => {
                self.reading.borrow_mut().remove(&id);
                self.dispatch.dispatch(Action::Done {
                    id,
                    result: Ok(kind),
                });
            }
            FromReader::Failed { id, error } => {
                let file = self.kept.borrow().iter().find(|k| k.0 == id).cloned();
                if let Some(f) = file {
                    self.refused.borrow_mut().push(f);
                }
                self.forget(id);
                self.dispatch.dispatch(Action::Done {
                    id,
                    result: Err(error),
                });
            }
            FromReader::Cancelled { id } => {
                self.forget(id);
                self.refused.borrow_mut().retain(|k| k.0 != id);
                self.dispatch.dispatch(Action::Cancelled { id });
            }
            FromReader::Notice { message } => self.dispatch.dispatch(Action::Notice(message)),
            FromReader::Upgrade { why } => self.upgrade(why),
            FromReader::Stated {
                json,
                error,
                places,
            } => self.stated(json, error, places),
            FromReader::Comparison { comparison } => {
                let parsed = comparison.map(ComparedJs::read);
                match parsed {
                    Some(Err(e)) => self.dispatch.dispatch(Action::Notice(format!(
                        "the reader's comparison could not be read: {e}"
                    ))),
                    parsed => self.dispatch.dispatch(Action::Compared(
                        parsed.and_then(Result::ok).map(Rc::new),
                        posted,
                    )),
                }
            }
            FromReader::Analysis {
                analysis,
                view,
                markdown,
                memory_bytes,
                analysis_ms,
                assignable,
            } => {
                self.dispatch
                    .dispatch(Action::Assignable(assignable.map(|a| Rc::new(*a))));
                self.dispatch.dispatch(Action::Analyzed(
                    analysis.map(|a| Rc::new(*a)),
                    view.map(|v| Rc::new(*v)),
                    markdown.map(Rc::from),
                    posted,
                    memory_bytes,
                    analysis_ms,
                ));
            }
        }
    }
}
