//! What an attempt's artifacts hold, as `inspect WORKFLOW/STEP` shows them: each artifact by
//! name and id, its text parts as text, its data parts as indented JSON, its file parts by
//! name, media type and URI (or their size when sent inline). Bounded (the first
//! [`SHOWN_ARTIFACTS`] artifacts, [`PART_CHARS`] characters and [`PART_LINES`] lines of a part)
//! and inert: remote text goes through [`inert_lines`], so each of its lines after the first
//! starts with the remote-line prefix. `inspect STEP --artifact NAME` prints one value whole.
//! In JSON, an `artifact` record per artifact keeps the parts as journaled.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::journal::{Artifact, AttemptRow};
use crate::sanitize::{inert, inert_lines};

/// Most artifacts of one attempt the step view shows.
const SHOWN_ARTIFACTS: usize = 20;
/// Most characters of one part the step view shows.
const PART_CHARS: usize = 2000;
/// Most lines of one part the step view shows.
const PART_LINES: usize = 40;
/// The indent of an artifact's heading in the step view (under an attempt's fields).
const HEADING: &str = "    ";
/// The indent of its parts.
const BODY: &str = "      ";

/// The step view's lines about `artifacts` (empty when there are none).
pub(super) fn lines(artifacts: &[Artifact]) -> Vec<String> {
    let mut lines = Vec::new();
    for a in artifacts.iter().take(SHOWN_ARTIFACTS) {
        let id = inert(&a.artifact_id);
        lines.push(match &a.name {
            Some(name) => format!("{HEADING}{} (id {id}):", inert(name)),
            None => format!("{HEADING}{id}:"),
        });
        let parts = a.parts.as_array().map_or(&[][..], Vec::as_slice);
        if parts.is_empty() {
            lines.push(format!("{BODY}(no parts)"));
        }
        for part in parts {
            lines.push(format!("{BODY}{}", part_text(part)));
        }
    }
    if artifacts.len() > SHOWN_ARTIFACTS {
        lines.push(format!(
            "{HEADING}… {} more artifacts (`--format json` lists them all)",
            artifacts.len() - SHOWN_ARTIFACTS
        ));
    }
    lines
}

/// One part, inert and bounded: text as text, data as indented JSON, a file by name, type and
/// URI or inline size.
fn part_text(part: &Value) -> String {
    let str_of = |k: &str| part.get(k).and_then(Value::as_str);
    if let Some(text) = str_of("text") {
        return bounded(text);
    }
    if let Some(data) = part.get("data") {
        let pretty = serde_json::to_string_pretty(data).unwrap_or_default();
        return bounded(&pretty);
    }
    let name = str_of("filename")
        .filter(|n| !n.is_empty())
        .map_or_else(|| "a file".to_owned(), |n| format!("file {}", inert(n)));
    let media = str_of("mediaType")
        .filter(|m| !m.is_empty())
        .map(|m| format!(" ({})", inert(m)))
        .unwrap_or_default();
    if let Some(url) = str_of("url") {
        return format!("{name}{media} at {}", inert(&crate::a2a::redact_url(url)));
    }
    if let Some(raw) = str_of("raw") {
        // Standard base64: 3 bytes per 4 characters, less the padding.
        let bytes = raw.len() / 4 * 3 - raw.bytes().rev().take_while(|b| *b == b'=').count();
        return format!("{name}{media}, {bytes} bytes sent inline");
    }
    "a part of a kind this version does not know".to_owned()
}

/// `text` made inert, its lines under the remote-line prefix, cut to [`PART_CHARS`] characters
/// and [`PART_LINES`] lines, saying how much was left out.
fn bounded(text: &str) -> String {
    let total = text.chars().count();
    let kept: String = text.chars().take(PART_CHARS).collect();
    let mut shown = inert_lines(&kept, BODY, Some(PART_LINES));
    if total > PART_CHARS {
        let _ = write!(
            shown,
            "\n{BODY}… {} more characters (`--artifact NAME` prints it whole)",
            total - PART_CHARS
        );
    }
    shown
}

/// What each of `rows` holds, in their order: the step view's artifacts.
pub(super) fn of_rows(
    journal: &crate::journal::Journal,
    rows: &[AttemptRow],
) -> Result<Vec<Vec<Artifact>>, crate::journal::JournalError> {
    rows.iter()
        .map(|r| journal.artifacts(r.attempt.id))
        .collect()
}

/// The `artifact` record: which attempt, the artifact's id, name, description, parts and
/// metadata as journaled, and whether its last chunk arrived.
pub(super) fn record(row: &AttemptRow, a: &Artifact) -> Value {
    json!({
        "type": "artifact",
        "workflow": row.step.workflow,
        "step": row.step.step,
        "attempt": row.attempt.number,
        "artifactId": a.artifact_id,
        "name": a.name,
        "description": a.description,
        "parts": a.parts,
        "metadata": a.metadata,
        "lastChunk": a.last_chunk,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_show_by_kind_inert_and_bounded() {
        assert_eq!(part_text(&json!({"text": "one\ntwo"})), "one\n      │ two");
        assert_eq!(
            part_text(&json!({"data": {"rooms": 1}})),
            "{\n      │   \"rooms\": 1\n      │ }"
        );
        assert_eq!(
            part_text(&json!({"url": "https://u:p@x.example/y.pdf", "filename": "y.pdf"})),
            "file y.pdf at https://x.example/y.pdf"
        );
        assert_eq!(
            part_text(&json!({"raw": "iVBORw0KGgo=", "mediaType": "image/png"})),
            "a file (image/png), 8 bytes sent inline"
        );
        let long = "x".repeat(PART_CHARS + 5);
        assert!(
            part_text(&json!({"text": long}))
                .ends_with("… 5 more characters (`--artifact NAME` prints it whole)")
        );
    }
}
