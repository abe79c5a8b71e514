//! Which profiles an analysis has: the plan's and the runs' names that are latency, balanced or
//! throughput, in that order; any other name is kept, with the files that give it, to be shown
//! as not analysed.

use crate::analyse::report::UnknownProfile;
use crate::schema::{Plan, ProfileName, Run};

/// The profiles to analyse (the plan's and the runs', in order) and the names that are none of
/// latency, balanced or throughput, each with the files that name it.
pub(super) fn profile_names(
    plan: Option<(&str, &Plan)>,
    runs: &[(&str, &Run)],
) -> (Vec<ProfileName>, Vec<UnknownProfile>) {
    let mut names: Vec<ProfileName> = Vec::new();
    let mut unknown: Vec<UnknownProfile> = Vec::new();
    let mut named = |name: &str, file: String| match ProfileName::parse(name) {
        Some(n) => names.push(n),
        None => match unknown.iter_mut().find(|u| u.name == name) {
            Some(u) => u.files.push(file),
            None => unknown.push(UnknownProfile {
                name: name.to_string(),
                files: vec![file],
            }),
        },
    };
    if let Some((file, p)) = plan {
        for (i, spec) in p.profiles.iter().enumerate() {
            named(
                spec.name.as_deref().unwrap_or(""),
                format!("{file} (profiles[{i}])"),
            );
        }
    }
    for (file, run) in runs {
        named(&run.profile, file.to_string());
    }
    names.sort();
    names.dedup();
    (names, unknown)
}
