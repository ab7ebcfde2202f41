//! `reconcile`: one recovery pass over every unfinished attempt.
//!
//! Order: validate the flags; take the pass lock (`JOURNAL.lock`, non-blocking: a held lock
//! exits 3 naming its owner and touching nothing); open the journal; refuse unknown workflows
//! (exit 2); run the pass (`recovery::Pass`), printing `action` records (JSON) or the lines a
//! human must act on, then a `summary`. A `--dry-run` takes no lock and opens the journal
//! read-only: it reads agents but writes and sends nothing.
//!
//! `--follow-for DURATION` (the pass's second bucket, "reattach"): after the pass, every attempt
//! still running is followed, all at once in this process (`follow_many`, up to
//! `FOLLOW_STREAMS` streams; one group commit for all of them), until each stops by itself or
//! the duration passes, printing each journaled change as an `event` record (JSON). Then a
//! second ordinary pass runs, under the same lock: rather than a second copy of the decisions,
//! it is the pass itself that verifies a COMPLETED step's effect, re-delegates a FAILED one,
//! reports a question, and reads a task still running once more (exit 3). Its summary is the
//! command's, with a `followed` object; anything the first pass found for a human keeps exit
//! 4. `--dry-run --follow-for` is a usage error: following journals every event.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use serde_json::json;

use crate::a2a::{A2aClient, AgentLimits, Limits};
use crate::commands::report::human::{Unreachable, remedy_lines};
use crate::commands::report::records::{self, ActionRecord};
use crate::commands::report::vocabulary::{Kind, human};
use crate::commands::report::{self};
use crate::commands::util::hints;
use crate::context::Context;
use crate::duration::parse_duration;
use crate::error::CliError;
use crate::exit;
use crate::journal::{Journal, check_name_part};
use crate::recovery::follow::{FollowEnd, FollowOptions, FollowTarget, follow_many};
use crate::recovery::lock::{LockError, PassLock};
use crate::recovery::{Action, Event, Left, Pass, PassConfig, Sink, Summary, Then, WorkflowLocks};
use crate::sanitize::inert;

use super::util::flags::parse_rate;
use super::util::follow::ShowMany;

mod metrics;

/// Runs one recovery pass over every unfinished attempt.
///
/// Looks before it resends, re-reads every non-terminal task, saves pending questions, records
/// outcomes and re-delegates failed steps within their budget. Never compensates on its own.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover reconcile                  # one pass over every workflow
  a2a-recover reconcile trip-42 --dry-run  # what it would do, with which agent
  a2a-recover reconcile --follow-for 2m  # follow running tasks, then decide
  a2a-recover -q reconcile               # cron: silent unless a human must act")]
pub struct ReconcileArgs {
    /// Only these workflows (default: all).
    #[arg(value_name = "WORKFLOW")]
    pub workflows: Vec<String>,
    /// Attempts in flight at once, over all agents.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub concurrency: u32,
    /// Requests in flight at once to each agent (interface URL + credential), unless the
    /// registry sets the agent's own.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub agent_concurrency: u32,
    /// Requests per second to each agent, unless the registry sets the agent's own [default:
    /// no limit].
    #[arg(long, value_name = "PER_SECOND", value_parser = parse_rate)]
    pub agent_rate: Option<f64>,
    /// Consecutive timeouts or connection failures after which an agent's remaining attempts
    /// are skipped for this pass (exit 3).
    #[arg(long, value_name = "K", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub agent_failures: u32,
    /// Reattaches to running tasks and follows them for up to this long.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub follow_for: Option<Duration>,
    /// Ends the pass cleanly after this long (exit 3).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub deadline: Duration,
    /// Prints the actions it would take and changes nothing, locally or remotely.
    #[arg(long)]
    pub dry_run: bool,
    /// How far the agent's clock may be behind ours when searching by time.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub clock_skew: Duration,
    /// Timeout for verification commands.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub command_timeout: Duration,
    /// Which items needing a human make the pass exit 4: `all` (every pass), or `new` (only
    /// those no earlier `--alert new` pass reported; old ones exit 3): a cron job pages once.
    #[arg(long, value_enum, value_name = "WHICH", default_value_t = AlertMode::All)]
    pub alert: AlertMode,
    /// With `--alert new`: reports an old item again once it was reported this long ago.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub realert: Option<Duration>,
    /// Writes a Prometheus textfile (for node_exporter) here after the pass, atomically.
    #[arg(long, value_name = "PATH")]
    pub metrics_file: Option<std::path::PathBuf>,
    /// How long an Agent Card that cannot be read or reached is waited out (from the attempt's
    /// first card failure) before the attempt needs a human.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_duration)]
    pub card_patience: Duration,
}

/// Which items needing a human make a pass exit 4 (`--alert`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AlertMode {
    /// Every item, on every pass.
    All,
    /// Only items no earlier `--alert new` pass reported.
    New,
}

/// The per-agent limits of a pass: the flags, overridden per agent by the registry.
fn limits(journal: &Journal, args: &ReconcileArgs) -> anyhow::Result<Limits> {
    Ok(Limits {
        default: AgentLimits {
            concurrency: args.agent_concurrency as usize,
            rate: args.agent_rate,
        },
        overrides: journal.agent_limits()?,
        failures: Some(args.agent_failures),
        not_before: journal.not_before_limits()?,
    })
}

fn validate(args: &ReconcileArgs) -> Result<(), CliError> {
    if args.dry_run && args.follow_for.is_some() {
        return Err(
            CliError::usage("--dry-run cannot be combined with --follow-for").hint(
                "a dry run changes nothing, and following journals every event: preview with \
                 `a2a-recover reconcile --dry-run`, then follow with `a2a-recover reconcile \
                 --follow-for DURATION`",
            ),
        );
    }
    if args.realert.is_some() && args.alert != AlertMode::New {
        return Err(CliError::usage("--realert needs --alert new")
            .hint("write `--alert new --realert 4h`: old items are reported again after 4h"));
    }
    for w in &args.workflows {
        if let Err(reason) = check_name_part(w) {
            return Err(
                CliError::usage(format!("bad workflow name `{}`: {reason}", inert(w)))
                    .hint("give workflow names, e.g. `trip-42`, or none for all"),
            );
        }
    }
    Ok(())
}

fn unknown_workflow(name: &str) -> CliError {
    CliError::usage(format!("unknown workflow `{}`", inert(name)))
        .hint("list the journaled workflows with `a2a-recover inspect`")
}

/// Runs `reconcile`, then writes `--metrics-file` (also after an error: its exit code).
pub(crate) async fn run(ctx: &Context, args: &ReconcileArgs) -> anyhow::Result<u8> {
    let started = std::time::Instant::now();
    let alerts = Alerts::default();
    let result = pass(ctx, args, &alerts).await;
    if let Some(path) = &args.metrics_file {
        let code = match &result {
            Ok(code) => *code,
            Err(e) => crate::error::classify(e).code,
        };
        let text = metrics::render(ctx, code, started.elapsed());
        metrics::write_atomically(path, &text)
            .with_context(|| format!("failed to write the metrics file `{}`", path.display()))?;
    }
    result
}

/// The needs-a-human items of a pass as `--alert new` sees them.
#[derive(Debug, Default)]
struct Alerts {
    items: RefCell<Vec<crate::journal::AlertItem>>,
}

/// One pass, with its alerts.
async fn pass(ctx: &Context, args: &ReconcileArgs, alerts: &Alerts) -> anyhow::Result<u8> {
    validate(args)?;
    ctx.require_journal()?;
    let (journal, _lock) = ctx
        .open_journal_for_pass(args.dry_run, crate::recovery::lock::Scope::Workflows)
        .await?;
    for w in &args.workflows {
        if !journal.workflow_exists(w)? {
            return Err(unknown_workflow(w).into());
        }
    }
    // Each workflow's own lock: a pass on another workflow (a `compensate`, a `reconcile W`)
    // runs beside this one; a workflow whose lock is held is skipped (exit 3), the rest done.
    // Without --wait each lock is taken as the pass reaches its workflow, so passes started at
    // once (on several hosts) share the workflows; with --wait every lock is waited for first.
    let lazy = (!args.dry_run && ctx.global.wait.is_zero()).then(|| LazyLocks::new(ctx, &journal));
    let (workflows, _workflow_locks, held) = if args.dry_run || lazy.is_some() {
        (args.workflows.clone(), Vec::new(), Vec::new())
    } else {
        let names = if args.workflows.is_empty() {
            journal.open_workflow_names()?
        } else {
            args.workflows.clone()
        };
        let (locks, held) = ctx.lock_workflows(&journal, &names).await?;
        let held_names: HashSet<&String> = held.iter().map(|(w, _)| w).collect();
        let locked: Vec<String> = names
            .iter()
            .filter(|w| !held_names.contains(w))
            .cloned()
            .collect();
        (locked, locks, held)
    };
    for (w, owner) in &held {
        ctx.out.warn(&held_line(w, owner));
    }
    if !held.is_empty() && workflows.is_empty() {
        ctx.out.begin("reconcile")?;
        let held = PassResult {
            summary: Summary {
                held: held.len(),
                ..Summary::default()
            },
            code: exit::WORK_REMAINS,
            human: exit::OK,
        };
        return finish(ctx, args, &journal, alerts, &held, None);
    }
    let client = A2aClient::with_limits(ctx.client_config(), limits(&journal, args)?)
        .context("failed to set up the HTTP client")?;
    ctx.out.begin("reconcile")?;
    let cfg = PassConfig {
        workflows,
        concurrency: args.concurrency as usize,
        deadline: args.deadline,
        dry_run: args.dry_run,
        clock_skew: args.clock_skew,
        card_patience: args.card_patience,
        lease_ttl: ctx.send_lease_ttl,
        command_timeout: args.command_timeout,
    };
    // The human lines printed so far (a second pass repeats what still stands).
    let shown = RefCell::new(HashSet::new());
    let locks = lazy.as_ref().map(|l| l as &dyn WorkflowLocks);
    let mut first = run_pass(ctx, &journal, &client, &cfg, locks, &shown, args, alerts).await?;
    let held_reached = lazy.as_ref().is_some_and(LazyLocks::finish);
    if !held.is_empty() || held_reached {
        first.summary.held = held.len() + lazy.as_ref().map_or(0, |l| l.held.get());
        first.code = exit::worst(first.code, exit::WORK_REMAINS);
        first.human = exit::worst(first.human, exit::WORK_REMAINS);
    }
    let Some(follow_for) = args.follow_for else {
        return finish(ctx, args, &journal, alerts, &first, None);
    };
    // What follows covers the workflows this pass holds, and only those.
    let cfg = match &lazy {
        Some(l) => PassConfig {
            workflows: l.mine.borrow().clone(),
            ..cfg
        },
        None => cfg,
    };
    let pass = Pass::new(&journal, &client, ctx.clock.as_ref(), cfg.clone());
    let targets = if cfg.workflows.is_empty() && lazy.is_some() {
        Vec::new()
    } else {
        pass.running_targets().await?
    };
    if targets.is_empty() {
        let followed = Followed::default();
        return finish(ctx, args, &journal, alerts, &first, Some(&followed));
    }
    let followed = follow_running(ctx, &journal, &client, targets, args, follow_for).await?;
    // A second ordinary pass decides from what following recorded: a COMPLETED step with an
    // effect is verified, a FAILED one re-delegated, a question reported, and a task still
    // running is read once more (exit 3).
    let mut second = run_pass(ctx, &journal, &client, &cfg, None, &shown, args, alerts).await?;
    // What needed a human in the first pass still does (a reply found UNCERTAIN is not
    // visited again), whatever the second pass saw.
    second.code = exit::worst(second.code, first.human);
    second.summary.compensate.extend(first.summary.compensate);
    finish(ctx, args, &journal, alerts, &second, Some(&followed))
}

/// Adds the pass's `COMPENSATING` workflows (those it covers) to its summary: a compensation
/// in flight is work that remains (exit 3), one that failed needs a human (exit 4), and only
/// `compensate` moves either on.
fn with_compensations(
    args: &ReconcileArgs,
    journal: &Journal,
    pass: &PassResult,
) -> anyhow::Result<(Summary, u8)> {
    let (mut summary, mut pass_code) = (pass.summary.clone(), pass.code);
    for (workflow, failed) in journal.compensating_workflows()? {
        if !args.workflows.is_empty() && !args.workflows.contains(&workflow) {
            continue;
        }
        let code = if failed {
            exit::NEEDS_HUMAN
        } else {
            exit::WORK_REMAINS
        };
        pass_code = exit::worst(pass_code, code);
        summary.compensating.insert(workflow);
    }
    Ok((summary, pass_code))
}

/// The warning about a workflow skipped because another pass holds its lock.
fn held_line(workflow: &str, owner: &str) -> String {
    format!(
        "workflow `{}` skipped: another pass ({owner}) holds its lock; it is left as it was \
         (exit 3; --wait DURATION waits for it)",
        inert(workflow)
    )
}

/// How many held workflows a pass names one by one; the rest are counted in one line.
const HELD_NAMED: usize = 10;

/// Workflow locks taken as the pass reaches each workflow; a held one is skipped and reported.
struct LazyLocks<'c> {
    ctx: &'c Context,
    journal: &'c Journal,
    /// The locks taken, held until the command ends.
    taken: RefCell<Vec<PassLock>>,
    /// The workflows whose lock this pass holds, in the order reached.
    mine: RefCell<Vec<String>>,
    /// How many workflows were found held by another pass.
    held: std::cell::Cell<usize>,
}

impl<'c> LazyLocks<'c> {
    fn new(ctx: &'c Context, journal: &'c Journal) -> Self {
        ctx.room_for_workflow_locks();
        Self {
            ctx,
            journal,
            taken: RefCell::new(Vec::new()),
            mine: RefCell::new(Vec::new()),
            held: std::cell::Cell::new(0),
        }
    }

    /// Counts the held workflows not named one by one; returns whether any was held.
    fn finish(&self) -> bool {
        let held = self.held.get();
        if held > HELD_NAMED {
            self.ctx.out.warn(&format!(
                "{} more workflow(s) skipped: other passes hold their locks; they are left as \
                 they were (exit 3)",
                held - HELD_NAMED
            ));
        }
        held > 0
    }
}

impl WorkflowLocks for LazyLocks<'_> {
    fn try_lock(&self, workflow: &str) -> anyhow::Result<bool> {
        let started = crate::clock::rfc3339(self.ctx.clock.now());
        match self.ctx.try_lock_workflow(self.journal, workflow, &started) {
            Ok(lock) => {
                self.taken.borrow_mut().push(lock);
                self.mine.borrow_mut().push(workflow.to_owned());
                Ok(true)
            }
            Err(LockError::Held { owner, .. }) => {
                self.held.set(self.held.get() + 1);
                if self.held.get() <= HELD_NAMED {
                    self.ctx.out.warn(&held_line(workflow, &owner));
                }
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// How many streams `--follow-for` keeps open at once (at least `--concurrency`): a stream
/// costs a socket and about 40 KB, and a process commonly may open 1,024 files.
const FOLLOW_STREAMS: usize = 1000;

/// What one pass came to.
struct PassResult {
    summary: Summary,
    /// The pass's exit code (0, 3 or 4): the worst code of its actions, folded from the
    /// events, and 3 when the deadline left items unvisited.
    code: u8,
    /// The worst code of the actions a human must act on (4, or 2 for a missing credential).
    human: u8,
}

/// Runs one pass, printing its actions and a progress bar; with `locks`, taking each workflow's
/// lock as the pass reaches it.
#[expect(
    clippy::too_many_arguments,
    reason = "one call site each, all parts of the pass"
)]
async fn run_pass(
    ctx: &Context,
    journal: &Journal,
    client: &A2aClient,
    cfg: &PassConfig,
    locks: Option<&dyn WorkflowLocks>,
    shown: &RefCell<HashSet<String>>,
    args: &ReconcileArgs,
    alerts: &Alerts,
) -> anyhow::Result<PassResult> {
    let mut pass = Pass::new(journal, client, ctx.clock.as_ref(), cfg.clone());
    if let Some(locks) = locks {
        pass = pass.with_locks(locks);
    }
    let bar = ctx.out.progress_allowed().then(|| {
        let bar =
            indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{spinner} reconcile {pos}/{len} {wide_bar}")
        {
            bar.set_style(style);
        }
        bar
    });
    let report = PassReport {
        ctx,
        journal,
        bar,
        shown,
        args,
        alerts,
        dry_run: cfg.dry_run,
        human: Cell::new(exit::OK),
        code: Cell::new(exit::OK),
        unreachable: Unreachable::default(),
    };
    let summary = pass.run(&report).await?;
    if let Some(b) = &report.bar {
        b.finish_and_clear();
    }
    let human = report.human.get();
    let code = if summary.unvisited > 0 {
        exit::worst(report.code.get(), exit::WORK_REMAINS)
    } else {
        report.code.get()
    };
    let grouped = report
        .unreachable
        .take_lines(&mut |hint| shown.borrow_mut().insert(format!("hint: {hint}")));
    for text in grouped {
        ctx.out.status(&ctx.out.wrap(&text));
    }
    Ok(PassResult {
        summary,
        code,
        human,
    })
}

/// A pass's sink: each action printed as it comes (a record, or a line), `--alert new` judged,
/// the progress bar moved, and the worst code of the actions that need a human kept.
struct PassReport<'a> {
    ctx: &'a Context,
    journal: &'a Journal,
    bar: Option<indicatif::ProgressBar>,
    shown: &'a RefCell<HashSet<String>>,
    args: &'a ReconcileArgs,
    alerts: &'a Alerts,
    dry_run: bool,
    /// The worst code of the actions that need a human (or a missing credential), folded
    /// from the events.
    human: Cell<u8>,
    /// The worst code of all the actions, folded from the events.
    code: Cell<u8>,
    /// Steps whose agent could not be reached, said once per agent after the pass.
    unreachable: Unreachable,
}

impl Sink for PassReport<'_> {
    fn counts_items(&self) -> bool {
        // Only the progress bar shows how many.
        self.bar.is_some()
    }

    fn event(&self, event: Event<'_>) -> anyhow::Result<()> {
        match event {
            Event::Started { items } => {
                if let Some(b) = &self.bar {
                    b.set_length(items as u64);
                }
            }
            Event::Acted(action) => {
                let code = report::exit_code(action.left);
                self.code.set(exit::worst(self.code.get(), code));
                if matches!(code, exit::NEEDS_HUMAN | exit::USAGE) {
                    self.human.set(exit::worst(self.human.get(), code));
                }
                let new = if self.args.alert == AlertMode::New && code == exit::NEEDS_HUMAN {
                    alert_item(self.journal, action, self.args.realert, self.alerts)?
                } else {
                    None
                };
                // An agent that cannot be reached is one line for all its steps, after the pass
                // (each step's error at `-v`).
                if let Some((agent, why)) = &action.unreached
                    && !self.ctx.out.is_json()
                    && self.ctx.out.verbosity() == 0
                {
                    let step = format!("{}/{}", action.workflow, action.step);
                    let hint = action.hint().map(hints::wire);
                    self.unreachable.add(agent, *why, step, hint.as_deref());
                    return Ok(());
                }
                print_action(
                    self.ctx,
                    self.bar.as_ref(),
                    self.shown,
                    action,
                    self.dry_run,
                    new,
                )?;
            }
            Event::ItemDone => {
                if let Some(b) = &self.bar {
                    b.inc(1);
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// What `--follow-for` did: how each follow ended.
#[derive(Debug, Default)]
struct Followed {
    /// Tasks followed.
    streams: usize,
    /// How many follows ended each way (`terminal`, `interrupted`, `lost`, `deadline`, …).
    ends: BTreeMap<&'static str, u32>,
    /// Observations journaled while following.
    events: u64,
    /// The duration asked for.
    duration: Duration,
}

/// Follows every running task at once until each stops by itself or `follow_for` passes,
/// journaling (and, with `--format json`, printing) every event.
async fn follow_running(
    ctx: &Context,
    journal: &Journal,
    client: &A2aClient,
    targets: Vec<FollowTarget>,
    args: &ReconcileArgs,
    follow_for: Duration,
) -> anyhow::Result<Followed> {
    let streams = targets.len();
    ctx.out.status(&format!(
        "following {streams} running task(s) for up to {}.",
        humantime(follow_for)
    ));
    let opts = FollowOptions {
        deadline: Some(tokio::time::Instant::now() + follow_for),
        ..FollowOptions::for_idle_timeout(ctx.stream_idle_timeout())
    };
    let show = ShowMany::new(ctx, journal, &targets)?;
    let limit = FOLLOW_STREAMS.max(args.concurrency as usize);
    let results = follow_many(journal, client, targets, &opts, limit, &show).await;
    let mut followed = Followed {
        streams,
        duration: follow_for,
        ..Followed::default()
    };
    let mut first_error = None;
    let followed_targets: Vec<FollowTarget> = results.iter().map(|(t, _)| t.clone()).collect();
    for (_, outcome) in results {
        match outcome {
            Ok(o) => {
                followed.events += o.events;
                *followed.ends.entry(end_name(&o.end)).or_default() += 1;
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    show.finish(&followed_targets)?;
    if let Some(e) = first_error {
        return Err(anyhow::Error::new(e).context("failed to journal a followed task"));
    }
    Ok(followed)
}

/// Names how a follow ended, as `follow`'s summary does (`end`).
fn end_name(end: &FollowEnd) -> &'static str {
    match end {
        FollowEnd::Terminal(_) => "terminal",
        FollowEnd::Interrupted(_) => "interrupted",
        FollowEnd::Lost => "lost",
        FollowEnd::TooLarge(_) => "too-large",
        FollowEnd::InterfaceGone(_) => "interface-gone",
        FollowEnd::Deadline => "deadline",
        FollowEnd::ReconnectsSpent => "reconnects-spent",
        FollowEnd::Skipped(_) => "skipped",
        FollowEnd::HeldElsewhere(_) => "held-elsewhere",
        FollowEnd::Failed { .. } => "failed",
    }
}

/// Shows a duration as it is typed (`90s`, `500ms`).
fn humantime(d: Duration) -> String {
    if d.subsec_millis() != 0 || d.as_secs() == 0 {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}s", d.as_secs())
    }
}

/// What a dry run would do about one attempt, and with which agent: one line per action.
fn dry_run_line(a: &Action) -> String {
    let d = &a.detail;
    let agent = d.agent.clone().flatten().map(|u| inert(&u)).map_or_else(
        || "its agent".to_owned(),
        |u| {
            u.strip_suffix(crate::a2a::WELL_KNOWN_CARD_PATH)
                .map_or_else(|| u.clone(), |b| format!("{b}/"))
        },
    );
    let what = match (a.action, a.outcome.as_str()) {
        ("send", "would-send") => format!("would send to {agent}"),
        ("send", "would-resend") => {
            format!("would resend to {agent} with its own messageId (resend approved)")
        }
        ("look", _) => format!(
            "would look on {agent} for its messageId, then send only if that proves it absent"
        ),
        ("reply", _) => format!("would look on {agent} for the journaled reply"),
        ("read", outcome) => {
            let seen = outcome.strip_prefix("would-record-").unwrap_or(outcome);
            let task = d
                .task_id
                .clone()
                .flatten()
                .map(|t| inert(&t))
                .unwrap_or_default();
            let then = match &d.then {
                Some(Then::Settle { action, .. }) => {
                    format!(", then {}", human(Kind::Outcome, action))
                }
                _ => String::new(),
            };
            format!("would read task {task} on {agent} and record {seen}{then}")
        }
        ("verify-effect", _) => "would verify its effect".to_owned(),
        ("move", _) => match &d.moved {
            Some(m) => format!(
                "would move it to the interface at {} ({}), as its card no longer offers {}",
                inert(&m.to.url),
                m.to.binding.wire().card_name(),
                inert(&m.from.url)
            ),
            None => "would move it to another interface".to_owned(),
        },
        ("redelegate", _) => format!("would re-delegate to {agent}"),
        ("failed-for-good", _) => format!(
            "would mark it failed for good: {}",
            inert(&records::reason(d).unwrap_or_default())
        ),
        ("hold", _) => format!(
            "would hold it: {}",
            inert(&records::reason(d).unwrap_or_default())
        ),
        (action, outcome) => format!("would {action}: {outcome}"),
    };
    format!("{}/{} (attempt {}): {what}", a.workflow, a.step, a.attempt)
}

/// Returns whether a needs-a-human action's item is new (`--alert new`), noting the item.
fn alert_item(
    journal: &Journal,
    a: &Action,
    realert: Option<Duration>,
    alerts: &Alerts,
) -> anyhow::Result<Option<bool>> {
    let name = crate::journal::StepName::from_parts(a.workflow.clone(), a.step.clone());
    let Some(item) = journal.alert_item(&name, a.attempt, realert)? else {
        return Ok(None);
    };
    let new = item.new;
    let mut items = alerts.items.borrow_mut();
    // With --follow-for the second pass may report the same item again: once is enough.
    match items.iter_mut().find(|i| i.attempt == item.attempt) {
        Some(seen) => seen.new |= new,
        None => items.push(item),
    }
    Ok(Some(new))
}

fn print_action(
    ctx: &Context,
    bar: Option<&indicatif::ProgressBar>,
    shown: &RefCell<HashSet<String>>,
    a: &Action,
    dry_run: bool,
    new: Option<bool>,
) -> anyhow::Result<()> {
    if ctx.out.is_json() {
        // `new` is `null` unless `--alert new` judged a needs-a-human item.
        ctx.out.record(&ActionRecord::judged(a, new).to_value())?;
        return Ok(());
    }
    // `--alert new -q`: an item reported before is not printed again.
    if new == Some(false) && ctx.out.is_quiet() {
        return Ok(());
    }
    let line = match &a.remedy {
        Some(remedy) if matches!(a.left, Left::Human | Left::Usage) => {
            let subject = format!("{}/{} (attempt {})", a.workflow, a.step, a.attempt);
            remedy_lines(&subject, remedy)
        }
        _ if dry_run && a.detail.error.is_none() => dry_run_line(a),
        // A send whose answer is unknown: when it is looked for again, in words.
        _ if a.outcome == "in-flight" => {
            let until = a
                .detail
                .until
                .map(crate::clock::rfc3339)
                .unwrap_or_default();
            let wait = a
                .detail
                .until
                .and_then(|t| (t - ctx.clock.now()).to_std().ok())
                .map(|d| format!(" (in {})", humantime(Duration::from_secs(d.as_secs()))))
                .unwrap_or_default();
            let text = format!(
                "{}/{} (attempt {}): sent, and its answer is unknown: nothing found yet, and \
                 the send may still be in flight; looked for again after {}{wait}",
                a.workflow,
                a.step,
                a.attempt,
                inert(&until)
            );
            match bar {
                Some(b) => b.suspend(|| ctx.out.status(&text)),
                None => ctx.out.status(&text),
            }
            return Ok(());
        }
        _ => {
            // A failure this pass (unreachable, garbage: 3; over the size cap: 4) is one line
            // naming the step and the error, then what to do about it.
            if matches!(a.left, Left::Work | Left::Human)
                && let Some(err) = a.detail.error.as_ref().map(records::error_line)
            {
                // `look-failed` already says `look`: never `look look failed`.
                let word = human(Kind::Outcome, &a.outcome);
                let what = if a.outcome.starts_with(a.action) {
                    word.into_owned()
                } else {
                    format!("{} {word}", a.action)
                };
                let mut text = format!(
                    "{}/{} (attempt {}): {what}: {}",
                    a.workflow,
                    a.step,
                    a.attempt,
                    inert(&err)
                );
                // One line per step; the hint once per pass, under the first step it fits
                // (ten unreachable steps of one agent are ten lines and one hint).
                if let Some(hint) = a.hint().map(hints::wire)
                    && shown.borrow_mut().insert(format!("hint: {hint}"))
                {
                    text.push_str("\n  hint: ");
                    text.push_str(&inert(&hint));
                }
                match bar {
                    Some(b) => b.suspend(|| ctx.out.status(&text)),
                    None => ctx.out.status(&text),
                }
            }
            return Ok(());
        }
    };
    // With --follow-for, the second pass says again what the first said: say it once.
    if !shown.borrow_mut().insert(line.clone()) {
        return Ok(());
    }
    match bar {
        Some(b) => b.suspend(|| ctx.out.line(&line))?,
        None => ctx.out.line(&line)?,
    }
    Ok(())
}

/// With `--alert new`: the pass's exit code (4 only for a new item; old ones keep it at 3,
/// never 0 while one waits), and how many items were new and old; a real pass records the new
/// ones as reported. Otherwise the code as it is.
fn judge_alerts(
    args: &ReconcileArgs,
    journal: &Journal,
    alerts: &Alerts,
    mut code: u8,
) -> anyhow::Result<(u8, u64, u64)> {
    if args.alert != AlertMode::New {
        return Ok((code, 0, 0));
    }
    let items = alerts.items.borrow();
    let new = items.iter().filter(|i| i.new).count() as u64;
    let old = items.len() as u64 - new;
    if code == exit::NEEDS_HUMAN && new == 0 {
        code = exit::WORK_REMAINS;
    }
    if !args.dry_run {
        journal.mark_alerted(&items)?;
    }
    Ok((code, new, old))
}

/// The JSON `summary` record of a pass; `judged` is the exit code and the new and old alerts.
fn summary_record(
    args: &ReconcileArgs,
    summary: &Summary,
    judged: (u8, u64, u64),
    followed: Option<&Followed>,
) -> serde_json::Value {
    let (code, new, old) = judged;
    let mut record = json!({
        "type": "summary",
        "command": "reconcile",
        "outcomes": summary.outcomes,
        "attempts": summary.attempts,
        "visited": summary.visited,
        "unvisited": summary.unvisited,
        "dryRun": args.dry_run,
        "compensate": summary.compensate,
        "compensating": summary.compensating,
        "skippedAgents": summary.skipped.iter().map(|(agent, s)| {
            let mut entry = json!({"agent": agent, "reason": s.reason, "attempts": s.attempts});
            if let Some(at) = &s.not_before {
                entry["notBefore"] = json!(at);
            }
            entry
        }).collect::<Vec<_>>(),
        "exitCode": code,
    });
    record["alerts"] = if args.alert == AlertMode::New {
        json!({"new": new, "old": old})
    } else {
        serde_json::Value::Null
    };
    if let Some(f) = followed {
        record["followed"] = json!({
            "streams": f.streams,
            "ends": f.ends,
            "events": f.events,
            "forMs": u64::try_from(f.duration.as_millis()).unwrap_or(u64::MAX),
        });
    }
    record
}

/// ` in journal `PATH`` when a pass visited nothing (the wrong journal?), else nothing: the
/// summary line does not repeat the path every time (`status` names it, and the JSON summary
/// always does).
fn journal_named(ctx: &Context, visited: usize) -> String {
    if visited == 0 {
        format!(" in journal `{}`", inert(&ctx.journal.to_string()))
    } else {
        String::new()
    }
}

/// Names the steps of a set, at most five of them: `w/a, w/b and 3 more`.
fn named_steps(steps: &BTreeSet<String>) -> String {
    const SHOWN: usize = 5;
    let mut names: Vec<String> = steps.iter().take(SHOWN).map(|s| inert(s)).collect();
    if steps.len() > SHOWN {
        names.push(format!("{} more", steps.len() - SHOWN));
    }
    match names.len() {
        0 => "a step".to_owned(),
        1 => names.remove(0),
        n => format!("{} and {}", names[..n - 1].join(", "), names[n - 1]),
    }
}

fn finish(
    ctx: &Context,
    args: &ReconcileArgs,
    journal: &Journal,
    alerts: &Alerts,
    pass: &PassResult,
    followed: Option<&Followed>,
) -> anyhow::Result<u8> {
    let (summary, pass_code) = &with_compensations(args, journal, pass)?;
    let (code, new, old) = judge_alerts(args, journal, alerts, *pass_code)?;
    if ctx.out.is_json() {
        ctx.out
            .record(&summary_record(args, summary, (code, new, old), followed))?;
        return Ok(code);
    }
    // `-q`: nothing at all unless a human must act (cron mails only what needs someone);
    // with `--alert new`, unless a NEW item needs one.
    if ctx.out.is_quiet() && code != exit::NEEDS_HUMAN {
        return Ok(code);
    }
    if let Some(f) = followed {
        let ends = if f.ends.is_empty() {
            "nothing was running".to_owned()
        } else {
            f.ends
                .iter()
                .map(|(k, v)| format!("{v} {}", human(Kind::End, k)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        ctx.out.line(&format!(
            "followed {} running task(s) for up to {}: {ends}; {} event(s) journaled.",
            f.streams,
            humantime(f.duration),
            f.events
        ))?;
    }
    for (agent, s) in &summary.skipped {
        let then = if s.not_before.is_some() {
            "passes skip it until then"
        } else {
            "the next pass tries it again"
        };
        ctx.out.line(&format!(
            "agent `{}`: {} attempt(s) skipped this pass after {}; {then}.",
            inert(agent),
            s.attempts,
            inert(&s.reason)
        ))?;
    }
    for w in &summary.compensating {
        ctx.out.line(&ctx.out.wrap(&format!(
            "workflow {w} is being compensated and its compensation has not ended; a pass \
             sends nothing for it: run `a2a-recover compensate {w}` to finish it"
        )))?;
    }
    for w in &summary.compensate {
        ctx.out.line(&ctx.out.wrap(&format!(
            "workflow {w} has a step that failed for good; to undo what its steps did, run \
             `a2a-recover compensate {w}`"
        )))?;
    }
    // Attempts by how they ended, not actions: a read and the record that follows it are one
    // attempt (the JSON summary has both).
    let counts = if summary.attempts.is_empty() && summary.held > 0 {
        format!(
            "nothing visited: {} workflow(s) locked by another pass",
            summary.held
        )
    } else if summary.attempts.is_empty() {
        "nothing to do".to_owned()
    } else {
        summary
            .attempts
            .iter()
            .map(|(k, v)| format!("{v} {}", human(Kind::Outcome, k)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let verdict = match code {
        exit::WORK_REMAINS if old > 0 => format!(
            "{old} item(s) needing a human were reported before (`a2a-recover inspect \
             --pending`); nothing new (exit 3)"
        ),
        exit::OK => "done".to_owned(),
        exit::WORK_REMAINS => "work remains; run again later (exit 3)".to_owned(),
        // A dry run journals nothing, so `inspect --pending` cannot list what it found yet.
        exit::NEEDS_HUMAN if args.dry_run => format!(
            "a human would have to act on {} (exit 4)",
            named_steps(&summary.needs_human)
        ),
        exit::NEEDS_HUMAN => {
            "a human must act; see `a2a-recover inspect --pending` (exit 4)".to_owned()
        }
        other => format!("exit {other}"),
    };
    let prefix = if args.dry_run {
        "reconcile (dry run, nothing changed)"
    } else {
        "reconcile"
    };
    let place = journal_named(ctx, summary.visited);
    let head = format!("{prefix}: {} attempt(s) visited{place}:", summary.visited);
    summary_line(ctx, head, &counts, &verdict)?;
    if summary.unvisited > 0 {
        ctx.out.line(&format!(
            "the deadline ended the pass with {} attempt(s) not visited; run again.",
            summary.unvisited
        ))?;
    }
    Ok(code)
}

/// Prints the pass's summary line: `HEAD COUNTS; VERDICT.`, or, when that is too wide for the
/// terminal, what was seen and the verdict each on a line of their own.
fn summary_line(ctx: &Context, head: String, counts: &str, verdict: &str) -> anyhow::Result<()> {
    let line = format!("{head} {counts}; {verdict}.");
    if ctx
        .out
        .width()
        .is_some_and(|w| crate::output::display_width(&line) > w)
    {
        for part in [head, format!("  {counts};"), format!("  {verdict}.")] {
            ctx.out.line(&ctx.out.wrap(&part))?;
        }
    } else {
        ctx.out.line(&line)?;
    }
    Ok(())
}
