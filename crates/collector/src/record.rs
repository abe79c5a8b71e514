//! What is kept on disk, and how nothing collected is lost: the output directory's `layout`,
//! the `journal` appended as requests finish, the rows `spill`ed to disk and the run file
//! streamed from there, and atomic `write`s.

pub mod journal;
pub mod layout;
pub mod spill;
pub mod write;
