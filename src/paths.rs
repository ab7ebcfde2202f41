//! Where the journal lives by default.

use std::path::PathBuf;

/// Why no journal path could be chosen: the problem only; the command layer adds the hint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// `--journal` or `A2A_RECOVER_JOURNAL` is empty.
    #[error("the journal path is empty")]
    Empty,
    /// Neither a journal nor `HOME` is set.
    #[error("cannot find a place for the journal: HOME is not set")]
    NoHome,
    /// The value is a URL of a scheme that is no journal (shown without its password, inert).
    #[error(
        "the journal `{shown}` is a URL of scheme `{scheme}`, which is no journal; nothing was \
         created"
    )]
    NotAJournal {
        /// The URL, its password replaced by `***`.
        shown: String,
        /// Its scheme, lower-case.
        scheme: String,
    },
}

/// How the journal path was chosen, for errors and `status` ("the journal in use and why").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalSource {
    /// `--journal` on the command line.
    Flag,
    /// The `A2A_RECOVER_JOURNAL` variable.
    Env,
    /// The default under `$XDG_STATE_HOME`.
    XdgStateHome,
    /// The default under `$HOME/.local/state` (`XDG_STATE_HOME` unset, empty or relative).
    Home,
}

impl JournalSource {
    /// Says where the path came from, for a sentence: "chosen by --journal".
    pub fn describe(self) -> &'static str {
        match self {
            Self::Flag => "--journal",
            Self::Env => "A2A_RECOVER_JOURNAL",
            Self::XdgStateHome => "the default under $XDG_STATE_HOME",
            Self::Home => "the default under $HOME/.local/state (XDG_STATE_HOME is not set)",
        }
    }

    /// A short name for JSON records: `flag`, `env`, `xdg-state-home`, `home`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Flag => "flag",
            Self::Env => "env",
            Self::XdgStateHome => "xdg-state-home",
            Self::Home => "home",
        }
    }
}

/// Returns how [`journal_path`] chose its path, given whether `--journal` was on the command
/// line (`flag_given`) and whether a value came from either the flag or the variable.
pub fn journal_source(
    flag_given: bool,
    value: Option<&PathBuf>,
    xdg_state_home: Option<&str>,
) -> JournalSource {
    match value {
        Some(_) if flag_given => JournalSource::Flag,
        Some(_) => JournalSource::Env,
        None if xdg_state_home.is_some_and(|x| !x.is_empty() && x.starts_with('/')) => {
            JournalSource::XdgStateHome
        }
        None => JournalSource::Home,
    }
}

/// Resolves the journal path: `--journal`/`A2A_RECOVER_JOURNAL` (already merged by clap), else
/// `$XDG_STATE_HOME/a2a-recover/journal.sqlite3`, else `~/.local/state/a2a-recover/journal.sqlite3`.
///
/// An empty or relative `XDG_STATE_HOME` counts as unset (XDG Base Directory spec).
pub fn journal_path(
    flag: Option<&PathBuf>,
    xdg_state_home: Option<&str>,
    home: Option<&str>,
) -> Result<PathBuf, PathError> {
    if let Some(p) = flag {
        if p.as_os_str().is_empty() {
            return Err(PathError::Empty);
        }
        if let Some(url) = url_shaped(p) {
            return Err(url_refused(&url));
        }
        return Ok(p.clone());
    }
    if let Some(x) = xdg_state_home.filter(|x| !x.is_empty() && x.starts_with('/')) {
        return Ok(PathBuf::from(x).join("a2a-recover").join("journal.sqlite3"));
    }
    match home.filter(|h| !h.is_empty()) {
        Some(h) => Ok(PathBuf::from(h).join(".local/state/a2a-recover/journal.sqlite3")),
        None => Err(PathError::NoHome),
    }
}

/// Returns the value when it is shaped like a URL (`scheme://…`), which is never a file path
/// we should create: `postgres://user:secret@host/db` would otherwise become directories.
fn url_shaped(p: &std::path::Path) -> Option<String> {
    let s = p.to_str()?;
    let (scheme, _) = s.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then(|| s.to_owned())
}

/// The error for a URL-shaped journal: named without its password, nothing created.
fn url_refused(url: &str) -> PathError {
    let shown = match url::Url::parse(url) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            u.to_string()
        }
        // Unparseable: show only the scheme, since the rest may hold a password.
        Err(_) => format!("{}://…", url.split_once("://").map_or("", |(s, _)| s)),
    };
    let scheme = url
        .split_once("://")
        .map_or("", |(s, _)| s)
        .to_ascii_lowercase();
    PathError::NotAJournal {
        shown: crate::sanitize::inert(&shown),
        scheme: crate::sanitize::inert(&scheme),
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

    #[test]
    fn the_source_names_how_the_path_was_chosen() {
        let p = PathBuf::from("/j");
        assert_eq!(
            journal_source(true, Some(&p), Some("/x")),
            JournalSource::Flag
        );
        assert_eq!(
            journal_source(false, Some(&p), Some("/x")),
            JournalSource::Env
        );
        assert_eq!(
            journal_source(false, None, Some("/x")),
            JournalSource::XdgStateHome
        );
        assert_eq!(journal_source(false, None, Some("x")), JournalSource::Home);
        assert_eq!(journal_source(false, None, None), JournalSource::Home);
    }

    #[test]
    fn a_url_shaped_journal_is_refused_without_its_password() {
        for url in ["mysql://user:secret@127.0.0.1:5432/db", "sqlite://x"] {
            let err = journal_path(Some(&PathBuf::from(url)), None, Some("/h")).unwrap_err();
            let message = err.to_string();
            assert!(message.contains("is a URL of scheme"), "{message}");
            assert!(!message.contains("secret"), "{message}");
        }
        // A path that merely contains `://` later on is still a path.
        let odd = PathBuf::from("./dir/a://b");
        assert_eq!(journal_path(Some(&odd), None, Some("/h")).unwrap(), odd);
    }
}
