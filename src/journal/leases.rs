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
        let now = self.clock.now();
        let me = Lease {
            pid: std::process::id(),
            host: host_name(),
            expires_at: now + chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::MAX),
        };
        self.write("claim the attempt", |tx| {
            let e = self.err("claim the attempt");
            let held = queries::attempt_by_id(tx, id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(id.0))?;
            if let Some(lease) = other_holder(&held, &me, now) {
                return Ok(Claim::HeldBy(lease));
            }
            queries::set_lease(tx, id, Some(&me)).map_err(&e)?;
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
