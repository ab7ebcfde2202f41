//! Leases: which process works on an attempt ([`Journal::claim`], [`Journal::release`]); a
//! lease lapses at its expiry or with its process, and appends no event.

use std::time::Duration;

use super::queries;
use super::{Attempt, AttemptId, Claim, Journal, JournalError, Lease};

impl Journal {
    /// Claims an attempt for this process for `ttl`, in one short transaction.
    ///
    /// Succeeds when the attempt has no lease, when its lease expired, when its owner is this
    /// process (a renewal), or when the owner's pid is dead on this host; otherwise returns the
    /// holder. Leases are coordination, not history: they append no event.
    pub fn claim(&self, id: AttemptId, ttl: Duration) -> Result<Claim, JournalError> {
        self.claim_then(id, ttl, "claim the attempt", |_| Ok(()))
    }

    /// Claims an attempt as [`Journal::claim`] does, then runs `then` in the same transaction
    /// (only when the claim succeeded).
    fn claim_then(
        &self,
        id: AttemptId,
        ttl: Duration,
        action: &'static str,
        then: impl FnOnce(&super::Tx) -> Result<(), JournalError>,
    ) -> Result<Claim, JournalError> {
        let now = self.clock.now();
        let me = Lease {
            pid: std::process::id(),
            host: host_name(),
            expires_at: now + chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::MAX),
        };
        self.write(action, |tx| {
            let e = self.err(action);
            let held = queries::attempt_by_id(tx, id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(id.0))?;
            if let Some(lease) = other_holder(&held, &me, now) {
                return Ok(Claim::HeldBy(lease));
            }
            queries::set_lease(tx, id, Some(&me)).map_err(&e)?;
            then(tx)?;
            Ok(Claim::Claimed(me.clone()))
        })
    }

    /// Releases this process's lease on an attempt (a lease held by another is left alone).
    pub fn release(&self, id: AttemptId) -> Result<(), JournalError> {
        let (pid, host) = (std::process::id(), host_name());
        self.write("release the attempt", |tx| {
            let e = self.err("release the attempt");
            let held = queries::attempt_by_id(tx, id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(id.0))?;
            if held.lease.is_some_and(|l| l.pid == pid && l.host == host) {
                queries::set_lease(tx, id, None).map_err(&e)?;
            }
            Ok(())
        })
    }
}

/// Returns this host's name (for leases).
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// Returns the lease another live process holds on an attempt, if any: a lease that is this
/// process's own, lapsed, or held by a dead pid on this host does not count.
pub(super) fn other_holder(
    held: &Attempt,
    me: &Lease,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Lease> {
    let lease = held.lease.as_ref()?;
    let mine = lease.pid == me.pid && lease.host == me.host;
    let broken = lease.expires_at <= now || (lease.host == me.host && !process_alive(lease.pid));
    (!mine && !broken).then(|| lease.clone())
}

/// Returns whether a process with this pid exists on this host.
fn process_alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    let Some(pid) = rustix::process::Pid::from_raw(raw) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        // It exists but belongs to someone else.
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

impl Journal {
    /// Right before a send or resend: checks, in one transaction, that this process still
    /// holds the attempt's lease (renewing it for `ttl`), and stamps the attempt with the
    /// send's start and its request `timeout` (the in-flight horizon, [`Journal::send_horizon`]).
    /// Returns the holder instead when another live process took the lease meanwhile: nothing
    /// may be sent then.
    pub fn begin_send(
        &self,
        id: AttemptId,
        ttl: Duration,
        timeout: Duration,
    ) -> Result<Claim, JournalError> {
        let now = self.clock.now();
        self.claim_then(id, ttl, "stamp the send", |tx| {
            queries::stamp_send(tx, id, now, timeout).map_err(self.err("stamp the send"))
        })
    }

    /// Returns the end of the in-flight horizon of an attempt's last send: its start plus twice
    /// the request timeout it was made with. Before it, a look that finds nothing proves
    /// nothing (an overloaded agent may still process the send). `None`: no send was stamped
    /// (never sent, or journaled by a binary older than schema 4).
    pub fn send_horizon(
        &self,
        id: AttemptId,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, JournalError> {
        let stamp = self.read("read the send's horizon", |c| queries::send_stamp(c, id))?;
        Ok(stamp.map(|(at, timeout)| {
            at + chrono::Duration::from_std(timeout * 2).unwrap_or(chrono::Duration::MAX)
        }))
    }

    /// Appends an event to an attempt that changes nothing else (a look's report: a send still
    /// in flight, a duplicate task).
    pub fn note_event(
        &self,
        id: AttemptId,
        kind: &'static str,
        detail: &serde_json::Value,
    ) -> Result<(), JournalError> {
        self.change(id, "journal the event", |held, _| {
            Ok(Some(super::change::Change {
                next: held.clone(),
                artifacts: Vec::new(),
                kind,
                detail: detail.clone(),
                force_event: true,
            }))
        })
        .map(|_| ())
    }
}
