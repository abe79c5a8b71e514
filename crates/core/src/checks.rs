//! Door: the checks the collector runs where data is made (the physical checks of a request
//! row, a profile's contract, a plan's refusals and warnings) and the limits on input.

pub use crate::check::contract::{validate_profile, Profile};
pub use crate::check::plan::{refusals, undecidable, undecidable_confirmation};
pub use crate::check::run::physical::{row as physical_row, RowView};
pub use crate::check::run::MAX_TIME_US;
pub use crate::check::text::MAX_SHARDS;
