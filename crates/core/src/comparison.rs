//! Door: two result sets in, one [`Comparison`] out, and its one view-model
//! ([`ComparisonView`]: every word a reader sees) with its text and Markdown.

pub use crate::analyse::regression::data::default_threshold;
pub use crate::analyse::regression::types::{
    Cell, Comparison, Label, Margin, MetricChange, Outcome, Threshold,
};
pub use crate::analyse::regression::{compare, CompareOptions};
pub use crate::show::comparison::view::{
    CapacityBlock, ChangeRow, ChangedRow, ShiftRow, VerdictRow, NOTHING_CHANGED,
};
pub use crate::show::comparison::{
    comparison_view, headline, leads, markdown, text, ComparisonView,
};
