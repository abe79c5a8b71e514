//! The refusal-level invariants of a plan: its names are distinct, also to a reader.

use crate::check::invariant::{Invariant, Violation};
use crate::check::names::{skeleton, spelled};
use crate::schema::Plan;

/// The first name of the plan that repeats an earlier one, or reads the same as it.
pub fn refusals(plan: &Plan) -> Result<(), Violation> {
    let candidates = plan.candidates.iter().map(|c| c.name.as_str());
    distinct("candidates", "name", candidates)?;
    let profiles = plan
        .profiles
        .iter()
        .map(|p| p.name.as_deref().unwrap_or(""));
    distinct("profiles", "name", profiles)
}

fn distinct<'a>(
    list: &str,
    field: &str,
    names: impl Iterator<Item = &'a str>,
) -> Result<(), Violation> {
    let mut seen: Vec<(&str, String)> = Vec::new();
    for (i, name) in names.enumerate() {
        let path = format!("$.{list}[{i}].{field}");
        if name.trim().is_empty() && list == "candidates" {
            return Err(Violation::new(
                Invariant::PlanNamesUnique,
                path,
                "empty: expected a name a report can show".to_string(),
            ));
        }
        let key = skeleton(name);
        if let Some((earlier, _)) = seen.iter().find(|(_, k)| *k == key) {
            let how = if *earlier == name {
                format!("{} appears twice", spelled(name))
            } else {
                format!(
                    "{} reads the same as {} (case, space, invisible or look-alike characters)",
                    spelled(name),
                    spelled(earlier)
                )
            };
            return Err(Violation::new(
                Invariant::PlanNamesUnique,
                path,
                format!("{how}: expected {list} with distinct names"),
            ));
        }
        seen.push((name, key));
    }
    Ok(())
}
