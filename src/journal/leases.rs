//! Leases: which process works on an attempt ([`Journal::claim`], [`Journal::release`]); a
//! lease lapses at its expiry, and appends no event.
//!
//! A lease carries its owner's random id (a UUIDv4 made once per process, [`owner_id`]) and is
//! "mine" only when the ids match: two containers that are both pid 1 on hosts of the same name
//! never take each other's leases for their own. On SQLite (one host's file) a lease is also
//! broken early when its holder is provably dead: same host identity ([`host_name`]: the host
//! name and the pid namespace, so two containers of the same name never judge each other's
//! pids) and no such pid. On PostgreSQL, shared by hosts, a lease held by another owner is
//! broken only by expiry.

use std::sync::OnceLock;
use std::time::Duration;

use super::queries;
use super::store::Store;
use super::{Attempt, AttemptId, Claim, Journal, JournalError, Lease};

impl Journal {
    /// Claims an attempt for this process for `ttl`, in one short transaction.
    ///
    /// Succeeds when the attempt has no lease, when its lease expired, when its owner is this
    /// process (a renewal), or (SQLite) when its owner is provably dead; otherwise returns the
    /// holder. Leases are coordination, not history: they append no event.
    pub fn claim(&self, id: AttemptId, ttl: Duration) -> Result<Claim, JournalError> {
        Ok(self.claim_row(id, ttl)?.0)
    }

    /// Claims an attempt as [`Journal::claim`] does, and returns it as journaled after the
    /// claim (with this process's lease when it succeeded), read in the claim's transaction:
    /// nothing needs to read it back.
    pub fn claim_row(
        &self,
        id: AttemptId,
        ttl: Duration,
    ) -> Result<(Claim, Attempt), JournalError> {
        self.claim_then(id, ttl, "claim the attempt", None)
    }

    /// Claims an attempt as [`Journal::claim`] does and, when it succeeds and `send_timeout`
    /// is given, stamps the attempt with a send starting now (in the same statement); returns
    /// the attempt as journaled after.
    fn claim_then(
        &self,
        id: AttemptId,
        ttl: Duration,
        action: &'static str,
        send_timeout: Option<Duration>,
    ) -> Result<(Claim, Attempt), JournalError> {
        let now = self.clock.now();
        let me = my_lease(now, ttl);
        self.write_attempts(&[id], action, |tx| {
            let e = self.err(action);
            let held = queries::attempt_by_id(tx, id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(id.0))?;
            if let Some(lease) = self.other_holder(&held, &me, now) {
                return Ok((Claim::HeldBy(lease), held));
            }
            match send_timeout {
                Some(timeout) => {
                    let send = queries::SendStamp { at: now, timeout };
                    queries::set_lease_and_stamp_send(tx, id, &me, send)
                }
                None => queries::set_lease(tx, id, Some(&me)),
            }
            .map_err(&e)?;
            let written = queries::attempt_by_id(tx, id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(id.0))?;
            Ok((Claim::Claimed(me.clone()), written))
        })
    }

    /// Releases this process's lease on an attempt (a lease held by another is left alone).
    pub fn release(&self, id: AttemptId) -> Result<(), JournalError> {
        self.write_attempts(&[id], "release the attempt", |tx| {
            let e = self.err("release the attempt");
            let held = queries::attempt_by_id(tx, id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(id.0))?;
            if is_mine(held.lease.as_ref()) {
                queries::set_lease(tx, id, None).map_err(&e)?;
            }
            Ok(())
        })
    }

    /// Returns the lease another live process holds on an attempt, if any: a lease that is this
    /// process's own or lapsed does not count, nor (SQLite only) one whose holder is provably
    /// dead (same host identity, no such pid, or the pid is this process's and the owner id is
    /// not).
    pub(super) fn other_holder(
        &self,
        held: &Attempt,
        me: &Lease,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Option<Lease> {
        let lease = held.lease.as_ref()?;
        let mine = lease.owner.is_some() && lease.owner == me.owner;
        let dead = matches!(self.store, Store::Sqlite(_))
            && identity().provable
            && lease.host == me.host
            && (lease.pid == me.pid || !process_alive(lease.pid));
        let broken = lease.expires_at <= now || dead;
        if !mine && !broken {
            tracing::debug!(
                "attempt {}: leased by pid {} on {} until {}",
                held.id.0,
                lease.pid,
                lease.host,
                lease.expires_at
            );
        }
        (!mine && !broken).then(|| lease.clone())
    }
}

/// This process's lease identity, made once.
struct Identity {
    /// The owner id: a random UUIDv4.
    owner: String,
    /// The host name (or the test-only override).
    name: String,
    /// The host name and the pid namespace.
    host: String,
    /// Whether the pid namespace was read: only then can a dead pid be proven.
    provable: bool,
}

fn identity() -> &'static Identity {
    static ME: OnceLock<Identity> = OnceLock::new();
    ME.get_or_init(|| {
        let name = std::env::var(crate::env::TEST_HOST)
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| {
                rustix::system::uname()
                    .nodename()
                    .to_string_lossy()
                    .into_owned()
            });
        let ns = std::fs::read_link("/proc/self/ns/pid")
            .ok()
            .map(|p| p.to_string_lossy().into_owned());
        Identity {
            owner: uuid::Uuid::new_v4().to_string(),
            host: match &ns {
                Some(ns) => format!("{name} {ns}"),
                None => name.clone(),
            },
            name,
            provable: ns.is_some(),
        }
    })
}

/// Returns this process's owner id: a random UUIDv4, the same for the whole process.
pub fn owner_id() -> &'static str {
    // Each simulated process (`--features sim`) is a process of its own.
    #[cfg(feature = "sim")]
    if let Some(owner) = crate::sim_seam::owner() {
        return owner;
    }
    &identity().owner
}

/// Returns this host's identity, as leases name it: the host name (or the test-only
/// `A2A_RECOVER_TEST_HOST`) and, where readable, the pid namespace (`web-1 pid:[4026531836]`).
pub fn host_name() -> &'static str {
    #[cfg(feature = "sim")]
    if let Some(host) = crate::sim_seam::host() {
        return host;
    }
    &identity().host
}

/// Returns this host's name (or the test-only `A2A_RECOVER_TEST_HOST`), without the pid
/// namespace: what lock holders are described by.
pub fn host_label() -> &'static str {
    &identity().name
}

/// Returns this process's lease, lasting `ttl` from `now`.
pub(super) fn my_lease(now: chrono::DateTime<chrono::Utc>, ttl: Duration) -> Lease {
    Lease {
        owner: Some(owner_id().to_owned()),
        pid: crate::sim_seam::pid(),
        host: host_name().to_owned(),
        expires_at: now + chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::MAX),
    }
}

/// Returns whether `lease` is this process's (its owner id is ours).
pub(super) fn is_mine(lease: Option<&Lease>) -> bool {
    lease.is_some_and(|l| l.owner.as_deref() == Some(owner_id()))
}

/// Returns whether a process with this pid exists in this pid namespace.
fn process_alive(pid: u32) -> bool {
    #[cfg(feature = "sim")]
    if let Some(alive) = crate::sim_seam::pid_alive(pid) {
        return alive;
    }
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
        Ok(self.claim_then(id, ttl, "stamp the send", Some(timeout))?.0)
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
        note: Note,
        detail: &serde_json::Value,
    ) -> Result<(), JournalError> {
        self.change(id, "journal the event", |held, _| {
            Ok(Some(note.change(held, detail)))
        })
        .map(|_| ())
    }
}

/// An event that only reports what a look saw and changes nothing: it never supersedes a
/// `needs-human` event (the pending rule looks past notes for an attempt's latest event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// Nothing found yet, but the last send may still be in flight (`in-flight`).
    InFlight,
    /// An agent that cannot be searched is resent the same messageId, trusted to de-duplicate
    /// (`dedup-trusted`).
    DedupTrusted,
    /// Other remote tasks hold our messageId too (`duplicate-task`).
    DuplicateTask,
    /// A push's read-back differed from the push; the read won (`push-disagrees`).
    PushDisagrees,
}

impl Note {
    /// The change that journals this note on `held`: its event, nothing else.
    pub(super) fn change(
        self,
        held: &Attempt,
        detail: &serde_json::Value,
    ) -> super::change::Change {
        super::change::Change {
            next: held.clone(),
            artifacts: Vec::new(),
            kind: self.as_str(),
            detail: detail.clone(),
            force_event: true,
        }
    }

    /// Every note.
    pub const ALL: [Self; 4] = [
        Self::InFlight,
        Self::DedupTrusted,
        Self::DuplicateTask,
        Self::PushDisagrees,
    ];

    /// Returns its event kind.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InFlight => "in-flight",
            Self::DedupTrusted => "dedup-trusted",
            Self::DuplicateTask => "duplicate-task",
            Self::PushDisagrees => "push-disagrees",
        }
    }
}
