//! Inter-token gaps: nested arrays in JSON (`[[12000, 11800], [..]]`), one flat buffer in memory.
//!
//! A run of a million requests holds tens of millions of gaps; a `Vec<Vec<u32>>` would cost a
//! heap allocation per request. The flat layout also lets the statistics see all gaps at once.

use serde::de::{self, DeserializeSeed, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Per-request gap lists in one buffer: request `i` owns `flat[offsets[i]..offsets[i + 1]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gaps {
    flat: Vec<u32>,
    offsets: Vec<usize>,
}

impl Default for Gaps {
    fn default() -> Self {
        Gaps {
            flat: Vec::new(),
            offsets: vec![0],
        }
    }
}

impl Gaps {
    /// An empty list of requests.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends one request's gaps.
    pub fn push(&mut self, gaps: &[u32]) {
        self.flat.extend_from_slice(gaps);
        self.offsets.push(self.flat.len());
    }

    /// Number of requests.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when no request is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Gaps of request `i` (empty when out of range).
    pub fn get(&self, i: usize) -> &[u32] {
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.flat[a..b],
            _ => &[],
        }
    }

    /// Every gap of every request, in request order.
    pub fn all(&self) -> &[u32] {
        &self.flat
    }

    /// Iterates over the requests' gap lists.
    pub fn iter(&self) -> impl Iterator<Item = &[u32]> + '_ {
        self.offsets.windows(2).map(|w| &self.flat[w[0]..w[1]])
    }
}

impl Serialize for Gaps {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for gaps in self.iter() {
            seq.serialize_element(gaps)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Gaps {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(OuterVisitor)
    }
}

struct OuterVisitor;

impl<'de> Visitor<'de> for OuterVisitor {
    type Value = Gaps;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array with one array of gap microseconds per request")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Gaps, A::Error> {
        let mut gaps = Gaps::new();
        if let Some(n) = seq.size_hint() {
            gaps.offsets.reserve(n);
        }
        while seq
            .next_element_seed(InnerSeed {
                flat: &mut gaps.flat,
            })?
            .is_some()
        {
            gaps.offsets.push(gaps.flat.len());
        }
        Ok(gaps)
    }
}

/// Appends one request's gaps straight into the shared buffer.
struct InnerSeed<'a> {
    flat: &'a mut Vec<u32>,
}

impl<'de> DeserializeSeed<'de> for InnerSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for InnerSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of non-negative integer microseconds")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<u32>()? {
            self.flat.push(v);
        }
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(E::invalid_type(de::Unexpected::Unit, &self))
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Gaps {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Gaps".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Per request, the gaps between consecutive content events after the first, in integer microseconds.",
            "type": "array",
            "items": {
                "type": "array",
                "items": { "type": "integer", "minimum": 0, "maximum": 4294967295u64 }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_nested_arrays() {
        let mut g = Gaps::new();
        g.push(&[1, 2, 3]);
        g.push(&[]);
        g.push(&[7]);
        let s = serde_json::to_string(&g).unwrap();
        assert_eq!(s, "[[1,2,3],[],[7]]");
        let back: Gaps = serde_json::from_str(&s).unwrap();
        assert_eq!(back, g);
        assert_eq!(back.get(0), &[1, 2, 3]);
        assert_eq!(back.get(1), &[] as &[u32]);
        assert_eq!(back.get(2), &[7]);
        assert_eq!(back.get(3), &[] as &[u32]);
        assert_eq!(back.all(), &[1, 2, 3, 7]);
    }

    #[test]
    fn rejects_negative_and_fractional_gaps() {
        assert!(serde_json::from_str::<Gaps>("[[1,-2]]").is_err());
        assert!(serde_json::from_str::<Gaps>("[[1.5]]").is_err());
        assert!(serde_json::from_str::<Gaps>("[1]").is_err());
    }
}
