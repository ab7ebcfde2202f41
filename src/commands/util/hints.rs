//! What the operator can do about an error: the hints `error:` messages end with. Lower layers
//! (the journal, the wire, recovery) raise typed errors that carry what went wrong; the words
//! of what to do about it, and the commands to run, are written here (as jj's command errors).

use crate::a2a::{A2aError, Hint, MAX_CARD_INTERFACES, MAX_CARD_SKILLS, fmt_duration};
use crate::journal::JournalError;
use crate::journal::model::{AttemptState, Resolution};
use crate::recovery::error::RecoveryError;
use crate::recovery::lock::LockError;

/// What the operator can do about an error, if anything useful can be said.
pub(crate) trait HintText {
    /// Returns the hint.
    fn hint_text(&self) -> Option<String>;
}

impl HintText for JournalError {
    fn hint_text(&self) -> Option<String> {
        match self {
            JournalError::Io { .. } => Some(
                "check the permissions of the journal and its directory, or pass --journal PATH"
                    .to_owned(),
            ),
            JournalError::BrokenSymlink { .. } => {
                Some("restore the link's target, or pass --journal with another path".to_owned())
            }
            JournalError::NotSqlite { path } | JournalError::NotAJournal { path } => Some(format!(
                "the file was left untouched; pass --journal with another path, or move `{}` away",
                path.display()
            )),
            JournalError::Corrupt { path, .. } => Some(format!(
                "the file was left untouched; restore it from a backup, or salvage it with \
                 `sqlite3 {} .recover`",
                path.display()
            )),
            JournalError::Moved { path, to, .. } => Some(format!(
                "pass --journal {to} (or set A2A_RECOVER_JOURNAL to it); `{}` is kept only as \
                 a record of what was moved: delete it (a file with its -wal and -shm, or the \
                 schema) to reuse its place",
                path.display()
            )),
            JournalError::TargetNotEmpty { .. } => Some(
                "nothing was copied and the target was left as it was; `journal copy` never \
                 merges two journals: copy into a new file or an empty schema"
                    .to_owned(),
            ),
            JournalError::CopySchema { .. } => Some(
                "nothing was copied; both journals must be at this a2a-recover's schema version"
                    .to_owned(),
            ),
            JournalError::CopyMismatch { .. } => Some(
                "nothing was committed to the target and the source was not marked as moved; \
                 this is a bug in a2a-recover: please report it"
                    .to_owned(),
            ),
            JournalError::NewerVersion { .. } => {
                Some("this journal was written by a newer a2a-recover; upgrade to write it (reading works)".to_owned())
            }
            JournalError::ReadOnly { .. } => Some(
                "the journal is empty or from an older a2a-recover, and a dry run writes \
                 nothing: run `a2a-recover inspect` once (it creates or migrates the journal \
                 and contacts no agent), then run this again"
                    .to_owned(),
            ),
            JournalError::Busy { .. } => Some(
                "another a2a-recover holds the journal; wait for it, or raise --timeout"
                    .to_owned(),
            ),
            JournalError::Storage { hint, .. } => hint.map(str::to_owned),
            JournalError::BadValue { .. } => {
                Some("the journal may have been edited by hand or by a newer version".to_owned())
            }
            JournalError::UnknownAttempt(_) | JournalError::UnknownStep(_) | JournalError::UnknownWorkflow(_) => {
                Some("`a2a-recover inspect` lists what the journal holds".to_owned())
            }
            JournalError::Transition { .. } | JournalError::TaskMismatch { .. } => {
                Some("this is a bug in a2a-recover; please report it with `inspect --events`".to_owned())
            }
            JournalError::BudgetSpent { step, .. } => Some(format!(
                "decide with `a2a-recover resolve {step} --as abandoned --reason \"…\"`"
            )),
            JournalError::NotLatest { step, .. } => Some(format!(
                "see where it is now with `a2a-recover inspect {step}`, then decide again"
            )),
            JournalError::Undecidable {
                step,
                state,
                resolution,
                ..
            } => Some(undecidable_hint(step, *state, *resolution)),
            JournalError::WorkflowClosed { workflow, .. } => Some(format!(
                "`a2a-recover compensate {workflow}` is undoing it; accept or give up its steps \
                 with `resolve STEP --as done|abandoned` instead"
            )),
            JournalError::NotUndoable { step, .. } => Some(format!(
                "nothing was changed; `a2a-recover inspect {step}` shows its decisions, and a \
                 new `resolve {step} --as …` replaces what was sent"
            )),
        }
    }
}

impl HintText for RecoveryError {
    fn hint_text(&self) -> Option<String> {
        match self {
            RecoveryError::UnknownWorkflow(_) => {
                Some("list workflows with `a2a-recover inspect`".to_owned())
            }
            RecoveryError::CredentialGone(e) => e.hint_text(),
        }
    }
}

impl HintText for LockError {
    fn hint_text(&self) -> Option<String> {
        Some(match self {
            LockError::Held { path, .. } => format!(
                "nothing was touched; run again when it is done (lock file `{}`)",
                path.display()
            ),
            LockError::Io { path, .. } => format!(
                "nothing was touched; the lock file `{}` sits beside the journal: check that \
                 its directory is writable and that it is a regular file you may open",
                path.display()
            ),
            LockError::Store(_) => "nothing was touched; run again".to_owned(),
        })
    }
}

impl HintText for A2aError {
    fn hint_text(&self) -> Option<String> {
        self.hint().as_ref().map(wire)
    }
}

/// The words of what to do about a wire error.
pub(crate) fn wire(hint: &Hint) -> String {
    match hint {
        Hint::SchemeMissing(url) => format!(
            "did you mean `http://{url}`? Give the agent's URL with its scheme (http:// or \
             https://)"
        ),
        Hint::UserInfo => "give the URL without user:password@; pass credentials through \
             --token-env VAR instead"
            .to_owned(),
        Hint::BadUrl => "give an http:// or https:// URL, e.g. `http://127.0.0.1:8001`".to_owned(),
        Hint::CredentialVar(var) => format!(
            "export `{var}` with the agent's bearer token: the journal keeps only this \
             variable's name, and every command that talks to the agent reads it"
        ),
        Hint::TokenCommand => "make the command print the agent's token on stdout \
             and exit 0 (it runs without a shell, within 10s); the journal keeps only the \
             command, and every command that talks to the agent runs it again"
            .to_owned(),
        Hint::NoCard => "no Agent Card at that address: check the agent URL (give its base URL, \
            whose card is at /.well-known/agent-card.json, or the card's own URL)"
            .to_owned(),
        Hint::NotACard => "what that address serves is not an A2A Agent Card; check that the URL \
            points at an A2A agent (its card is at /.well-known/agent-card.json)"
            .to_owned(),
        Hint::InvalidCard => "check that the URL points at an A2A agent (its card is at \
            /.well-known/agent-card.json)"
            .to_owned(),
        Hint::CardOverBound(Some(flag)) => format!(
            "nothing was sent; real cards are a few KiB: raise {flag} if this agent's card is \
             legitimately that large"
        ),
        Hint::CardOverBound(None) => format!(
            "nothing was sent; a2a-recover uses cards of at most {MAX_CARD_INTERFACES} \
             interfaces and {MAX_CARD_SKILLS} skills (real cards list a few): the agent's card \
             must list fewer"
        ),
        Hint::NoInterface { legacy: true } => "a2a-recover speaks A2A 1.0 over JSON-RPC or \
            HTTP+JSON, and 0.3 over either; this v0.3 card's `url` / `preferredTransport` / \
            `additionalInterfaces` name none of them (or not the one --binding / --protocol \
            asked for)"
            .to_owned(),
        Hint::NoInterface { legacy: false } => "a2a-recover speaks A2A 1.0 over JSON-RPC or \
            HTTP+JSON, and 0.3 over either; the card must list a `supportedInterfaces` entry \
            with protocolBinding \"JSONRPC\" or \"HTTP+JSON\" (or drop --binding / --protocol \
            if they asked for another)"
            .to_owned(),
        _ => answer(hint),
    }
}

/// The words of what to do about an agent's answer, or its silence.
fn answer(hint: &Hint) -> String {
    match hint {
        Hint::Connect => "check that the agent is running and reachable at that \
            address; nothing was sent, so running again later is safe"
            .to_owned(),
        Hint::Timeout => {
            "the agent did not answer in time; run again later, or raise --timeout".to_owned()
        }
        Hint::Skipped { not_before: true } => {
            "nothing was sent; the agent asked not to be called before the time named (a \
             Retry-After, at most a day ahead): passes skip it until then, then try it again"
                .to_owned()
        }
        Hint::Skipped { not_before: false } => {
            "nothing was sent; the next pass tries this agent again (--agent-failures sets how \
             many failures in a row skip an agent)"
                .to_owned()
        }
        Hint::Broken => {
            "the connection broke; run again later (recovery looks before it resends)".to_owned()
        }
        Hint::BadTaskId => "the agent named its task with an id no URL can hold, so a2a-recover \
            cannot read it; the agent received the request, so nothing is sent again: ask the \
            agent's operator about the task, then `a2a-recover resolve` the step"
            .to_owned(),
        Hint::Proxy => "a 404 whose body names no A2A error comes from a proxy or a router in \
            front of the agent, not from the agent: the task is not taken as gone; check the \
            interface URL and any proxy in front of it, then run again later"
            .to_owned(),
        Hint::CredentialsRefused => "the agent refused the credentials; check the token in the \
            variable named by --token-env, or printed by --token-cmd (sent only to the card's \
            origin unless --allow-cross-origin)"
            .to_owned(),
        Hint::WrongInterfaceUrl => "check the agent URL; the card's JSON-RPC interface URL may \
            be wrong or out of date (`agents add URL` refreshes it)"
            .to_owned(),
        Hint::Busy(Some(d)) => format!(
            "the agent is busy and asked to retry after {}; run again later",
            fmt_duration(*d)
        ),
        Hint::Busy(None) => "the agent is busy; run again later".to_owned(),
        Hint::ServerFailed => {
            "the agent or a proxy in front of it failed; run again later".to_owned()
        }
        Hint::UnexpectedStatus => {
            "the agent answered with an unexpected HTTP status; check its URL and logs".to_owned()
        }
        Hint::VersionNotSupported => "the agent does not accept A2A version 1.0 (JSON-RPC \
            -32009); check which protocol versions its card declares"
            .to_owned(),
        Hint::MethodNotFound => {
            "the agent does not implement this method; it may only speak A2A v0.3".to_owned()
        }
        Hint::ContextIdRefused => "the agent refuses client-chosen context ids; a2a-recover \
            resends without one"
            .to_owned(),
        Hint::RefusedAsInvalid => {
            "the agent refused the request as invalid; nothing was created".to_owned()
        }
        Hint::FailedInternally => "the agent failed internally; the request may have been \
            processed, so recovery looks before it resends"
            .to_owned(),
        Hint::NotJsonRpc => "the agent answered with something that is not a valid A2A JSON-RPC \
            response; run again later, or check the agent"
            .to_owned(),
        Hint::TooLarge => "raise --max-response-size if this agent's answers are legitimately \
            that large"
            .to_owned(),
        Hint::SchemeMissing(_)
        | Hint::UserInfo
        | Hint::BadUrl
        | Hint::CredentialVar(_)
        | Hint::TokenCommand
        | Hint::NoCard
        | Hint::NotACard
        | Hint::InvalidCard
        | Hint::CardOverBound(_)
        | Hint::NoInterface { .. } => wire(hint),
    }
}

/// What to do instead of a decision that does not apply.
fn undecidable_hint(step: &str, state: AttemptState, resolution: Resolution) -> String {
    use AttemptState as S;
    use Resolution as R;
    match (resolution, state) {
        (R::Resend, S::Intent) => format!(
            "its send is not settled yet: `a2a-recover reconcile` looks for it first; resend is \
             for UNCERTAIN attempts (`a2a-recover inspect {step}`)"
        ),
        (R::Resend, _) => format!(
            "resend reuses the messageId of an UNCERTAIN attempt; for a new attempt use \
             `a2a-recover resolve {step} --as retry --reason \"…\"`"
        ),
        (R::Retry, S::Intent) => {
            "its send is not settled yet: `a2a-recover reconcile` looks for it and sends it"
                .to_owned()
        }
        _ => format!(
            "wait for it with `a2a-recover reconcile` (or `a2a-recover follow {step}`), or give \
             it up with `a2a-recover resolve {step} --as abandoned --reason \"…\"`"
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;

    fn undecidable(state: AttemptState, resolution: Resolution) -> JournalError {
        JournalError::Undecidable {
            step: "w/x".into(),
            attempt: 1,
            state,
            resolution,
            why: "",
        }
    }

    #[test]
    fn a_decision_that_does_not_apply_says_what_does() {
        let working = undecidable(AttemptState::Working, Resolution::Retry).hint_text();
        assert!(working.unwrap().contains("a2a-recover reconcile"));
        let refused = undecidable(AttemptState::Refused, Resolution::Resend).hint_text();
        assert!(refused.unwrap().contains("--as retry"));
    }

    #[test]
    fn a_journal_that_cannot_be_used_says_what_to_do() {
        let path = PathBuf::from("j.db");
        let newer = JournalError::NewerVersion {
            path: path.clone(),
            found: 9,
            known: 8,
        };
        assert!(
            newer
                .hint_text()
                .unwrap()
                .contains("written by a newer a2a-recover")
        );
        let busy = JournalError::Busy {
            path: path.clone(),
            waited: Duration::from_secs(5),
        };
        assert!(busy.hint_text().unwrap().contains("--timeout"));
        for refused in [
            JournalError::NotSqlite { path: path.clone() },
            JournalError::NotAJournal { path: path.clone() },
            JournalError::BrokenSymlink { path: path.clone() },
            JournalError::Corrupt {
                path,
                detail: String::new(),
            },
        ] {
            assert!(refused.hint_text().is_some(), "{refused}");
        }
    }
}
