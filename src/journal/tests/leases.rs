//! Leases: claims, renewals, broken leases, batch claims released with their records.

use super::*;

#[rstest]
fn leases_are_claimed_renewed_and_broken(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
    let fresh = Fresh::new(kind);
    let now: DateTime<Utc> = "2026-11-30T01:00:00Z".parse().unwrap();
    let j = fresh.open().with_clock(Arc::new(FixedClock(now)));
    let a = created(&j, "w/s");
    let Claim::Claimed(mine) = j.claim(a.id, Duration::from_secs(60)).unwrap() else {
        panic!("not claimed")
    };
    assert_eq!(mine.pid, std::process::id());
    // Renewing our own lease works.
    assert!(matches!(
        j.claim(a.id, Duration::from_secs(60)).unwrap(),
        Claim::Claimed(_)
    ));
    let events = j.event_count().unwrap();

    let set = |pid: u32, host: &str, expires: DateTime<Utc>| {
        let lease = Lease {
            pid,
            host: host.to_owned(),
            expires_at: expires,
        };
        j.store
            .read("set the lease", |c| {
                queries::set_lease(c, a.id, Some(&lease))
            })
            .unwrap();
    };
    let later = now + chrono::Duration::minutes(5);
    // A live process on this host (pid 1 always exists) holds it.
    set(1, &host_name(), later);
    assert!(
        matches!(j.claim(a.id, Duration::from_secs(60)).unwrap(), Claim::HeldBy(l) if l.pid == 1)
    );
    // Another host's unexpired lease holds, whatever its pid.
    set(999_999_999, "elsewhere", later);
    assert!(matches!(
        j.claim(a.id, Duration::from_secs(60)).unwrap(),
        Claim::HeldBy(_)
    ));
    // Expired: broken.
    set(1, "elsewhere", now - chrono::Duration::seconds(1));
    assert!(matches!(
        j.claim(a.id, Duration::from_secs(60)).unwrap(),
        Claim::Claimed(_)
    ));
    // A dead owner on this host: broken.
    let dead = {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    set(dead, &host_name(), later);
    assert!(matches!(
        j.claim(a.id, Duration::from_secs(60)).unwrap(),
        Claim::Claimed(_)
    ));
    j.release(a.id).unwrap();
    assert_eq!(j.attempt(a.id).unwrap().lease, None);
    assert_eq!(j.event_count().unwrap(), events, "leases append no events");
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
    let other = Lease {
        pid: 1,
        host: host_name(),
        expires_at: j.clock.now() + chrono::Duration::minutes(5),
    };
    j.store
        .read("set the lease", |c| {
            queries::set_lease(c, held.id, Some(&other))
        })
        .unwrap();
    j.record_refusal(settled.id, "no").unwrap();
    let endpoint = JournaledEndpoint {
        binding: crate::a2a::ProtocolBinding::JsonRpcV1,
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
