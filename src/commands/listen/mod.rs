//! `listen`: receives push notifications at `/push/CONFIG_ID` into the journal, serves
//! `/metrics` and `/healthz` on a separate address, and exits 0 on SIGTERM or SIGINT once the
//! pushes in flight are recorded. It only journals what agents say; verifying, re-delegating
//! and compensating stay with the passes.

mod backstop;
mod receive;
mod serve;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;

use crate::a2a::A2aClient;
use crate::context::Context;
use crate::duration::parse_duration;
use crate::error::CliError;
use crate::exit;
use crate::journal::{Attempt, Journal, JournalError, PushRecord};
use crate::recovery::commit::Gatherer;

/// Receives push notifications from agents into the journal.
///
/// Agents asked to push (`delegate --push URL`) POST each change of their task to
/// `URL/push/CONFIG_ID`; `listen` checks the token issued with that config, journals the push
/// (reading the task back first before it makes a step terminal or records a question), and
/// answers 2xx only once it is recorded.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover listen
  a2a-recover listen --bind 0.0.0.0:8443 --tls-cert cert.pem --tls-key key.pem
  a2a-recover listen --reconcile-every 0")]
pub struct ListenArgs {
    /// The address pushes are received on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8787")]
    pub bind: SocketAddr,
    /// The address `/metrics` and `/healthz` are served on (plain HTTP).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8788")]
    pub metrics_bind: SocketAddr,
    /// The TLS certificate chain (PEM) pushes are received with; needs --tls-key.
    #[arg(long, value_name = "PATH", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The TLS private key (PEM); needs --tls-cert.
    #[arg(long, value_name = "PATH", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Runs a reconcile pass this often (the backstop for lost pushes); `0` turns it off.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = every)]
    pub reconcile_every: Duration,
    /// The largest push body accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    pub max_push_size: usize,
    /// The most pushes accepted from one agent per second (more are answered 429).
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub agent_rate: u32,
}

/// Parses `--reconcile-every`: a duration, or `0` (no timer).
fn every(s: &str) -> Result<Duration, String> {
    if s == "0" {
        Ok(Duration::ZERO)
    } else {
        parse_duration(s)
    }
}

/// What every push handler shares.
pub(crate) struct Listener {
    journal: Journal,
    /// The group commits of the pushes (`None`: each is committed on `journal`, in turn).
    commits: Option<Gatherer<PushRecord>>,
    clock: Arc<dyn crate::clock::Clock>,
    client: A2aClient,
    max_body: usize,
    request_timeout: Duration,
    agent_rate: u32,
    /// Pushes handled at once, at most.
    in_flight: Arc<tokio::sync::Semaphore>,
    /// Per agent: the second being counted and how many pushes it brought.
    windows: Mutex<HashMap<String, (Instant, u32)>>,
    /// Agents registered `--trust-push`, read once per agent.
    trust: Mutex<HashMap<String, bool>>,
    /// Pushes recorded, and when the last was.
    recorded: AtomicU64,
    last_push: Mutex<Option<chrono::DateTime<chrono::Utc>>>,
    /// The timer's passes: how many ended each way, and when the last ended with what code.
    passes: backstop::Passes,
}

/// Pushes handled at once by one listener.
const IN_FLIGHT: usize = 256;

impl Listener {
    /// Whether one more push from `agent` fits in this second's budget.
    fn admit(&self, agent: &str) -> bool {
        let mut w = self.windows.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        let slot = w.entry(agent.to_owned()).or_insert((now, 0));
        if now.duration_since(slot.0) >= Duration::from_secs(1) {
            *slot = (now, 0);
        }
        slot.1 += 1;
        slot.1 <= self.agent_rate
    }

    /// Whether the attempt's agent is registered `--trust-push`.
    fn trusted(&self, attempt: &Attempt) -> anyhow::Result<bool> {
        let Some(card) = attempt.agent_url.as_deref() else {
            return Ok(false);
        };
        if let Some(t) = self
            .trust
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(card)
        {
            return Ok(*t);
        }
        let t = self.journal.agent_push(card)?.trusted;
        self.trust
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(card.to_owned(), t);
        Ok(t)
    }

    /// Journals `record` in the next group commit of the pushes handled at once; returns once
    /// it is durable.
    async fn journal_push(&self, record: PushRecord) -> Result<(), JournalError> {
        match &self.commits {
            Some(commits) => commits.commit(record).await,
            None => self
                .journal
                .record_pushes(std::slice::from_ref(&record))?
                .pop()
                .unwrap_or(Ok(())),
        }
    }

    /// Counts a recorded push.
    fn pushed(&self) {
        self.recorded.fetch_add(1, Ordering::Relaxed);
        *self
            .last_push
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(self.clock.now());
    }

    fn last_push(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        *self
            .last_push
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Runs `listen`.
pub(crate) async fn run(ctx: &Context, args: &ListenArgs) -> anyhow::Result<u8> {
    let journal = ctx.open_journal_for_writing()?;
    let client = A2aClient::new(ctx.client_config()).context("failed to set up the HTTP client")?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(serve::tls_config(cert, key).map_err(|e| {
            CliError::usage(format!("the TLS certificate or key is not usable: {e:#}"))
        })?),
        _ => None,
    };
    let commits = Gatherer::start(&journal, IN_FLIGHT)
        .inspect_err(|e| tracing::warn!("each push is committed in turn: {e:#}"))
        .ok();
    let st = Arc::new(Listener {
        journal,
        commits,
        clock: Arc::clone(&ctx.clock),
        client,
        max_body: args.max_push_size,
        request_timeout: ctx.client_config().timeout.min(Duration::from_secs(30)),
        agent_rate: args.agent_rate.max(1),
        in_flight: Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT)),
        windows: Mutex::new(HashMap::new()),
        trust: Mutex::new(HashMap::new()),
        recorded: AtomicU64::new(0),
        last_push: Mutex::new(None),
        passes: backstop::Passes::default(),
    });
    let pushes = tokio::net::TcpListener::bind(args.bind)
        .await
        .map_err(|e| CliError::failure(format!("cannot listen on {}: {e}", args.bind)))?;
    let metrics = tokio::net::TcpListener::bind(args.metrics_bind)
        .await
        .map_err(|e| CliError::failure(format!("cannot listen on {}: {e}", args.metrics_bind)))?;
    let bound = pushes.local_addr()?;
    let started = ctx.clock.now();
    st.journal
        .listener_heartbeat(&bound.to_string(), started, None)?;
    ctx.out.status(&format!(
        "listening for pushes on {bound} (metrics on {}); Ctrl-C stops",
        metrics.local_addr()?
    ));
    let code = serve::serve(ctx, &st, pushes, metrics, tls, args, started).await;
    if let Err(e) = st.journal.listener_stopped() {
        tracing::warn!("failed to journal that the listener stopped: {e}");
    }
    code.map(|()| exit::OK)
}
