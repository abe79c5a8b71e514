//! Door: what measuring needs, shared by the collector, the test kit and the benchmarks:
//! metric names and directions, traffic shapes, the seeded random numbers, percentiles,
//! protocol headers, the server-metric series kept, and number formatting.

pub use crate::base::divergence::{compare as divergence, Side};
pub use crate::base::fmt::format_number;
pub use crate::base::metric::{Direction, Metric, Quantity, Stat};
pub use crate::base::protocol::{REQUEST_ID_HEADER, SIMULATION_HEADER};
pub use crate::base::rng::{finalize, Rng};
pub use crate::base::special::{normal_cdf, normal_quantile};
pub use crate::base::stats::percentile_sorted;
pub use crate::base::telemetry::{is_kept_series, QUEUE_TIME_HISTOGRAMS};
pub use crate::base::traffic::{Arrival, LengthDist};
