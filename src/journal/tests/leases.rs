//! Leases: claims, renewals, broken leases, batch claims released with their records.

use super::*;

/// Writes `lease` on an attempt as another process would.
pub(super) fn set_lease(j: &Journal, id: AttemptId, lease: &Lease) {
    j.store
        .read("set the lease", |c| queries::set_lease(c, id, Some(lease)))
        .unwrap();
}

/// Another process's lease.
pub(super) fn other(owner: Option<&str>, pid: u32, host: &str, expires_at: DateTime<Utc>) -> Lease {
    Lease {
        owner: owner.map(str::to_owned),
        pid,
        host: host.to_owned(),
        expires_at,
    }
}

/// A pid that no process has now (a child that ended).
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

fn claimed(j: &Journal, id: AttemptId) -> bool {
    match j.claim(id, Duration::from_secs(60)).unwrap() {
        Claim::Claimed(l) => {
            assert_eq!(l.owner.as_deref(), Some(owner_id()));
            true
        }
        Claim::HeldBy(_) => false,
    }
}

/// What both stores do alike: claims carry this process's owner id, renewals work, another
/// owner's unexpired lease holds (whatever its pid and host), an expired one is broken, an old
/// lease without an owner is nobody's, and releases leave others' leases alone.
fn leases_by_owner_id(j: &Journal, now: DateTime<Utc>) {
    let a = created(j, "w/s");
    let Claim::Claimed(mine) = j.claim(a.id, Duration::from_secs(60)).unwrap() else {
        panic!("not claimed")
    };
    assert_eq!(mine.pid, std::process::id());
    assert_eq!(mine.host, host_name());
    assert_eq!(mine.owner.as_deref(), Some(owner_id()));
    assert_eq!(j.attempt(a.id).unwrap().lease, Some(mine));
    assert!(claimed(j, a.id), "renewing our own lease works");
    let events = j.event_count().unwrap();
    let later = now + chrono::Duration::minutes(5);
    // A live process on this host (pid 1 always exists) holds it.
    set_lease(j, a.id, &other(Some("o-1"), 1, host_name(), later));
    assert!(
        matches!(j.claim(a.id, Duration::from_secs(60)).unwrap(), Claim::HeldBy(l) if l.pid == 1 && l.owner.as_deref() == Some("o-1"))
    );
    // Another host's unexpired lease holds, whatever its pid (ours included).
    set_lease(
        j,
        a.id,
        &other(Some("o-2"), 999_999_999, "elsewhere", later),
    );
    assert!(!claimed(j, a.id));
    set_lease(
        j,
        a.id,
        &other(Some("o-2"), std::process::id(), "elsewhere", later),
    );
    assert!(
        !claimed(j, a.id),
        "the same pid elsewhere is another process"
    );
    // The same host name in another pid namespace (another container) is another host: its
    // pids are never judged here.
    let name = host_name().split(' ').next().unwrap().to_owned();
    set_lease(
        j,
        a.id,
        &other(Some("o-3"), dead_pid(), &format!("{name} pid:[1]"), later),
    );
    assert!(!claimed(j, a.id), "another pid namespace");
    // A lease written before owner ids (schema 12) with our pid and host name: nobody's, and
    // not released by us.
    set_lease(j, a.id, &other(None, std::process::id(), &name, later));
    j.release(a.id).unwrap();
    assert!(
        j.attempt(a.id).unwrap().lease.is_some(),
        "not ours to release"
    );
    assert!(!claimed(j, a.id));
    // Expired: broken.
    set_lease(j, a.id, &other(Some("o-4"), 1, "elsewhere", now));
    assert!(claimed(j, a.id));
    j.release(a.id).unwrap();
    assert_eq!(j.attempt(a.id).unwrap().lease, None);
    assert_eq!(j.event_count().unwrap(), events, "leases append no events");
}

#[rstest]
fn leases_are_claimed_renewed_and_broken(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
    let fresh = Fresh::new(kind);
    let now: DateTime<Utc> = "2026-11-30T01:00:00Z".parse().unwrap();
    let j = fresh.open().with_clock(Arc::new(FixedClock(now)));
    leases_by_owner_id(&j, now);
    if kind == Kind::Postgres {
        return postgres_breaks_only_by_expiry(&j, now);
    }
    // On SQLite (one host's file) a provably dead holder's lease is broken early: same host
    // identity, and no such pid, or the pid is ours under another owner id (a process that
    // had our pid before us).
    let a = created(&j, "w/dead");
    let later = now + chrono::Duration::minutes(5);
    set_lease(
        &j,
        a.id,
        &other(Some("o-5"), dead_pid(), host_name(), later),
    );
    assert!(claimed(&j, a.id), "a dead pid on this host");
    set_lease(
        &j,
        a.id,
        &other(Some("o-6"), std::process::id(), host_name(), later),
    );
    assert!(claimed(&j, a.id), "our pid under another owner id");
}

/// On PostgreSQL, shared by hosts, no pid is judged, not even on this host: another owner's
/// lease is broken only by expiry.
fn postgres_breaks_only_by_expiry(j: &Journal, now: DateTime<Utc>) {
    let a = created(j, "w/dead");
    let later = now + chrono::Duration::minutes(5);
    set_lease(j, a.id, &other(Some("o-5"), dead_pid(), host_name(), later));
    assert!(!claimed(j, a.id), "a dead pid on this host still holds");
    set_lease(
        j,
        a.id,
        &other(Some("o-6"), std::process::id(), host_name(), later),
    );
    assert!(
        !claimed(j, a.id),
        "our pid under another owner id still holds"
    );
    set_lease(
        j,
        a.id,
        &other(Some("o-6"), std::process::id(), host_name(), now),
    );
    assert!(claimed(j, a.id), "expired");
}

#[rstest]
fn a_batch_claim_skips_held_and_settled_attempts_and_its_records_release_the_leases(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
    let free = created(&j, "w/free");
    let held = created(&j, "w/held");
    let settled = created(&j, "w/settled");
    let held_by = other(
        Some("o-1"),
        1,
        host_name(),
        j.clock.now() + chrono::Duration::minutes(5),
    );
    set_lease(&j, held.id, &held_by);
    j.record_refusal(settled.id, "no").unwrap();
    let endpoint = JournaledEndpoint {
        binding: crate::model::ProtocolBinding::JsonRpcV1,
        interface_url: "http://127.0.0.1:9/".into(),
        tenant: None,
    };
    let items: Vec<_> = [free.id, held.id, settled.id]
        .into_iter()
        .map(|id| (id, Some(endpoint.clone())))
        .collect();
    let claims = j
        .claim_for_send(&items, Duration::from_secs(60), Duration::from_secs(30))
        .unwrap();
    let BatchClaim::Claimed(claimed, true) = &claims[0] else {
        panic!("{claims:?}")
    };
    assert_eq!(
        claimed.interface_url.as_deref(),
        Some("http://127.0.0.1:9/")
    );
    assert_eq!(
        claimed.lease.as_ref().map(|l| l.pid),
        Some(std::process::id())
    );
    assert!(matches!(&claims[1], BatchClaim::HeldBy(_, l) if l.pid == 1));
    assert_eq!(
        j.attempt(held.id).unwrap().interface_url,
        None,
        "held: untouched"
    );
    assert!(matches!(&claims[2], BatchClaim::Settled(a) if a.state == AttemptState::Refused));
    // Claimed again (a renewal): the endpoint was there before, so it may have been sent.
    let again = j
        .claim_for_send(
            &items[..1],
            Duration::from_secs(60),
            Duration::from_secs(30),
        )
        .unwrap();
    assert!(
        matches!(&again[0], BatchClaim::Claimed(_, false)),
        "{again:?}"
    );

    let raw = task_json("t-1", "TASK_STATE_SUBMITTED", "2026-11-30T01:00:00Z");
    let done = j
        .record_sends(&[
            SendRecord {
                attempt: free.id,
                outcome: SendOutcome::Task(view(&raw), Source::Send),
                accepts_context_id: Some("http://127.0.0.1:9/card".into()),
            },
            SendRecord {
                attempt: held.id,
                outcome: SendOutcome::Release,
                accepts_context_id: None,
            },
        ])
        .unwrap();
    let now = done[0].as_ref().unwrap();
    assert_eq!(now.state, AttemptState::Submitted);
    assert_eq!(now.task_id.as_deref(), Some("t-1"));
    assert_eq!(now.lease, None, "released with its answer");
    assert_eq!(
        j.attempt(held.id).unwrap().lease.map(|l| l.pid),
        Some(1),
        "another's lease is left alone"
    );
}

/// Holds a write transaction open on a journal of its own, on a thread, until `go` says; the
/// transaction is scoped to `attempts`, or the whole journal's when `None`.
fn holding<'s>(
    s: &'s std::thread::Scope<'s, '_>,
    fresh: &'s Fresh,
    attempts: Option<Vec<AttemptId>>,
) -> std::sync::mpsc::Sender<()> {
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    s.spawn(move || {
        let j = fresh.open();
        let hold = |_: &Tx| {
            held_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            Ok(())
        };
        match attempts {
            Some(ids) => j.write_attempts(&ids, "hold the attempts", hold),
            None => j.write("hold the journal", hold),
        }
        .unwrap();
    });
    held_rx.recv().unwrap();
    go_tx
}

/// On PostgreSQL, writes confined to attempts (claims, answers, observations) run side by side
/// unless they share an attempt; any other write still has the journal to itself.
#[test]
fn postgres_writes_of_other_attempts_go_on_while_one_attempt_is_written() {
    let fresh = Fresh::new(Kind::Postgres);
    let setup = fresh.open();
    let (a, b) = (created(&setup, "w/a"), created(&setup, "w/b"));
    let other = fresh.open_with(Duration::from_millis(300)).unwrap();
    let busy = |r: Result<Claim, JournalError>| matches!(r, Err(JournalError::Busy { .. }));
    std::thread::scope(|s| {
        let go = holding(s, &fresh, Some(vec![a.id]));
        assert!(claimed(&other, b.id), "another attempt waited");
        other.release(b.id).unwrap();
        assert!(busy(other.claim(a.id, T)), "the same attempt went on");
        let intent = other.create_intents(&[intent("w/c", "x", "http://127.0.0.1:9/")]);
        assert!(
            matches!(intent, Err(JournalError::Busy { .. })),
            "{intent:?}"
        );
        go.send(()).unwrap();
    });
    std::thread::scope(|s| {
        let go = holding(s, &fresh, None);
        assert!(busy(other.claim(b.id, T)), "an attempt write went on");
        go.send(()).unwrap();
    });
    assert!(claimed(&other, a.id));
}
