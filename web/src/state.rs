//! Page state: the files, their documents and the analysis, changed only through [`Action`]s.

use std::rc::Rc;

use sloscope_core::view::{report_view, ReportView};
use sloscope_core::{analyze, Analysis, Document, LoadedFile};
use yew::Reducible;

/// A file the user gave the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// File name.
    pub name: String,
    /// Size in bytes.
    pub size: usize,
    /// Where it stands.
    pub status: Status,
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
}

/// Everything on the page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State {
    /// Files in the order given.
    pub entries: Vec<Entry>,
    /// The documents of the files that loaded.
    pub docs: Rc<Vec<Rc<LoadedFile>>>,
    /// The analysis of `docs`.
    pub analysis: Option<Rc<Analysis>>,
    /// What the reader sees of it.
    pub view: Option<Rc<ReportView>>,
}

/// What can happen.
pub enum Action {
    /// A file started loading.
    Loading {
        /// Name.
        name: String,
        /// Size.
        size: usize,
    },
    /// A file finished loading.
    Loaded {
        /// Name.
        name: String,
        /// Document or error.
        result: Result<Document, String>,
    },
    /// Forget every file.
    Clear,
}

impl Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut s = (*self).clone();
        match action {
            Action::Loading { name, size } => s.entries.push(Entry {
                name,
                size,
                status: Status::Loading,
            }),
            Action::Loaded { name, result } => {
                let status = match &result {
                    Ok(doc) => Status::Loaded(doc.kind().as_str().to_string()),
                    Err(e) => Status::Failed(e.clone()),
                };
                match s
                    .entries
                    .iter_mut()
                    .rev()
                    .find(|e| e.name == name && e.status == Status::Loading)
                {
                    Some(e) => e.status = status,
                    None => s.entries.push(Entry {
                        name: name.clone(),
                        size: 0,
                        status,
                    }),
                }
                if let Ok(doc) = result {
                    let mut docs = (*s.docs).clone();
                    docs.push(Rc::new(LoadedFile { name, doc }));
                    let analysis = analyze(&docs);
                    s.view = Some(Rc::new(report_view(&analysis)));
                    s.analysis = Some(Rc::new(analysis));
                    s.docs = Rc::new(docs);
                }
            }
            Action::Clear => s = State::default(),
        }
        Rc::new(s)
    }
}
