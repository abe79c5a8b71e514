//! The user guide's generated pages (`docs/src/reference/`): each generated part lies between
//! `<!-- NAME:begin -->` and `<!-- NAME:end -->` and must equal what the code gives today
//! (rewritten instead with `SLOSCOPE_UPDATE_DOCS=1`), so the guide cannot go stale.

use std::path::{Path, PathBuf};

use sloscope_testkit::docs::guide_section;

#[test]
fn the_guide_lists_the_invariants() {
    guide_section(
        "reference/invariants.md",
        "invariants",
        &sloscope_core::check::invariant::catalogue_markdown(),
    );
}

#[test]
fn the_guide_lists_the_importers() {
    guide_section(
        "reference/importers.md",
        "peers",
        &sloscope_core::read::import::registry::readme_table(),
    );
}

#[test]
fn the_guide_lists_the_metrics() {
    guide_section(
        "reference/metrics.md",
        "metrics",
        &sloscope_core::base::metric::Metric::catalogue_markdown(),
    );
}

#[test]
fn the_guide_describes_every_schema() {
    guide_section("reference/schemas.md", "schemas", &schema_pages());
}

/// One section per JSON Schema in `static/schema/`: its title, description and top-level fields.
fn schema_pages() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../static/schema");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".schema.json"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "the schemas are missing from {dir:?}");
    files.iter().map(|f| schema_page(f)).collect()
}

fn schema_page(file: &Path) -> String {
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    fields_table(
        &format!("{} (`static/schema/{name}`)", one_line(&s["title"])),
        &s,
    )
    .replacen("\n### ", "\n## ", 1)
}

#[test]
fn the_guide_explains_every_decision_as_the_report_does() {
    let mut want = String::from("| state | what it means |\n|---|---|\n");
    for (label, meaning) in sloscope_core::show::view::LEGEND {
        want.push_str(&format!("| **{label}** | {meaning} |\n"));
    }
    guide_section("concepts/verdicts.md", "legend", &want);
}

#[test]
fn the_guide_describes_the_plans_profiles_from_the_schema() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../static/schema/plan.schema.json");
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let mut out = String::new();
    for name in [
        "ProfileSpec",
        "WorkloadSpec",
        "SearchSpec",
        "SpaceSpec",
        "KnobSpec",
        "SpaceBudget",
        "Candidate",
        "PlanGateLimits",
    ] {
        let def = &s["$defs"][name];
        assert!(def.is_object(), "plan.schema.json has no {name}");
        out.push_str(&fields_table(&format!("`{name}`"), def));
    }
    guide_section("reference/plan.md", "plan-fields", &out);
}

/// One flattened line of a schema's description.
fn one_line(v: &serde_json::Value) -> String {
    v.as_str()
        .unwrap_or("")
        .split("```")
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// A schema object's title, description and its fields as a table.
fn fields_table(title: &str, s: &serde_json::Value) -> String {
    let required: Vec<&str> = s["required"]
        .as_array()
        .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let mut out = format!(
        "\n### {title}\n\n{}\n\n| field | required | what it holds |\n|---|---|---|\n",
        one_line(&s["description"])
    );
    for (field, p) in s["properties"].as_object().into_iter().flatten() {
        let req = if required.contains(&field.as_str()) {
            "yes"
        } else {
            ""
        };
        out.push_str(&format!(
            "| `{field}` | {req} | {} |\n",
            one_line(&p["description"])
        ));
    }
    out
}
