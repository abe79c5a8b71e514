//! JSON read strictly for files that are not typed by serde (other tools' results, journal
//! lines): a key repeated in one object is refused with its path — serde_json's `Value` would
//! keep the last one — and nothing may follow the document (invariant `unique_keys`).

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Why strict parsing failed: a JSON path (`$` when the syntax failed) and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrictError {
    /// Where.
    pub path: String,
    /// What.
    pub message: String,
    /// The 1-based line serde stopped at, for syntax errors.
    pub line: Option<usize>,
}

/// Parses one JSON document, refusing repeated keys and trailing content.
pub fn value(bytes: &[u8]) -> Result<Value, StrictError> {
    let mut found: Option<String> = None;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let parsed = Seed {
        path: "$".into(),
        dup: &mut found,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    match (parsed, found) {
        (Ok(v), _) => Ok(v),
        (Err(_), Some(path)) => Err(StrictError {
            message: format!(
                "the key {} appears twice in one object: expected each key once, never first- \
                 or last-wins [unique_keys]",
                path.rsplit('.').next().unwrap_or("")
            ),
            path,
            line: None,
        }),
        (Err(e), None) => Err(StrictError {
            path: "$".into(),
            message: e.to_string(),
            line: Some(e.line()),
        }),
    }
}

struct Seed<'a> {
    path: String,
    /// The path of the first repeated key.
    dup: &'a mut Option<String>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        loop {
            let seed = Seed {
                path: format!("{}[{}]", self.path, out.len()),
                dup: &mut *self.dup,
            };
            match seq.next_element_seed(seed)? {
                Some(v) => out.push(v),
                None => return Ok(Value::Array(out)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = format!("{}.{key}", self.path);
            if out.contains_key(&key) {
                *self.dup = Some(path);
                return Err(serde::de::Error::custom("duplicate key"));
            }
            let seed = Seed {
                path,
                dup: &mut *self.dup,
            };
            let v = map.next_value_seed(seed)?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_and_trailing_bytes_are_refused() {
        assert_eq!(
            value(br#"{"a": [1, {"b": 2}]}"#).unwrap(),
            serde_json::json!({"a": [1, {"b": 2}]})
        );
        let e = value(br#"{"a": [1, {"b": 2, "b": 3}]}"#).unwrap_err();
        assert_eq!(e.path, "$.a[1].b");
        assert!(e.message.contains("appears twice"), "{e:?}");
        let e = value(br#"{"a": 1} {"a": 2}"#).unwrap_err();
        assert!(e.message.contains("trailing"), "{e:?}");
    }
}
