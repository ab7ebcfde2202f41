//! The single integration test binary: every test module is listed here, and a test below
//! fails when a file under tests/ is not.

mod adopted;
mod agents;
mod ages;
mod artifact_view;
mod bends;
mod bounds;
mod broken_journal;
mod cli;
mod common;
mod compensate;
mod credential_owner;
mod credentials;
mod cron;
mod delegate;
mod demo;
mod docs;
mod effects;
mod follow;
mod follow_wiring;
mod follow_workflow;
mod generated;
mod guard_rails;
mod health;
mod holes;
mod hostile;
mod hosts;
mod http_json;
mod inspect;
mod interop;
mod interop03;
mod interop_frameworks;
mod interop_grpc;
mod interop_http_json;
mod interop_probe;
mod interop_push;
mod interop_recovery;
mod interop_v03;
mod journal;
mod journal_copy;
mod locks;
mod messages;
mod moved;
mod plan;
mod postgres_cli;
mod probe;
mod prune;
mod push;
mod push_faults;
mod push_listen;
mod push_postgres;
mod push_tidy;
mod readme;
mod reconcile;
mod remote_lines;
mod reply;
mod resolve;
mod scheduling;
mod scripted_agent;
mod scripted_grpc;
mod scrub;
mod signals;
mod snapshots;
mod soak;
mod status;
mod terminal;
mod v03;
mod watch;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `tests/` is compiled into this binary: reachable from this file
/// through `mod NAME;` declarations. (With `autotests = false`, a file nobody declares is
/// never built, and its tests never run.)
#[test]
fn every_rs_file_under_tests_is_part_of_the_test_binary() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let reachable = reachable_from(&tests.join("integration.rs"));
    let mut stray: Vec<String> = rs_files(&tests)
        .into_iter()
        .filter(|f| !reachable.contains(f))
        .map(|f| f.strip_prefix(&tests).unwrap().display().to_string())
        .collect();
    stray.sort();
    assert!(
        stray.is_empty(),
        "not declared by any `mod` line reachable from tests/integration.rs (add one, or \
         delete the file): {stray:?}"
    );
}

/// The files reachable from `root` through `mod NAME;` lines (Rust's module file rules:
/// `NAME.rs` or `NAME/mod.rs`, beside `integration.rs` and `mod.rs`, else in a folder named
/// after the declaring file).
fn reachable_from(root: &Path) -> BTreeSet<PathBuf> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(file) = todo.pop() {
        if !seen.insert(file.clone()) {
            continue;
        }
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let dir = file.parent().unwrap();
        let stem = file.file_stem().unwrap();
        let base = if file == root || stem == "mod" {
            dir.to_path_buf()
        } else {
            dir.join(stem)
        };
        for name in text.lines().filter_map(declared_module) {
            let flat = base.join(format!("{name}.rs"));
            let nested = base.join(name).join("mod.rs");
            todo.push(if flat.exists() { flat } else { nested });
        }
    }
    seen
}

/// The module a line declares from a file of its own (`mod x;`, `pub mod x;`), if any.
fn declared_module(line: &str) -> Option<&str> {
    let line = line.trim();
    let rest = line
        .strip_prefix("pub mod ")
        .or_else(|| line.strip_prefix("pub(crate) mod "))
        .or_else(|| line.strip_prefix("mod "))?;
    let name = rest.strip_suffix(';')?.trim();
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
        .then_some(name)
}

/// Every `.rs` file below `dir` (the interop SDKs' `node_modules` aside).
fn rs_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "node_modules") {
                out.extend(rs_files(&path));
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}
