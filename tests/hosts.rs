//! Several hosts on one journal: three `reconcile` processes under three host identities
//! (`A2A_RECOVER_TEST_HOST`), one of them SIGKILLed mid-pass, over 300 unfinished attempts on one
//! journal (one SQLite file, or one PostgreSQL schema): every attempt sent exactly once, every
//! lease released or lapsed, and nothing left unvisited after the next pass.

use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use a2a_recover::journal::{Attempt, StepName};
use a2a_recover::scripted_agent::ScriptedAgent;
use rstest::rstest;

use crate::common::agent::SlowProxy;
use crate::common::child::Guarded;
use crate::common::wait::{wait_until, wait_until_leases_lapse};
use crate::common::{
    Background, Store, TestEnv, agent, code, fast_with_skills, stderr, stdout, write,
};

/// Workflows, and steps in each: 300 attempts.
const WORKFLOWS: usize = 30;
const STEPS: usize = 10;
/// The lease time of sends: a killed host's leases lapse this long after their last renewal.
const TTL: &str = "2s";
const HOSTS: [&str; 3] = ["host-a", "host-b", "host-c"];

/// The binary as host `host` (`None`: this machine under its own name).
fn cmd(env: &TestEnv, host: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = env.std_cmd();
    cmd.env("A2A_RECOVER_TEST_SEND_LEASE_TTL", TTL)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(host) = host {
        cmd.env("A2A_RECOVER_TEST_HOST", host);
    }
    cmd
}

/// Every attempt, by step name, as journaled now.
fn attempts(env: &TestEnv) -> Vec<(String, Attempt)> {
    let journal = env.open_journal();
    let mut out = Vec::new();
    for w in 0..WORKFLOWS {
        for s in 0..STEPS {
            let name = format!("w{w}/s{s}");
            let record = journal
                .step(&StepName::parse(&name).unwrap())
                .unwrap()
                .unwrap();
            for a in record.attempts {
                out.push((name.clone(), a));
            }
        }
    }
    out
}

/// 300 intents, never sent: each workflow's plan commits its intents and is killed before its
/// first send.
fn intents(env: &TestEnv, url: &str) {
    for w in 0..WORKFLOWS {
        let mut plan = format!("workflow = \"w{w}\"\n");
        for s in 0..STEPS {
            let _ = write!(
                plan,
                "\n[[step]]\nname = \"s{s}\"\nagent = \"{url}\"\ntext = \"step {w}.{s}\"\n"
            );
        }
        let path = write(env.path(), &format!("w{w}.toml"), &plan);
        let out = cmd(env, None, &["delegate", "--plan", path.to_str().unwrap()])
            .env("A2A_RECOVER_CRASH_AT", "after-intent")
            .output()
            .unwrap();
        assert_eq!(out.status.signal(), Some(6), "{out:?}");
    }
}

/// Runs the three hosts at once, each a plain `reconcile` taking each workflow's lock as it
/// reaches it (a workflow whose lock another host holds is skipped: exit 3), and SIGKILLs one
/// still running once a third of the attempts reached the agent (host-c, unless the others took
/// every lock first). Returns the killed host, how many leases the kill stranded, and how many of
/// their sends had reached the agent.
#[expect(
    clippy::print_stderr,
    reason = "the test reports how the hosts shared the work"
)]
fn three_hosts_one_killed(
    env: &TestEnv,
    a: &Background<ScriptedAgent>,
) -> (&'static str, usize, usize) {
    let mut running: Vec<(&str, Guarded)> = HOSTS
        .iter()
        .map(|host| {
            let args = ["reconcile", "--agent-concurrency", "4"];
            (
                *host,
                Guarded::spawn(&mut cmd(env, Some(host), &args), host),
            )
        })
        .collect();
    wait_until("a third of the sends", Duration::from_secs(120), || {
        a.stats().tasks.len() >= WORKFLOWS * STEPS / 3
    });
    let victim = (0..running.len())
        .rev()
        .find(|&i| running[i].1.try_wait().unwrap().is_none())
        .expect("every host ended before one could be killed mid-pass");
    let (killed, mut child) = running.remove(victim);
    child.kill().unwrap();
    assert_eq!(child.wait().unwrap().signal(), Some(9));
    for (host, child) in running {
        let out = child.wait_with_output().unwrap();
        assert!(
            matches!(code(&out), 0 | 3),
            "{host}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        let said = stdout(&out);
        let visited = said.lines().find(|l| l.contains("attempt(s) visited"));
        eprintln!("{host}: {}", visited.unwrap_or("(no summary)"));
    }
    // The survivors released every lease they took: what remains is the killed host's, on the
    // sends it had in flight (possibly sent: the next pass must look before any resend).
    let stats = a.stats();
    let mut stranded = 0;
    let mut delivered = 0;
    for (step, attempt) in attempts(env) {
        if let Some(l) = &attempt.lease {
            assert!(
                l.host.starts_with(killed) && l.owner.is_some(),
                "{step}: a lease left by a live host: {l:?}"
            );
            stranded += 1;
            delivered += usize::from(stats.tasks_per_message_id.contains_key(&attempt.message_id));
        }
    }
    assert!(stranded > 0, "{killed} was killed with no send in flight");
    (killed, stranded, delivered)
}

#[expect(
    clippy::print_stderr,
    reason = "the test reports what the kill stranded"
)]
fn several_hosts(store: Store) {
    let env = TestEnv::on(store);
    let a = agent(fast_with_skills(&["x"]));
    // Each call takes 20 ms: a pass over a host's hundred attempts lasts long enough to be cut.
    let proxy = SlowProxy::start(a.url());
    proxy.set_delay(20);
    intents(&env, &proxy.url());
    assert_eq!(a.stats().tasks.len(), 0, "nothing was sent yet");
    // The killed plans' leases are another host's (this machine under its own name): they
    // lapse, never broken early.
    wait_until_leases_lapse(attempts(&env).iter().map(|(_, a)| a));
    let (killed, stranded, delivered) = three_hosts_one_killed(&env, &a);

    // The next pass, on another host, once the killed host's leases lapsed: it visits
    // everything left.
    wait_until_leases_lapse(attempts(&env).iter().map(|(_, a)| a));
    let next = HOSTS.iter().find(|h| **h != killed).unwrap();
    // (A host may have read some of its tasks finished already: those are not visited again.)
    let open = attempts(&env)
        .iter()
        .filter(|(_, a)| !a.state.is_finished())
        .count();
    let out = cmd(&env, Some(next), &["reconcile"]).output().unwrap();
    // 3 while tasks still run at the agent; never a skipped workflow or an unvisited item.
    assert!(
        matches!(code(&out), 0 | 3) && !stderr(&out).contains("skipped"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains(&format!("{open} attempt(s) visited")),
        "{}",
        stdout(&out)
    );

    let stats = a.stats();
    let all = attempts(&env);
    assert_eq!(all.len(), WORKFLOWS * STEPS, "one attempt per step");
    let mut ids = Vec::new();
    for (step, attempt) in all {
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
        // Released, or the killed host's, lapsed (killed between an answer's commit and its
        // lease's release: the attempt is settled and no pass claims it again).
        if let Some(l) = &attempt.lease {
            assert!(
                l.host.starts_with(killed)
                    && l.expires_at
                        <= a2a_recover::clock::Clock::now(&a2a_recover::clock::SystemClock),
                "{step}: a live lease left behind: {l:?}"
            );
        }
        ids.push(attempt.message_id);
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
        "several hosts ({store:?}): {} attempts, {killed} killed, {stranded} leases stranded \
         ({delivered} of their sends had reached the agent), taken over after their expiry",
        ids.len()
    );
}

#[rstest]
fn several_hosts_on_one_journal_send_each_attempt_exactly_once(
    #[values(Store::Sqlite, Store::Postgres)] store: Store,
) {
    several_hosts(store);
}
