//! What a compensation pass tells: [`Said`], one thing it did about its workflow, a step or an
//! attempt, and [`Did`], what that was, as typed facts. The command layer's reporters
//! (`commands/report/compensated.rs`) give each its `action` record and its sentence.

use chrono::{DateTime, Utc};

use crate::a2a::A2aError;
use crate::journal::{AttemptState, EffectState, StepName, WorkflowState};
use crate::placeholders::Collision;
use crate::recovery::send::Sent;
use crate::recovery::verify::CommandRun;

/// One thing a compensation pass did, or in a dry run would do, about its workflow, a step or
/// an attempt.
#[derive(Debug, Clone)]
pub struct Said<'a> {
    /// The workflow.
    pub workflow: &'a str,
    /// The step, if the action is about one.
    pub step: Option<&'a StepName>,
    /// The attempt number, if the action is about one.
    pub attempt: Option<u32>,
    /// What it did.
    pub did: Did<'a>,
}

/// What a compensation pass did (or in a dry run would do).
#[derive(Debug, Clone)]
pub enum Did<'a> {
    /// The workflow has nothing to undo: it stays `ACTIVE`.
    NothingToUndo {
        /// A dry run.
        dry_run: bool,
    },
    /// The workflow is `COMPENSATED` already.
    AlreadyCompensated {
        /// A dry run.
        dry_run: bool,
    },
    /// A dry run would mark the workflow `COMPENSATING`.
    WouldMark,
    /// The workflow was marked `COMPENSATING`.
    Marked {
        /// Its state before.
        from: WorkflowState,
    },
    /// Every effect is undone: the workflow is `COMPENSATED`.
    WorkflowCompensated,
    /// The workflow stays `COMPENSATING`, with this exit code (3: work in flight, 4: a human
    /// must act).
    StaysCompensating {
        /// The pass's exit code.
        exit_code: u8,
    },
    /// An error stopped the work on one attempt.
    Failed {
        /// The error.
        error: &'a anyhow::Error,
    },
    /// An `INTENT` attempt was never sent; it will not be.
    NeverSent,
    /// A look found nothing yet, but the attempt's send may be in flight until then.
    LookInFlight {
        /// When it no longer can be.
        until: DateTime<Utc>,
    },
    /// The attempt's send was answered with a task id no request can name: a human decides.
    BadTaskId {
        /// The attempt's journaled error.
        error: Option<&'a str>,
    },
    /// The look for an `INTENT` attempt failed.
    LookFailed {
        /// The attempt's journaled error.
        error: Option<&'a str>,
    },
    /// A cancel asked by an earlier run found the task finished.
    CancelAskedBefore {
        /// The task.
        task: &'a str,
        /// Its state now.
        state: AttemptState,
    },
    /// The task cannot be cancelled: its interface left the agent's card, which offers
    /// nothing a2a-recover speaks.
    CancelGone {
        /// The task.
        task: &'a str,
    },
    /// A cancel was sent and the task read again.
    Cancelled {
        /// The task.
        task: &'a str,
        /// What the cancel was answered with.
        answer: CancelAnswer<'a>,
        /// The task's state read afterwards; `None` when it could not be read.
        state: Option<AttemptState>,
    },
    /// A dry run would cancel this running task.
    WouldCancel {
        /// The task.
        task: Option<&'a str>,
        /// The attempt's state.
        state: AttemptState,
    },
    /// A step still runs (or could not be read): its effect is decided on the next run.
    StillRunning,
    /// A step waits for a newer, undecided one to be undone first.
    WaitsForNewer {
        /// The newer step.
        newer: &'a StepName,
    },
    /// An operator settled a step whose effect could not be undone or read.
    Resolved {
        /// The effect's state.
        effect: Option<EffectState>,
        /// The operator's reason.
        reason: Option<&'a str>,
    },
    /// The effect needs nothing (compensated or absent already).
    Skipped {
        /// The effect's state.
        effect: Option<EffectState>,
    },
    /// An effect state was journaled.
    Effect {
        /// Whether a verification or a compensation decided it.
        by: EffectBy,
        /// The state.
        state: EffectState,
        /// Its journaled detail (the verification's result, or why).
        detail: &'a str,
    },
    /// The effect is still there after its compensation finished: compensated again.
    StillThere {
        /// The verification's result.
        detail: &'a str,
    },
    /// Two artifacts collide on what a verify or compensate recipe reads: left `unknown`,
    /// nothing run.
    Collided {
        /// The journaled error.
        why: &'a str,
        /// The colliding artifacts.
        artifacts: &'a [String],
    },
    /// What a dry run would do to a step's effect.
    WouldCompensate {
        /// The effect's state.
        effect: Option<EffectState>,
        /// What would be done.
        then: DryMove<'a>,
    },
    /// A journaled compensation is resumed.
    Resuming {
        /// The compensation step.
        compensation: &'a StepName,
        /// Its attempt.
        attempt: u32,
        /// The attempt's state.
        state: AttemptState,
    },
    /// A compensation command could not start; nothing ran.
    CommandNotRun {
        /// The compensation step.
        compensation: &'a StepName,
        /// How it ended.
        run: &'a CommandRun,
    },
    /// A compensation command ran.
    CommandRan {
        /// The compensation step.
        compensation: &'a StepName,
        /// How it ended.
        run: &'a CommandRun,
    },
    /// A compensation task still running in a `COMPENSATED` workflow was read again.
    LeftoverRead {
        /// The compensation step.
        compensation: &'a StepName,
        /// The task.
        task: &'a str,
        /// Its state now.
        state: AttemptState,
    },
    /// A compensation message went through the send path.
    Sent {
        /// The compensation step.
        compensation: &'a StepName,
        /// What the send did.
        sent: &'a Sent,
    },
}

/// What decided an effect's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EffectBy {
    /// A verification.
    Verify,
    /// A compensation (or the attempt to start one).
    Compensate,
}

/// What a cancel was answered with.
#[derive(Debug, Clone, Copy)]
pub enum CancelAnswer<'a> {
    /// A task.
    Task,
    /// An error.
    Error(&'a A2aError),
}

/// What a dry run would do to an effect.
#[derive(Debug, Clone)]
pub enum DryMove<'a> {
    /// Nothing: compensated or absent.
    Skip,
    /// Leave it `unknown` and run nothing: artifacts collide on what `recipe` reads.
    LeaveUnknown {
        /// The recipe (`verify command`, `compensation text`, …).
        recipe: &'static str,
        /// The collision.
        collision: &'a Collision,
    },
    /// Verify it, then undo it this way if it exists or is unknown.
    Verify(Undo),
    /// Resume its journaled compensation.
    Resume,
    /// Verify it again, then undo it this way if it still exists.
    Recheck(Undo),
}

/// How a step's compensation would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undo {
    /// Its compensation command.
    Command,
    /// A message to this agent (its card URL), if known.
    Message(Option<String>),
    /// A message to an agent with this skill.
    Skill(String),
    /// The recipe cannot be read.
    Unreadable,
}
