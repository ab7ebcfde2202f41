//! Where the journal lives by default (DESIGN.md §2).

use std::path::PathBuf;

use crate::error::CliError;

/// Resolves the journal path: `--journal`/`A2A_RECOVER_JOURNAL` (already merged by clap), else
/// `$XDG_STATE_HOME/a2a-recover/journal.sqlite3`, else `~/.local/state/a2a-recover/journal.sqlite3`.
///
/// An empty or relative `XDG_STATE_HOME` counts as unset (XDG Base Directory spec).
pub fn journal_path(
    flag: Option<&PathBuf>,
    xdg_state_home: Option<&str>,
    home: Option<&str>,
) -> Result<PathBuf, CliError> {
    if let Some(p) = flag {
        if p.as_os_str().is_empty() {
            return Err(CliError::usage("the journal path is empty")
                .hint("pass --journal PATH or unset A2A_RECOVER_JOURNAL"));
        }
        return Ok(p.clone());
    }
    if let Some(x) = xdg_state_home.filter(|x| !x.is_empty() && x.starts_with('/')) {
        return Ok(PathBuf::from(x).join("a2a-recover").join("journal.sqlite3"));
    }
    match home.filter(|h| !h.is_empty()) {
        Some(h) => Ok(PathBuf::from(h).join(".local/state/a2a-recover/journal.sqlite3")),
        None => Err(
            CliError::usage("cannot find a place for the journal: HOME is not set")
                .hint("pass --journal PATH or set A2A_RECOVER_JOURNAL"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence() {
        let flag = PathBuf::from("/j.sqlite3");
        assert_eq!(
            journal_path(Some(&flag), Some("/x"), Some("/h")).unwrap(),
            flag
        );
        assert_eq!(
            journal_path(None, Some("/x"), Some("/h")).unwrap(),
            PathBuf::from("/x/a2a-recover/journal.sqlite3")
        );
        assert_eq!(
            journal_path(None, Some("relative"), Some("/h")).unwrap(),
            PathBuf::from("/h/.local/state/a2a-recover/journal.sqlite3")
        );
        assert_eq!(
            journal_path(None, Some(""), Some("/h")).unwrap(),
            PathBuf::from("/h/.local/state/a2a-recover/journal.sqlite3")
        );
        assert!(journal_path(None, None, None).is_err());
    }
}
