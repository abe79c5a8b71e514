//! Maps whose keys must be unique: a JSON object that names a key twice (`"ttft_p95_ms": 100,
//! "ttft_p95_ms": 1e9`) is refused instead of letting the last one win, which is what serde
//! does for maps. (Struct fields get the same refusal from serde itself.)

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};

struct UniqueVisitor<V>(PhantomData<V>);

impl<'de, V: Deserialize<'de>> Visitor<'de> for UniqueVisitor<V> {
    type Value = BTreeMap<String, V>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object whose keys are all different")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "duplicate key `{key}`: expected each key once, never first- or last-wins \
                     [unique_keys]"
                )));
            }
            let value = map.next_value()?;
            out.insert(key, value);
        }
        Ok(out)
    }
}

/// A map refusing repeated keys.
pub fn map<'de, D: Deserializer<'de>, V: Deserialize<'de>>(
    d: D,
) -> Result<BTreeMap<String, V>, D::Error> {
    d.deserialize_map(UniqueVisitor(PhantomData))
}

/// An optional map refusing repeated keys (`null` or absent: `None`).
pub fn opt_map<'de, D: Deserializer<'de>, V: Deserialize<'de>>(
    d: D,
) -> Result<Option<BTreeMap<String, V>>, D::Error> {
    struct Opt<V>(PhantomData<V>);
    impl<'de, V: Deserialize<'de>> Visitor<'de> for Opt<V> {
        type Value = Option<BTreeMap<String, V>>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("null or an object whose keys are all different")
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            map(d).map(Some)
        }
    }
    d.deserialize_option(Opt(PhantomData))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct S {
        #[serde(default, deserialize_with = "super::opt_map")]
        slo: Option<std::collections::BTreeMap<String, f64>>,
        name: Option<String>,
    }

    #[test]
    fn a_repeated_key_is_refused_in_maps_and_structs() {
        let e = serde_json::from_str::<S>(r#"{"slo": {"a": 1, "a": 2}}"#).unwrap_err();
        assert!(e.to_string().contains("duplicate key `a`"), "{e}");
        let e = serde_json::from_str::<S>(r#"{"name": "x", "name": "y"}"#).unwrap_err();
        assert!(e.to_string().contains("duplicate field"), "{e}");
        let ok = serde_json::from_str::<S>(r#"{"slo": null}"#).unwrap();
        assert!(ok.slo.is_none());
        let ok = serde_json::from_str::<S>(r#"{"slo": {"a": 1, "b": 2}}"#).unwrap();
        assert_eq!(ok.slo.unwrap().len(), 2);
    }
}
