//! The follow engine `follow`, `delegate --follow` and `reconcile --follow-for` share: one
//! step's stream followed with its events shown as they are journaled ([`follow_step`]), or many
//! at once ([`ShowMany`]).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Value, json};

use crate::a2a::{A2aClient, A2aError, redact_url};
use crate::clock::rfc3339;
use crate::commands::report::records;
use crate::commands::util::hints::{self, HintText as _};
use crate::commands::util::remedy::RemedyText as _;
use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::journal::{
    Applied, Attempt, AttemptId, AttemptState, Event, Journal, RemedyKind, StepName, StepRecord,
};
use crate::output::BrokenPipe;
use crate::recovery::follow::{
    FollowEnd, FollowOptions, FollowOutcome, FollowTarget, Progress, TargetError, endpoint_of,
    follow_attempt,
};
use crate::recovery::lookup::{self, LookHow, Looked};
use crate::recovery::remedy::Remedy;
use crate::recovery::send;
use crate::recovery::{Event as PassEvent, Sink};
use crate::sanitize::{LIST_LINES, inert, inert_lines};

/// How far the agent's clock may be behind ours when an `INTENT` is looked for by time
/// (the default of `--clock-skew` elsewhere).
const CLOCK_SKEW: Duration = Duration::from_mins(10);

/// What following one step came to.
#[derive(Debug)]
pub(crate) struct Followed {
    /// The exit code of `follow` (docs/exit-codes.md).
    pub(crate) code: u8,
    /// The final human line (for stdout).
    pub(crate) line: String,
    /// The JSON `summary` record of `follow`, without `exitCode`.
    pub(crate) record: Value,
}

/// Follows a step's latest attempt as `follow` does (an `INTENT` is looked for first), showing
/// its events as they are journaled: `event` records with `--format json`, a spinner or status
/// lines otherwise.
///
/// The caller prints `begin` before and the result ([`Followed`]) after; `delegate --follow`
/// calls it once the send is journaled.
pub(crate) async fn follow_step(
    ctx: &Context,
    journal: &Journal,
    client: &A2aClient,
    record: &StepRecord,
    opts: &FollowOptions,
) -> anyhow::Result<Followed> {
    // Boxed: the follower's future is large (16 KiB in the simulator's build).
    Box::pin(follow_one(ctx, journal, client, record, opts, true)).await
}

/// Follows several steps at once (`follow --workflow`), each as [`follow_step`] does, without
/// spinners (several would draw over each other): each state change is a line with its time.
/// Returns what each came to, in the order given.
pub(crate) async fn follow_steps(
    ctx: &Context,
    journal: &Journal,
    client: &A2aClient,
    records: &[StepRecord],
    opts: &FollowOptions,
) -> Vec<anyhow::Result<Followed>> {
    futures_util::future::join_all(
        records
            .iter()
            .map(|r| follow_one(ctx, journal, client, r, opts, false)),
    )
    .await
}

async fn follow_one(
    ctx: &Context,
    journal: &Journal,
    client: &A2aClient,
    record: &StepRecord,
    opts: &FollowOptions,
    spinner: bool,
) -> anyhow::Result<Followed> {
    let name = record.step.spec.name.clone();
    let attempt = record
        .latest()
        .cloned()
        .with_context(|| format!("step `{name}` has no attempt"))?;
    let last_event = journal.events_of_step(&name)?.last().map_or(0, |e| e.id);
    let mut show = Show {
        ctx,
        journal,
        name,
        events: EventTail::after(last_event),
        spinner: None,
        may_spin: spinner,
        attempt: None,
        state: attempt.state,
        reconnects: 0,
        artifacts: None,
        broken: None,
    };
    let step = Step {
        record,
        client,
        opts,
    };
    let result = step.follow(&mut show, attempt).await;
    show.finish_spinner();
    // What the agent asked (a Retry-After too long to wait for) holds for later passes too.
    crate::recovery::not_before::journal_fresh(client, journal)?;
    let (code, summary) = result?;
    show.flush_events(None)?;
    if let Some(e) = show.broken {
        return Err(e.into());
    }
    Ok(Followed {
        code,
        line: summary.line,
        record: summary.record,
    })
}

/// What the command says at the end.
struct Summary {
    /// The human line (stdout).
    line: String,
    /// The JSON `summary` record (without `exitCode`).
    record: Value,
}

/// The step being followed and the tools to follow it.
struct Step<'a> {
    record: &'a StepRecord,
    client: &'a A2aClient,
    opts: &'a FollowOptions,
}

impl Step<'_> {
    fn name(&self) -> &StepName {
        &self.record.step.spec.name
    }

    fn summary(&self, attempt: &Attempt, end: &str, line: String, extra: &Value) -> Summary {
        let name = self.name();
        let mut record = json!({
            "type": "summary",
            "command": "follow",
            "workflow": name.workflow,
            "step": name.step,
            "attempt": attempt.number,
            "state": attempt.state.as_str(),
            "taskId": attempt.task_id,
            "end": end,
            "outcomes": BTreeMap::from([(attempt.state.as_str(), 1)]),
        });
        if let (Value::Object(r), Value::Object(x)) = (&mut record, extra) {
            r.extend(x.clone());
        }
        Summary { line, record }
    }

    /// Decides from the latest attempt's state, then follows.
    async fn follow(&self, show: &mut Show<'_>, attempt: Attempt) -> anyhow::Result<(u8, Summary)> {
        let step = self.name().to_string();
        let task = || inert(attempt.task_id.as_deref().unwrap_or_default());
        match attempt.state {
            AttemptState::Replied => {
                let line =
                    format!("{step} was answered directly (REPLIED): there is no task to follow.");
                Ok((
                    exit::OK,
                    self.summary(&attempt, "replied", line, &json!({})),
                ))
            }
            s if s.is_terminal() && s != AttemptState::Refused => {
                let line = format!("{step} is already {s} (task {}).", task());
                Ok((
                    exit::OK,
                    self.summary(&attempt, "terminal", line, &json!({})),
                ))
            }
            AttemptState::Refused => {
                let line = format!(
                    "{step} was refused by its agent (REFUSED): {}. Nothing to follow.",
                    inert(attempt.error.as_deref().unwrap_or("no detail"))
                );
                Ok((
                    exit::NEEDS_HUMAN,
                    self.summary(&attempt, "refused", line, &json!({})),
                ))
            }
            AttemptState::Uncertain => {
                let line = format!(
                    "{step} is UNCERTAIN: its send's outcome is unknown and the agent cannot be \
                     searched conclusively. Decide with `a2a-recover resolve {step} --as \
                     resend|abandoned|done --reason \"…\"`."
                );
                Ok((
                    exit::NEEDS_HUMAN,
                    self.summary(&attempt, "uncertain", line, &json!({})),
                ))
            }
            AttemptState::Intent => self.look_first(show, attempt).await,
            _ => self.follow_task(show, &attempt).await,
        }
    }

    /// An `INTENT`: look for what its send created before following anything.
    async fn look_first(
        &self,
        show: &mut Show<'_>,
        attempt: Attempt,
    ) -> anyhow::Result<(u8, Summary)> {
        let step = self.name().to_string();
        if lookup::never_sent(&attempt) {
            let line = format!(
                "{step} was never sent (INTENT): there is nothing to follow; `a2a-recover \
                 reconcile` sends it."
            );
            return Ok((
                exit::WORK_REMAINS,
                self.summary(&attempt, "intent", line, &json!({"look": "never-sent"})),
            ));
        }
        let wire = send::journaled_wire(show.journal, &attempt)?;
        let endpoint = endpoint_of(
            self.name(),
            &attempt,
            self.record.step.spec.allow_cross_origin,
            wire,
        )
        .await
        .map_err(target_error)?;
        let how = LookHow {
            client: self.client,
            endpoint: &endpoint,
            clock: &*show.ctx.clock,
            clock_skew: CLOCK_SKEW,
            sweeps: None,
            no_id: "the found task has no id",
        };
        let found = lookup::journal_found(show.journal, attempt.id);
        match lookup::look_and_journal(show.journal, &attempt, how, found).await? {
            Looked::Found((now, view)) => {
                show.flush_events(None)?;
                show.status(&format!(
                    "found {step} on its agent as task {} ({}); following it.",
                    inert(&view.task_id),
                    now.state
                ));
                Box::pin(self.follow(show, now)).await
            }
            Looked::Absent => {
                let line = format!(
                    "{step} is INTENT: its agent holds no task for it, so nothing was created; \
                     `a2a-recover reconcile` resends it with the same messageId."
                );
                Ok((
                    exit::WORK_REMAINS,
                    self.summary(&attempt, "intent", line, &json!({"look": "absent"})),
                ))
            }
            Looked::InFlight(until) => {
                let line = format!(
                    "{step} is INTENT: its agent holds no task for it yet, but its last send may \
                     still be in flight until {}; run again after that.",
                    crate::clock::rfc3339(until)
                );
                Ok((
                    exit::WORK_REMAINS,
                    self.summary(&attempt, "intent", line, &json!({"look": "in-flight"})),
                ))
            }
            Looked::Uncertain(now, why) => {
                let reason = records::unprovable_words(&why);
                let line = format!(
                    "{step} is UNCERTAIN: {}; nothing was resent. Decide with `a2a-recover \
                     resolve {step} --as resend|abandoned|done --reason \"…\"`.",
                    inert(&reason)
                );
                Ok((
                    exit::NEEDS_HUMAN,
                    self.summary(&now, "uncertain", line, &json!({"look": "unprovable"})),
                ))
            }
            Looked::Failed(e) => {
                let summary = e.summary();
                let code = e.exit_code();
                show.report(e);
                let line = format!(
                    "{step} stays INTENT: its agent could not be searched for it; run again later."
                );
                Ok((
                    code,
                    self.summary(
                        &attempt,
                        "intent",
                        line,
                        &json!({"look": "error", "error": summary}),
                    ),
                ))
            }
        }
    }

    /// Follows a known task until it stops by itself, `--until` passes, or reconnects run out.
    async fn follow_task(
        &self,
        show: &mut Show<'_>,
        attempt: &Attempt,
    ) -> anyhow::Result<(u8, Summary)> {
        let wire = send::journaled_wire(show.journal, attempt)?;
        let target = FollowTarget::new(
            self.name(),
            attempt,
            self.record.step.spec.allow_cross_origin,
            wire,
        )
        .await
        .map_err(target_error)?;
        show.start(attempt);
        let journal = show.journal;
        let sink = Shown(RefCell::new(&mut *show));
        let outcome = follow_attempt(journal, self.client, &target, self.opts, &sink).await?;
        show.finish_spinner();
        Ok(self.ended(show, &outcome))
    }

    #[expect(
        clippy::too_many_lines,
        reason = "a table: one line and record per way a follow ends"
    )]
    fn ended(&self, show: &Show<'_>, o: &FollowOutcome) -> (u8, Summary) {
        let step = self.name().to_string();
        let a = &o.attempt;
        let task = inert(a.task_id.as_deref().unwrap_or_default());
        let artifacts = show.journal.artifact_count(a.id).unwrap_or(0);
        let counts = format!(
            "{artifacts} artifact{}, {} reconnect{}",
            plural(artifacts),
            o.reconnects,
            plural(o.reconnects as usize)
        );
        let last_error = o.last_error.as_deref().map(inert);
        let (end, line) = match &o.end {
            FollowEnd::Terminal(s) => (
                "terminal",
                format!("{step} is {s} (task {task}; {counts})."),
            ),
            FollowEnd::Interrupted(s) => {
                let question = a
                    .question_text()
                    .map(|q| inert_lines(&q, "  ", Some(LIST_LINES)))
                    .unwrap_or_default();
                let what = if *s == AttemptState::AuthRequired {
                    "the agent needs authentication"
                } else {
                    "the agent asks"
                };
                (
                    "interrupted",
                    format!(
                        "{step} is {s} (task {task}): {what}: \"{question}\". Answer with \
                         `a2a-recover reply {step} \"…\"`."
                    ),
                )
            }
            FollowEnd::Lost => (
                "lost",
                format!(
                    "{step} is LOST: its agent no longer knows task {task}. Decide with \
                     `a2a-recover resolve {step} --as done|retry|abandoned --reason \"…\"`."
                ),
            ),
            FollowEnd::Deadline => (
                "deadline",
                format!(
                    "{step} is still {} (task {task}; {counts}) at --until; run `a2a-recover \
                     follow {step}` again later.",
                    a.state
                ),
            ),
            FollowEnd::ReconnectsSpent => (
                "reconnects-spent",
                format!(
                    "{step} is still {} (task {task}; {counts}): {} reconnects in a row brought \
                     nothing{}; run again later.",
                    a.state,
                    self.opts.max_reconnects,
                    last_error
                        .as_ref()
                        .map(|e| format!(" (last: {e})"))
                        .unwrap_or_default()
                ),
            ),
            FollowEnd::HeldElsewhere(lease) => (
                "held-elsewhere",
                format!(
                    "{step} is being followed by another a2a-recover (pid {} on {}, lease until \
                     {}); run again later.",
                    lease.pid,
                    inert(&lease.host),
                    rfc3339(lease.expires_at)
                ),
            ),
            FollowEnd::TooLarge(error) => (
                "too-large",
                format!(
                    "{step} needs a human: {}. The task is kept {} as the agent reported it; \
                     fetch its result from the agent, then `a2a-recover resolve {step} --as \
                     done|abandoned --reason \"…\"`.",
                    inert(error),
                    a.state
                ),
            ),
            FollowEnd::InterfaceGone(reason) => {
                let remedy = Remedy {
                    kind: RemedyKind::InterfaceGone,
                    step: self.record.step.spec.name.clone(),
                    compensating: false,
                    text_refused: false,
                };
                (
                    "interface-gone",
                    format!(
                        "{step} needs a human: {}; it stays {} (task {task}). {}: `{}`.",
                        inert(reason),
                        a.state,
                        remedy.what(),
                        remedy.command_line()
                    ),
                )
            }
            FollowEnd::Skipped(reason) => (
                "skipped",
                format!(
                    "{step} is still {} (task {task}; {counts}): not waited for: {}; run again \
                     later.",
                    a.state,
                    inert(reason)
                ),
            ),
            FollowEnd::Failed { error, .. } => (
                "failed",
                format!(
                    "{step} stays {} (task {task}): could not read it: {}.",
                    a.state,
                    inert(error)
                ),
            ),
        };
        // A failure ended it (over the size cap, a refusal) or kept it from reading (reconnects
        // spent on errors): say what went wrong and what to do on stderr, as other commands do.
        if let (
            FollowEnd::Failed { .. } | FollowEnd::ReconnectsSpent | FollowEnd::Skipped(_),
            Some(error),
        ) = (&o.end, &last_error)
        {
            if matches!(o.end, FollowEnd::Failed { .. }) {
                show.status(&format!("{step}: could not read it: {error}"));
            }
            if let Some(hint) = &o.last_hint {
                show.status(&format!("hint: {}", inert(&hints::wire(hint))));
            }
        }
        let extra = json!({
            "reconnects": o.reconnects,
            "polls": o.polls,
            "events": o.events,
            "changes": o.changes,
            "artifacts": artifacts,
            "pendingQuestion": a.question_text(),
            "lastError": o.last_error,
            "hint": o.last_hint.as_ref().map(hints::wire),
            "agent": a.agent_url.as_deref().map(redact_url),
        });
        (o.exit_code(), self.summary(a, end, line, &extra))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Maps a target that cannot be followed to the command's error.
fn target_error(e: TargetError) -> anyhow::Error {
    match e {
        TargetError::Wire(e @ A2aError::Credential { .. }) => {
            let hint = e.hint_text().unwrap_or_default();
            CliError::usage(format!("the step's credential: {e}"))
                .hint(hint)
                .into()
        }
        other => anyhow::Error::new(other),
    }
}

/// Everything that prints while following.
struct Show<'a> {
    ctx: &'a Context,
    journal: &'a Journal,
    name: StepName,
    /// The step's events printed so far, and those read but not yet shown.
    events: EventTail,
    spinner: Option<ProgressBar>,
    /// Whether a terminal may get a spinner (not when several steps are followed at once).
    may_spin: bool,
    /// The attempt followed, once known.
    attempt: Option<AttemptId>,
    /// Its state as last journaled.
    state: AttemptState,
    /// Reconnects so far.
    reconnects: u32,
    /// The artifact count shown, and when it was read (re-read at most every 250 ms).
    artifacts: Option<(usize, std::time::Instant)>,
    /// A broken stdout seen inside the sink (reported at the end).
    broken: Option<BrokenPipe>,
}

impl Show<'_> {
    fn status(&self, msg: &str) {
        match &self.spinner {
            Some(bar) => bar.suspend(|| self.ctx.out.status(msg)),
            None => self.ctx.out.status(msg),
        }
    }

    fn report(&self, err: A2aError) {
        let err = anyhow::Error::new(err);
        let classified = crate::error::classify(&err);
        self.ctx
            .out
            .error_report(&crate::error::render(&err, &classified.hints));
    }

    /// Starts showing the follow of `attempt` (a spinner on a terminal).
    fn start(&mut self, attempt: &Attempt) {
        self.attempt = Some(attempt.id);
        self.state = attempt.state;
        if self.may_spin && self.ctx.out.progress_allowed() {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} [{elapsed}]") {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            self.spinner = Some(bar);
            self.update_spinner();
        }
    }

    fn finish_spinner(&mut self) {
        if let Some(bar) = self.spinner.take() {
            bar.finish_and_clear();
        }
    }

    fn update_spinner(&mut self) {
        let (Some(bar), Some(id)) = (&self.spinner, self.attempt) else {
            return;
        };
        // Counted by the journal (no artifact is read), a few times a second, not per event.
        let artifacts = match self.artifacts {
            Some((n, at)) if at.elapsed() < Duration::from_millis(250) => n,
            _ => {
                let n = self.journal.artifact_count(id).unwrap_or(0);
                self.artifacts = Some((n, std::time::Instant::now()));
                n
            }
        };
        bar.set_message(format!(
            "{} {} · {artifacts} artifact{} · {} reconnect{}",
            self.name,
            self.state,
            plural(artifacts),
            self.reconnects,
            plural(self.reconnects as usize)
        ));
    }

    /// Called by the engine after each commit.
    fn progress(&mut self, p: &Progress) {
        // Events are shown up to the one this observation appended: later ones of the same
        // group commit are shown with their own observation. A wait shows every failure.
        let upto = match p {
            Progress::Observed { event, .. } => *event,
            Progress::Waiting { .. } => Some(i64::MAX),
        };
        if let Some(upto) = upto
            && let Err(e) = self.flush_events(Some(upto))
        {
            self.broken.get_or_insert(e);
        }
        match p {
            Progress::Observed { applied, state, .. } => {
                let Applied::Changed { from, to } = *applied else {
                    return;
                };
                self.state = *state;
                if from != to {
                    // When it was seen, as `journalctl` and `kubectl get -w` readers expect;
                    // above the spinner on a terminal.
                    let at = self.ctx.display_clock.now().format("%Y-%m-%dT%H:%M:%SZ");
                    self.status(&format!("{at} {}: {from} → {to}", self.name));
                }
            }
            Progress::Waiting {
                reconnect,
                streak,
                delay,
                polling,
                cause,
            } => {
                self.reconnects = *reconnect;
                if self.spinner.is_none() {
                    let what = if *polling {
                        "polling GetTask"
                    } else {
                        "resubscribing"
                    };
                    self.status(&format!(
                        "{}: {}; {what} in {:.1}s (reconnect {reconnect}, {} in a row)",
                        self.name,
                        inert(cause),
                        delay.as_secs_f64(),
                        streak + 1
                    ));
                }
            }
        }
        self.update_spinner();
    }

    /// Prints the step's events journaled since the last call, up to the event id `upto`
    /// (all of them for `None`), as JSON Lines.
    fn flush_events(&mut self, upto: Option<i64>) -> Result<(), BrokenPipe> {
        if !self.ctx.out.is_json() {
            return Ok(());
        }
        self.events
            .print(self.ctx, self.journal, &self.name, upto.unwrap_or(i64::MAX))
    }
}

/// A step's journal events as they are printed: how far they were read, and those read from
/// the journal but not shown yet.
///
/// Observations committed together are shown one by one: the first reads the step's events
/// once, and the others print from what it read, so a long stream costs one read per commit,
/// not one per event.
#[derive(Debug, Default)]
struct EventTail {
    /// The highest id read so far (or present before the command started).
    read: i64,
    /// Read, not yet printed, oldest first.
    waiting: VecDeque<Event>,
}

impl EventTail {
    fn after(id: i64) -> Self {
        Self {
            read: id,
            waiting: VecDeque::new(),
        }
    }

    /// Prints the events with ids up to `upto`, reading the journal only when they are not
    /// already read (`i64::MAX`: read again and print all).
    fn print(
        &mut self,
        ctx: &Context,
        journal: &Journal,
        step: &StepName,
        upto: i64,
    ) -> Result<(), BrokenPipe> {
        if upto > self.read
            && let Ok(events) = journal.events_of_step(step)
        {
            let after = self.read;
            for e in events.into_iter().filter(|e| e.id > after) {
                self.read = e.id;
                self.waiting.push_back(e);
            }
        }
        while let Some(e) = self.waiting.front()
            && e.id <= upto
        {
            ctx.out.record(&records::event(e))?;
            self.waiting.pop_front();
        }
        Ok(())
    }
}

/// Shows what many follows at once journal (`reconcile --follow-for`): with `--format json`,
/// each journaled change as an `event` record, as `follow` prints them, once it is committed;
/// on a terminal, a bar counting the tasks that stopped.
pub(crate) struct ShowMany<'a> {
    ctx: &'a Context,
    journal: &'a Journal,
    /// The events printed and waiting, per step (JSON only).
    tails: RefCell<HashMap<String, EventTail>>,
    bar: Option<ProgressBar>,
    /// A broken stdout seen inside the sink (reported by [`ShowMany::finish`]).
    broken: RefCell<Option<BrokenPipe>>,
}

impl<'a> ShowMany<'a> {
    /// Prepares to show the follows of `targets` (only events journaled from now on).
    pub(crate) fn new(
        ctx: &'a Context,
        journal: &'a Journal,
        targets: &[FollowTarget],
    ) -> anyhow::Result<Self> {
        let mut tails = HashMap::new();
        if ctx.out.is_json() {
            for t in targets {
                let id = journal.events_of_step(&t.step)?.last().map_or(0, |e| e.id);
                tails.insert(t.step.to_string(), EventTail::after(id));
            }
        }
        let bar = ctx.out.progress_allowed().then(|| {
            let bar = ProgressBar::with_draw_target(
                Some(targets.len() as u64),
                ProgressDrawTarget::stderr(),
            );
            if let Ok(style) =
                ProgressStyle::with_template("{spinner} following {pos}/{len} stopped {wide_bar}")
            {
                bar.set_style(style);
            }
            bar
        });
        Ok(Self {
            ctx,
            journal,
            tails: RefCell::new(tails),
            bar,
            broken: RefCell::new(None),
        })
    }

    /// Prints the events committed for the target's step.
    fn observe(&self, target: &FollowTarget, p: &Progress) {
        let upto = match p {
            Progress::Observed { event, state, .. } => {
                let stops = state.is_finished()
                    || matches!(
                        state,
                        AttemptState::InputRequired | AttemptState::AuthRequired
                    );
                if stops && let Some(bar) = &self.bar {
                    bar.inc(1);
                }
                *event
            }
            Progress::Waiting { .. } => Some(i64::MAX),
        };
        if let Some(upto) = upto
            && let Err(e) = self.print(&target.step, upto)
        {
            self.broken.borrow_mut().get_or_insert(e);
        }
    }

    /// Prints the rest of every step's events, clears the bar, and reports a broken stdout.
    pub(crate) fn finish(self, targets: &[FollowTarget]) -> Result<(), BrokenPipe> {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        if let Some(e) = self.broken.take() {
            return Err(e);
        }
        for t in targets {
            self.print(&t.step, i64::MAX)?;
        }
        Ok(())
    }

    fn print(&self, step: &StepName, upto: i64) -> Result<(), BrokenPipe> {
        if !self.ctx.out.is_json() {
            return Ok(());
        }
        self.tails
            .borrow_mut()
            .entry(step.to_string())
            .or_default()
            .print(self.ctx, self.journal, step, upto)
    }
}

/// `follow_many`'s sink: the events committed for each followed step, printed as they come.
impl Sink for ShowMany<'_> {
    fn event(&self, event: PassEvent<'_>) -> anyhow::Result<()> {
        if let PassEvent::Followed { target, progress } = event {
            self.observe(target, progress);
        }
        Ok(())
    }
}

/// One follow's sink: its progress shown as it comes.
struct Shown<'s, 'c>(RefCell<&'s mut Show<'c>>);

impl Sink for Shown<'_, '_> {
    fn event(&self, event: PassEvent<'_>) -> anyhow::Result<()> {
        if let PassEvent::Followed { progress, .. } = event {
            self.0.borrow_mut().progress(progress);
        }
        Ok(())
    }
}
