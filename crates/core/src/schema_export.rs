//! JSON Schemas generated from the types (feature `schema`); committed under `static/schema/`.

use schemars::JsonSchema;

fn one<T: JsonSchema>(file: &'static str) -> (&'static str, String) {
    let schema = schemars::schema_for!(T);
    let text = serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n";
    (file, text)
}

/// `(file name, schema text)` for every file kind and for the analysis and comparison outputs.
pub fn all() -> Vec<(&'static str, String)> {
    use crate::schema::*;
    vec![
        one::<QualityGate>("quality_gate.schema.json"),
        one::<FloatBaseline>("float_baseline.schema.json"),
        one::<Deployment>("deployment.schema.json"),
        one::<Plan>("plan.schema.json"),
        one::<Run>("run.schema.json"),
        one::<ShardRecord>("shard.schema.json"),
        one::<ShardDone>("shard_done.schema.json"),
        one::<crate::show::view::AnalysisOutput>("analysis.schema.json"),
        one::<crate::analyse::regression::types::Comparison>("comparison.schema.json"),
    ]
}
