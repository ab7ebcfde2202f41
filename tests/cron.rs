//! Cron that pages once: `reconcile --alert new` exits 4 only for an item no earlier such pass
//! reported (3 while old ones wait), `--realert`, `--metrics-file`, and docs/cron.md's wrapper
//! run verbatim (with `mail` stubbed) and its systemd units checked. Real agents on 127.0.0.1,
//! the real journal.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use crate::common::commands::{delegate, reconcile, settle};
use crate::common::snapshot::{compile, redact};
use crate::common::{TestEnv, agent, code, fast, json_lines, stderr, stdout};

/// The `new` flags of the `action` records that carry one.
fn new_flags(out: &std::process::Output) -> Vec<bool> {
    json_lines(out)
        .iter()
        .filter(|r| r["type"] == "action")
        .filter_map(|r| r["new"].as_bool())
        .collect()
}

#[test]
fn alert_new_exits_4_once_per_item_and_3_while_it_waits() {
    let env = TestEnv::new();
    let a = agent(fast());
    assert_eq!(code(&delegate(&env, "w/asking", &a.url(), "ask", &[])), 0);
    assert_eq!(settle(&env), 4);
    let alert = ["--alert", "new", "--format", "json"];
    // A dry run reports nothing as seen.
    let out = reconcile(&env, &["--alert", "new", "--format", "json", "--dry-run"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    let out = reconcile(&env, &alert);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(new_flags(&out), [true]);
    for _ in 0..2 {
        let out = reconcile(&env, &alert);
        assert_eq!(code(&out), 3, "old items exit 3, never 0: {}", stdout(&out));
        assert_eq!(new_flags(&out), [false]);
        let summary = json_lines(&out).pop().unwrap();
        assert_eq!(summary["alerts"]["old"], 1, "{summary}");
    }
    // -q prints nothing while nothing new needs a human.
    let out = reconcile(&env, &["--alert", "new", "-q"]);
    assert_eq!(
        (code(&out), stdout(&out).as_str()),
        (3, ""),
        "{}",
        stderr(&out)
    );
    // Without --alert new, every pass still says 4.
    assert_eq!(code(&reconcile(&env, &[])), 4);
    // Something new: another question.
    assert_eq!(code(&delegate(&env, "w/second", &a.url(), "ask", &[])), 0);
    // Wait (plain passes, which report nothing as seen) until it is asked.
    for _ in 0..50 {
        let out = env.run(["inspect", "--pending", "--format", "json"]);
        if json_lines(&out)
            .iter()
            .filter(|r| r["type"] == "attempt")
            .count()
            == 2
        {
            break;
        }
        assert_eq!(code(&reconcile(&env, &[])), 4);
    }
    let out = reconcile(&env, &alert);
    assert_eq!(code(&out), 4, "{}", stdout(&out));
    let mut flags = new_flags(&out);
    flags.sort_unstable();
    assert_eq!(flags, [false, true]);
    // --realert makes old items new again once they were reported that long ago.
    let out = reconcile(
        &env,
        &["--alert", "new", "--realert", "1ms", "--format", "json"],
    );
    assert_eq!(code(&out), 4, "{}", stdout(&out));
    assert_eq!(new_flags(&out), [true, true]);
    let out = reconcile(&env, &["--realert", "1h"]);
    assert_eq!(
        code(&out),
        2,
        "--realert needs --alert new: {}",
        stderr(&out)
    );
}

#[test]
fn the_metrics_file_is_a_prometheus_textfile() {
    let env = TestEnv::new();
    let a = agent(fast());
    assert_eq!(code(&delegate(&env, "w/asking", &a.url(), "ask", &[])), 0);
    assert_eq!(settle(&env), 4);
    let prom = env.path().join("a2a.prom");
    let out = reconcile(&env, &["--metrics-file", prom.to_str().unwrap()]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    let text = std::fs::read_to_string(&prom).unwrap();
    let timings = compile(&[(
        r"(?m)^(a2a_recover_(pass_duration|last_pass_timestamp|agent_last_success_timestamp)_seconds(\{[^}]*\})?) \S+$",
        "$1 [SECONDS]",
    )]);
    insta::assert_snapshot!("metrics_file", redact(&env, &text, &timings));
    for name in [
        "a2a_recover_pass_duration_seconds ",
        "a2a_recover_last_pass_timestamp_seconds ",
    ] {
        let value = text.lines().find_map(|l| l.strip_prefix(name)).unwrap();
        assert!(value.parse::<f64>().unwrap() >= 0.0, "{name}{value}");
    }
    // A failed pass still writes its exit code.
    let out = env.run([
        "--journal",
        env.path().join("missing.sqlite3").to_str().unwrap(),
        "reconcile",
        "--metrics-file",
        prom.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 1);
    let text = std::fs::read_to_string(&prom).unwrap();
    assert!(text.contains("a2a_recover_pass_exit_code 1\n"), "{text}");
}

/// The value of the series `name` (with its labels, as written) in a metrics textfile.
fn series(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .map(|v| v.parse().unwrap())
}

#[test]
fn the_metrics_file_carries_each_agents_health_and_the_stalest_steps_age() {
    let env = TestEnv::new();
    let a = agent(a2a_recover::scripted_agent::AgentConfig {
        tick: std::time::Duration::from_secs(3600),
        ..fast()
    });
    assert_eq!(code(&delegate(&env, "w/long", &a.url(), "work:5", &[])), 0);
    let prom = env.path().join("a2a.prom");
    let metrics = ["--metrics-file", prom.to_str().unwrap()];
    let out = reconcile(&env, &metrics);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let text = std::fs::read_to_string(&prom).unwrap();
    // The agent's label is its base URL: no `/.well-known/agent-card.json`, no `/`.
    let label = format!("{{agent=\"{}\"}}", a.url().trim_end_matches('/'));
    let success = format!("a2a_recover_agent_last_success_timestamp_seconds{label}");
    let failing = format!("a2a_recover_agent_failing_since_timestamp_seconds{label}");
    let answered = series(&text, &success).unwrap_or_else(|| panic!("{success} in:\n{text}"));
    let now = a2a_recover::clock::system_now().timestamp_millis() as f64 / 1000.0;
    assert!(
        answered > now - 60.0 && answered <= now,
        "{answered} vs {now}"
    );
    assert_eq!(
        series(&text, &failing),
        None,
        "absent while it answers:\n{text}"
    );
    let age = series(&text, "a2a_recover_oldest_unfinished_age_seconds").unwrap();
    assert!((0.0..60.0).contains(&age), "{age}");
    for kind in [
        "# TYPE a2a_recover_oldest_unfinished_age_seconds gauge",
        "# TYPE a2a_recover_agent_last_success_timestamp_seconds gauge",
        "# TYPE a2a_recover_agent_failing_since_timestamp_seconds gauge",
    ] {
        assert!(
            text.lines().any(|l| l == kind),
            "{kind} missing from:\n{text}"
        );
    }

    // The agent dies: failing since the pass's first failed read; its last answer stays.
    drop(a);
    let out = reconcile(&env, &metrics);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let text = std::fs::read_to_string(&prom).unwrap();
    let since = series(&text, &failing).unwrap_or_else(|| panic!("{failing} in:\n{text}"));
    assert!(since > answered, "{since} vs {answered}");
    assert_eq!(series(&text, &success), Some(answered), "{text}");

    // docs/cron.md's alert rules use only series the file carries, and its probe runs.
    let rules = doc_block("Prometheus alerting rules that use them:", "```yaml\n");
    for name in rules
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("a2a_recover_"))
    {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("# TYPE {name} "))),
            "the alert rules use {name}, which the metrics file lacks:\n{text}"
        );
    }
    let probe = doc_block("A probe that exits 4", "```sh\n");
    let args: Vec<&str> = probe.split_whitespace().skip(1).collect();
    assert_eq!(
        args,
        ["-q", "status", "--check", "--stale", "2h"],
        "{probe}"
    );
    let out = env.run(&args);
    assert_eq!(code(&out), 0, "quiet for less than 2h: {out:?}");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
}

/// The code block that follows `marker` in docs/cron.md, verbatim.
fn doc_block(marker: &str, fence: &str) -> String {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cron.md"))
        .unwrap();
    let after = &doc[doc
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} not in docs/cron.md"))..];
    let start = after.find(fence).unwrap() + fence.len();
    let end = after[start..].find("\n```").unwrap();
    after[start..=start + end].to_owned()
}

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_cron_wrapper_from_the_docs_mails_one_alert_over_three_runs() {
    let env = TestEnv::new();
    let a = agent(fast());
    assert_eq!(
        code(&delegate(&env, "trip-7/hotel", &a.url(), "ask", &[])),
        0
    );
    assert_eq!(settle(&env), 4, "a question is pending");
    let wrapper = doc_block("with `/usr/local/bin/a2a-reconcile-cron`:", "```sh\n");
    assert!(wrapper.starts_with("#!/bin/sh\n"), "{wrapper}");
    let bin = env.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    executable(&bin.join("a2a-reconcile-cron"), &wrapper);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_a2a-recover"), bin.join("a2a-recover")).unwrap();
    let mails = env.path().join("mails");
    executable(
        &bin.join("mail"),
        &format!(
            "#!/bin/sh\n{{ echo \"mail $*\"; cat; echo '-- end'; }} >> '{}'\n",
            mails.display()
        ),
    );
    // A fresh host: the wrapper's log directory does not exist yet.
    let state = env.path().join("xdg-state/a2a-recover");
    assert!(!state.exists());
    for run in 1..=3 {
        let out = env
            .hermetic(&mut std::process::Command::new(
                bin.join("a2a-reconcile-cron"),
            ))
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "run {run}: {}", stderr(&out));
    }
    let sent = std::fs::read_to_string(&mails).unwrap_or_default();
    assert_eq!(
        sent.matches("mail -s").count(),
        1,
        "exactly one mail:\n{sent}"
    );
    assert!(
        sent.contains("mail -s a2a-recover: a human must act ops@example.com"),
        "{sent}"
    );
    assert!(
        sent.contains("trip-7/hotel"),
        "the mail lists the item:\n{sent}"
    );
    assert!(!sent.contains("PAGE"), "{sent}");
    let last = std::fs::read_to_string(state.join("last-pass.jsonl")).unwrap();
    assert!(last.contains("\"exitCode\":3"), "{last}");
    let prom = std::fs::read_to_string(state.join("a2a-recover.prom")).unwrap();
    assert!(prom.contains("a2a_recover_pass_exit_code 3\n"), "{prom}");
}

#[test]
fn the_systemd_units_from_the_docs_verify() {
    let analyze = Path::new("/usr/bin/systemd-analyze");
    let env = TestEnv::new();
    let units = env.path().join("units");
    std::fs::create_dir(&units).unwrap();
    for (name, file) in [
        ("a2a-reconcile.service", "a2a-reconcile.service"),
        ("a2a-reconcile.timer", "a2a-reconcile.timer"),
        (
            "a2a-reconcile-alert@.service",
            "a2a-reconcile-alert@x.service",
        ),
    ] {
        let unit = doc_block(&format!("`~/.config/systemd/user/{name}`"), "```ini\n");
        assert!(unit.contains("[Unit]"), "{name}: {unit}");
        // The binary's install path is not on the test host: point it at ours.
        let unit = unit.replace(
            "/usr/local/bin/a2a-recover",
            env!("CARGO_BIN_EXE_a2a-recover"),
        );
        std::fs::write(units.join(file), unit).unwrap();
    }
    if !analyze.exists() {
        // Only this check is skipped (systemd-analyze is not installed): the units were still
        // extracted and checked for their `[Unit]` section above.
        return;
    }
    let out = std::process::Command::new(analyze)
        .arg("verify")
        .args(
            std::fs::read_dir(&units)
                .unwrap()
                .map(|e| e.unwrap().path()),
        )
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "systemd-analyze found problems");
}

/// Cron's environment is nearly empty (`PATH=/usr/bin:/bin`): docs/cron.md's wrapper finds the
/// binary where `cargo install` puts it, and when it cannot run the pass or cannot alert it exits
/// non-zero saying why, never 0 in silence.
#[test]
fn the_cron_wrapper_under_crons_path_runs_or_says_why_it_cannot() {
    let env = TestEnv::new();
    let home = env.path().join("home");
    let cargo_bin = home.join(".cargo/bin");
    std::fs::create_dir_all(&cargo_bin).unwrap();
    let wrapper = env.path().join("a2a-reconcile-cron");
    executable(
        &wrapper,
        &doc_block("with `/usr/local/bin/a2a-reconcile-cron`:", "```sh\n"),
    );
    let cron_run = || {
        std::process::Command::new(&wrapper)
            .env_clear()
            .env("HOME", &home)
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap()
    };
    let has_mail = ["/usr/bin/mail", "/bin/mail"]
        .iter()
        .any(|m| Path::new(m).exists());
    // No binary anywhere it looks (unless this host installed one in /usr/local/bin).
    if !Path::new("/usr/local/bin/a2a-recover").exists() {
        let out = cron_run();
        assert_eq!(code(&out), 1, "{}", stderr(&out));
        assert!(
            stderr(&out).contains("a2a-recover not found in PATH, /usr/local/bin or ~/.cargo/bin"),
            "{}",
            stderr(&out)
        );
    }
    // The binary where `cargo install` puts it.
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_a2a-recover"),
        cargo_bin.join("a2a-recover"),
    )
    .unwrap();
    let out = cron_run();
    if has_mail {
        // It ran the pass: no journal yet is exit 1, a page it sent by mail.
        let last = home.join(".local/state/a2a-recover/last-pass.err");
        assert!(last.exists(), "{}", stderr(&out));
    } else {
        assert_eq!(code(&out), 1, "{}", stderr(&out));
        assert!(
            stderr(&out).contains("mail not found: no alert could be sent"),
            "{}",
            stderr(&out)
        );
    }
    // A mail that fails is a page that was not sent: exit 1, never 0.
    let bin = env.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    executable(&bin.join("mail"), "#!/bin/sh\ncat >/dev/null\nexit 75\n");
    let out = std::process::Command::new(&wrapper)
        .env_clear()
        .env("HOME", &home)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("mail failed: the page was not sent"),
        "{}",
        stderr(&out)
    );
    let err = std::fs::read_to_string(home.join(".local/state/a2a-recover/last-pass.err")).unwrap();
    assert!(
        err.contains("journal"),
        "the pass ran and found no journal: {err}"
    );
}
