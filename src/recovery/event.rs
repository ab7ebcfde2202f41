//! What a recovery pass tells as it goes: one event type, handed to one sink per pass.
//!
//! Every pass — `reconcile` and its dry run, a send or resend (`send.rs`), a follow, a
//! compensation — reports through [`Event`]s given to the [`Sink`] its caller passes in. The
//! command layer's reporters (`commands/report/`) turn each event into a line for people or a
//! record for programs and fold the pass's exit code from them; nothing here prints.
//!
//! A new thing a pass does gets a variant here (or an `action`/`outcome` word in an existing
//! one, named in `commands/report/vocabulary.rs`), then an arm in each reporter.
//! What a compensation pass does is a [`Did`] (`event/said.rs`), given its record and its
//! sentence in `commands/report/compensated.rs`.

mod said;

use crate::a2a::{Hint, Unreached};
use crate::journal::Attempt;
use crate::recovery::detail::Detail;
use crate::recovery::follow::{FollowTarget, Progress};
use crate::recovery::remedy::Remedy;

pub use self::said::{CancelAnswer, Did, DryMove, EffectBy, Said, Undo};

/// One thing a pass did, or in a dry run would do, about one attempt: an `action` record.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// The workflow.
    pub workflow: String,
    /// The step (the part after `/`).
    pub step: String,
    /// The attempt number.
    pub attempt: u32,
    /// What was done: `send`, `look`, `read`, `redelegate`, `reply`, `resend`, `retry`, ….
    pub action: &'static str,
    /// How it came out: an attempt state, or a word such as `busy`, `read-failed`.
    pub outcome: String,
    /// Details (task id, error, reason, question): the command layer writes them.
    pub detail: Detail,
    /// What it leaves to do: the command layer folds the pass's exit code from it.
    pub left: Left,
    /// For a human: what is wrong and the command that answers it.
    pub remedy: Option<ActionRemedy>,
    /// Why the attempt's agent could not be reached, when that is why the action failed, with
    /// the agent (its card URL): a reporter groups such failures by agent.
    pub unreached: Option<(String, Unreached)>,
}

/// What an action leaves to do, worst last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// Nothing: the attempt is done, or nothing more is asked of it.
    Nothing,
    /// Work a later pass does: a task still running, an agent unreachable this pass.
    Work,
    /// A human must act: a question, a refusal, a step failed for good, ….
    Human,
    /// The attempt cannot be tried as given: its credential variable is unset, or its URL bad.
    Usage,
    /// What the agent gave cannot be used at all (an invalid card).
    Failure,
}

impl Left {
    /// The worse of two: a human over work over nothing; what cannot be tried over all (of two
    /// such, the first).
    #[must_use]
    pub fn worse(self, other: Self) -> Self {
        fn rank(l: Left) -> u8 {
            match l {
                Left::Nothing => 0,
                Left::Work => 1,
                Left::Human => 2,
                Left::Usage | Left::Failure => 3,
            }
        }
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }
}

impl Action {
    /// What the operator can do about the wire error the action met, if anything.
    pub fn hint(&self) -> Option<&Hint> {
        self.detail.hint.as_ref().and_then(Option::as_ref)
    }
}

/// What a human must do about an action's attempt, as a value: the command layer
/// (`commands/util/remedy.rs`) writes its words and the commands that answer it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionRemedy {
    /// The attempt's row needs a human ([`Remedy::of`]).
    Row {
        /// Which remedy.
        remedy: Remedy,
        /// The remote text it quotes (the question, or the reason), if any.
        told: Option<Told>,
    },
    /// A credential variable the attempt's agent needs is missing: no command answers it.
    Credential {
        /// The error, on one inert line.
        summary: String,
        /// What to do about it (the command layer writes its words).
        hint: Option<Hint>,
    },
}

/// The remote text a remedy quotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Told {
    /// The text, as the agent (or the journal) has it: a reporter makes it inert.
    pub text: String,
    /// Whether the text is the agent's question (shown in quotes).
    pub question: bool,
}

/// What a pass tells its sink.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A pass knows how many items it will visit (told only to a sink that
    /// [counts them](Sink::counts_items)).
    Started {
        /// The items.
        items: usize,
    },
    /// What a reconcile pass (or its dry run) did about one attempt.
    Acted(&'a Action),
    /// One of the pass's items is finished (all its actions were told).
    ItemDone,
    /// A step of a send worth telling before its outcome: `look`/`absent`,
    /// `look`/`in-flight`, `look`/`resend-approved`, `send`/`unsearchable`,
    /// `send`/`context-refused`.
    Sending {
        /// The attempt being sent.
        attempt: &'a Attempt,
        /// `look` or `send`.
        action: &'static str,
        /// What it came to.
        outcome: &'static str,
        /// Details (none: [`Detail::default`]).
        detail: &'a Detail,
    },
    /// What a compensation pass did about its workflow, a step or an attempt.
    Compensated(&'a Said<'a>),
    /// A follow journaled an observation, or waits before it reconnects.
    Followed {
        /// The attempt followed.
        target: &'a FollowTarget,
        /// What happened.
        progress: &'a Progress,
    },
    /// An error stopped the work on one attempt; the pass goes on.
    Problem(&'a anyhow::Error),
}

/// Where a pass tells what it does. The pass runs its items concurrently on one thread, so a
/// sink takes `&self` (a reporter keeps its state in cells).
pub trait Sink {
    /// Takes one event. An error stops the pass: the reader went away
    /// ([`crate::recovery::error::Stopped`]), or the reporter's own journal work failed.
    ///
    /// # Errors
    ///
    /// The pass must stop.
    fn event(&self, event: Event<'_>) -> anyhow::Result<()>;

    /// Whether it wants to be told how many items a pass will visit ([`Event::Started`]):
    /// counting them costs the pass a read of every row it covers before its first request.
    fn counts_items(&self) -> bool {
        false
    }
}

/// A sink that hears nothing, for passes run where nobody reads their events.
#[derive(Debug, Default, Clone, Copy)]
pub struct Unheard;

impl Sink for Unheard {
    fn event(&self, _: Event<'_>) -> anyhow::Result<()> {
        Ok(())
    }
}

/// A sink that hands each follow's progress to a function, for callers that want only that
/// (benchmarks, tests).
pub struct OnFollow<F>(pub F);

impl<F: Fn(&FollowTarget, &Progress)> Sink for OnFollow<F> {
    fn event(&self, event: Event<'_>) -> anyhow::Result<()> {
        if let Event::Followed { target, progress } = event {
            (self.0)(target, progress);
        }
        Ok(())
    }
}
