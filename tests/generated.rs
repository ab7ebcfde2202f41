//! Generated files (completions, CLI reference) must match the clap definition.
//!
//! Set `A2A_RECOVER_UPDATE_GENERATED=1` to rewrite them instead of failing on drift.

use std::path::PathBuf;

use a2a_recover::commands::completions::{cli_reference_markdown, completion_script, man_page};
use clap_complete::Shell;

fn check(rel: &str, want: &[u8]) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel);
    if std::env::var_os("A2A_RECOVER_UPDATE_GENERATED").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, want).unwrap();
        return;
    }
    let have = std::fs::read(&path).unwrap_or_default();
    assert!(
        have == want,
        "`{rel}` is out of date with the clap definition; \
         run `A2A_RECOVER_UPDATE_GENERATED=1 cargo test --test integration generated` and commit"
    );
}

#[test]
fn completions_match_the_cli() {
    for (shell, file) in [
        (Shell::Bash, "completions/a2a-recover.bash"),
        (Shell::Zsh, "completions/_a2a-recover"),
        (Shell::Fish, "completions/a2a-recover.fish"),
        (Shell::PowerShell, "completions/_a2a-recover.ps1"),
        (Shell::Elvish, "completions/a2a-recover.elv"),
    ] {
        check(file, &completion_script(shell));
    }
}

#[test]
fn man_page_matches_the_cli() {
    check("completions/a2a-recover.1", &man_page().unwrap());
}

#[test]
fn cli_reference_matches_the_cli() {
    check("docs/cli-reference.md", cli_reference_markdown().as_bytes());
}
