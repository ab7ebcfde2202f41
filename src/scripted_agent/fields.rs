//! Request field names as the protobuf JSON mapping allows them: lowerCamelCase
//! (`historyLength`) or the proto's own snake_case (`history_length`). The agent reads
//! lowerCamelCase; [`camel_case_fields`] renames the rest first.

use serde_json::{Map, Value};

/// Returns a snake_case field name in lowerCamelCase (`history_length` → `historyLength`); a
/// name without `_` is returned as it is.
pub(crate) fn camel_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        match c {
            '_' if !out.is_empty() => upper = true,
            c if upper => {
                out.extend(c.to_uppercase());
                upper = false;
            }
            c => out.push(c),
        }
    }
    out
}

/// Renames every snake_case field of a request to lowerCamelCase, at every depth, but never
/// inside `metadata` or `data` (the sender's own JSON). A name given both ways keeps its
/// lowerCamelCase value.
pub(crate) fn camel_case_fields(v: Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut out = Map::new();
            let (snake, camel): (Vec<_>, Vec<_>) =
                map.into_iter().partition(|(k, _)| k.contains('_'));
            for (key, value) in camel.into_iter().chain(snake) {
                let key = camel_case(&key);
                if out.contains_key(&key) {
                    continue;
                }
                let value = if key == "metadata" || key == "data" {
                    value
                } else {
                    camel_case_fields(value)
                };
                out.insert(key, value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(camel_case_fields).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn snake_case_fields_are_read_as_lower_camel_case_but_never_inside_data() {
        assert_eq!(camel_case("history_length"), "historyLength");
        assert_eq!(camel_case("id"), "id");
        let v = camel_case_fields(json!({
            "id": "t", "history_length": 2, "historyLength": 3,
            "message": {"message_id": "m", "context_id": "c",
                "parts": [{"text": "x"}, {"data": {"keep_me": 1}}],
                "metadata": {"trip_id": 7}},
            "configuration": {"return_immediately": true}
        }));
        assert_eq!(v["historyLength"], 3, "the lowerCamelCase value wins");
        assert_eq!(v["message"]["messageId"], "m");
        assert_eq!(v["message"]["contextId"], "c");
        assert_eq!(v["message"]["parts"][1]["data"]["keep_me"], 1);
        assert_eq!(v["message"]["metadata"]["trip_id"], 7);
        assert_eq!(v["configuration"]["returnImmediately"], true);
    }
}
