//! What the page and its reader (the Web Worker of [`crate::worker`]) say to each other. To the
//! reader: a JS array `[json, payload]`, the JSON of a [`ToReader`] and for a load the file
//! itself (a `Blob`, passed by reference, never copied) or its text. From the reader: a
//! [`FromReader`] as a plain JS value (`serde-wasm-bindgen`), so every number of the analysis
//! arrives exactly as the reader computed it (no decimal text in between).

use serde::{Deserialize, Serialize};

/// A message from the reader as the JS value posted: maps as plain objects, so the value is
/// also JSON (`JSON.stringify`, for a downloaded report) that reads back to the same message.
pub fn to_js(msg: &FromReader) -> Result<wasm_bindgen::JsValue, serde_wasm_bindgen::Error> {
    msg.serialize(&serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true))
}

/// Which collection a file belongs to in Compare mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// Before the change.
    Before,
    /// After it.
    After,
}

impl Side {
    /// The word.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Before => "before",
            Side::After => "after",
        }
    }
}

/// Page → reader.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToReader {
    /// Read, parse and keep this file (the payload), then analyse everything kept.
    Load {
        /// The page's id for the file.
        id: u32,
        /// File name, for errors and the report.
        name: String,
        /// In Compare mode, the collection it belongs to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        side: Option<Side>,
    },
    /// Stop reading this file (it is dropped if not yet started).
    Cancel {
        /// Which.
        id: u32,
    },
    /// Pool reruns of one candidate, or not; analyses again.
    Pool {
        /// On or off.
        on: bool,
    },
    /// Give another tool's file a place in the loaded plan (as `sloscope import --plan
    /// --profile --candidate`), or none (`profile` and `candidate` empty); analyses again.
    Assign {
        /// The file's id.
        id: u32,
        /// A profile of the plan.
        profile: String,
        /// A candidate of the plan.
        candidate: String,
    },
    /// Make a plan of SLOs stated in the page for other tools' files loaded without one (as
    /// `sloscope import --plan --profile --candidate` would, with a plan); the reader answers
    /// [`FromReader::Stated`].
    State {
        /// The profiles judged, with their primary metric and SLOs.
        profiles: Vec<StatedForm>,
        /// Each file's place: id, profile, candidate.
        places: Vec<(u32, String, String)>,
    },
    /// Forget every file.
    Clear,
}

/// Other tools' files the page can place in the loaded plan, and where each is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assignable {
    /// The plan's profiles (none: no plan loaded).
    pub profiles: Vec<String>,
    /// The plan's candidates.
    pub candidates: Vec<String>,
    /// Each such file: id, name, its profile and candidate when placed, and what the placing
    /// said (a benchmark left out, or why it could not be placed).
    pub files: Vec<AssignableFile>,
    /// When the loaded plan is one stated in the page: its profiles' primary metrics and SLOs
    /// (the page shows the statement again, to be changed).
    #[serde(default)]
    pub stated: Option<Vec<StatedForm>>,
}

/// One profile's SLOs as the page's form holds them: the limits as typed (metric, text), read
/// as numbers by the reader, so the page links no number parser.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatedForm {
    /// `latency`, `balanced` or `throughput`.
    pub name: String,
    /// The metric candidates are ranked by.
    pub primary_metric: String,
    /// Metric name → limit, as typed.
    pub limits: Vec<(String, String)>,
}

/// One of [`Assignable::files`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssignableFile {
    /// The page's id.
    pub id: u32,
    /// Its name.
    pub name: String,
    /// Profile and candidate, when placed.
    pub placed: Option<(String, String)>,
    /// The profile it is shown under when not placed (guessed from the load it states).
    pub guessed: String,
    /// Benchmarks the file holds.
    pub benchmarks: u32,
    /// Of them, those the placing used (those that ran the profile's workload).
    pub used: u32,
    /// What placing it said.
    pub said: Vec<String>,
}

/// Reader → page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FromReader {
    /// The reader's wasm is running and takes messages.
    Ready,
    /// The plan a [`ToReader::State`] made (its JSON, loaded by the page like a dropped plan,
    /// then the places given), or why it could not be made.
    Stated {
        /// The plan, as JSON.
        json: Option<String>,
        /// Why no plan was made.
        error: Option<String>,
        /// The places asked for: id, profile, candidate.
        places: Vec<(u32, String, String)>,
    },
    /// A file is being read.
    Progress {
        /// Which.
        id: u32,
        /// Bytes read so far.
        bytes: f64,
        /// The file's size.
        total: f64,
        /// Requests parsed so far.
        requests: u64,
    },
    /// A file was read and kept.
    Loaded {
        /// Which.
        id: u32,
        /// What it is ("run", "plan", "vllm result (1 run)" …).
        kind: String,
    },
    /// A file was refused.
    Failed {
        /// Which.
        id: u32,
        /// The specific error (names the file and the field).
        error: String,
    },
    /// A file's reading was stopped at the user's request.
    Cancelled {
        /// Which.
        id: u32,
    },
    /// This reader cannot read what it was given (another tool's file, two collections to
    /// compare): the page starts the full reader and hands it every file again.
    Upgrade {
        /// What needs it.
        why: String,
    },
    /// Something the page must show that belongs to no file.
    Notice {
        /// In words.
        message: String,
    },
    /// In Compare mode, the comparison of the before and after files (`None` until both sides
    /// hold a file, and outside Compare mode).
    Comparison {
        /// The comparison and the view the page lays out: a [`Compared`] made into a JS value
        /// by the full reader, so the lean reader links none of its code (not even to send it).
        comparison: Option<ComparedJs>,
    },
    /// The analysis of every file kept (`None` when no file is kept, and in Compare mode).
    Analysis {
        /// The analysis.
        analysis: Option<Box<sloscope_core::Analysis>>,
        /// Its view-model, made in the reader too: the page lays it out and derives nothing.
        view: Option<Box<sloscope_core::view::ReportView>>,
        /// Its Markdown summary, made in the reader too (the page copies it).
        markdown: Option<String>,
        /// The reader's wasm memory in bytes (what the files cost to keep).
        memory_bytes: f64,
        /// How long the analysis took in the reader, ms (the benchmark's breakdown).
        analysis_ms: f64,
        /// Other tools' files the page can place in the plan (none when there are none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        assignable: Option<Box<Assignable>>,
    },
}

/// A [`Compared`] as a JS value, passed through as it is ([`serde_wasm_bindgen::preserve`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparedJs(#[serde(with = "serde_wasm_bindgen::preserve")] pub wasm_bindgen::JsValue);

impl ComparedJs {
    /// `c` as a JS value, as the rest of a message is made (maps as objects).
    pub fn new(c: &Compared) -> Result<ComparedJs, serde_wasm_bindgen::Error> {
        c.serialize(&serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true))
            .map(ComparedJs)
    }

    /// The comparison it holds.
    pub fn read(self) -> Result<Compared, serde_wasm_bindgen::Error> {
        serde_wasm_bindgen::from_value(self.0)
    }
}

/// A comparison and its view-model, both made in the reader: the page lays out the view (and
/// draws the cells' distributions); it recomputes and rewords nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compared {
    /// The comparison (its cells' curves feed the charts; the Markdown download reads it).
    pub comparison: sloscope_core::comparison::Comparison,
    /// Every word the page shows of it.
    pub view: sloscope_core::comparison::ComparisonView,
    /// Its Markdown (the page copies it).
    pub markdown: String,
}
