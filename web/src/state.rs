//! Page state: the files, their documents and the analysis, changed only through [`Action`]s.

use std::rc::Rc;

use sloscope_core::view::{report_view, ReportView};
use sloscope_core::{analyze_with, Analysis, AnalyzeOptions, Document, LoadedFile};
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
    /// Reruns of one candidate pooled (asked for with the toolbar's check box).
    pub pool_reruns: bool,
}

impl State {
    /// Analyses the loaded documents again (a file arrived, or an option changed).
    fn reanalyze(&mut self) {
        if self.docs.is_empty() {
            return;
        }
        let options = AnalyzeOptions {
            pool_reruns: self.pool_reruns,
        };
        let analysis = analyze_with(&self.docs, options);
        self.view = Some(Rc::new(report_view(&analysis)));
        self.analysis = Some(Rc::new(analysis));
    }

    /// Whether the analysis has reruns that pooling would change (or already pooled).
    pub fn has_reruns(&self) -> bool {
        use sloscope_core::report::Code;
        self.analysis.as_ref().is_some_and(|a| {
            a.profiles.iter().any(|p| {
                p.excluded.iter().any(|e| e.code == Code::ConflictingRuns)
                    || p.flags.iter().any(|f| f.code == Code::PooledRuns)
            })
        })
    }
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
    /// Pool reruns, or not.
    SetPool(bool),
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
                    Ok(Document::Imported(runs)) => Status::Loaded(format!(
                        "{} result ({} run{})",
                        runs.first()
                            .and_then(|(_, r)| r.import.as_ref())
                            .map_or("imported", |i| i.tool.as_str()),
                        runs.len(),
                        if runs.len() == 1 { "" } else { "s" }
                    )),
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
                    s.docs = Rc::new(docs);
                    s.reanalyze();
                }
            }
            Action::SetPool(on) => {
                s.pool_reruns = on;
                s.reanalyze();
            }
            Action::Clear => s = State::default(),
        }
        Rc::new(s)
    }
}
