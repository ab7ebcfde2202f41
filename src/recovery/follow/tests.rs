use std::cell::RefCell;

use serde_json::Value;
use serde_json::json;

use super::fake::{Fake, ends, stays_open};
use super::remote::Item;
use super::*;
use crate::a2a::RpcError;
use crate::a2a::TaskView;
use crate::journal::{IntentOutcome, NewIntent, StepSpec};

const TASK: &str = "t-1";
const AGENT: &str = "http://127.0.0.1:9/.well-known/agent-card.json";

struct Setup {
    _dir: tempfile::TempDir,
    journal: Journal,
    target: FollowTarget,
}

/// A journal holding `w/s` attempt 1, sent, with task `t-1` SUBMITTED.
async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(&dir.path().join("j.sqlite3"), Duration::from_secs(10)).unwrap();
    let step = StepName::parse("w/s").unwrap();
    let IntentOutcome::Created(attempt) = journal
        .create_intents(&[NewIntent {
            spec: StepSpec::to_agent(step.clone(), "work:3", AGENT),
            agent_url: Some(AGENT.to_owned()),
            message_id: "m-1".to_owned(),
            context_id: Some("c-1".to_owned()),
        }])
        .unwrap()
        .remove(0)
    else {
        panic!("step existed");
    };
    journal
        .set_endpoint(
            attempt.id,
            &crate::journal::JournaledEndpoint {
                binding: crate::a2a::ProtocolBinding::JsonRpcV1,
                interface_url: "http://127.0.0.1:9/".to_owned(),
                tenant: None,
            },
        )
        .unwrap();
    let sent = task("TASK_STATE_SUBMITTED", 0, None);
    journal
        .apply_task(
            attempt.id,
            &TaskView::from_value(&sent, sent.to_string()).unwrap(),
            Source::Send,
        )
        .unwrap();
    let attempt = journal.attempt(attempt.id).unwrap();
    let target = FollowTarget::new(&step, &attempt, false, JournaledWire::default())
        .await
        .unwrap();
    Setup {
        _dir: dir,
        journal,
        target,
    }
}

fn ts(n: u32) -> String {
    format!("2026-11-30T01:00:{n:02}.000000Z")
}

fn task(state: &str, t: u32, artifact: Option<&str>) -> Value {
    let mut v = json!({"id": TASK, "contextId": "c-1",
                       "status": {"state": state, "timestamp": ts(t)}});
    if let Some(text) = artifact {
        v["artifacts"] = json!([{"artifactId": "result", "name": "result",
                                 "parts": [{"text": text}]}]);
    }
    v
}

#[expect(clippy::unnecessary_wraps, reason = "scripted answers are Results")]
fn snapshot(state: &str, t: u32, artifact: Option<&str>) -> Result<Item, A2aError> {
    Ok(Item::Task(task(state, t, artifact)))
}

#[expect(clippy::unnecessary_wraps, reason = "scripted answers are Results")]
fn status(state: &str, t: u32, question: Option<&str>) -> Result<Item, A2aError> {
    let mut v = json!({"taskId": TASK, "contextId": "c-1",
                       "status": {"state": state, "timestamp": ts(t)}});
    if let Some(q) = question {
        v["status"]["message"] = json!({"messageId": "q", "role": "ROLE_AGENT",
                                        "parts": [{"text": q}]});
    }
    Ok(Item::Status(v))
}

#[expect(clippy::unnecessary_wraps, reason = "scripted answers are Results")]
fn chunk(text: &str, append: bool, last: bool) -> Result<Item, A2aError> {
    Ok(Item::Artifact(json!({"taskId": TASK, "contextId": "c-1",
        "artifact": {"artifactId": "result", "parts": [{"text": text}]},
        "append": append, "lastChunk": last})))
}

fn rpc(code: i64) -> A2aError {
    A2aError::Rpc {
        url: "http://127.0.0.1:9/".to_owned(),
        method: "SubscribeToTask",
        error: RpcError {
            code,
            message: "scripted".to_owned(),
            data: None,
        },
    }
}

fn refused_connection() -> A2aError {
    A2aError::Connect {
        url: "http://127.0.0.1:9/".to_owned(),
        method: "SubscribeToTask",
        detail: "connection refused".to_owned(),
        why: crate::a2a::Unreached::Refused,
    }
}

fn reset() -> A2aError {
    A2aError::Transport {
        url: "http://127.0.0.1:9/".to_owned(),
        method: "SubscribeToTask",
        detail: "connection reset".to_owned(),
        transient: true,
    }
}

fn opts(seed: u64) -> FollowOptions {
    FollowOptions {
        seed: Some(seed),
        ..FollowOptions::default()
    }
}

/// A sink keeping the progress a follow told.
#[derive(Default)]
struct Seen(RefCell<Vec<Progress>>);

impl crate::recovery::Sink for Seen {
    fn event(&self, event: crate::recovery::Event<'_>) -> anyhow::Result<()> {
        if let crate::recovery::Event::Followed { progress, .. } = event {
            self.0.borrow_mut().push(progress.clone());
        }
        Ok(())
    }
}

/// Runs a follow, collecting what its sink was told.
async fn run(s: &Setup, fake: &Fake, opts: &FollowOptions) -> (FollowOutcome, Vec<Progress>) {
    let seen = Seen::default();
    let out = follow_with(&s.journal, fake, &s.target, opts, &seen)
        .await
        .unwrap();
    (out, seen.0.into_inner())
}

fn delays(seen: &[Progress]) -> Vec<(u32, Duration)> {
    seen.iter()
        .filter_map(|p| match p {
            Progress::Waiting { streak, delay, .. } => Some((*streak, *delay)),
            Progress::Observed { .. } => None,
        })
        .collect()
}

fn artifact_text(s: &Setup) -> Vec<String> {
    s.journal
        .artifacts(s.target.attempt)
        .unwrap()
        .iter()
        .map(crate::journal::Artifact::text)
        .collect()
}

fn script(subs: Vec<fake::Subscription>, gets: Vec<Result<Value, A2aError>>) -> Fake {
    let f = Fake::default();
    f.subscribes.borrow_mut().extend(subs);
    f.gets.borrow_mut().extend(gets);
    f
}

#[tokio::test(start_paused = true)]
async fn drops_are_resubscribed_and_the_snapshot_replaces_state() {
    let s = setup().await;
    let fake = script(
        vec![
            // EOF after two events.
            ends(vec![
                snapshot("TASK_STATE_WORKING", 1, None),
                chunk("chunk 1;", false, false),
            ]),
            // A reset after the snapshot, which already holds chunk 2 we never saw.
            ends(vec![
                snapshot("TASK_STATE_WORKING", 3, Some("chunk 1;chunk 2;")),
                Err(reset()),
            ]),
            ends(vec![
                snapshot("TASK_STATE_WORKING", 4, Some("chunk 1;chunk 2;")),
                status("TASK_STATE_WORKING", 5, Some("step 3/3")),
                chunk("chunk 3;", true, true),
                status("TASK_STATE_COMPLETED", 6, None),
            ]),
        ],
        vec![Ok(task(
            "TASK_STATE_COMPLETED",
            6,
            Some("chunk 1;chunk 2;chunk 3;"),
        ))],
    );
    let (out, seen) = run(&s, &fake, &opts(1)).await;
    assert_eq!(out.end, FollowEnd::Terminal(AttemptState::Completed));
    assert_eq!(out.exit_code(), crate::exit::OK);
    assert_eq!(out.reconnects, 2);
    assert_eq!(artifact_text(&s), ["chunk 1;chunk 2;chunk 3;"]);
    // Two drops, each followed by a wait of at most the first ceiling (an event came).
    assert_eq!(delays(&seen).len(), 2);
    assert!(
        delays(&seen)
            .iter()
            .all(|(streak, d)| *streak == 0 && *d <= BACKOFF_BASE)
    );
    // The final GetTask after the terminal event changed nothing: the stream had it all.
    assert_eq!(
        *fake.calls.borrow(),
        ["subscribe", "subscribe", "subscribe", "get"]
    );
    assert_eq!(out.events, 8);
    assert!(out.attempt.lease.is_none(), "the lease is released");
}

#[tokio::test(start_paused = true)]
async fn backoff_is_full_jitter_capped_at_thirty_seconds_on_tokio_time() {
    let s = setup().await;
    let fake = script(vec![Err(refused_connection())], vec![]);
    let o = FollowOptions {
        max_reconnects: 40,
        ..opts(7)
    };
    let start = Instant::now();
    let (out, seen) = run(&s, &fake, &o).await;
    assert_eq!(out.end, FollowEnd::ReconnectsSpent);
    assert_eq!(out.exit_code(), crate::exit::WORK_REMAINS);
    assert_eq!(out.reconnects, 40);
    let d = delays(&seen);
    assert_eq!(d.len(), 40);
    for (i, (streak, delay)) in d.iter().enumerate() {
        assert_eq!(*streak as usize, i);
        let ceiling = BACKOFF_BASE
            .saturating_mul(1 << (*streak).min(20))
            .min(BACKOFF_CAP);
        assert!(
            *delay <= ceiling,
            "reconnect {i}: {delay:?} over {ceiling:?}"
        );
    }
    // The waits are tokio sleeps: the paused clock moved by their sum (tokio's timer wheel
    // rounds each sleep up to the next millisecond).
    let total: Duration = d.iter().map(|(_, d)| *d).sum();
    let elapsed = start.elapsed();
    assert!(
        elapsed
            .checked_sub(total)
            .is_some_and(|extra| extra <= Duration::from_millis(40)),
        "{elapsed:?} for {total:?} of waits"
    );
    // Spread over [0, 30 s] once capped (35 draws at the cap).
    let capped: Vec<f64> = d[5..].iter().map(|(_, d)| d.as_secs_f64()).collect();
    let (lo, hi) = capped
        .iter()
        .fold((f64::MAX, 0.0_f64), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
    assert!(lo < 6.0 && hi > 24.0, "capped delays span {lo}..{hi}");
    // Same seed, same delays; another seed, others.
    let again = setup().await;
    let (_, seen2) = run(&again, &script(vec![Err(refused_connection())], vec![]), &o).await;
    assert_eq!(delays(&seen2), d);
    let other = setup().await;
    let (_, seen3) = run(
        &other,
        &script(vec![Err(refused_connection())], vec![]),
        &FollowOptions {
            seed: Some(8),
            ..o.clone()
        },
    )
    .await;
    assert_ne!(delays(&seen3), d);
}

#[tokio::test(start_paused = true)]
async fn first_delays_spread_over_the_first_ceiling_across_seeds() {
    let s = setup().await;
    let mut firsts = Vec::new();
    for seed in 0..40 {
        let fake = script(vec![Err(refused_connection())], vec![]);
        let (_, seen) = run(
            &s,
            &fake,
            &FollowOptions {
                max_reconnects: 1,
                ..opts(seed)
            },
        )
        .await;
        firsts.push(delays(&seen)[0].1.as_secs_f64());
    }
    assert!(firsts.iter().all(|d| (0.0..=1.0).contains(d)));
    let below = firsts.iter().filter(|d| **d < 0.5).count();
    assert!(
        (8..=32).contains(&below),
        "{below} of 40 below half: {firsts:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_event_resets_the_backoff() {
    let s = setup().await;
    let fake = script(
        vec![
            Err(refused_connection()),
            Err(refused_connection()),
            Err(refused_connection()),
            ends(vec![
                snapshot("TASK_STATE_WORKING", 2, None),
                status("TASK_STATE_WORKING", 3, None),
            ]),
            Err(refused_connection()),
            ends(vec![snapshot("TASK_STATE_COMPLETED", 4, Some("done"))]),
        ],
        vec![Ok(task("TASK_STATE_COMPLETED", 4, Some("done")))],
    );
    let (out, seen) = run(&s, &fake, &opts(3)).await;
    assert_eq!(out.end, FollowEnd::Terminal(AttemptState::Completed));
    let streaks: Vec<u32> = delays(&seen).iter().map(|(s, _)| *s).collect();
    assert_eq!(streaks, [0, 1, 2, 0, 1]);
    assert!(delays(&seen)[3].1 <= BACKOFF_BASE);
    assert_eq!(out.reconnects, 5);
}

#[tokio::test(start_paused = true)]
async fn a_snapshot_that_brings_nothing_does_not_reset_the_streak() {
    let s = setup().await;
    // Like the JS server with no live executor: the same snapshot, then the end, each time.
    let fake = script(
        vec![ends(vec![snapshot("TASK_STATE_WORKING", 2, None)])],
        vec![],
    );
    let (out, seen) = run(
        &s,
        &fake,
        &FollowOptions {
            max_reconnects: 4,
            ..opts(5)
        },
    )
    .await;
    assert_eq!(out.end, FollowEnd::ReconnectsSpent);
    let streaks: Vec<u32> = delays(&seen).iter().map(|(s, _)| *s).collect();
    // The first snapshot changed SUBMITTED to WORKING; the repeats changed nothing.
    assert_eq!(streaks, [0, 1, 2, 3]);
    assert_eq!(out.changes, 1);
}

#[tokio::test(start_paused = true)]
async fn finished_while_away_is_read_with_get_task() {
    let s = setup().await;
    let fake = script(
        vec![Err(rpc(-32004))],
        vec![Ok(task("TASK_STATE_COMPLETED", 9, Some("booked")))],
    );
    let (out, seen) = run(&s, &fake, &opts(1)).await;
    assert_eq!(out.end, FollowEnd::Terminal(AttemptState::Completed));
    assert_eq!(out.reconnects, 0);
    assert_eq!(artifact_text(&s), ["booked"]);
    assert!(delays(&seen).is_empty());
    assert_eq!(*fake.calls.borrow(), ["subscribe", "get"]);
    // -32004 is an answer, not a failure: no read-failed event.
    let step = StepName::parse("w/s").unwrap();
    let kinds: Vec<String> = s
        .journal
        .events_of_step(&step)
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert!(!kinds.iter().any(|k| k == "read-failed"), "{kinds:?}");
}

/// A stream that floods events for another task: the first of a run is journaled (one
/// `read-failed` event, not one per event), and once they have come for longer than the
/// idle timeout with nothing for this task, the stream counts as silent: resubscribed, and
/// the follow ends when its reconnects are spent (before, it ran and wrote forever).
#[tokio::test(start_paused = true)]
async fn a_flood_of_events_for_another_task_writes_once_and_ends() {
    let s = setup().await;
    let other = |t: u32| {
        Ok(Item::Status(json!({"taskId": "other", "contextId": "c-1",
            "status": {"state": "TASK_STATE_WORKING", "timestamp": ts(t % 60)}})))
    };
    let mut items = vec![snapshot("TASK_STATE_WORKING", 1, None)];
    items.extend((0..500).map(other));
    let fake = script(vec![stays_open(items)], vec![]);
    let o = FollowOptions {
        max_reconnects: 2,
        idle: Duration::ZERO,
        ..opts(3)
    };
    let (out, _) = run(&s, &fake, &o).await;
    assert_eq!(out.end, FollowEnd::ReconnectsSpent);
    assert_eq!(out.reconnects, 2);
    let kinds: Vec<String> = s
        .journal
        .events_of_step(&StepName::parse("w/s").unwrap())
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    let failed = kinds.iter().filter(|k| *k == "read-failed").count();
    // One per subscription (three: the first and two reconnects), not one per event.
    assert_eq!(failed, 3, "{kinds:?}");
}

#[tokio::test(start_paused = true)]
async fn an_agent_that_cannot_stream_is_polled() {
    let s = setup().await;
    let fake = script(
        vec![Err(rpc(-32004))],
        vec![
            Ok(task("TASK_STATE_WORKING", 1, None)),
            Ok(task("TASK_STATE_WORKING", 1, None)),
            Ok(task("TASK_STATE_WORKING", 2, Some("chunk 1;"))),
            Ok(task("TASK_STATE_COMPLETED", 3, Some("chunk 1;chunk 2;"))),
        ],
    );
    let (out, seen) = run(&s, &fake, &opts(2)).await;
    assert_eq!(out.end, FollowEnd::Terminal(AttemptState::Completed));
    assert_eq!(out.polls, 3);
    assert_eq!(out.reconnects, 3);
    assert_eq!(artifact_text(&s), ["chunk 1;chunk 2;"]);
    // The unchanged poll did not reset the streak; the changed one did.
    let streaks: Vec<u32> = delays(&seen).iter().map(|(s, _)| *s).collect();
    assert_eq!(streaks, [0, 1, 0]);
    assert_eq!(
        *fake.calls.borrow(),
        ["subscribe", "get", "get", "get", "get"]
    );
}

#[tokio::test(start_paused = true)]
async fn unknown_on_subscribe_and_get_is_lost() {
    let s = setup().await;
    let fake = script(vec![Err(rpc(-32001))], vec![Err(rpc(-32001))]);
    let (out, _) = run(&s, &fake, &opts(1)).await;
    assert_eq!(out.end, FollowEnd::Lost);
    assert_eq!(out.exit_code(), crate::exit::NEEDS_HUMAN);
    assert_eq!(out.attempt.state, AttemptState::Lost);
}

#[tokio::test(start_paused = true)]
async fn a_stream_left_open_at_an_interruption_stops_by_itself() {
    for (state, want) in [
        ("TASK_STATE_INPUT_REQUIRED", AttemptState::InputRequired),
        ("TASK_STATE_AUTH_REQUIRED", AttemptState::AuthRequired),
    ] {
        let s = setup().await;
        let fake = script(
            vec![stays_open(vec![
                snapshot("TASK_STATE_WORKING", 1, None),
                status(state, 2, Some("two rooms or one?")),
            ])],
            vec![],
        );
        let start = Instant::now();
        // Were it to wait for the stream to end, the deadline would end it instead.
        let o = FollowOptions {
            deadline: Some(start + Duration::from_secs(600)),
            ..opts(1)
        };
        let (out, _) = run(&s, &fake, &o).await;
        assert_eq!(out.end, FollowEnd::Interrupted(want));
        assert_eq!(out.exit_code(), crate::exit::NEEDS_HUMAN);
        assert_eq!(
            out.attempt.question_text().as_deref(),
            Some("two rooms or one?")
        );
        assert_eq!(
            start.elapsed(),
            Duration::ZERO,
            "it did not wait for the stream to end"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn terminal_never_regresses_and_older_statuses_are_ignored() {
    let s = setup().await;
    let fake = script(
        vec![ends(vec![
            snapshot("TASK_STATE_WORKING", 5, None),
            status("TASK_STATE_WORKING", 3, Some("stale")),
            status("TASK_STATE_COMPLETED", 6, None),
        ])],
        // A misbehaving agent reports WORKING after COMPLETED.
        vec![Ok(task("TASK_STATE_WORKING", 7, None))],
    );
    let (out, _) = run(&s, &fake, &opts(1)).await;
    assert_eq!(out.end, FollowEnd::Terminal(AttemptState::Completed));
    assert_eq!(out.attempt.state, AttemptState::Completed);
    assert_eq!(
        out.attempt.status_timestamp.as_deref(),
        Some(ts(6).as_str())
    );
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_the_least_wait_and_one_past_the_cap_stops_the_follow() {
    let s = setup().await;
    let busy = |secs| A2aError::Http {
        url: "http://127.0.0.1:9/".to_owned(),
        method: "SubscribeToTask",
        status: 503,
        retry_after: Some(Duration::from_secs(secs)),
        snippet: String::new(),
        rpc: None,
        reason: None,
        unattributed: false,
    };
    let fake = script(
        vec![
            Err(busy(20)),
            Err(busy(3600)),
            ends(vec![snapshot("TASK_STATE_COMPLETED", 4, None)]),
        ],
        vec![Ok(task("TASK_STATE_COMPLETED", 4, None))],
    );
    let (out, seen) = run(&s, &fake, &opts(1)).await;
    // An hour is not waited for: the follow stops (exit 3), naming when to try again.
    let FollowEnd::Skipped(reason) = &out.end else {
        panic!("{:?}", out.end)
    };
    assert!(
        reason.contains("asked to wait 3600s (Retry-After), longer than 30s; not tried again"),
        "{reason}"
    );
    assert_eq!(out.exit_code(), crate::exit::WORK_REMAINS);
    let d: Vec<Duration> = delays(&seen).into_iter().map(|(_, d)| d).collect();
    assert_eq!(d.len(), 1);
    assert!(
        d[0] >= Duration::from_secs(20) && d[0] <= BACKOFF_CAP,
        "{d:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_past_the_deadline_stops_the_follow() {
    let s = setup().await;
    let fake = script(
        vec![
            Err(A2aError::Http {
                url: "http://127.0.0.1:9/".to_owned(),
                method: "SubscribeToTask",
                status: 429,
                retry_after: Some(Duration::from_secs(20)),
                snippet: String::new(),
                rpc: None,
                reason: None,
                unattributed: false,
            }),
            ends(vec![snapshot("TASK_STATE_COMPLETED", 4, None)]),
        ],
        vec![],
    );
    let o = FollowOptions {
        deadline: Some(Instant::now() + Duration::from_secs(10)),
        ..opts(1)
    };
    let (out, seen) = run(&s, &fake, &o).await;
    let FollowEnd::Skipped(reason) = &out.end else {
        panic!("{:?}", out.end)
    };
    assert!(reason.contains("left before --until"), "{reason}");
    assert!(delays(&seen).is_empty(), "waited");
}

#[tokio::test(start_paused = true)]
async fn a_refusal_stops_without_retrying() {
    let s = setup().await;
    let fake = script(
        vec![Err(A2aError::Http {
            url: "http://127.0.0.1:9/".to_owned(),
            method: "SubscribeToTask",
            status: 401,
            retry_after: None,
            snippet: String::new(),
            rpc: None,
            reason: None,
            unattributed: false,
        })],
        vec![],
    );
    let (out, _) = run(&s, &fake, &opts(1)).await;
    assert!(
        matches!(out.end, FollowEnd::Failed { code: 4, .. }),
        "{:?}",
        out.end
    );
    assert_eq!(out.reconnects, 0);
    assert!(out.attempt.error.as_deref().unwrap().contains("401"));
}

#[tokio::test(start_paused = true)]
async fn the_deadline_ends_a_running_follow_and_releases_the_lease() {
    let s = setup().await;
    let fake = script(
        vec![stays_open(vec![snapshot("TASK_STATE_WORKING", 1, None)])],
        vec![],
    );
    let o = FollowOptions {
        deadline: Some(Instant::now() + Duration::from_secs(5)),
        ..opts(1)
    };
    let (out, _) = run(&s, &fake, &o).await;
    assert_eq!(out.end, FollowEnd::Deadline);
    assert_eq!(out.exit_code(), crate::exit::WORK_REMAINS);
    assert_eq!(out.attempt.state, AttemptState::Working);
    assert!(out.attempt.lease.is_none());
}

#[tokio::test(start_paused = true)]
async fn events_for_another_task_are_ignored() {
    let s = setup().await;
    let mut stranger = task("TASK_STATE_COMPLETED", 2, None);
    stranger["id"] = json!("t-other");
    let fake = script(
        vec![ends(vec![
            Ok(Item::Task(stranger)),
            status("TASK_STATE_COMPLETED", 3, None),
        ])],
        vec![Ok(task("TASK_STATE_COMPLETED", 3, None))],
    );
    let (out, _) = run(&s, &fake, &opts(1)).await;
    assert_eq!(out.end, FollowEnd::Terminal(AttemptState::Completed));
    assert_eq!(out.attempt.task_id.as_deref(), Some(TASK));
    assert_eq!(out.events, 2, "the stranger is not counted");
}

#[tokio::test]
async fn a_target_needs_a_task_and_an_endpoint() {
    let s = setup().await;
    let mut a = s.journal.attempt(s.target.attempt).unwrap();
    assert_eq!(s.target.task_id, TASK);
    assert_eq!(s.target.endpoint.card_origin, "http://127.0.0.1:9");
    a.state = AttemptState::Intent;
    a.task_id = None;
    assert!(matches!(
        FollowTarget::new(&s.target.step, &a, false, JournaledWire::default()).await,
        Err(TargetError::NoTask { .. })
    ));
    let mut b = s.journal.attempt(s.target.attempt).unwrap();
    b.token_env = Some("A2A_RECOVER_TEST_SURELY_UNSET_VARIABLE".to_owned());
    assert!(matches!(
        FollowTarget::new(&s.target.step, &b, false, JournaledWire::default()).await,
        Err(TargetError::Wire(A2aError::Credential { .. }))
    ));
}

/// A sink keeping the bytes of artifact text the journal held when the first event was shown.
struct HeldAtFirst<'j> {
    journal: &'j Journal,
    attempt: crate::journal::AttemptId,
    bytes: RefCell<Option<usize>>,
}

impl crate::recovery::Sink for HeldAtFirst<'_> {
    fn event(&self, event: crate::recovery::Event<'_>) -> anyhow::Result<()> {
        if let crate::recovery::Event::Followed {
            progress: Progress::Observed { .. },
            ..
        } = event
            && self.bytes.borrow().is_none()
        {
            let artifacts = self.journal.artifacts(self.attempt)?;
            let text = artifacts.iter().map(|a| a.text().len()).sum();
            *self.bytes.borrow_mut() = Some(text);
        }
        Ok(())
    }
}

/// A stream whose large events arrive faster than they are journaled is read ahead about
/// `MAX_PENDING_BYTES` at a time, not `MAX_PENDING` events (40 chunks of 64 KiB would hold
/// 2.5 MiB): the first group commit holds 4 chunks, and every chunk is journaled in order.
#[tokio::test(start_paused = true)]
async fn a_fast_stream_of_large_chunks_is_read_ahead_256_kib_at_a_time() {
    let s = setup().await;
    let text = "c".repeat(64 * 1024);
    let mut items = vec![snapshot("TASK_STATE_WORKING", 1, None)];
    items.extend((0..40).map(|i| chunk(&text, i > 0, i == 39)));
    items.push(status("TASK_STATE_COMPLETED", 2, None));
    let fake = script(
        vec![ends(items)],
        vec![Ok(task("TASK_STATE_COMPLETED", 2, None))],
    );
    let held = HeldAtFirst {
        journal: &s.journal,
        attempt: s.target.attempt,
        bytes: RefCell::new(None),
    };
    let out = follow_with(&s.journal, &fake, &s.target, &opts(1), &held)
        .await
        .unwrap();
    assert_eq!(out.end, FollowEnd::Terminal(AttemptState::Completed));
    assert_eq!(held.bytes.into_inner(), Some(4 * text.len()));
    assert_eq!(artifact_text(&s), vec![text.repeat(40)]);
}
