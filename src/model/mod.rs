//! The task model the journal and the wire both speak: a task as read from an agent
//! ([`TaskView`], its [`RemoteState`] and artifacts), which binding an endpoint speaks
//! ([`ProtocolBinding`] and the names cards, flags and the journal give it), and an agent's own
//! limits ([`AgentOverride`]).
//!
//! It imports only the leaves, serde and `a2a-lf`: the journal (`journal/`) and the wire
//! (`a2a/`) both import it, and neither imports the other.

mod binding;
mod limits;
mod parts;
mod task;

pub use binding::{InterfaceChoice, ProtocolBinding, ProtocolVersion, WireBinding};
pub use limits::{AgentOverride, NotBefore, NotBefores, Overrides};
pub use parts::{message_data, message_said, parts_say_something, parts_value};
pub use task::{
    ArtifactUpdate, ArtifactView, RemoteState, StatusTimestamp, TaskView, ViewError, artifact_view,
    history_holds, message_text, naive_as_utc, parse_timestamp, parts_text, task_id_problem,
};

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every `.rs` file under `dir` (or `dir` itself), with its text.
    fn sources(dir: &Path) -> Vec<(String, String)> {
        if dir.is_file() {
            return vec![(
                dir.display().to_string(),
                std::fs::read_to_string(dir).unwrap(),
            )];
        }
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() || path.extension().is_some_and(|e| e == "rs") {
                out.extend(sources(&path));
            }
        }
        out
    }

    /// Lines of the files under `dir` that name one of `forbidden`.
    fn offenders(dir: &str, forbidden: &[&str]) -> Vec<String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        sources(&root.join(dir))
            .into_iter()
            .flat_map(|(file, text)| {
                text.lines()
                    .enumerate()
                    .filter(|(_, line)| forbidden.iter().any(|f| line.contains(f)))
                    .map(|(n, line)| format!("{file}:{}: {line}", n + 1))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Paths into `names` from the crate root, spelled so that this file names none of them.
    fn paths_into(names: &[&str]) -> Vec<String> {
        let root = "crate";
        names
            .iter()
            .flat_map(|n| [format!("{root}::{n}"), format!("{root}::{{{n}")])
            .collect()
    }

    #[test]
    fn the_journal_and_the_wire_are_siblings_over_the_model() {
        let mut wire = paths_into(&["a2a"]);
        wire.push(format!("super::super::{}", "a2a"));
        let wire: Vec<&str> = wire.iter().map(String::as_str).collect();
        assert_eq!(offenders("journal", &wire), Vec::<String>::new());
        let above = paths_into(&[
            "a2a", "journal", "recovery", "commands", "context", "error", "cli", "output",
        ]);
        let above: Vec<&str> = above.iter().map(String::as_str).collect();
        assert_eq!(offenders("model", &above), Vec::<String>::new());
        assert_eq!(offenders("paths.rs", &above), Vec::<String>::new());
    }
}
