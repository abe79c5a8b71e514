//! Door: two result sets in, one [`Comparison`] out, and its words.

pub use crate::analyse::regression::data::default_threshold;
pub use crate::analyse::regression::types::{
    Cell, Comparison, Label, Margin, MetricChange, Outcome, Threshold,
};
pub use crate::analyse::regression::{compare, CompareOptions};
pub use crate::show::comparison::{headline, leads, markdown, text};
