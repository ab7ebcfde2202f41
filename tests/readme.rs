//! Every command on the README's first screen runs, with the exit code the README shows.
//!
//! The set-up line's `cargo build --release … && ./target/release/a2a-recover demo` is run as
//! `a2a-recover demo` from this test build (no second release build in CI); `scripts/test` is
//! the command running this very test.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

use crate::common::child::Guarded;
use crate::common::{TestEnv, code, stderr, stdout};

/// The first screen: what a newcomer sees without scrolling.
const FIRST_SCREEN_LINES: usize = 40;

fn first_screen() -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    readme
        .lines()
        .take(FIRST_SCREEN_LINES)
        .map(str::to_owned)
        .collect()
}

/// Splits a command line into words, honouring double quotes (all the README uses).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// Returns the command of a `$ a2a-recover …` line and the exit code its comment promises.
fn command(line: &str) -> Option<(Vec<String>, i32)> {
    let rest = line.strip_prefix("$ a2a-recover ")?;
    let (cmd, comment) = match rest.split_once('#') {
        Some((c, m)) => (c, Some(m)),
        None => (rest, None),
    };
    let want = comment
        .and_then(|m| m.trim().strip_prefix("exit "))
        .and_then(|m| m.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    Some((words(cmd), want))
}

#[test]
fn the_first_screen_gives_exactly_two_set_up_commands() {
    let screen = first_screen();
    let start = screen
        .iter()
        .position(|l| l == "```sh")
        .expect("a ```sh block");
    let block: Vec<_> = screen[start + 1..]
        .iter()
        .take_while(|l| !l.starts_with("```"))
        .collect();
    assert_eq!(block.len(), 2, "exactly two set-up commands: {block:?}");
    assert!(block[0].contains("a2a-recover demo"), "{}", block[0]);
    assert!(block[1].starts_with("scripts/test"), "{}", block[1]);
    let ci = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/run")).unwrap();
    assert!(
        ci.contains("scripts/test"),
        ".ci/run must call the README's test command"
    );
}

#[test]
fn the_demo_on_the_first_screen_exits_0() {
    let env = TestEnv::new();
    let out = env.run(["demo"]);
    assert_eq!(
        code(&out),
        0,
        "stdout:\n{}\nstderr:\n{}",
        stdout(&out),
        stderr(&out)
    );
}

#[test]
fn the_example_session_runs_as_shown() {
    let env = TestEnv::new();
    let screen = first_screen();
    let commands: Vec<_> = screen.iter().filter_map(|l| command(l)).collect();
    assert!(
        commands.len() >= 5,
        "the example session is on the first screen: {commands:?}"
    );
    let mut agent = None;
    let mut url = String::new();
    for (args, want) in commands {
        if args.first().map(String::as_str) == Some("scripted-agent") {
            assert_eq!(
                args.last().map(String::as_str),
                Some("&"),
                "runs in the background"
            );
            // A free port instead of the README's fixed one: CI machines are shared.
            let mut child = Guarded::spawn(
                Command::new(assert_cmd::cargo::cargo_bin("a2a-recover"))
                    .args(["scripted-agent", "--port", "0"])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null()),
                "scripted-agent",
            );
            let mut line = String::new();
            BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            url = line
                .trim()
                .strip_prefix("listening on ")
                .expect("ready line")
                .to_owned();
            agent = Some(child);
            continue;
        }
        let args: Vec<String> = args
            .into_iter()
            .map(|a| a.replace("http://127.0.0.1:8001/", &url))
            .collect();
        let out = env.run(&args);
        assert_eq!(
            code(&out),
            want,
            "`a2a-recover {}`\nstdout:\n{}\nstderr:\n{}",
            args.join(" "),
            stdout(&out),
            stderr(&out)
        );
    }
    let mut agent = agent.expect("the session starts a scripted agent");
    let _ = agent.kill();
    let _ = agent.wait();
}

#[test]
fn words_honour_quotes() {
    assert_eq!(
        words(r#"reply a/b "one room""#),
        ["reply", "a/b", "one room"]
    );
    assert_eq!(
        command("$ a2a-recover reconcile   # exit 4: x"),
        Some((vec!["reconcile".into()], 4))
    );
}

/// The install section names what ships: the man pages in `man/`, the completion scripts in
/// `completions/`, and `cargo install --path .`.
#[test]
fn the_install_section_names_what_ships() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let install = readme
        .split_once("\n## Install\n")
        .expect("an `## Install` section")
        .1;
    assert!(
        install.contains("cargo install --locked --path ."),
        "{install}"
    );
    // The one install path docs/cron.md's wrapper and the systemd units name.
    assert!(install.contains("/usr/local/bin/"), "{install}");
    let cron = std::fs::read_to_string(format!("{root}/docs/cron.md")).unwrap();
    assert!(
        cron.contains("ExecStart=/usr/local/bin/a2a-recover "),
        "the unit runs the installed binary"
    );
    for shell in ["bash", "zsh", "fish"] {
        assert!(
            install.contains(&format!("a2a-recover completions {shell}")),
            "{shell}"
        );
    }
    assert!(install.contains("man/*.1"), "{install}");
    for page in ["a2a-recover.1", "a2a-recover-reconcile.1"] {
        assert!(
            std::path::Path::new(&format!("{root}/man/{page}")).exists(),
            "man/{page}"
        );
    }
}
