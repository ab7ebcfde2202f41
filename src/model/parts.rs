//! What a message's or an artifact's parts say: text parts as text, data parts as JSON.
//!
//! A question or a result may come as a data part (LangGraph's interrupt is an artifact whose
//! one part is `{"data": {"id": …, "value": "two rooms or one?"}}`); these readers give every
//! view the same value for it, so that no view shows an empty question or an empty result.

use serde_json::Value;

/// Returns the data of a data part (v1.0 `{"data": …}`, v0.3 `{"kind": "data", "data": …}`).
fn part_data(part: &Value) -> Option<&Value> {
    part.get("data").filter(|d| !d.is_null())
}

fn parts_of(parts: &Value) -> &[Value] {
    parts.as_array().map_or(&[], Vec::as_slice)
}

/// Returns a JSON array of parts as one value: each text part's text and each data part's
/// compact JSON, in order (file parts add nothing). The value of `{artifact:NAME}` and of the
/// artifact variables.
pub fn parts_value(parts: &Value) -> String {
    parts_of(parts)
        .iter()
        .filter_map(|p| match p.get("text").and_then(Value::as_str) {
            Some(text) => Some(text.to_owned()),
            None => part_data(p).map(Value::to_string),
        })
        .collect()
}

/// Returns whether a JSON array of parts says anything: a text part with more than blanks, or
/// a data part.
pub fn parts_say_something(parts: &Value) -> bool {
    parts_of(parts).iter().any(|p| {
        p.get("text")
            .and_then(Value::as_str)
            .is_some_and(|t| !t.trim().is_empty())
            || part_data(p).is_some()
    })
}

/// Returns the data of a message's first data part, if it has one.
pub fn message_data(message: &Value) -> Option<&Value> {
    message
        .get("parts")
        .map(parts_of)
        .unwrap_or_default()
        .iter()
        .find_map(part_data)
}

/// Returns what a message asks or says, as one string: its text parts joined; else its data
/// part's string `value` (LangGraph's interrupt); else that data as compact JSON.
pub fn message_said(message: &Value) -> String {
    let text = super::task::message_text(message);
    if !text.trim().is_empty() {
        return text;
    }
    match message_data(message) {
        Some(data) => match data.get("value") {
            Some(Value::String(value)) => value.clone(),
            _ => data.to_string(),
        },
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn data_parts_are_read_as_json_and_a_string_value_as_the_question() {
        let interrupt = json!({"parts": [{"data": {"id": "i-1", "value": "two rooms or one?"}}]});
        assert_eq!(message_said(&interrupt), "two rooms or one?");
        assert_eq!(
            message_data(&interrupt),
            Some(&json!({"id": "i-1", "value": "two rooms or one?"}))
        );
        let form = json!({"parts": [{"kind": "data", "data": {"rooms": {"type": "string"}}}]});
        assert_eq!(message_said(&form), r#"{"rooms":{"type":"string"}}"#);
        let text = json!({"parts": [{"text": "which day?"}, {"data": {"day": null}}]});
        assert_eq!(message_said(&text), "which day?");
        assert_eq!(message_data(&text), Some(&json!({"day": null})));
        let nothing = json!({"parts": [{"text": " "}, {"data": null}]});
        assert_eq!(message_data(&nothing), None);
        assert!(!parts_say_something(&nothing["parts"]));

        let booking = json!([{"text": "booked: "}, {"data": {"ref": "H-1", "nights": 2}},
            {"url": "https://example.test/x"}]);
        assert_eq!(parts_value(&booking), r#"booked: {"nights":2,"ref":"H-1"}"#);
        assert!(parts_say_something(&booking));
    }
}
