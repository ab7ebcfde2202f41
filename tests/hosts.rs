//! Several hosts on one journal: three `reconcile` processes under three host identities
//! (`A2A_RECOVER_TEST_HOST`), one of them SIGKILLed mid-pass, over 300 unfinished attempts on one
//! journal (one SQLite file, or one PostgreSQL schema): every attempt sent exactly once, every
//! lease released or lapsed, and nothing left unvisited after the next pass.

use std::os::unix::process::ExitStatusExt as _;
use std::process::Child;
use std::time::{Duration, Instant};

use a2a_recover::journal::{Journal, Location, StepName};

use crate::common::agent::SlowProxy;
use crate::common::{TestEnv, agent, code, fast_with_skills, postgres, stderr, stdout, write};

/// Workflows, and steps in each: 300 attempts.
const WORKFLOWS: usize = 30;
const STEPS: usize = 10;
/// The lease time of sends: a killed host's leases lapse this long after their last renewal.
const TTL: &str = "2s";
const TTL_WAIT: Duration = Duration::from_millis(2300);

/// Where the shared journal is.
#[derive(Clone, Copy)]
enum Store {
    Sqlite,
    Postgres,
}

struct Shared {
    env: TestEnv,
    /// `A2A_RECOVER_JOURNAL` of every process (the file path, or the URL with its password).
    journal: String,
}

impl Shared {
    fn new(store: Store) -> Self {
        let env = TestEnv::new().real_clock();
        let journal = match store {
            Store::Sqlite => env.journal().to_str().unwrap().to_owned(),
            Store::Postgres => postgres::pg_url(),
        };
        Self { env, journal }
    }

    /// The binary as host `host` (`None`: this machine's own identity).
    fn cmd(&self, host: Option<&str>, args: &[&str]) -> std::process::Command {
        let mut cmd = self.env.std_cmd();
        cmd.env("A2A_RECOVER_JOURNAL", &self.journal)
            .env("A2A_RECOVER_TEST_SEND_LEASE_TTL", TTL)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if let Some(host) = host {
            cmd.env("A2A_RECOVER_TEST_HOST", host);
        }
        cmd
    }

    fn open(&self) -> Journal {
        let location = Location::parse(std::path::Path::new(&self.journal)).unwrap();
        Journal::open_at(&location, Duration::from_secs(10)).unwrap()
    }

    /// Every attempt's lease, by step.
    fn leases(&self) -> Vec<(String, Option<a2a_recover::journal::Lease>)> {
        let journal = self.open();
        let mut out = Vec::new();
        for w in 0..WORKFLOWS {
            for s in 0..STEPS {
                let name = format!("w{w}/s{s}");
                let step = StepName::parse(&name).unwrap();
                let record = journal.step(&step).unwrap().unwrap();
                for a in record.attempts {
                    out.push((name.clone(), a.lease));
                }
            }
        }
        out
    }
}

fn workflows() -> Vec<String> {
    (0..WORKFLOWS).map(|w| format!("w{w}")).collect()
}

/// The workflows in the order host `k` of `n` takes their locks: its own third first.
fn rotated(k: usize, n: usize) -> Vec<String> {
    let mut all = workflows();
    all.rotate_left(k * WORKFLOWS / n);
    all
}

fn several_hosts(store: Store) {
    let shared = Shared::new(store);
    let a = agent(fast_with_skills(&["x"]));
    // Each call takes 20 ms: a pass over a host's hundred attempts lasts long enough to be cut.
    let proxy = SlowProxy::start(a.url());
    proxy.set_delay(20);
    // 300 intents, never sent: each plan commits its intents (endpoints journaled, leases
    // claimed) and is killed before its first send.
    for w in 0..WORKFLOWS {
        let mut plan = format!("workflow = \"w{w}\"\n");
        for s in 0..STEPS {
            plan.push_str(&format!(
                "\n[[step]]\nname = \"s{s}\"\nagent = \"{}\"\ntext = \"step {w}.{s}\"\n",
                proxy.url()
            ));
        }
        let path = write(shared.env.path(), &format!("w{w}.toml"), &plan);
        let out = shared
            .cmd(None, &["delegate", "--plan", path.to_str().unwrap()])
            .env("A2A_RECOVER_CRASH_AT", "after-intent")
            .output()
            .unwrap();
        assert_eq!(out.status.signal(), Some(6), "{out:?}");
    }
    assert_eq!(a.stats().tasks.len(), 0, "nothing was sent yet");
    // The killed plans' leases are another host's (this machine under its own name): they
    // lapse, never broken early.
    std::thread::sleep(TTL_WAIT);

    // Three hosts at once, each starting with its own third of the workflows (a workflow
    // whose lock another host holds is skipped: exit 3).
    let hosts = ["host-a", "host-b", "host-c"];
    let mut running: Vec<Child> = hosts
        .iter()
        .enumerate()
        .map(|(k, host)| {
            let mut args = vec!["reconcile", "--agent-concurrency", "4"];
            let order = rotated(k, hosts.len());
            args.extend(order.iter().map(String::as_str));
            shared.cmd(Some(host), &args).spawn().unwrap()
        })
        .collect();
    // host-c is killed mid-pass: once a third of the attempts reached the agent.
    let start = Instant::now();
    while a.stats().tasks.len() < 100 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the passes sent nothing"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut killed = running.pop().unwrap();
    assert!(
        killed.try_wait().unwrap().is_none(),
        "host-c ended before it could be killed mid-pass"
    );
    killed.kill().unwrap();
    let killed = killed.wait_with_output().unwrap();
    assert_eq!(killed.status.signal(), Some(9));
    for (host, child) in hosts.iter().zip(running) {
        let out = child.wait_with_output().unwrap();
        assert!(
            matches!(code(&out), 0 | 3),
            "{host}: {}{}",
            stdout(&out),
            stderr(&out)
        );
    }
    // The survivors released every lease they took: what remains is the killed host's.
    let after_kill = shared.leases();
    assert_eq!(after_kill.len(), WORKFLOWS * STEPS);
    for (step, lease) in &after_kill {
        if let Some(l) = lease {
            assert!(
                l.host.starts_with("host-c") && l.owner.is_some(),
                "{step}: a lease left by a live host: {l:?}"
            );
        }
    }
    // Killed mid-pass: the sends it had in flight keep its leases (possibly sent: the next
    // pass must look before any resend).
    let stranded = after_kill.iter().filter(|(_, l)| l.is_some()).count();
    let delivered = {
        let stats = a.stats();
        let journal = shared.open();
        after_kill
            .iter()
            .filter(|(_, l)| l.is_some())
            .filter(|(step, _)| {
                let record = journal
                    .step(&StepName::parse(step).unwrap())
                    .unwrap()
                    .unwrap();
                let id = &record.latest().unwrap().message_id;
                stats.tasks_per_message_id.contains_key(id)
            })
            .count()
    };
    assert!(stranded > 0, "host-c was killed with no send in flight");

    // The next pass, on another host, once the killed host's leases lapsed: it visits
    // everything left.
    std::thread::sleep(TTL_WAIT);
    let out = shared.cmd(Some("host-a"), &["reconcile"]).output().unwrap();
    // 3 while tasks still run at the agent; never a skipped workflow or an unvisited item.
    assert!(
        matches!(code(&out), 0 | 3) && !stderr(&out).contains("skipped"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains(&format!("{} attempt(s) visited", WORKFLOWS * STEPS)),
        "{}",
        stdout(&out)
    );

    let stats = a.stats();
    let journal = shared.open();
    let mut ids = Vec::new();
    for w in 0..WORKFLOWS {
        for s in 0..STEPS {
            let step = StepName::parse(&format!("w{w}/s{s}")).unwrap();
            let record = journal.step(&step).unwrap().unwrap();
            assert_eq!(record.attempts.len(), 1, "{step}: one attempt");
            let attempt = record.latest().unwrap();
            assert_ne!(
                attempt.state.as_str(),
                "INTENT",
                "{step}: left unvisited: {attempt:?}"
            );
            assert_eq!(
                stats.tasks_per_message_id.get(&attempt.message_id),
                Some(&1),
                "{step}: not sent exactly once"
            );
            // Released, or the killed host's, lapsed (killed between an answer's commit and
            // its lease's release: the attempt is settled and no pass claims it again).
            if let Some(l) = &attempt.lease {
                assert!(
                    l.host.starts_with("host-c") && l.expires_at <= chrono::Utc::now(),
                    "{step}: a live lease left behind: {l:?}"
                );
            }
            ids.push(attempt.message_id.clone());
        }
    }
    assert_eq!(stats.tasks.len(), WORKFLOWS * STEPS, "one task per attempt");
    let mut received: Vec<&str> = stats
        .messages
        .iter()
        .map(|m| m.message_id.as_str())
        .collect();
    received.sort_unstable();
    received.dedup();
    ids.sort();
    assert_eq!(received, ids, "the agent received exactly our messages");
    eprintln!(
        "several hosts: {} attempts, {stranded} leases stranded by the kill ({delivered} of \
         their sends had reached the agent), taken over after their expiry",
        ids.len()
    );
}

#[test]
fn several_hosts_on_one_sqlite_journal_send_each_attempt_exactly_once() {
    several_hosts(Store::Sqlite);
}
