//! The artifact invariant: every chunk a `work:N` task streamed is journaled once, in order,
//! whatever the stream did (cut, stalled, an event repeated or swapped).

use super::Sim;

/// Checks that each journaled `result` artifact reads `chunk 1;chunk 2;…` (or `done;`): no
/// chunk twice, none out of order, none skipped.
pub fn check(sim: &Sim) -> Result<(), String> {
    let conn = rusqlite::Connection::open(&sim.journal).map_err(|e| e.to_string())?;
    let mut stmt = conn
        .prepare(
            "SELECT w.name || '/' || s.name, a.id, r.parts_json \
             FROM artifacts r JOIN attempts a ON a.id = r.attempt_id \
             JOIN steps s ON s.id = a.step_id JOIN workflows w ON w.id = s.workflow_id \
             WHERE r.artifact_id = 'result' ORDER BY a.id",
        )
        .map_err(|e| e.to_string())?;
    let rows: Vec<(String, i64, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .and_then(Iterator::collect)
        .map_err(|e| e.to_string())?;
    for (step, id, parts) in rows {
        let parts: serde_json::Value = serde_json::from_str(&parts).unwrap_or_default();
        let text: String = parts
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
            .collect();
        if text == "done;" {
            continue;
        }
        let chunks: Vec<&str> = text.split_terminator(';').collect();
        let in_order = chunks
            .iter()
            .enumerate()
            .all(|(i, c)| *c == format!("chunk {}", i + 1));
        if !in_order {
            return Err(format!(
                "artifact chunks: {step} attempt {id} journaled `result` as {text:?}"
            ));
        }
    }
    Ok(())
}
