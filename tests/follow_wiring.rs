//! `delegate --follow` and `reconcile --follow-for` end to end: the binary against the scripted
//! agent on 127.0.0.1, real SQLite journals read back after each run.
//!
//! - `delegate --follow` follows the task it just journaled with `follow`'s exit codes: 0 at
//!   COMPLETED (artifact stored), 4 at a question, 0 for a direct reply; a crash after the
//!   second journaled event is finished by `follow` without a duplicated chunk.
//! - `reconcile --follow-for` reattaches to every running task at once (1,000 of them here, all
//!   streams open in one process), then decides from what it recorded; a task still running at
//!   the end is exit 3; `--dry-run --follow-for` is a usage error.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use a2a_recover::a2a::TaskView;
use a2a_recover::a2a::{A2aClient, ClientConfig, Endpoint, ProtocolBinding, types};
use a2a_recover::journal::{
    self, Attempt, AttemptState, IntentOutcome, Journal, NewIntent, Source, StepName, StepSpec,
};
use a2a_recover::scripted_agent::{AgentConfig, ScriptedAgent};
use serde_json::Value;

use crate::common::in_runtime::{guard, run_with};
use crate::common::journal::journaled;
use crate::common::wait::{GUARD, wait_until_async};
use crate::common::{TestEnv, code, explain, json_lines, stderr, stdout, summary_of};

fn chunks(n: u32) -> String {
    use std::fmt::Write as _;
    (1..=n).fold(String::new(), |mut s, i| {
        let _ = write!(s, "chunk {i};");
        s
    })
}

async fn agent(tick: Duration) -> ScriptedAgent {
    ScriptedAgent::start(
        AgentConfig {
            tick,
            ..AgentConfig::default()
        },
        0,
    )
    .await
    .unwrap()
}

// ---------------------------------------------------------------------------------------------
// delegate --follow
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn delegate_follow_reaches_completed_with_the_artifact_stored() {
    guard(async {
        let agent = agent(Duration::from_millis(50)).await;
        let env = TestEnv::new();
        let o = run_with(
            &env,
            &[
                "delegate",
                "w/work",
                "--agent",
                &agent.url(),
                "--follow",
                "--format",
                "json",
                "work:5",
            ],
            &[],
        )
        .await;
        assert_eq!(code(&o), 0, "{}", explain(&o));
        let s = summary_of(&o, "delegate");
        assert_eq!(s["follow"]["end"], "terminal", "{s}");
        assert_eq!(s["follow"]["state"], "COMPLETED", "{s}");
        assert_eq!(s["follow"]["artifacts"], 1, "{s}");
        // The send's action, then the followed events (never the intent's), then the summary.
        let all = json_lines(&o);
        let send = all
            .iter()
            .position(|l| l["type"] == "action" && l["action"] == "send")
            .unwrap_or_else(|| panic!("{all:?}"));
        let events: Vec<&Value> = all.iter().filter(|l| l["type"] == "event").collect();
        assert!(!events.is_empty(), "{all:?}");
        assert!(all.iter().skip(send).any(|l| l["type"] == "event"));
        assert!(events.iter().all(|e| e["kind"] != "intent"), "{events:?}");
        assert_eq!(events.last().unwrap()["to"], "COMPLETED", "{events:?}");
        let (attempt, texts) = journaled(&env.journal(), "w/work");
        assert_eq!(attempt.state, AttemptState::Completed);
        assert_eq!(texts, [chunks(5)]);
        assert!(attempt.lease.is_none(), "the lease is released");
        assert_eq!(agent.stats().requests["SubscribeToTask"], 1);
        // Human output: the delegation's line, then follow's final line.
        let o = run_with(
            &env,
            &[
                "delegate",
                "w/work2",
                "--agent",
                &agent.url(),
                "--follow",
                "work:2",
            ],
            &[],
        )
        .await;
        assert_eq!(code(&o), 0, "{}", explain(&o));
        let out = stdout(&o);
        assert!(out.contains("delegated w/work2 to"), "{}", explain(&o));
        assert!(out.contains("w/work2 is COMPLETED"), "{}", explain(&o));
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn delegate_follow_stops_at_a_question_with_exit_4() {
    guard(async {
        let agent = agent(Duration::from_millis(50)).await;
        let env = TestEnv::new();
        let o = run_with(
            &env,
            &[
                "delegate",
                "trip/hotel",
                "--agent",
                &agent.url(),
                "--follow",
                "ask",
            ],
            &[],
        )
        .await;
        assert_eq!(code(&o), 4, "{}", explain(&o));
        let out = stdout(&o);
        assert!(out.contains("two rooms or one?"), "{}", explain(&o));
        assert!(out.contains("a2a-recover reply trip/hotel"), "{out}");
        let (a, _) = journaled(&env.journal(), "trip/hotel");
        assert_eq!(a.state, AttemptState::InputRequired);
        assert_eq!(a.question_text().as_deref(), Some("two rooms or one?"));
        // A direct reply has no task: nothing is followed, exit 0.
        let subscribes = agent.stats().requests["SubscribeToTask"];
        let o = run_with(
            &env,
            &[
                "delegate",
                "w/direct",
                "--agent",
                &agent.url(),
                "--follow",
                "--format",
                "json",
                "direct hello",
            ],
            &[],
        )
        .await;
        assert_eq!(code(&o), 0, "{}", explain(&o));
        let s = summary_of(&o, "delegate");
        assert!(s.get("follow").is_none(), "{s}");
        assert_eq!(s["outcomes"]["REPLIED"], 1, "{s}");
        assert_eq!(agent.stats().requests["SubscribeToTask"], subscribes);
        // A re-run of a step already followed to its end exits 0 at once.
        let o = run_with(
            &env,
            &[
                "delegate",
                "trip/hotel",
                "--agent",
                &agent.url(),
                "--follow",
                "ask",
            ],
            &[],
        )
        .await;
        assert_eq!(code(&o), 4, "still waiting for its answer: {}", explain(&o));
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn delegate_follow_crashed_after_event_2_is_finished_by_follow_without_duplicates() {
    guard(async {
        let agent = agent(Duration::from_millis(100)).await;
        let env = TestEnv::new();
        let o = run_with(
            &env,
            &[
                "delegate",
                "w/s",
                "--agent",
                &agent.url(),
                "--follow",
                "--format",
                "json",
                "work:6",
            ],
            &[("A2A_RECOVER_CRASH_AT", "after-event:2")],
        )
        .await;
        assert_eq!(o.status.code(), None, "killed by SIGABRT: {}", explain(&o));
        // The send is journaled; the follow journaled two events and showed at most one.
        let printed = json_lines(&o)
            .iter()
            .filter(|l| l["type"] == "event")
            .count();
        assert!(printed <= 1, "{}", explain(&o));
        let (mid, texts) = journaled(&env.journal(), "w/s");
        assert!(mid.task_id.is_some());
        assert!(!mid.state.is_finished(), "{:?}", mid.state);
        assert!(texts.len() <= 1, "{texts:?}");

        let o = run_with(&env, &["follow", "w/s"], &[]).await;
        assert_eq!(code(&o), 0, "{}", explain(&o));
        let (done, texts) = journaled(&env.journal(), "w/s");
        assert_eq!(done.state, AttemptState::Completed);
        assert_eq!(texts, [chunks(6)], "no chunk duplicated");
        assert_eq!(agent.stats().tasks.len(), 1, "nothing was resent");
        agent.shutdown().await;
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// reconcile --follow-for
// ---------------------------------------------------------------------------------------------

/// A journal in memory-backed /dev/shm where there is one: these tests are about streams and
/// decisions, not about fsync on a busy shared disk (examples/follow_bench.rs measures that).
fn fast_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    }
}

fn send_request(a: &Attempt, text: &str) -> types::SendMessageRequest {
    types::SendMessageRequest {
        message: types::Message {
            message_id: a.message_id.clone(),
            context_id: a.context_id.clone(),
            task_id: None,
            role: types::Role::User,
            parts: vec![types::Part::text(text)],
            metadata: None,
            extensions: None,
            reference_task_ids: None,
        },
        configuration: Some(types::SendMessageConfiguration {
            accepted_output_modes: None,
            task_push_notification_config: None,
            history_length: None,
            return_immediately: Some(true),
        }),
        metadata: None,
        tenant: None,
    }
}

/// Journals `n` steps `w/s0…` bound to the agent, sends each (the journal's ordering: intent,
/// endpoint, send, task), and returns their task ids.
async fn running_tasks(path: &Path, agent: &ScriptedAgent, n: usize, text: &str) -> Vec<String> {
    let j = Journal::open(path, Duration::from_secs(30)).unwrap();
    let client = A2aClient::new(ClientConfig {
        timeout: Duration::from_secs(30),
        max_response_size: 1 << 20,
        stream_idle_timeout: Duration::from_secs(60),
        max_look_size: 64 * 1024 * 1024,
        max_card_size: a2a_recover::a2a::DEFAULT_MAX_CARD_SIZE,
    })
    .unwrap();
    let intents: Vec<NewIntent> = (0..n)
        .map(|i| NewIntent {
            spec: StepSpec::to_agent(
                StepName::parse(&format!("w/s{i}")).unwrap(),
                text,
                agent.card_url(),
            ),
            agent_url: Some(agent.card_url()),
            message_id: uuid::Uuid::new_v4().to_string(),
            context_id: Some(uuid::Uuid::new_v4().to_string()),
        })
        .collect();
    let endpoint = Endpoint {
        url: agent.url(),
        tenant: None,
        binding: ProtocolBinding::default(),
        card_origin: agent.url().trim_end_matches('/').to_owned(),
        credential: None,
        placement: a2a_recover::a2a::Placement::Bearer,
        allow_cross_origin: false,
    };
    let mut sent = Vec::with_capacity(n);
    for outcome in j.create_intents(&intents).unwrap() {
        let IntentOutcome::Created(a) = outcome else {
            panic!("the step existed");
        };
        let a = j
            .set_endpoint(
                a.id,
                &journal::JournaledEndpoint {
                    binding: a2a_recover::a2a::ProtocolBinding::JsonRpcV1,
                    interface_url: agent.url(),
                    tenant: None,
                },
            )
            .unwrap();
        let answer = client
            .send_message(&endpoint, &send_request(&a, text))
            .await
            .unwrap();
        let raw = answer.raw["task"].clone();
        sent.push((a.id, TaskView::from_value(&raw, raw.to_string()).unwrap()));
    }
    let ids = sent.iter().map(|(_, v)| v.task_id.clone()).collect();
    j.apply_tasks(&sent, Source::Send).unwrap();
    ids
}

/// Starts the binary with these arguments, its output collected on a task of the runtime; it
/// is killed when the runtime drops that task (a test that panicked).
fn spawn(env: &TestEnv, args: &[&str]) -> tokio::task::JoinHandle<Output> {
    let mut cmd = tokio::process::Command::from(env.std_cmd());
    cmd.args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = cmd.spawn().expect("spawn binary");
    tokio::spawn(async move { child.wait_with_output().await.expect("wait") })
}

/// How many `SubscribeToTask` requests `agent` has had.
fn subscribes(agent: &ScriptedAgent) -> u64 {
    agent
        .stats()
        .requests
        .get("SubscribeToTask")
        .copied()
        .unwrap_or(0)
}

fn journal_in(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("journal.sqlite3")
}

#[tokio::test]
async fn reconcile_follow_for_completes_a_thousand_running_tasks_at_once() {
    const N: usize = 1000;
    guard(async {
        // Tasks that would run for an hour: each is running when the pass reads it, and the
        // agent completes them all once every one of them is followed.
        let agent = agent(Duration::from_secs(3600)).await;
        let env = TestEnv::new();
        let dir = fast_dir();
        let path = journal_in(&dir);
        let task_ids = running_tasks(&path, &agent, N, "work:3").await;
        let journal_flag = path.display().to_string();
        let handle = spawn(
            &env,
            &[
                "reconcile",
                "--journal",
                &journal_flag,
                "--follow-for",
                "60s",
                "--concurrency",
                "32",
                "--format",
                "json",
            ],
        );
        // Every follow subscribes once; then the tasks end, all at about the same time.
        wait_until_async("every follow subscribed", Duration::from_secs(120), || {
            assert!(!handle.is_finished(), "reconcile ended before following");
            subscribes(&agent) >= N as u64
        })
        .await;
        for id in &task_ids {
            assert!(agent.complete_task(id));
        }
        let o = handle.await.unwrap();
        assert_eq!(code(&o), 0, "{}", explain(&o));
        let s = summary_of(&o, "reconcile");
        assert_eq!(s["followed"]["streams"], N, "{s}");
        assert_eq!(s["followed"]["ends"]["terminal"], N, "{s}");
        assert_eq!(s["exitCode"], 0, "{s}");
        // Every change was printed as an event record, once.
        let events: Vec<Value> = json_lines(&o)
            .into_iter()
            .filter(|l| l["type"] == "event")
            .collect();
        let completed = events.iter().filter(|e| e["to"] == "COMPLETED").count();
        assert_eq!(completed, N, "one COMPLETED event per step");
        let mut ids: Vec<i64> = events.iter().map(|e| e["id"].as_i64().unwrap()).collect();
        let printed = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), printed, "no event printed twice");
        // Read back: every attempt COMPLETED with its artifact, every lease released.
        let j = Journal::open_read_only(&path, Duration::from_secs(10)).unwrap();
        for i in 0..N {
            let record = j
                .step(&StepName::parse(&format!("w/s{i}")).unwrap())
                .unwrap()
                .unwrap();
            assert_eq!(record.attempts.len(), 1);
            let a = record.latest().unwrap();
            assert_eq!(a.state, AttemptState::Completed, "w/s{i}");
            assert!(a.lease.is_none(), "w/s{i}");
            let texts: Vec<String> = j
                .artifacts(a.id)
                .unwrap()
                .iter()
                .map(journal::Artifact::text)
                .collect();
            assert_eq!(texts, ["completed by control"], "w/s{i}");
        }
        let stats = agent.stats();
        assert_eq!(stats.requests["SubscribeToTask"], N as u64);
        assert_eq!(stats.tasks.len(), N, "nothing was resent");
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn reconcile_follow_for_ends_with_exit_3_while_tasks_still_run() {
    guard(async {
        let agent = agent(Duration::from_secs(3600)).await;
        let env = TestEnv::new();
        let dir = fast_dir();
        let path = journal_in(&dir);
        running_tasks(&path, &agent, 3, "work:2").await;
        let journal_flag = path.display().to_string();
        let o = run_with(
            &env,
            &[
                "reconcile",
                "--journal",
                &journal_flag,
                "--follow-for",
                "1s",
                "--format",
                "json",
            ],
            &[],
        )
        .await;
        assert_eq!(code(&o), 3, "{}", explain(&o));
        let s = summary_of(&o, "reconcile");
        assert_eq!(s["followed"]["streams"], 3, "{s}");
        assert_eq!(s["followed"]["ends"]["deadline"], 3, "{s}");
        assert_eq!(s["followed"]["forMs"], 1000, "{s}");
        // The second pass read each task once more: still running.
        assert_eq!(s["outcomes"]["WORKING"], 3, "{s}");
        for i in 0..3 {
            let (a, _) = journaled(&path, &format!("w/s{i}"));
            assert_eq!(a.state, AttemptState::Working, "recorded");
            assert!(a.lease.is_none(), "the lease is released");
        }
        assert_eq!(agent.stats().requests["SubscribeToTask"], 3);
        // Human output says what was followed, then the pass's verdict.
        let o = run_with(
            &env,
            &[
                "reconcile",
                "--journal",
                &journal_flag,
                "--follow-for",
                "200ms",
            ],
            &[],
        )
        .await;
        assert_eq!(code(&o), 3, "{}", explain(&o));
        let out = stdout(&o);
        assert!(
            out.contains("followed 3 running task(s) for up to 200ms: 3 deadline"),
            "{}",
            explain(&o)
        );
        assert!(out.contains("work remains"), "{out}");
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn reconcile_dry_run_with_follow_for_is_a_usage_error() {
    let env = TestEnv::new();
    let o = env.run(["reconcile", "--dry-run", "--follow-for", "1s"]);
    assert_eq!(code(&o), 2, "{}", explain(&o));
    let err = stderr(&o);
    assert!(
        err.contains("--dry-run cannot be combined with --follow-for"),
        "{err}"
    );
    assert!(err.contains("hint:"), "{err}");
    assert!(!env.journal().exists(), "nothing was created");
}

#[tokio::test]
async fn reconcile_follow_for_says_a_question_once() {
    guard(async {
        let agent = agent(Duration::from_millis(100)).await;
        let env = TestEnv::new();
        let o = run_with(
            &env,
            &["delegate", "trip/hotel", "--agent", &agent.url(), "ask"],
            &[],
        )
        .await;
        assert_eq!(code(&o), 0, "{}", explain(&o));
        // Read by the first pass, or followed until it asks: either way said once, exit 4.
        let o = run_with(&env, &["reconcile", "--follow-for", "20s"], &[]).await;
        assert_eq!(code(&o), 4, "{}", explain(&o));
        let out = stdout(&o);
        let line = "trip/hotel (attempt 1): answer the agent's question: \"two rooms or one?\"";
        assert_eq!(out.matches(line).count(), 1, "{}", explain(&o));
        let (a, _) = journaled(&env.journal(), "trip/hotel");
        assert_eq!(a.state, AttemptState::InputRequired);
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_task_followed_to_completed_has_its_effect_verified_by_the_second_pass() {
    guard(async {
        let agent = agent(Duration::from_secs(3600)).await;
        let env = TestEnv::new();
        // The verification looks for a file the test creates: the effect exists.
        std::fs::write(env.path().join("booked"), "yes").unwrap();
        let verify = format!("test -e '{}'", env.path().join("booked").display());
        let o = run_with(
            &env,
            &[
                "delegate",
                "trip/hotel",
                "--agent",
                &agent.url(),
                "--effect",
                "--compensate",
                "cancel it",
                "--verify-cmd",
                &verify,
                "work:3",
            ],
            &[],
        )
        .await;
        assert_eq!(code(&o), 0, "{}", explain(&o));
        let handle = spawn(
            &env,
            &["reconcile", "--follow-for", "60s", "--format", "json"],
        );
        wait_until_async("the follow subscribed", GUARD, || {
            assert!(!handle.is_finished(), "reconcile ended before following");
            subscribes(&agent) >= 1
        })
        .await;
        let (a, _) = journaled(&env.journal(), "trip/hotel");
        assert!(agent.complete_task(a.task_id.as_deref().unwrap()));
        let o = handle.await.unwrap();
        assert_eq!(code(&o), 0, "{}", explain(&o));
        let all = json_lines(&o);
        let completed = all
            .iter()
            .position(|l| l["type"] == "event" && l["to"] == "COMPLETED")
            .unwrap_or_else(|| panic!("{all:?}"));
        let verified = all
            .iter()
            .position(|l| l["type"] == "action" && l["action"] == "verify-effect")
            .unwrap_or_else(|| panic!("{all:?}"));
        assert!(completed < verified, "followed, then decided: {all:?}");
        assert_eq!(all[verified]["detail"]["effect"], "verified", "{all:?}");
        let s = summary_of(&o, "reconcile");
        assert_eq!(s["followed"]["ends"]["terminal"], 1, "{s}");
        let (a, _) = journaled(&env.journal(), "trip/hotel");
        assert_eq!(a.state, AttemptState::Completed);
        assert_eq!(a.effect, Some(journal::EffectState::Verified));
        agent.shutdown().await;
    })
    .await;
}
