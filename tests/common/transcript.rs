//! Every byte the binary wrote in a test (stdout and stderr of each run) and the files beside
//! its journal, searched for a secret that must be in none of them.

use std::path::Path;
use std::process::Output;

/// Returns whether `needle` occurs in `haystack`, byte for byte.
pub fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// What a test kept of the binary's output and the journal's files.
#[derive(Default)]
pub struct Transcript {
    bytes: Vec<(String, Vec<u8>)>,
}

impl Transcript {
    /// Keeps the stdout and stderr of one run, named `what`.
    pub fn keep(&mut self, what: &str, out: &Output) {
        self.bytes
            .push((format!("stdout of {what}"), out.stdout.clone()));
        self.bytes
            .push((format!("stderr of {what}"), out.stderr.clone()));
    }

    /// Keeps `bytes`, named `what` (a file the test read itself).
    pub fn keep_bytes(&mut self, what: String, bytes: Vec<u8>) {
        self.bytes.push((what, bytes));
    }

    /// Keeps every file beside `journal` (the database, its WAL and shared memory, the lock).
    pub fn keep_journal_files(&mut self, journal: &Path) {
        let dir = journal.parent().expect("a directory");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).expect("the journal's directory") {
            let path = entry.expect("an entry").path();
            if path.is_file() {
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                self.bytes.push((
                    format!("journal file {name}"),
                    std::fs::read(&path).expect("read"),
                ));
                n += 1;
            }
        }
        assert!(n >= 2, "the journal and its WAL or lock file: {n} file(s)");
    }

    /// Fails naming where `secret` was kept, if anywhere.
    pub fn assert_free_of(&self, secret: &str) {
        for (what, bytes) in &self.bytes {
            assert!(
                !contains(bytes, secret),
                "a secret is in {what}:\n{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }
}
