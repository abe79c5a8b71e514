//! A serving knob's value, as plans list candidates and search spaces list values.

use serde::{Deserialize, Serialize};

/// A value of the declared serving knob: a number (`4`, `0.9`) or a word (`fcfs`). Equal
/// numbers are equal values whatever their spelling (`4` and `4.0`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum KnobValue {
    /// An integer setting such as parallel slots or max batch size.
    Int(i64),
    /// A fractional setting such as a KV-cache memory fraction.
    Float(f64),
    /// A named setting such as a scheduler policy.
    Text(String),
}

impl PartialEq for KnobValue {
    fn eq(&self, other: &KnobValue) -> bool {
        match (self, other) {
            (KnobValue::Text(a), KnobValue::Text(b)) => a == b,
            (KnobValue::Text(_), _) | (_, KnobValue::Text(_)) => false,
            (a, b) => a.number() == b.number(),
        }
    }
}

impl KnobValue {
    /// The value as a number (`None` for a word).
    pub fn number(&self) -> Option<f64> {
        match self {
            KnobValue::Int(v) => Some(*v as f64),
            KnobValue::Float(v) => Some(*v),
            KnobValue::Text(_) => None,
        }
    }
}

impl std::fmt::Display for KnobValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KnobValue::Int(v) => write!(f, "{v}"),
            KnobValue::Float(v) => write!(f, "{v}"),
            KnobValue::Text(v) => f.write_str(v),
        }
    }
}
