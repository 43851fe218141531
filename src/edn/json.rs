//! EDN values as JSON, for the outputs that speak JSON (elle-cli's history
//! format, `-o json`): keywords become strings, maps objects, sets arrays.

use serde_json::Value as J;

use crate::edn::Value;

/// EDN as JSON: keywords become strings, maps objects, sets arrays.
pub fn to_json(v: &Value) -> J {
    match v {
        Value::Nil => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        Value::BigInt(s) | Value::BigDec(s) | Value::Ratio(s) => J::String(s.clone()),
        Value::Char(c) => J::String(c.to_string()),
        Value::String(s) | Value::Symbol(s) | Value::Keyword(s) => J::String(s.clone()),
        Value::List(xs) | Value::Vector(xs) | Value::Set(xs) => {
            J::Array(xs.iter().map(to_json).collect())
        }
        Value::Map(kvs) => J::Object(
            kvs.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Value::Keyword(s) | Value::String(s) | Value::Symbol(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Value::Tagged(_, v) => to_json(v),
    }
}
