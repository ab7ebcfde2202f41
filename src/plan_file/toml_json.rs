//! A plan's TOML tables (`metadata`, `data`) as the JSON a message carries.

use serde_json::{Map, Value};

/// Converts a TOML table to a JSON object (datetimes become their RFC 3339 text).
pub(super) fn toml_table_to_json(table: &toml::Table) -> Result<Map<String, Value>, String> {
    table
        .iter()
        .map(|(k, v)| Ok((k.clone(), toml_to_json(v)?)))
        .collect()
}

fn toml_to_json(v: &toml::Value) -> Result<Value, String> {
    Ok(match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .ok_or_else(|| format!("{f} cannot be sent as JSON"))?,
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => {
            Value::Array(a.iter().map(toml_to_json).collect::<Result<_, _>>()?)
        }
        toml::Value::Table(t) => Value::Object(toml_table_to_json(t)?),
    })
}
