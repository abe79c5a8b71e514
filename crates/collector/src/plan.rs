//! The plan as the collector reads it: the core plan plus lineage records, targets, command
//! templates and launch settings (`config`); `{name}` `template`s; one server configuration to
//! measure (`target`); the datasets and traces a workload `replay`s.

pub mod config;
pub mod replay;
pub mod target;
pub mod template;
