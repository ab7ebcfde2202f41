//! Per-agent scheduling in `reconcile` (behaviour, never timing): a hung agent's attempts are
//! skipped after K consecutive failures while another agent's all complete in the same pass; a
//! rate-limited agent gets no request before the `Retry-After` it gave has passed; the agent's
//! own count of requests in flight never exceeds its limit (flag or registry).

use std::fmt::Write as _;
use std::time::Duration;

use a2a_recover::scripted_agent::{AgentConfig, ScriptedAgent};
use serde_json::Value;

use crate::common::commands::{attempts, reconcile};
use crate::common::{Background, TestEnv, actions, agent, code, json_lines, stdout, write};

/// An agent whose `work` steps last an hour: its tasks stay WORKING.
fn slow_ticks() -> AgentConfig {
    AgentConfig {
        tick: Duration::from_secs(3600),
        ..AgentConfig::default()
    }
}

/// Delegates `n` steps of workflow `workflow` to `a` in one plan; every one ends WORKING.
fn running_steps(env: &TestEnv, a: &Background<ScriptedAgent>, workflow: &str, n: usize) {
    let mut plan = format!("workflow = \"{workflow}\"\n");
    for i in 0..n {
        let _ = write!(
            plan,
            "\n[[step]]\nname = \"s{i}\"\nagent = \"{}\"\ntext = \"work:5\"\n",
            a.url()
        );
    }
    let file = write(env.path(), &format!("{workflow}.toml"), &plan);
    let out = env.run(["delegate", "--plan", file.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{out:?}");
    // The first pass moves every task from SUBMITTED to WORKING (a change journaled): later
    // passes over them change nothing.
    let out = reconcile(env, &[]);
    assert_eq!(code(&out), 3, "{out:?}");
}

#[test]
fn a_hung_agent_is_skipped_after_k_failures_while_another_agent_completes() {
    let env = TestEnv::new();
    let hung = agent(slow_ticks());
    let healthy = agent(slow_ticks());
    running_steps(&env, &hung, "hung", 12);
    running_steps(&env, &healthy, "healthy", 8);
    let before: Vec<Value> = attempts(&env, Some("hung"));
    hung.get().set_black_hole(true);
    hung.get().reset_load();

    let out = reconcile(
        &env,
        &[
            "--format",
            "json",
            "--timeout",
            "1s",
            "--agent-concurrency",
            "2",
            "--agent-failures",
            "3",
        ],
    );
    assert_eq!(code(&out), 3, "{out:?}");
    let acts = actions(&out);
    let of = |wf: &'static str| acts.iter().filter(move |a| a["workflow"] == wf);
    // Every attempt of the healthy agent was read in the same pass.
    assert_eq!(of("healthy").count(), 8, "{acts:#?}");
    assert!(
        of("healthy").all(|a| a["outcome"] == "WORKING"),
        "{acts:#?}"
    );
    // The hung agent: at most K + c − 1 requests reached it (the circuit opens on the K-th
    // failure; the others in flight then fail too), and the rest were never tried.
    let reached = hung.stats().arrivals_ms.len();
    assert!(
        (3..=4).contains(&reached),
        "{reached} requests reached the hung agent"
    );
    let skipped: Vec<&Value> = of("hung").filter(|a| a["outcome"] == "skipped").collect();
    assert!(skipped.len() >= 12 - 4, "{acts:#?}");
    assert_eq!(of("hung").count(), 12, "{acts:#?}");
    for a in &skipped {
        assert_eq!(a["detail"]["agent"], hung.url(), "{a}");
        assert!(
            a["detail"]["reason"]
                .as_str()
                .unwrap()
                .starts_with("3 consecutive timeouts or connection failures"),
            "{a}"
        );
    }
    let summary = json_lines(&out).pop().unwrap();
    assert_eq!(
        summary["skippedAgents"][0]["agent"],
        hung.url(),
        "{summary}"
    );
    assert_eq!(summary["exitCode"], 3);
    // Nothing was journaled for the skipped attempts.
    let after: Vec<Value> = attempts(&env, Some("hung"));
    for a in &skipped {
        let step = a["step"].as_str().unwrap();
        let find = |rows: &[Value]| rows.iter().find(|r| r["step"] == step).cloned().unwrap();
        assert_eq!(
            find(&before),
            find(&after),
            "attempt of skipped step {step} changed"
        );
    }

    // The next pass tries the agent again; a human reads one line naming it.
    let out = reconcile(&env, &["--timeout", "1s", "--agent-concurrency", "2"]);
    assert_eq!(code(&out), 3, "{out:?}");
    assert!(hung.stats().arrivals_ms.len() > reached, "not tried again");
    let lines: Vec<String> = stdout(&out)
        .lines()
        .filter(|l| l.contains("skipped this pass"))
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), 1, "{}", stdout(&out));
    assert!(lines[0].contains(&hung.url()), "{}", lines[0]);
}

#[test]
fn a_rate_limited_agent_gets_no_request_before_its_retry_after() {
    let env = TestEnv::new();
    let a = agent(slow_ticks());
    running_steps(&env, &a, "busy", 8);
    a.get().set_rate_limit(Some(3));
    a.get().reset_load();
    // One request at a time: every request after a 429 left after the client read it.
    let out = reconcile(&env, &["--format", "json", "--agent-concurrency", "1"]);
    assert_eq!(code(&out), 3, "{out:?}");
    let acts = actions(&out);
    assert_eq!(acts.len(), 8, "{acts:#?}");
    assert!(acts.iter().all(|a| a["outcome"] == "WORKING"), "{acts:#?}");
    let stats = a.stats();
    assert!(!stats.throttled_ms.is_empty(), "the agent never said 429");
    for t in &stats.throttled_ms {
        // 5 ms for the two clocks' granularity (the agent's wall clock, our monotonic timer).
        let early: Vec<f64> = stats
            .arrivals_ms
            .iter()
            .copied()
            .filter(|r| *r > *t && *r < *t + 1000.0 - 5.0)
            .collect();
        assert!(
            early.is_empty(),
            "requests {early:?} arrived within a second of the 429 at {t}"
        );
    }
}

#[test]
fn an_agents_requests_in_flight_never_exceed_its_limit() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        delay: Duration::from_millis(100),
        ..slow_ticks()
    });
    running_steps(&env, &a, "many", 16);
    a.get().reset_load();
    let out = reconcile(&env, &["--agent-concurrency", "3"]);
    assert_eq!(code(&out), 3, "{out:?}");
    let peak = a.stats().max_in_flight;
    assert!((1..=3).contains(&peak), "{peak} requests in flight at once");

    // The registry's own limit for the agent wins over the flag.
    let out = env.run(["agents", "add", &a.url(), "--concurrency", "2"]);
    assert_eq!(code(&out), 0, "{out:?}");
    a.get().reset_load();
    let out = reconcile(&env, &["--agent-concurrency", "8"]);
    assert_eq!(code(&out), 3, "{out:?}");
    let peak = a.stats().max_in_flight;
    assert!((1..=2).contains(&peak), "{peak} requests in flight at once");
}
