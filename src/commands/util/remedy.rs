//! The words of a remedy: what a human must do about a row that needs one, and the command
//! lines that answer it, as `inspect --pending`, `inspect STEP`, the `attempt` record and the
//! reconcile pass print them. Recovery says which remedy ([`Remedy`]); the text is written here.

use crate::commands::util::hints;
use crate::journal::RemedyKind;
use crate::recovery::ActionRemedy;
use crate::recovery::remedy::Remedy;
use crate::sanitize::inert;

/// The words of a [`Remedy`].
pub(crate) trait RemedyText {
    /// Returns the one command that answers it (placeholders in `…`), ready to run once they
    /// are filled.
    fn command(&self) -> String;

    /// Returns the other commands that answer it instead of [`RemedyText::command`], if any.
    fn alternatives(&self) -> Vec<String>;

    /// Returns [`RemedyText::command`] with its alternatives, as a human reads it on one line.
    fn command_line(&self) -> String;

    /// Returns a short description (`answer the question`).
    fn what(&self) -> &'static str;
}

impl RemedyText for Remedy {
    fn command(&self) -> String {
        let s = &self.step;
        if self.finishes_compensation() {
            // `compensate` cancels the task that waits; `reply` refuses a compensating workflow.
            return format!("a2a-recover compensate {}", s.workflow);
        }
        match self.kind {
            RemedyKind::Answer if self.text_refused => {
                format!("a2a-recover reply {s} --data '{{\"FIELD\": \"VALUE\"}}'")
            }
            RemedyKind::Answer => format!("a2a-recover reply {s} \"…\""),
            RemedyKind::Authenticate => {
                format!("a2a-recover reply {s} \"…\"  (after granting the access it asks for)")
            }
            RemedyKind::Uncertain => {
                format!("a2a-recover resolve {s} --as resend|abandoned|done --reason \"…\"")
            }
            RemedyKind::Refused => {
                format!("a2a-recover resolve {s} --as retry|abandoned --reason \"…\"")
            }
            RemedyKind::Lost | RemedyKind::InterfaceGone => {
                format!("a2a-recover resolve {s} --as done|retry|abandoned --reason \"…\"")
            }
            RemedyKind::FailedForGood => format!("a2a-recover compensate {}", s.workflow),
            RemedyKind::Effect
            | RemedyKind::TooLarge
            | RemedyKind::ArtifactCollision
            | RemedyKind::BadTaskId => {
                format!("a2a-recover resolve {s} --as done|abandoned --reason \"…\"")
            }
            // Once the agent answers again, a pass sends it: nothing to decide but whether to
            // wait.
            RemedyKind::CardUnreachable if self.compensating => {
                format!("a2a-recover compensate {}", s.workflow)
            }
            RemedyKind::CardUnreachable => format!("a2a-recover reconcile {}", s.workflow),
            RemedyKind::AnswerTooLarge if self.compensating => {
                format!(
                    "a2a-recover compensate {} --max-response-size …",
                    s.workflow
                )
            }
            RemedyKind::AnswerTooLarge => {
                format!("a2a-recover reconcile {} --max-response-size …", s.workflow)
            }
        }
    }

    fn alternatives(&self) -> Vec<String> {
        let s = &self.step;
        match self.kind {
            RemedyKind::Answer | RemedyKind::Authenticate if self.compensating => {
                vec![format!(
                    "a2a-recover resolve {s} --as done|abandoned --reason \"…\""
                )]
            }
            // A text reply was refused: a structured answer, or settle the step by hand.
            RemedyKind::Answer if self.text_refused && !self.compensating => vec![format!(
                "a2a-recover resolve {s} --as done|abandoned --reason \"…\""
            )],
            RemedyKind::FailedForGood if !self.compensating => vec![format!(
                "a2a-recover resolve {s} --as retry|abandoned --reason \"…\""
            )],
            // The agent may live at a new card: registered there, a retry goes to it.
            RemedyKind::InterfaceGone => vec![format!(
                "a2a-recover agents add NEW-AGENT-URL, then a2a-recover resolve {s} \
                 --as retry --reason \"…\""
            )],
            // The agent is gone for good, or the work was done another way.
            RemedyKind::CardUnreachable | RemedyKind::AnswerTooLarge => vec![format!(
                "a2a-recover resolve {s} --as done|abandoned --reason \"…\""
            )],
            _ => Vec::new(),
        }
    }

    fn command_line(&self) -> String {
        let mut line = self.command();
        for alt in self.alternatives() {
            line.push_str("  (or: ");
            line.push_str(&alt);
            line.push(')');
        }
        line
    }

    fn what(&self) -> &'static str {
        if self.compensating {
            match self.kind {
                RemedyKind::Answer | RemedyKind::Authenticate => {
                    return "the task waits for an answer, but its workflow is being compensated";
                }
                RemedyKind::FailedForGood => {
                    return "the step failed for good and its workflow is being compensated";
                }
                _ => {}
            }
        }
        match self.kind {
            RemedyKind::Answer if self.text_refused => {
                "a text reply was refused: answer with data shaped like the question"
            }
            RemedyKind::Answer => "answer the agent's question",
            RemedyKind::Authenticate => "the agent needs authentication",
            RemedyKind::Uncertain => "the send's outcome is unknown; decide whether to resend",
            RemedyKind::Refused => "the agent refused the request",
            RemedyKind::Lost => "the agent forgot the task",
            RemedyKind::FailedForGood => "the step failed for good",
            RemedyKind::Effect => "the effect is not verified",
            RemedyKind::InterfaceGone => {
                "the interface its task was sent to left the agent's card, which offers nothing \
                 a2a-recover speaks (the task may still run: ask the agent's operator where to \
                 read it; a later pass reads it if the card offers it again, but a human decides)"
            }
            RemedyKind::TooLarge => {
                "its artifacts went past a size limit and are not all journaled (the work \
                 probably happened: fetch the result from the agent, then resolve)"
            }
            RemedyKind::CardUnreachable => {
                "never sent: the agent's card has been unreachable for longer than \
                 --card-patience (bring the agent back and the next pass sends it, or resolve)"
            }
            RemedyKind::AnswerTooLarge => {
                "the agent answered its send, or the look for it, with more than \
                 --max-response-size (nothing is resent: raise the limit if the agent's answers \
                 are this large, and the next pass looks for what the send created; or resolve)"
            }
            RemedyKind::BadTaskId => {
                "the agent answered its send with a task id no URL can hold: it received the \
                 send, and a2a-recover can neither read that task nor send it again (ask the \
                 agent's operator about the work, then resolve)"
            }
            RemedyKind::ArtifactCollision => {
                "its artifacts collide, so no verify or compensate recipe ran (compare them with \
                 `a2a-recover inspect STEP`, undo the effect by hand if it exists, then resolve)"
            }
        }
    }
}

/// What a human must do about an action's attempt, in words: what a reconcile pass's `remedy`
/// object and its human line say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Words {
    /// What is wrong, with the question or the reason (inert).
    pub(crate) what: String,
    /// The command that answers it, if there is one.
    pub(crate) command: Option<String>,
    /// Other commands that answer it instead.
    pub(crate) alternatives: Vec<String>,
    /// For people: what is wrong in a few words and the remote text it quotes, raw (a reporter
    /// makes it inert, line by line), and whether that text is the agent's question.
    pub(crate) told: Option<(&'static str, String, bool)>,
}

/// Returns the words of an action's remedy.
pub(crate) fn words(r: &ActionRemedy) -> Words {
    match r {
        ActionRemedy::Row { remedy, told } => {
            let what = remedy.what();
            Words {
                what: match told {
                    Some(t) if t.question => format!("{what}: \"{}\"", inert(&t.text)),
                    Some(t) => format!("{what}: {}", inert(&t.text)),
                    None => what.to_owned(),
                },
                command: Some(remedy.command()),
                alternatives: remedy.alternatives(),
                told: told.as_ref().map(|t| (what, t.text.clone(), t.question)),
            }
        }
        // What is wrong, then what to do: there is no command that answers it.
        ActionRemedy::Credential { summary, hint } => Words {
            what: match hint {
                Some(hint) => format!("{summary}; {}", hints::wire(hint)),
                None => summary.clone(),
            },
            command: None,
            alternatives: Vec::new(),
            told: None,
        },
    }
}
