//! The human output of a run as an insta snapshot, the way jj pins its CLI: the exit status,
//! stdout, then stderr, with every value that changes from run to run redacted.
//!
//! A missing or differing snapshot fails the test; under `CI=true` insta writes no `.snap.new`
//! either. Review changes with `cargo insta review`, or rerun with `INSTA_UPDATE=always`.

use std::os::unix::process::ExitStatusExt as _;
use std::process::Output;
use std::sync::LazyLock;

use regex::Regex;

use super::{TestEnv, stderr, stdout};

/// What changes from run to run, and what stands in for it; applied in order, after the test's
/// directory has become `[TEMP]`. Each stand-in keeps the width of what it replaces where a
/// table's columns depend on it (ports have five digits, UUIDs 36 characters).
static FILTERS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    compile(&[
        // Loopback ports the agents, proxies and booking systems were given.
        (r"127\.0\.0\.1:\d{5}\b", "127.0.0.1:[PORT]"),
        // Message, context and task ids (the scripted agent's task ids are UUIDs too).
        (
            r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
            "[UUID]",
        ),
        // A UUID cut short by the narrow `inspect` table (its first 8 characters and `…`).
        (r"\b[0-9a-f]{8}…", "[TASKID]…"),
        // Journal and agent times (RFC 3339).
        (
            r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})",
            "[TIME]",
        ),
        // Process ids (the holder of the pass lock).
        (r"\bpid \d+", "pid [PID]"),
    ])
});

/// Compiles `(pattern, replacement)` pairs.
pub fn compile(pairs: &[(&str, &'static str)]) -> Vec<(Regex, &'static str)> {
    pairs
        .iter()
        .map(|(re, with)| (Regex::new(re).expect("a filter"), *with))
        .collect()
}

/// Redacts what changes from run to run in `text`: the test's directory, ports, UUIDs, times
/// and process ids, then `extra`.
pub fn redact(env: &TestEnv, text: &str, extra: &[(Regex, &'static str)]) -> String {
    let mut text = text.replace(&env.path().display().to_string(), "[TEMP]");
    for (re, with) in FILTERS.iter().chain(extra) {
        text = re.replace_all(&text, *with).into_owned();
    }
    text
}

/// Renders a run as `[exit status: N]` (or `[signal: N]`), stdout, `----- stderr -----` and
/// stderr, redacted ([`redact`]): what `insta::assert_snapshot!` pins of a command.
pub fn snapshot_of(env: &TestEnv, o: &Output) -> String {
    snapshot_with(env, o, &[])
}

/// [`snapshot_of`] with more filters, for values only one command prints (sizes, short ids).
pub fn snapshot_with(env: &TestEnv, o: &Output, extra: &[(Regex, &'static str)]) -> String {
    let status = o.status.code().map_or_else(
        || format!("[signal: {}]", o.status.signal().unwrap_or_default()),
        |c| format!("[exit status: {c}]"),
    );
    redact(
        env,
        &format!("{status}\n{}----- stderr -----\n{}", stdout(o), stderr(o)),
        extra,
    )
}
