//! The text a2a-recover prints, as its source holds it: a message split over source lines
//! continues with `\` at the end of the line, which swallows the next line's indentation. A
//! line joined without it keeps a run of spaces in the middle of the sentence, printed as is
//! (`may                      still be in flight`): this test reads every string literal of
//! `src/` for such a run.

use std::path::Path;

/// Returns every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_message_keeps_a_run_of_spaces_from_a_line_joined_without_a_backslash() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // A string literal on one line, then a word, four spaces or more, and a word inside it
    // (`\n    or:` is an escape followed by indentation on purpose: not a word).
    let literal = regex::Regex::new(r#""(?:[^"\\]|\\.)*""#).unwrap();
    let gap = regex::Regex::new(r"(?:^|[^\\])[[:alnum:];,.:)]( {4,})[[:alnum:](]").unwrap();
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read a source file");
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for lit in literal.find_iter(line) {
                if gap.is_match(lit.as_str()) {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
