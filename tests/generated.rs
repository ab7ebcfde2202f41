//! Generated files (completions, CLI reference) must match the clap definition.
//!
//! Set `A2A_RECOVER_UPDATE_GENERATED=1` to rewrite them instead of failing on drift.

use std::path::PathBuf;

use a2a_recover::commands::completions::{
    cli_reference_markdown, completion_script, man_page, man_pages,
};
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
fn man_pages_match_the_cli_and_exist_for_what_they_list() {
    let pages = man_pages().unwrap();
    for (name, roff) in &pages {
        check(&format!("man/{name}"), roff);
    }
    // The hidden `man` prints the first page.
    assert_eq!(pages[0].0, "a2a-recover.1");
    assert_eq!(pages[0].1, man_page().unwrap());
    // Every page another one refers to (`a2a\-recover\-delegate(1)`) ships, and nothing else.
    let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
    for (name, roff) in &pages {
        let text = String::from_utf8_lossy(roff).replace("\\-", "-");
        for word in text.split_whitespace() {
            if let Some(page) = word.strip_suffix("(1)")
                && page.starts_with("a2a-recover")
            {
                assert!(
                    names.contains(&format!("{page}.1").as_str()),
                    "{name} refers to {page}(1), which does not ship"
                );
            }
        }
    }
    assert!(!names.iter().any(|n| n.contains("help")), "{names:?}");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("man");
    let mut shipped: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    shipped.sort();
    let mut want: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    want.sort();
    assert_eq!(shipped, want, "man/ holds exactly the generated pages");
}

#[test]
fn cli_reference_matches_the_cli() {
    check("docs/cli-reference.md", cli_reference_markdown().as_bytes());
}
