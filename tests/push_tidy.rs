//! Push configs deleted at their agents: once a pushed step ends, the reconcile pass asks its
//! agent to delete the config (on the attempt's binding), once; an agent that answers "unsupported"
//! does not fail the pass and is not asked again.

use a2a_recover::scripted_agent::{AgentConfig, PushFault, ServedBinding};

use crate::common::commands::{delegate, reconcile, settle, the_attempt};
use crate::common::{Store, TestEnv, agent, code, fast, stderr};

const BASE: &str = "http://127.0.0.1:9/hooks";
const DELETE: &str = "DeleteTaskPushNotificationConfig";

fn pushing() -> AgentConfig {
    AgentConfig {
        push: true,
        ..fast()
    }
}

/// How many deletes the agent was asked for.
fn asked(stats: &a2a_recover::scripted_agent::Stats) -> u64 {
    stats.requests.get(DELETE).copied().unwrap_or(0)
}

#[rstest::rstest]
fn a_pushed_step_that_completes_has_its_config_deleted_once_on_every_binding(
    #[values(Store::Sqlite, Store::Postgres)] store: Store,
) {
    let bindings = [
        ("JSON-RPC", pushing()),
        (
            "HTTP+JSON",
            AgentConfig {
                binding: ServedBinding::HttpJson,
                ..pushing()
            },
        ),
        (
            "gRPC",
            AgentConfig {
                binding: ServedBinding::Grpc,
                ..pushing()
            },
        ),
        (
            "v0.3 JSON-RPC",
            AgentConfig {
                protocol_v03: true,
                ..pushing()
            },
        ),
    ];
    for (name, cfg) in bindings {
        let env = TestEnv::on(store);
        let a = agent(cfg);
        let out = delegate(&env, "w/s", &a.url(), "work:1", &["--push", BASE]);
        assert!(matches!(code(&out), 0 | 3), "{name}: {}", stderr(&out));
        assert_eq!(settle(&env), 0, "{name}");
        let row = the_attempt(&env, "w/s");
        assert_eq!(row["state"], "COMPLETED", "{name}: {row}");
        let config_id = row["push"]["configId"]
            .as_str()
            .expect("a config")
            .to_owned();
        let again = reconcile(&env, &[]);
        assert_eq!(code(&again), 0, "{name}: {}", stderr(&again));
        let stats = a.stats();
        assert_eq!(stats.push_deletes, vec![config_id], "{name}");
        assert_eq!(asked(&stats), 1, "{name}: asked once over two passes");
        let left = env
            .open_journal()
            .push_configs_to_tidy(&[], 10)
            .expect("read");
        assert!(left.is_empty(), "{name}: {left:?}");
    }
}

#[rstest::rstest]
fn an_agent_that_deletes_no_configs_fails_no_pass_and_is_not_asked_again(
    #[values(Store::Sqlite, Store::Postgres)] store: Store,
) {
    let env = TestEnv::on(store);
    let a = agent(AgentConfig {
        push_faults: vec![PushFault::DeleteUnsupported],
        ..pushing()
    });
    let out = delegate(&env, "w/a", &a.url(), "work:1", &["--push", BASE]);
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
    assert_eq!(settle(&env), 0);
    let again = reconcile(&env, &[]);
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert_eq!(asked(&a.stats()), 1);
    // Another step on the same agent ends: its config is not asked about.
    let out = delegate(&env, "w/b", &a.url(), "work:1", &["--push", BASE]);
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
    assert_eq!(settle(&env), 0);
    let last = reconcile(&env, &[]);
    assert_eq!(code(&last), 0, "{}", stderr(&last));
    assert_eq!(the_attempt(&env, "w/b")["state"], "COMPLETED");
    let stats = a.stats();
    assert_eq!(asked(&stats), 1, "{:?}", stats.requests);
    assert!(stats.push_deletes.is_empty());
    assert!(
        env.open_journal()
            .push_configs_to_tidy(&[], 10)
            .expect("read")
            .is_empty()
    );
}
