//! One value of a sparse `args` column as the table stores it ([`ArgCell`]), and a row's args as
//! typed pairs ([`RowArgs`]): what the explorer, its CSV and the Perfetto download read.
//!
//! In JSON (the CLI, MCP, downloads) a row's args are one object, keys in order, values as the trace
//! had them (text for arrays and objects, which the table keeps as their compact JSON text; `null`
//! for a float that is not finite). Between the worker and the page they cross as typed pairs.

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One `args` value: the four storage types of an [`super::ArgColumn`], or null.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ArgCell {
    Null,
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A string, or an array/object as its compact JSON text.
    Text(String),
}

impl ArgCell {
    /// The value as JSON text (`null` for a float that is not finite, as serde_json writes it).
    pub fn json_text(&self) -> String {
        serde_json::to_string(&self.to_json()).unwrap_or_else(|_| "null".into())
    }

    /// The value as a JSON value.
    pub fn to_json(&self) -> Value {
        match self {
            ArgCell::Null => Value::Null,
            ArgCell::Int(v) => Value::from(*v),
            ArgCell::Float(v) => {
                serde_json::Number::from_f64(*v).map_or(Value::Null, Value::Number)
            }
            ArgCell::Bool(v) => Value::Bool(*v),
            ArgCell::Text(v) => Value::String(v.clone()),
        }
    }

    /// A JSON value as a cell (arrays and objects as their compact text, as the table stores them).
    pub fn of_json(v: &Value) -> ArgCell {
        match v {
            Value::Null => ArgCell::Null,
            Value::Bool(b) => ArgCell::Bool(*b),
            Value::Number(n) => n
                .as_i64()
                .map(ArgCell::Int)
                .or_else(|| n.as_f64().map(ArgCell::Float))
                .unwrap_or(ArgCell::Null),
            Value::String(s) => ArgCell::Text(s.clone()),
            other => ArgCell::Text(other.to_string()),
        }
    }
}

/// A row's `args`: (key, value) pairs, keys ascending and unique.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowArgs(Vec<(String, ArgCell)>);

impl RowArgs {
    /// The pairs, sorted by key (a key seen twice keeps its first value).
    pub fn new(mut pairs: Vec<(String, ArgCell)>) -> RowArgs {
        crate::sort::sort_by(&mut pairs, |a, b| a.0.cmp(&b.0));
        pairs.dedup_by(|b, a| a.0 == b.0);
        RowArgs(pairs)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }

    pub fn iter(&self) -> impl Iterator<Item = &(String, ArgCell)> {
        self.0.iter()
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&ArgCell> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// One line of compact JSON (`{"a":1,"b":"x"}`), empty without any pair.
    pub fn json_line(&self) -> String {
        if self.0.is_empty() {
            return String::new();
        }
        let mut out = String::from("{");
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(k).unwrap_or_default());
            out.push(':');
            out.push_str(&v.json_text());
        }
        out.push('}');
        out
    }
}

impl Serialize for RowArgs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            let mut m = s.serialize_map(Some(self.0.len()))?;
            for (k, v) in &self.0 {
                m.serialize_entry(k, &v.to_json())?;
            }
            return m.end();
        }
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for pair in &self.0 {
            seq.serialize_element(pair)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for RowArgs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RowArgs, D::Error> {
        if d.is_human_readable() {
            let m = serde_json::Map::<String, Value>::deserialize(d)?;
            return Ok(RowArgs::new(
                m.iter()
                    .map(|(k, v)| (k.clone(), ArgCell::of_json(v)))
                    .collect(),
            ));
        }
        d.deserialize_seq(PairsVisitor)
    }
}

struct PairsVisitor;

impl<'de> Visitor<'de> for PairsVisitor {
    type Value = RowArgs;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a row's args as (key, value) pairs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RowArgs, A::Error> {
        let mut pairs = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(pair) = seq.next_element::<(String, ArgCell)>()? {
            pairs.push(pair);
        }
        if pairs.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(de::Error::custom("a row's args out of key order"));
        }
        Ok(RowArgs(pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> RowArgs {
        RowArgs::new(vec![
            ("grid".into(), ArgCell::Text("[1, 1, 1]".into())),
            ("bytes".into(), ArgCell::Int(4096)),
            ("occupancy".into(), ArgCell::Float(0.5)),
            ("nan".into(), ArgCell::Float(f64::NAN)),
            ("flag".into(), ArgCell::Bool(true)),
            ("none".into(), ArgCell::Null),
        ])
    }

    #[test]
    fn json_is_one_object_with_keys_in_order_as_serde_json_writes_a_map() {
        let a = args();
        let expected = r#"{"bytes":4096,"flag":true,"grid":"[1, 1, 1]","nan":null,"none":null,"occupancy":0.5}"#;
        assert_eq!(a.json_line(), expected);
        assert_eq!(serde_json::to_string(&a).unwrap(), expected);
        let back: RowArgs = serde_json::from_str(expected).unwrap();
        assert_eq!(back.get("bytes"), Some(&ArgCell::Int(4096)));
        assert_eq!(back.get("nan"), Some(&ArgCell::Null));
        assert_eq!(RowArgs::default().json_line(), "");
    }

    #[test]
    fn the_binary_codec_carries_the_typed_pairs() {
        let a = RowArgs::new(vec![
            ("b".into(), ArgCell::Float(2.5)),
            ("a".into(), ArgCell::Text("x".into())),
        ]);
        let bytes = crate::protocol::codec::encode(&a).unwrap();
        let back: RowArgs = crate::protocol::codec::decode(&bytes).unwrap();
        assert_eq!(back, a);
        assert_eq!(back.iter().next().unwrap().0, "a");
    }
}
