//! Door: bytes in. Every file any part of sloscope reads passes here: sloscope's own documents,
//! journals, other tools' result files (imported), replay datasets and traces.

pub use crate::read::error::{LoadError, LoadErrorKind};
pub use crate::read::import::artifact::{join as join_imported, Joined};
pub use crate::read::import::assign::{assign, Assigned};
pub use crate::read::import::registry::{importable, FORMATS};
pub use crate::read::import::units::{units, Unit};
pub use crate::read::import::{
    default_candidates, default_primary, fill, import, standalone_runs, stated_plan,
    workload_diffs, Imported, StatedPlace, StatedProfile, Statement, STATED_KNOB, STATED_PLAN_NAME,
};
pub use crate::read::reader::{read_with, Next, Reader};
pub use crate::read::replay::{
    jsonl_record, mooncake_entry, sharegpt_record, AzureColumns, Dataset, DatasetFormat,
    DatasetRecord, Prompt, Trace, TraceEntry, TraceFormat,
};
pub use crate::read::strict::value as strict_value;
pub use crate::read::{
    importer, read_document, read_document_with, Document, Importer, LoadedFile,
};
