//! The validated context every command receives: parse, validate, then execute.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use crate::a2a::ClientConfig;
use crate::cli::GlobalArgs;
use crate::clock::{Clock, FixedClock, SystemClock};
use crate::env;
use crate::error::CliError;
use crate::exit;
use crate::journal::{Journal, JournalError, Location, LockAttempt, LockScope, SizeLimits};
use crate::output::Printer;
use crate::paths;
use crate::recovery::lock::{self, LockError, PassLock};

/// Everything a command needs, resolved once from the global flags and the environment.
pub struct Context {
    /// Where the journal is: a SQLite file (may not exist yet), or a PostgreSQL schema. Its
    /// `Display` form (no password) is the only one to show.
    pub journal: Location,
    /// Whether the `--journal` flag named it (`demo` keeps its journal only then, ignoring
    /// `A2A_RECOVER_JOURNAL`); `lib::main` sets it from where the value came from.
    pub journal_explicit: bool,
    /// How the journal path was chosen (`lib::main` corrects `Env` to `Flag` when the flag
    /// was on the command line).
    pub journal_source: paths::JournalSource,
    /// Where output goes.
    pub out: Printer,
    /// The clock for *displayed* times (ages); may be pinned in tests.
    pub display_clock: Arc<dyn Clock>,
    /// The real clock, for everything sent to agents, leases and journal times.
    pub clock: Arc<dyn Clock>,
    /// Per-request timeout, and the longest wait for a busy journal.
    pub timeout: Duration,
    /// How long a send's lease is held before another process may break it
    /// ([`crate::recovery::send::lease_ttl_for`] of `timeout`, or the test-only
    /// [`env::TEST_SEND_LEASE_TTL`]).
    pub send_lease_ttl: Duration,
    /// Largest response body or single stream event, in bytes.
    pub max_response_size: u64,
    /// How large an attempt's artifacts may grow in the journal (`--max-artifact-size`,
    /// `--max-task-size`).
    pub size_limits: SizeLimits,
    /// Most bytes of `ListTasks` answers one look reads.
    pub max_look_size: u64,
    /// The global flags as given (for re-running ourselves, e.g. `demo`).
    pub global: GlobalArgs,
}

impl Context {
    /// Validates the global flags into a context, before any I/O on the journal or agents.
    pub fn from_global(global: &GlobalArgs) -> Result<Self, CliError> {
        let var = |name: &str| std::env::var(name).ok();
        let journal = journal_location(
            global.journal.as_ref(),
            var(env::XDG_STATE_HOME).as_deref(),
            var(env::HOME).as_deref(),
        )?;
        let no_color = crate::output::no_color_env();
        let out = Printer::new(
            global.format,
            global.color,
            global.quiet,
            global.verbose,
            no_color,
        )
        .with_journal(journal.to_string());
        let display_clock: Arc<dyn Clock> = match var(env::TEST_NOW) {
            Some(s) => {
                let t = chrono::DateTime::parse_from_rfc3339(&s)
                    .map_err(|e| CliError::usage(format!("bad {}: {e}", env::TEST_NOW)))?;
                Arc::new(FixedClock(t.with_timezone(&chrono::Utc)))
            }
            None => Arc::new(SystemClock),
        };
        crate::crash::check_env().map_err(|e| {
            CliError::usage(e)
                .hint("fix or unset the variable; it is a testing aid (docs/journal.md)")
        })?;
        if global.max_response_size < 1024 {
            return Err(CliError::usage(format!(
                "--max-response-size {} is too small",
                global.max_response_size
            ))
            .hint("use at least 1024 bytes; the default is 16 MiB"));
        }
        for (flag, value) in [
            ("--max-artifact-size", global.max_artifact_size),
            ("--max-task-size", global.max_task_size),
        ] {
            if value < 1024 {
                return Err(CliError::usage(format!("{flag} {value} is too small"))
                    .hint("use at least 1024 bytes; the defaults are 64 MiB and 256 MiB"));
            }
        }
        if global.max_card_size < 1024 {
            return Err(CliError::usage(format!(
                "--max-card-size {} is too small",
                global.max_card_size
            ))
            .hint("use at least 1024 bytes; the default is 1 MiB"));
        }
        if global.max_look_size < 1024 * 1024 {
            return Err(CliError::usage(format!(
                "--max-look-size {} is too small",
                global.max_look_size
            ))
            .hint("use at least 1 MiB (1048576 bytes); the default is 64 MiB"));
        }
        if global.timeout.is_zero() {
            return Err(CliError::usage("--timeout must be more than zero")
                .hint("give a duration such as `--timeout 30s` (the default)"));
        }
        let send_lease_ttl = match var(env::TEST_SEND_LEASE_TTL) {
            Some(s) => crate::duration::parse_duration(&s)
                .map_err(|e| CliError::usage(format!("bad {}: {e}", env::TEST_SEND_LEASE_TTL)))?,
            None => crate::recovery::send::lease_ttl_for(global.timeout),
        };
        Ok(Self {
            journal,
            journal_explicit: global.journal.is_some(),
            journal_source: paths::journal_source(
                false,
                global.journal.as_ref(),
                var(env::XDG_STATE_HOME).as_deref(),
            ),
            out,
            display_clock,
            clock: Arc::new(SystemClock),
            timeout: global.timeout,
            send_lease_ttl,
            max_response_size: global.max_response_size,
            size_limits: SizeLimits {
                artifact: global.max_artifact_size,
                task: global.max_task_size,
            },
            max_look_size: global.max_look_size,
            global: global.clone(),
        })
    }

    /// The stream idle timeout: `--timeout`, but at least 60 s.
    pub fn stream_idle_timeout(&self) -> Duration {
        self.timeout.max(Duration::from_mins(1))
    }

    /// The limits every request obeys, from `--timeout` and `--max-response-size`.
    pub fn client_config(&self) -> ClientConfig {
        ClientConfig {
            timeout: self.timeout,
            max_response_size: self.max_response_size,
            stream_idle_timeout: self.stream_idle_timeout(),
            max_look_size: self.max_look_size,
            max_card_size: self.global.max_card_size,
        }
    }

    /// Fails (exit 1) unless the journal exists: a pass over a journal that is not there would
    /// check nothing and look healthy, for ever (a cron job without the login shell's
    /// `XDG_STATE_HOME`). The error names the path and how it was chosen. On PostgreSQL, a
    /// schema without a journal is no journal.
    pub fn require_journal(&self) -> anyhow::Result<()> {
        if Journal::exists_at(&self.journal, self.timeout).with_context(|| self.open_failed(""))? {
            return Ok(());
        }
        Err(CliError::failure(format!(
            "no journal at `{}` (chosen by {}); nothing was checked",
            self.journal,
            self.journal_source.describe()
        ))
        .hint(
            "create it with `a2a-recover journal init` (a first `delegate` creates one too), \
             or point --journal or A2A_RECOVER_JOURNAL at the journal your delegations use",
        )
        .into())
    }

    /// Returns whether a journal is there already (a file, or a PostgreSQL schema holding one).
    pub fn journal_exists(&self) -> anyhow::Result<bool> {
        Journal::exists_at(&self.journal, self.timeout).with_context(|| self.open_failed(""))
    }

    /// Opens the journal of a command (`--journal`, busy timeout `--timeout`) and prints its
    /// warnings; errors name the path.
    pub fn open_journal(&self) -> anyhow::Result<Journal> {
        let journal = Journal::open_at(&self.journal, self.timeout)
            .with_context(|| self.open_failed(""))?
            .with_size_limits(self.size_limits);
        self.print_warnings(&journal);
        Ok(journal)
    }

    /// Opens the journal of a command that will write to it, refusing one it cannot write (from
    /// a newer a2a-recover) at once: before any agent is asked anything.
    pub fn open_journal_for_writing(&self) -> anyhow::Result<Journal> {
        let journal = self.open_journal()?;
        journal.check_writable()?;
        Ok(journal)
    }

    /// Opens an existing journal for a command that only reads (`inspect`): read-only when its
    /// schema is current or newer (nothing is written, no write permission needed), else through
    /// [`Journal::open`] so that an older journal is migrated first. Prints its warnings.
    pub fn open_journal_for_reading(&self) -> anyhow::Result<Journal> {
        match Journal::open_read_only_at(&self.journal, self.timeout) {
            Ok(journal) => {
                self.print_warnings(&journal);
                Ok(journal)
            }
            Err(JournalError::ReadOnly { .. }) => self.open_journal(),
            Err(e) => Err(e).with_context(|| self.open_failed("")),
        }
    }

    /// Opens the journal for a pass: a dry run opens it read-only and takes no lock (it writes
    /// nothing, not even the lock file); otherwise the journal's pass lock is taken in `scope`
    /// (`prune`: the whole journal, exclusive; `reconcile`, `compensate`: shared, beside their
    /// workflow locks, [`Context::lock_workflows`]) — a lock file beside a SQLite journal,
    /// taken before it is opened; an advisory lock on a PostgreSQL journal's own connection,
    /// where the whole journal's shared hold comes with each workflow's lock. A lock still held
    /// after `--wait` is exit 3 with nothing touched.
    pub async fn open_journal_for_pass(
        &self,
        dry_run: bool,
        scope: lock::Scope,
    ) -> anyhow::Result<(Journal, Option<PassLock>)> {
        if dry_run {
            let journal = Journal::open_read_only_at(&self.journal, self.timeout)
                .with_context(|| self.open_failed(" read-only"))?;
            return Ok((journal, None));
        }
        let Some(path) = self.journal.file_path() else {
            let journal = self.open_journal_for_writing()?;
            if scope == lock::Scope::Workflows {
                // A pass over workflows holds the whole journal's key shared with each workflow
                // lock it takes; one held whole (`prune`, `journal copy`) keeps the pass out from
                // the start, as a SQLite journal's lock file does.
                return match self.waiting(|_| whole_journal_free(&journal)).await {
                    Ok(()) => Ok((journal, None)),
                    Err(LockError::Held { owner, .. }) => Err(self.journal_held(&owner)),
                    Err(e) => Err(e.into()),
                };
            }
            let lock = match self
                .waiting(|_| store_lock(&journal, LockScope::Journal))
                .await
            {
                Ok(lock) => lock,
                Err(LockError::Held { owner, .. }) => return Err(self.journal_held(&owner)),
                Err(e) => return Err(e.into()),
            };
            return Ok((journal, Some(lock)));
        };
        let lock = match self
            .waiting(|started| lock::acquire_scoped(path, scope, crate::sim_seam::pid(), started))
            .await
        {
            Ok(lock) => lock,
            Err(LockError::Held { owner, .. }) => return Err(self.journal_held(&owner)),
            Err(e) => return Err(e.into()),
        };
        Ok((self.open_journal_for_writing()?, Some(lock)))
    }

    /// The error of a pass that found the whole journal's lock held (exit 3).
    fn journal_held(&self, owner: &str) -> anyhow::Error {
        let where_ = match self.journal.file_path() {
            Some(p) => format!("lock file `{}`", lock::lock_path(p).display()),
            None => format!("an advisory lock of the journal `{}`", self.journal),
        };
        CliError::with_code(
            exit::WORK_REMAINS,
            format!("another pass ({owner}) holds the journal lock"),
        )
        .hint(format!(
            "nothing was touched; run again when it is done, or wait for it with \
             --wait DURATION ({where_})"
        ))
        .into()
    }

    /// Takes the lock of each of `workflows` (the caller holds the journal's lock shared),
    /// waiting up to `--wait` for each one held. Returns the locks taken, and each workflow
    /// still held by another pass with what is known of the holder.
    pub async fn lock_workflows(
        &self,
        journal: &Journal,
        workflows: &[String],
    ) -> anyhow::Result<(Vec<PassLock>, Vec<(String, String)>)> {
        if workflows.len() > 256 {
            self.room_for_workflow_locks();
        }
        let mut locks = Vec::with_capacity(workflows.len());
        let mut held = Vec::new();
        for w in workflows {
            match self
                .waiting(|started| self.try_lock_workflow(journal, w, started))
                .await
            {
                Ok(lock) => locks.push(lock),
                Err(LockError::Held { owner, .. }) => held.push((w.clone(), owner)),
                Err(e) => return Err(e.into()),
            }
        }
        Ok((locks, held))
    }

    /// Tries the lock of `workflow` once, without waiting (the caller holds the journal's lock
    /// shared); `started` is written into a lock file.
    pub fn try_lock_workflow(
        &self,
        journal: &Journal,
        workflow: &str,
        started: &str,
    ) -> Result<PassLock, LockError> {
        match self.journal.file_path() {
            Some(path) => lock::acquire_workflow(path, workflow, crate::sim_seam::pid(), started),
            None => store_lock(journal, LockScope::Workflow(workflow)),
        }
    }

    /// Raises this process's limit of open files to its hard limit: a SQLite journal's
    /// workflow locks are one open file each.
    pub fn room_for_workflow_locks(&self) {
        if self.journal.file_path().is_none() {
            return;
        }
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        let _ = rustix::process::setrlimit(
            rustix::process::Resource::Nofile,
            rustix::process::Rlimit {
                current: limit.maximum,
                maximum: limit.maximum,
            },
        );
    }

    /// Returns who holds the journal's pass locks: `("journal", holder)` and `(WORKFLOW,
    /// holder)` per held lock, from the kernel's lock table (SQLite's lock files) or the
    /// server's (PostgreSQL). Takes no lock.
    pub fn lock_holders(&self, journal: &Journal) -> anyhow::Result<Vec<(String, String)>> {
        match self.journal.file_path() {
            Some(path) => Ok(lock::holders(path)),
            None => Ok(journal.lock_holders()?.unwrap_or_default()),
        }
    }

    /// Runs `take` until it does not find its lock held or `--wait` has passed (retrying every
    /// 100 ms); `take` gets the start time to write into the lock file.
    async fn waiting<T>(
        &self,
        take: impl Fn(&str) -> Result<T, LockError>,
    ) -> Result<T, LockError> {
        // tokio's clock: the monotonic clock, or the simulator's virtual one (`--features sim`).
        let until = tokio::time::Instant::now() + self.global.wait;
        let mut told = false;
        loop {
            let started = crate::clock::rfc3339(self.clock.now());
            match take(&started) {
                Err(LockError::Held { ref owner, .. }) if tokio::time::Instant::now() < until => {
                    if !std::mem::replace(&mut told, true) {
                        tracing::debug!("waiting for the lock another pass ({owner}) holds");
                    }
                    // An await point: SIGINT and SIGTERM end the wait.
                    tokio::time::sleep(Duration::from_millis(100).min(self.global.wait)).await;
                }
                other => return other,
            }
        }
    }

    fn open_failed(&self, how: &str) -> String {
        format!("failed to open the journal at `{}`{how}", self.journal)
    }

    fn print_warnings(&self, journal: &Journal) {
        for w in journal.warnings() {
            self.out.warn(w);
        }
    }
}

/// Fails with [`LockError::Held`] while another process holds a store's whole journal.
fn whole_journal_free(journal: &Journal) -> Result<(), LockError> {
    let holders = journal.lock_holders().map_err(LockError::Store)?;
    match holders
        .unwrap_or_default()
        .into_iter()
        .find(|(s, _)| s == "journal")
    {
        Some((_, owner)) => Err(LockError::Held {
            path: journal.location().shown_path(),
            owner,
        }),
        None => Ok(()),
    }
}

/// Takes a pass lock in the journal's own store (PostgreSQL), as [`lock`] takes a file's:
/// [`LockError::Held`] naming the holder when another process has it.
fn store_lock(journal: &Journal, scope: LockScope<'_>) -> Result<PassLock, LockError> {
    let shown = journal.location().shown_path();
    match journal.try_lock(scope).map_err(LockError::Store)? {
        Some(LockAttempt::Taken(lock)) => Ok(PassLock::in_store(lock, shown)),
        Some(LockAttempt::Held(owner)) => Err(LockError::Held { path: shown, owner }),
        None => Err(LockError::Io {
            path: shown,
            source: std::io::Error::other("this journal's store keeps no locks of its own"),
        }),
    }
}

/// Resolves where the journal lives: a `postgres://` / `postgresql://` value of `--journal` or
/// `A2A_RECOVER_JOURNAL` selects a PostgreSQL journal; any other value, or the default
/// ([`paths::journal_path`]), is a SQLite file. A URL of another scheme is refused (exit 2), as
/// is a PostgreSQL URL that cannot be used (named without its password).
pub fn journal_location(
    flag: Option<&std::path::PathBuf>,
    xdg_state_home: Option<&str>,
    home: Option<&str>,
) -> Result<Location, CliError> {
    if let Some(s) = flag.and_then(|p| p.to_str())
        && Location::is_postgres_url(s)
    {
        return Location::parse(std::path::Path::new(s)).map_err(|e| {
            CliError::usage(crate::sanitize::inert(&e.to_string())).hint(
                "write it as postgres://USER@HOST:PORT/DATABASE?schema=NAME (docs/journal.md, \
                 \"Choosing a journal\"); the password goes in PGPASSWORD or the password file",
            )
        });
    }
    paths::journal_path(flag, xdg_state_home, home)
        .map(Location::file)
        .map_err(|e| path_error(&e))
}

/// A path the journal cannot use, as a usage error with what to do about it.
fn path_error(e: &paths::PathError) -> CliError {
    let hint = match *e {
        paths::PathError::Empty => "pass --journal PATH or unset A2A_RECOVER_JOURNAL",
        paths::PathError::NoHome => "pass --journal PATH or set A2A_RECOVER_JOURNAL",
        paths::PathError::NotAJournal { .. } => {
            "the journal is a local SQLite file (--journal PATH) or a PostgreSQL schema \
             (--journal postgres://USER@HOST/DATABASE); fix --journal or A2A_RECOVER_JOURNAL"
        }
    };
    CliError::usage(e.to_string()).hint(hint)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::journal_location;

    #[test]
    fn a_postgres_url_selects_postgres_and_never_shows_its_password() {
        for url in [
            "postgres://user:secret@127.0.0.1:5432/db",
            "postgresql://user:secret@127.0.0.1/db?sslmode=require&schema=ops",
        ] {
            let l = journal_location(Some(&PathBuf::from(url)), None, Some("/h")).unwrap();
            assert!(l.is_postgres(), "{url}");
            assert!(!l.to_string().contains("secret"), "{l}");
        }
        let bad = PathBuf::from("postgres://user:secret@127.0.0.1/db?schema=Bad-Name");
        let err = journal_location(Some(&bad), None, Some("/h")).unwrap_err();
        assert_eq!(err.code, crate::exit::USAGE);
        assert!(!err.message.contains("secret"), "{}", err.message);
        let file = journal_location(None, Some("/x"), Some("/h")).unwrap();
        assert_eq!(
            file.file_path(),
            Some(std::path::Path::new("/x/a2a-recover/journal.sqlite3"))
        );
        assert!(journal_location(Some(&PathBuf::from("sqlite://x")), None, None).is_err());
    }
}
