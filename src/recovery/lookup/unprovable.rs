//! Why a look cannot tell whether a send created a task, as a value: the journal keeps
//! [`Unprovable::line`] as the attempt's reason (`mark_uncertain`, read by `inspect`), and the
//! command layer writes its own words for an action's `reason`.

use super::LookMode;
use crate::a2a::ProtocolBinding;

/// Why a look cannot tell: the attempt goes `UNCERTAIN` and nothing is resent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unprovable {
    /// This many listed tasks (in our context, or candidates of a look by time) could not be
    /// read.
    Unreadable(LookMode, usize),
    /// This many listed tasks have an empty or truncated history even read whole: one may be
    /// ours.
    Undecided(LookMode, usize),
    /// The agent's `ListTasks` did not end within this many pages.
    TooManyPages(usize),
    /// The agent's `ListTasks` did not end within this many bytes (`--max-look-size`).
    TooManyBytes(u64),
    /// The agent's `ListTasks` paging repeats itself.
    PagingRepeats,
    /// The agent cannot list its tasks: the error's summary (one inert line).
    CannotList(String),
    /// The task with this id holds our message but could not be read again.
    LostAgain(String),
    /// The task found could not be kept.
    NotKept,
    /// The agent's binding has no `ListTasks`: the send cannot be looked up.
    Unlistable(ProtocolBinding),
    /// The agent answered the send with more than `--max-response-size`, and no task is found:
    /// it may have answered with a message.
    AnsweredTooLarge,
}

impl Unprovable {
    /// The line the journal keeps as the attempt's reason (`inspect` reads it).
    pub fn line(&self) -> String {
        match self {
            Self::Unreadable(LookMode::ByContext, n) => {
                format!("{n} task(s) in our context could not be read")
            }
            Self::Unreadable(LookMode::ByTime, n) => {
                format!("{n} candidate task(s) could not be read")
            }
            Self::Undecided(LookMode::ByContext, n) => format!(
                "{n} task(s) in our context have an empty or truncated history even read whole, \
                 so one may be ours"
            ),
            Self::Undecided(LookMode::ByTime, n) => format!(
                "{n} candidate task(s) have a truncated history, so our message may be among \
                 them"
            ),
            Self::TooManyPages(n) => format!("the agent's ListTasks did not end within {n} pages"),
            Self::TooManyBytes(n) => {
                format!("the agent's ListTasks did not end within {n} bytes (--max-look-size)")
            }
            Self::PagingRepeats => "the agent's ListTasks paging repeats itself".to_owned(),
            Self::CannotList(summary) => format!("the agent cannot list its tasks: {summary}"),
            Self::LostAgain(id) => {
                format!("task {id} holds our message but could not be read again")
            }
            Self::NotKept => "the task found could not be kept".to_owned(),
            Self::Unlistable(binding) => format!(
                "the agent speaks A2A {} over {}, which has no ListTasks: whether the send \
                 created a task cannot be looked up, so nothing is resent",
                binding.version().as_str(),
                binding.wire().card_name()
            ),
            Self::AnsweredTooLarge => "the agent answered the send with more than \
                                       --max-response-size, and a look finds no task for it: it \
                                       may have answered with a message, so nothing is resent"
                .to_owned(),
        }
    }
}
