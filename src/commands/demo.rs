//! `demo`: the worked example (docs/sagas.md), end to end, with a real crash.
//!
//! Four scripted agents start in this process on loopback (flight, hotel, and two car agents
//! registered for the skill `car`). Every step of the story runs as a **child process of this
//! binary** — the same commands an operator types — so the crash is real (`SIGABRT` from
//! `A2A_RECOVER_CRASH_AT`, no cleanup) and recovery goes through the operator's code paths:
//! `reconcile`, `reply`, re-delegation and `compensate`. After each step the demo reads the
//! journal and the agents' own counters and checks the recovery it claims; nothing is assumed.
//!
//! The journal is a temporary file unless `--journal` is given (`A2A_RECOVER_JOURNAL` and the
//! default path are ignored, so a demo never touches real work).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::Args;
use serde_json::json;

use crate::context::Context;
use crate::env;
use crate::exit;
use crate::journal::{
    Attempt, AttemptState, EffectState, Journal, Location, StepName, StepRecord, WorkflowState,
};
use crate::sanitize::inert;
use crate::scripted_agent::{AgentConfig, ScriptedAgent, Stats};

/// Runs the worked example end to end against scripted agents, with a real crash.
///
/// A trip (flight, hotel, car) is delegated to four scripted A2A agents on loopback; the
/// process is killed in the middle of the hotel's send; `reconcile`, `reply`, re-delegation and
/// `compensate` recover, and each recovery is checked against the journal and the agents.
/// Uses a temporary journal unless --journal is given.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover demo
  # keeps the journal, to inspect it afterwards:
  a2a-recover demo --journal /tmp/demo.sqlite3")]
pub struct DemoArgs {}

const WORKFLOW: &str = "trip-42";

/// The ids of the recoveries, in the order the story reaches them.
pub const RECOVERY_IDS: [&str; 7] = [
    "flight-finished-while-away",
    "hotel-found-by-message-id",
    "hotel-question-saved",
    "car-sent-from-intent",
    "hotel-answered-on-same-task",
    "car-redelegated",
    "trip-compensated-in-reverse",
];

/// The four agents of the story.
struct Agents {
    flight: ScriptedAgent,
    hotel: ScriptedAgent,
    car_a: ScriptedAgent,
    car_b: ScriptedAgent,
}

impl Agents {
    async fn start() -> anyhow::Result<Self> {
        let agent = |name: &str, skill: &str, scenario: Option<&str>| AgentConfig {
            name: name.to_owned(),
            skills: vec![skill.to_owned()],
            scenario: scenario.map(str::to_owned),
            tick: Duration::from_millis(100),
            ..AgentConfig::default()
        };
        let start = |cfg| async move {
            ScriptedAgent::start(cfg, 0)
                .await
                .context("failed to start a scripted agent")
        };
        Ok(Self {
            flight: start(agent("flight-agent", "flight", None)).await?,
            hotel: start(agent("hotel-agent", "hotel", None)).await?,
            car_a: start(agent("car-agent-a", "car", Some("reject"))).await?,
            car_b: start(agent("car-agent-b", "car", Some("fail"))).await?,
        })
    }

    async fn shutdown(self) {
        self.flight.shutdown().await;
        self.hotel.shutdown().await;
        self.car_a.shutdown().await;
        self.car_b.shutdown().await;
    }
}

/// What one child run of this binary did.
struct Child {
    /// The exit code, or `None` if a signal ended it.
    code: Option<i32>,
    /// The signal that ended it.
    signal: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Child {
    fn describe(&self) -> String {
        match (self.code, self.signal) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(6)) => "killed by SIGABRT".to_owned(),
            (None, Some(s)) => format!("killed by signal {s}"),
            (None, None) => "ended".to_owned(),
        }
    }
}

/// The width the demo's final table fits when its output has none (piped without `COLUMNS`).
const DEMO_WIDTH: usize = 80;
/// The indent of the child output the demo quotes.
const QUOTE_INDENT: &str = "   ";
/// The widest line of narration.
const NARRATION_WIDTH: usize = 80;
/// The indent of a numbered paragraph's lines after its first.
const STEP_INDENT: &str = "   ";
/// The indent of a check's lines after its first (under its id).
const CHECK_INDENT: &str = "          ";

/// Runs children of this binary on one journal.
struct Runner {
    exe: PathBuf,
    /// The journal as given (a PostgreSQL URL with its password, if it has one): passed to the
    /// children in `A2A_RECOVER_JOURNAL`, never on a command line others can read.
    journal: std::ffi::OsString,
    cwd: PathBuf,
    timeout: String,
    /// The width the children's tables fit (`COLUMNS`): the demo's own, less the indent of
    /// the lines it quotes, 120 when it has none.
    columns: String,
}

impl Runner {
    async fn run(&self, args: &[&str], crash_at: Option<&str>) -> anyhow::Result<Child> {
        use std::os::unix::process::ExitStatusExt as _;
        let mut cmd = tokio::process::Command::new(&self.exe);
        cmd.args([
            "--color",
            "never",
            "--format",
            "human",
            "--timeout",
            &self.timeout,
        ])
        .args(args)
        .current_dir(&self.cwd)
        .env_remove(env::CRASH_AT)
        .env_remove(env::FORMAT)
        .env(env::JOURNAL, &self.journal)
        .env_remove(env::TEST_NOW)
        .env(env::COLUMNS, &self.columns)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
        if let Some(point) = crash_at {
            cmd.env(env::CRASH_AT, point);
        }
        let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
            .await
            .with_context(|| format!("`a2a-recover {}` did not finish in 120 s", args.join(" ")))?
            .with_context(|| format!("failed to run `{}`", self.exe.display()))?;
        Ok(Child {
            code: out.status.code(),
            signal: out.status.signal(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}

/// The demo's narration and its `recovery` records.
struct Story<'a> {
    ctx: &'a Context,
    results: Vec<(&'static str, bool)>,
}

impl Story<'_> {
    fn say(&self, text: &str) -> anyhow::Result<()> {
        if !self.ctx.out.is_json() {
            self.ctx.out.line(text)?;
        }
        Ok(())
    }

    /// Says `text` wrapped to the width (the terminal's or `COLUMNS`, at most 80), its lines
    /// after the first under `indent`.
    fn paragraph(&self, text: &str, indent: &str) -> anyhow::Result<()> {
        let width = self
            .ctx
            .out
            .width()
            .map_or(NARRATION_WIDTH, |w| w.min(NARRATION_WIDTH));
        let options = textwrap::Options::new(width).subsequent_indent(indent);
        for line in textwrap::wrap(text, options) {
            self.say(&line)?;
        }
        Ok(())
    }

    /// Says a command it ran, whole on a line of its own (never wrapped: it can be copied).
    fn command(&self, args: &[&str], child: &Child) -> anyhow::Result<()> {
        let shown: Vec<String> = args
            .iter()
            .map(|a| {
                if a.contains(' ') || a.contains('"') || a.is_empty() {
                    format!("{a:?}")
                } else {
                    (*a).to_owned()
                }
            })
            .collect();
        self.say(&format!(
            "   $ a2a-recover {}   ({})",
            shown.join(" "),
            child.describe()
        ))
    }

    fn check(&mut self, id: &'static str, ok: bool, detail: &str) -> anyhow::Result<()> {
        self.results.push((id, ok));
        if self.ctx.out.is_json() {
            self.ctx
                .out
                .record(&json!({"type": "recovery", "id": id, "ok": ok, "detail": detail}))?;
        } else {
            let mark = if ok { "ok  " } else { "FAIL" };
            self.paragraph(&format!("   [{mark}] {id}: {detail}"), CHECK_INDENT)?;
        }
        Ok(())
    }
}

/// Runs `demo`.
pub(crate) async fn run(ctx: &Context, _args: &DemoArgs) -> anyhow::Result<u8> {
    ctx.out.begin("demo")?;
    let explicit = ctx
        .journal_explicit
        .then(|| ctx.journal.file_path())
        .flatten();
    let (dir, keep) = if let Some(path) = explicit {
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        if !parent.exists() {
            use std::os::unix::fs::DirBuilderExt as _;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .recursive(true)
                .create(&parent)
                .with_context(|| format!("failed to create `{}`", parent.display()))?;
        }
        (parent, true)
    } else {
        (temp_dir()?, false)
    };
    // The journal: the one named by --journal (a file, or a PostgreSQL schema), else a
    // temporary file.
    let (journal, raw) = match &ctx.global.journal {
        Some(raw) if ctx.journal_explicit => (ctx.journal.clone(), raw.clone().into_os_string()),
        _ => {
            let path = dir.join("journal.sqlite3");
            (Location::file(&path), path.into_os_string())
        }
    };
    let result = story(ctx, &dir, &journal, raw).await;
    if !keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn temp_dir() -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt as _;
    // 48 random bits name the directory (it is created exclusively, never reused), short
    // enough for its path to fit an 80-column line.
    let id = crate::sim_seam::new_uuid().simple().to_string();
    let dir = std::env::temp_dir().join(format!("a2a-recover-demo-{}", &id[..12]));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("failed to create `{}`", dir.display()))?;
    Ok(dir)
}

async fn story(
    ctx: &Context,
    dir: &Path,
    journal: &Location,
    raw: std::ffi::OsString,
) -> anyhow::Result<u8> {
    let agents = Agents::start().await?;
    let result = story_with(ctx, dir, journal, raw, &agents).await;
    agents.shutdown().await;
    result
}

async fn story_with(
    ctx: &Context,
    dir: &Path,
    journal_path: &Location,
    raw: std::ffi::OsString,
    agents: &Agents,
) -> anyhow::Result<u8> {
    let runner = Runner {
        exe: std::env::current_exe().context("failed to find this program's own path")?,
        journal: raw,
        cwd: dir.to_path_buf(),
        timeout: "10s".to_owned(),
        columns: (ctx.out.width().unwrap_or(DEMO_WIDTH) - QUOTE_INDENT.len())
            .max(40)
            .to_string(),
    };
    let mut scene = Scene {
        ctx,
        runner,
        agents,
        journal_path,
        story: Story {
            ctx,
            results: Vec::new(),
        },
    };
    scene.introduce()?;
    scene.register_the_cars().await?;
    let (hotel_attempt, car_attempt) = scene.delegate_and_crash().await?;
    // The flight finishes while nobody is watching.
    wait_for_bookings(&agents.flight, 1).await;
    let hotel_now = scene.recovery_pass(&hotel_attempt, &car_attempt).await?;
    scene.answer_the_hotel(&hotel_now).await?;
    scene.redelegate_the_car().await?;
    scene.cancel_the_trip().await?;
    scene.final_table().await
}

/// What each step of the story runs and reads: the agents, the journal, and the story told so
/// far.
struct Scene<'a> {
    ctx: &'a Context,
    runner: Runner,
    agents: &'a Agents,
    journal_path: &'a Location,
    story: Story<'a>,
}

impl Scene<'_> {
    /// What the demo does, and where its journal is.
    fn introduce(&self) -> anyhow::Result<()> {
        self.story.paragraph(
            "a2a-recover demo: a trip (flight, hotel, car) is delegated to scripted A2A agents \
             running on this machine; the process is killed in the middle; recovery follows.",
            "",
        )?;
        self.story.say(&format!("journal: {}", self.journal_path))?;
        if !self.ctx.journal_explicit {
            self.story
                .say("  (temporary, removed at the end; `--journal PATH` keeps it)")?;
        }
        self.story.say("")?;
        Ok(())
    }

    /// Step 0: the car agents are registered for the skill `car`.
    async fn register_the_cars(&mut self) -> anyhow::Result<()> {
        // Re-delegation picks from them.
        self.story
            .say("0. Two car agents are registered for the skill `car`.")?;
        for car in [&self.agents.car_a, &self.agents.car_b] {
            let url = car.url();
            let args = ["agents", "add", url.as_str()];
            let child = self.runner.run(&args, None).await?;
            self.story.command(&args, &child)?;
            expect_code(&child, exit::OK, &args)?;
        }
        Ok(())
    }

    /// Step 1: the trip is delegated, with two crashes; returns the hotel's and the car's
    /// attempts as the crashes left them.
    async fn delegate_and_crash(&mut self) -> anyhow::Result<(Attempt, Attempt)> {
        let (flight, hotel) = (self.agents.flight.url(), self.agents.hotel.url());
        self.story.say("")?;
        self.story.paragraph(
            "1. Delegating. The flight is sent; the process is killed (SIGABRT, no cleanup) right \
             after the hotel agent answered, before its task id was journaled; the car's intent \
             is journaled and the process is killed again before it is sent.",
            STEP_INDENT,
        )?;
        let flight_verify = format!("{flight}_scripted/bookings/{{task_id}}");
        let hotel_verify = format!("{hotel}_scripted/bookings/{{task_id}}");
        let flight_args = [
            "delegate",
            "trip-42/flight",
            "--agent",
            flight.as_str(),
            "--effect",
            "--compensate",
            "cancel {task_id}",
            "--verify-url",
            flight_verify.as_str(),
            "work:8 book a flight LHR to JFK",
        ];
        let child = self.runner.run(&flight_args, None).await?;
        self.story.command(&flight_args, &child)?;
        expect_code(&child, exit::OK, &flight_args)?;
        let hotel_args = [
            "delegate",
            "trip-42/hotel",
            "--agent",
            hotel.as_str(),
            "--effect",
            "--compensate",
            "cancel {task_id}",
            "--verify-url",
            hotel_verify.as_str(),
            "ask book a hotel in New York",
        ];
        let hotel_child = self
            .runner
            .run(&hotel_args, Some("after-send:trip-42/hotel"))
            .await?;
        self.story.command(&hotel_args, &hotel_child)?;
        let car_args = [
            "delegate",
            "trip-42/car",
            "--skill",
            "car",
            "book a car at JFK",
        ];
        let car_child = self
            .runner
            .run(&car_args, Some("after-intent:trip-42/car"))
            .await?;
        self.story.command(&car_args, &car_child)?;

        self.read_the_crash(&hotel_child, &car_child)
    }

    /// What the crashes left in the journal, told and checked; returns the hotel's and the
    /// car's attempts.
    fn read_the_crash(
        &self,
        hotel_child: &Child,
        car_child: &Child,
    ) -> anyhow::Result<(Attempt, Attempt)> {
        let j = Journal::open_read_only_at(self.journal_path, self.ctx.timeout)?;
        let hotel_before = step(&j, "hotel")?;
        let car_before = step(&j, "car")?;
        let flight_before = step(&j, "flight")?;
        drop(j);
        let hotel_attempt = hotel_before
            .latest()
            .context("the hotel has no attempt")?
            .clone();
        let car_attempt = car_before
            .latest()
            .context("the car has no attempt")?
            .clone();
        self.story.paragraph(
            &format!(
                "   journal now: flight {} (task {}), hotel {} with no task id, car {}.",
                flight_before.latest().map_or("?", |a| a.state.as_str()),
                short(
                    flight_before
                        .latest()
                        .and_then(|a| a.task_id.as_deref())
                        .unwrap_or("?")
                ),
                hotel_attempt.state.as_str(),
                car_attempt.state.as_str(),
            ),
            STEP_INDENT,
        )?;
        self.story.paragraph(
            &format!(
                "   The hotel agent, however, holds {} task(s) for our messageId: a blind retry \
                 would book a second room; giving up would leave an orphan booking.",
                tasks_for(&self.agents.hotel.stats(), &hotel_attempt.message_id)
            ),
            STEP_INDENT,
        )?;
        let crashed = hotel_child.signal == Some(6)
            && car_child.signal == Some(6)
            && hotel_attempt.state == AttemptState::Intent
            && hotel_attempt.task_id.is_none()
            && car_attempt.state == AttemptState::Intent;
        if !crashed {
            bail!(
                "the crash did not happen as scripted (hotel: {}, car: {}); stderr: {}",
                hotel_child.describe(),
                car_child.describe(),
                inert(hotel_child.stderr.trim())
            );
        }
        Ok((hotel_attempt, car_attempt))
    }

    /// Step 2: one recovery pass; returns the hotel's attempt after it.
    async fn recovery_pass(
        &mut self,
        hotel_attempt: &Attempt,
        car_attempt: &Attempt,
    ) -> anyhow::Result<Attempt> {
        self.story.say("")?;
        self.story
            .say("2. After the incident, the on-call engineer (or cron) runs one recovery pass.")?;
        let reconcile = ["reconcile", WORKFLOW];
        let child = self.runner.run(&reconcile, None).await?;
        self.story.command(&reconcile, &child)?;
        let j = Journal::open_read_only_at(self.journal_path, self.ctx.timeout)?;
        let flight_rec = step(&j, "flight")?;
        let hotel_rec = step(&j, "hotel")?;
        let car_rec = step(&j, "car")?;
        let flight_now = flight_rec.latest().context("flight attempt")?;
        let artifacts = j.artifacts(flight_now.id)?;
        self.story.check(
            "flight-finished-while-away",
            flight_now.state == AttemptState::Completed
                && !artifacts.is_empty()
                && flight_now.effect == Some(EffectState::Verified),
            &format!(
                "the flight completed while we were down; reconcile read {}, stored {} artifact(s) and \
                 verified the booking through the agent's booking system (effect {}).",
                flight_now.state.as_str(),
                artifacts.len(),
                flight_now.effect.map_or("none", EffectState::as_str),
            ),
        )?;
        let hotel_now = hotel_rec.latest().context("hotel attempt")?;
        let hotel_tasks = tasks_for(&self.agents.hotel.stats(), &hotel_now.message_id);
        self.story.check(
            "hotel-found-by-message-id",
            hotel_now.task_id.is_some()
                && hotel_now.message_id == hotel_attempt.message_id
                && hotel_tasks == 1,
            &format!(
                "the journal held only the hotel's messageId and contextId; ListTasks on that \
                 context found task {} holding the messageId, so nothing was resent (the agent \
                 holds {hotel_tasks} task for it).",
                short(hotel_now.task_id.as_deref().unwrap_or("?"))
            ),
        )?;
        let question = hotel_now.question_text().unwrap_or_default();
        self.story.check(
            "hotel-question-saved",
            hotel_now.state == AttemptState::InputRequired && question == "two rooms or one?",
            &format!(
                "the hotel agent asked {:?}; the full question is journaled and survives any crash \
                 (reconcile exit {}: a human must answer).",
                inert(&question),
                child.code.unwrap_or(-1)
            ),
        )?;
        let car_now = car_rec.attempts.first().context("car attempt")?;
        let car_tasks = tasks_for(&self.agents.car_a.stats(), &car_now.message_id);
        self.story.check(
            "car-sent-from-intent",
            car_now.message_id == car_attempt.message_id
                && car_now.task_id.is_some()
                && car_tasks == 1,
            &format!(
                "the car's intent was never sent; the look proved nothing existed, so it was sent \
                 once with the journaled messageId (task {}, {} task on the agent).",
                short(car_now.task_id.as_deref().unwrap_or("?")),
                car_tasks
            ),
        )?;
        let hotel_now = hotel_now.clone();
        drop(j);
        Ok(hotel_now)
    }

    /// Step 3: the operator answers the hotel's question on the same task.
    async fn answer_the_hotel(&mut self, hotel_now: &Attempt) -> anyhow::Result<()> {
        self.story.say("")?;
        self.story
            .say("3. The operator answers the hotel's question on the same task.")?;
        let reply = ["reply", "trip-42/hotel", "one room"];
        let child = self.runner.run(&reply, None).await?;
        self.story.command(&reply, &child)?;
        let j = Journal::open_read_only_at(self.journal_path, self.ctx.timeout)?;
        let hotel_after = step(&j, "hotel")?;
        let hotel_after = hotel_after.latest().context("hotel attempt")?;
        let hotel_stats = self.agents.hotel.stats();
        let answered_on_task = hotel_stats
            .messages
            .iter()
            .any(|m| m.task_id.is_some() && m.task_id == hotel_now.task_id && m.text == "one room");
        self.story.check(
            "hotel-answered-on-same-task",
            hotel_after.task_id == hotel_now.task_id
                && answered_on_task
                && hotel_after.state == AttemptState::Completed
                && tasks_for(&hotel_stats, &hotel_now.message_id) == 1,
            &format!(
                "the answer went to task {} (not a new task) and the hotel is {}.",
                short(hotel_after.task_id.as_deref().unwrap_or("?")),
                hotel_after.state.as_str()
            ),
        )?;
        drop(j);
        Ok(())
    }

    /// Step 4: later passes: the car is rejected and re-delegated.
    async fn redelegate_the_car(&mut self) -> anyhow::Result<()> {
        let reconcile = ["reconcile", WORKFLOW];
        self.story.say("")?;
        self.story.paragraph(
            "4. Later passes (cron): the first car agent rejected the booking (no availability); \
             the step is re-delegated to the other registered car agent.",
            STEP_INDENT,
        )?;
        let mut last = None;
        for _ in 0..4 {
            let child = self.runner.run(&reconcile, None).await?;
            self.story.command(&reconcile, &child)?;
            let j = Journal::open_read_only_at(self.journal_path, self.ctx.timeout)?;
            let car = step(&j, "car")?;
            let settled =
                car.attempts.len() >= 2 && car.latest().is_some_and(|a| a.state.is_terminal());
            last = Some(car);
            if settled {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let car = last.context("no reconcile ran")?;
        let first_task = car.attempts.first().and_then(|a| a.task_id.clone());
        let second = car.attempts.get(1);
        let car_b_stats = self.agents.car_b.stats();
        let carried = car_b_stats.messages.iter().any(|m| {
            m.metadata
                .as_ref()
                .and_then(|md| md.get("previousTaskId"))
                .and_then(serde_json::Value::as_str)
                == first_task.as_deref()
        });
        self.story.check(
            "car-redelegated",
            second.is_some_and(|a| {
                a.agent_url.as_deref() == Some(self.agents.car_b.card_url().as_str())
            }) && first_task.is_some()
                && carried,
            &format!(
                "attempt 2 went to the second car agent with the rejected task {} in its metadata \
                 (previousTaskId); it {} too, so the step failed for good within its budget.",
                short(first_task.as_deref().unwrap_or("?")),
                second.map_or("?", |a| a.state.as_str()),
            ),
        )?;
        Ok(())
    }

    /// Step 5: the trip is cancelled: compensated in reverse order and verified.
    async fn cancel_the_trip(&mut self) -> anyhow::Result<()> {
        self.story.say("")?;
        self.story.paragraph(
            "5. The customer cancels the trip: compensate undoes what was booked, newest first, \
             and checks each booking is gone through the agents' booking systems.",
            STEP_INDENT,
        )?;
        let compensate = ["compensate", WORKFLOW];
        let child = self.runner.run(&compensate, None).await?;
        self.story.command(&compensate, &child)?;
        let j = Journal::open_read_only_at(self.journal_path, self.ctx.timeout)?;
        let flight_done = step(&j, "flight")?;
        let hotel_done = step(&j, "hotel")?;
        let order = compensation_order(&j)?;
        let state = j.workflow_state(WORKFLOW)?;
        let effect = |r: &StepRecord| r.latest().and_then(|a| a.effect);
        self.story.check(
            "trip-compensated-in-reverse",
            state == Some(WorkflowState::Compensated)
                && effect(&hotel_done) == Some(EffectState::Compensated)
                && effect(&flight_done) == Some(EffectState::Compensated)
                && order == ["hotel~compensate", "flight~compensate"],
            &format!(
                "compensations ran in the order {}; both bookings verified gone; workflow {}.",
                order.join(" then "),
                state.map_or("?", WorkflowState::as_str)
            ),
        )?;
        drop(j);
        Ok(())
    }

    /// The final table, and the count of recoveries checked; returns the exit code.
    async fn final_table(&self) -> anyhow::Result<u8> {
        // The final table.
        self.story.say("")?;
        self.story.say("The journal, as an operator reads it:")?;
        if !self.ctx.out.is_json() {
            let child = self.runner.run(&["inspect", WORKFLOW], None).await?;
            for line in child.stdout.lines() {
                self.ctx.out.line(&format!("{QUOTE_INDENT}{line}"))?;
            }
        }
        let ok = self.story.results.iter().filter(|(_, ok)| *ok).count();
        let total = RECOVERY_IDS.len();
        self.story.say("")?;
        self.story
            .say(&format!("{ok} of {total} recoveries checked."))?;
        let code = if ok == total && self.story.results.len() == total {
            exit::OK
        } else {
            exit::FAILURE
        };
        if self.ctx.out.is_json() {
            self.ctx.out.record(
                &json!({"type": "summary", "ok": ok, "total": total, "exitCode": code,
                                "journal": self.journal_path.to_string()}),
            )?;
        }
        Ok(code)
    }
}

fn step(j: &Journal, name: &str) -> anyhow::Result<StepRecord> {
    let name = StepName::from_parts(WORKFLOW, name);
    j.step(&name)?
        .with_context(|| format!("the journal has no step `{WORKFLOW}/{}`", name.step))
}

fn tasks_for(stats: &Stats, message_id: &str) -> u32 {
    stats
        .tasks_per_message_id
        .get(message_id)
        .copied()
        .unwrap_or(0)
}

/// Returns the compensation steps of the workflow in the order their first intents were
/// journaled.
fn compensation_order(j: &Journal) -> anyhow::Result<Vec<String>> {
    let mut steps = Vec::new();
    for name in ["car", "hotel", "flight"] {
        let name = StepName::from_parts(WORKFLOW, format!("{name}~compensate"));
        if let Some(rec) = j.step(&name)? {
            steps.push((rec.step.seq, name.step));
        }
    }
    steps.sort();
    Ok(steps.into_iter().map(|(_, n)| n).collect())
}

async fn wait_for_bookings(agent: &ScriptedAgent, n: usize) {
    for _ in 0..100 {
        let done = agent
            .stats()
            .tasks
            .iter()
            .filter(|t| t.state == a2a::TaskState::Completed)
            .count();
        if done >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn expect_code(child: &Child, want: u8, args: &[&str]) -> anyhow::Result<()> {
    if child.code == Some(i32::from(want)) {
        return Ok(());
    }
    bail!(
        "`a2a-recover {}` ended with {} (expected exit {want}):\n{}{}",
        args.join(" "),
        child.describe(),
        inert_block(&child.stdout),
        inert_block(&child.stderr)
    )
}

fn inert_block(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        out.push_str("  ");
        out.push_str(&inert(line));
        out.push('\n');
    }
    out
}

fn short(id: &str) -> String {
    id.chars().take(8).collect()
}
