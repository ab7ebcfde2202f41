//! The command line itself: help, version, usage errors.

use crate::common::{TestEnv, code, stderr, stdout};

#[test]
fn help_lists_exit_codes() {
    let env = TestEnv::new();
    let out = env.run(["--help"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("Exit codes:"), "{}", stdout(&out));
}

#[test]
fn bad_duration_is_a_usage_error() {
    let env = TestEnv::new();
    let out = env.run(["--timeout", "5", "inspect"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("has no unit"), "{}", stderr(&out));
}

/// The artifact caps are validated like `--max-response-size`, from the flag or the
/// environment, before anything is touched.
#[test]
fn artifact_caps_below_a_kib_are_usage_errors() {
    let env = TestEnv::new();
    let out = env.run(["--max-artifact-size", "100", "inspect"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("--max-artifact-size 100 is too small"),
        "{}",
        stderr(&out)
    );
    let out = env
        .cmd()
        .env("A2A_RECOVER_MAX_TASK_SIZE", "10")
        .arg("inspect")
        .output()
        .expect("run binary");
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("--max-task-size 10 is too small"),
        "{}",
        stderr(&out)
    );
}

/// Logs (`-v`) piped into a file are plain text: no escape codes, as for every other output
/// that is not a terminal; `--color always` still colors them.
#[test]
fn verbose_logs_carry_no_escape_codes_off_a_terminal() {
    let env = TestEnv::new();
    // A new journal is migrated (an info line); the agent's port is closed (nothing is sent).
    let delegate = ["delegate", "w/s", "hi", "--agent", "http://127.0.0.1:1/"];
    let out = env.cmd().arg("-v").args(delegate).output().unwrap();
    let err = stderr(&out);
    assert!(err.contains("applying journal migration"), "{err}");
    assert!(!err.contains('\x1b'), "{err:?}");
    let env = TestEnv::new();
    let out = env
        .cmd()
        .args(["-v", "--color", "always"])
        .args(delegate)
        .output()
        .unwrap();
    assert!(stderr(&out).contains('\x1b'), "{:?}", stderr(&out));
}

/// Every DURATION flag takes the same units, days and weeks included (`--deadline 1d` as
/// `prune --older-than 30d`).
#[test]
fn every_duration_flag_takes_days_and_weeks() {
    let env = TestEnv::new();
    let out = env.run([
        "--timeout",
        "1d",
        "reconcile",
        "--deadline",
        "1w",
        "--dry-run",
    ]);
    assert!(!stderr(&out).contains("unknown unit"), "{}", stderr(&out));
    assert_ne!(code(&out), 2, "{}", stderr(&out));
}

/// A typo in the crash-point variable is refused before anything runs, instead of silently
/// disarming the crash a test relies on.
#[test]
fn a_misspelled_crash_point_is_a_usage_error() {
    let env = TestEnv::new();
    let out = env
        .cmd()
        .env("A2A_RECOVER_CRASH_AT", "after-sned:w/s")
        .args(["delegate", "w/s", "hi", "--agent", "http://127.0.0.1:1/"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("names no crash point"),
        "{}",
        stderr(&out)
    );
    assert!(!env.journal().exists(), "nothing may be journaled");
}

/// A journal given as a URL of a scheme that is no journal store is refused without its
/// password, and nothing is created for it (it used to become a directory tree named after the
/// URL). `postgres://` selects PostgreSQL (tests/postgres_cli.rs).
#[test]
fn a_url_shaped_journal_is_refused_and_nothing_is_created() {
    let env = TestEnv::new();
    let out = env
        .cmd()
        .current_dir(env.path())
        .args([
            "--journal",
            "mysql://user:secret@127.0.0.1:5432/db",
            "delegate",
            "w/s",
            "hi",
            "--agent",
            "http://127.0.0.1:1/",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("is a URL"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("secret"), "{}", stderr(&out));
    assert!(!env.path().join("mysql:").exists());
}

/// Names with invisible formatting characters (a bidi override reorders what an operator
/// reads) are refused before anything is journaled.
#[test]
fn a_name_with_a_bidi_control_is_refused() {
    let env = TestEnv::new();
    for name in ["w/a\u{202e}b", "w\u{2067}x/s", "w/zero\u{200b}width"] {
        let out = env.run(["delegate", name, "hi", "--agent", "http://127.0.0.1:1/"]);
        assert_eq!(code(&out), 2, "{name:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("invisible formatting characters"),
            "{}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains('\u{202e}'), "printed raw");
    }
    assert!(!env.journal().exists(), "nothing may be journaled");
}

/// Every visible subcommand's path (`["agents", "add"]`), `help` aside.
fn subcommand_paths() -> Vec<Vec<String>> {
    use clap::CommandFactory as _;
    fn walk(cmd: &clap::Command, path: &[&str], out: &mut Vec<Vec<String>>) {
        for sub in cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        {
            let mut p: Vec<&str> = path.to_vec();
            p.push(sub.get_name());
            out.push(p.iter().map(|s| (*s).to_owned()).collect());
            walk(sub, &p, out);
        }
    }
    let mut paths = Vec::new();
    walk(&a2a_recover::commands::Cli::command(), &[], &mut paths);
    assert!(paths.len() > 12, "{paths:?}");
    paths
}

/// Every subcommand's help ends with examples that run that very subcommand (`agents add`'s
/// start with `a2a-recover agents add`), as the binary prints them.
#[test]
fn every_subcommand_help_has_examples_of_itself() {
    let env = TestEnv::new();
    for path in subcommand_paths() {
        let mut args = path.clone();
        args.push("--help".to_owned());
        let out = env.run(&args);
        assert_eq!(code(&out), 0, "{path:?}");
        let text = stdout(&out);
        let examples = text
            .split_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("`{}` has no examples:\n{text}", path.join(" ")))
            .1;
        let invocation = format!("a2a-recover {}", path.join(" "));
        assert!(
            examples
                .lines()
                .any(|l| l.trim_start().starts_with(&invocation)),
            "`{invocation}` has no example of itself:\n{examples}"
        );
    }
}

/// At 80 columns a subcommand's help lists its own flags, not the ~60 lines of global ones
/// (`a2a-recover --help` lists those, and the subcommand's help says so), and no line wraps:
/// an example's note never runs into the command column.
#[test]
fn subcommand_help_leaves_the_global_options_to_the_top_help_and_fits_80_columns() {
    let env = TestEnv::new();
    let note = "Global options (--journal, -o/--format, -q, -v, …): see `a2a-recover --help`.";
    for path in subcommand_paths() {
        for flag in ["--help", "-h"] {
            let mut args = path.clone();
            args.push(flag.to_owned());
            let out = env.cmd().env("COLUMNS", "80").args(&args).output().unwrap();
            assert_eq!(code(&out), 0, "{args:?}");
            let text = stdout(&out);
            assert!(!text.contains("--max-card-size"), "{args:?}:\n{text}");
            assert!(!text.contains("Global options:"), "{args:?}:\n{text}");
            assert!(text.contains(note), "{args:?}:\n{text}");
            for line in text.lines() {
                assert!(
                    line.chars().count() <= 80,
                    "{args:?} wraps: {line:?}\n{text}"
                );
            }
        }
    }
    let top = env
        .cmd()
        .env("COLUMNS", "80")
        .arg("--help")
        .output()
        .unwrap();
    let text = stdout(&top);
    assert!(text.contains("Global options:"), "{text}");
    assert!(text.contains("--max-card-size"), "{text}");
    assert!(text.contains("before or after the subcommand"), "{text}");
    // Still accepted after the subcommand, as before.
    let out = env.run([
        "inspect",
        "--journal",
        "/nonexistent/j.sqlite3",
        "-o",
        "json",
    ]);
    assert!(
        stderr(&out).contains("chosen by --journal"),
        "{}",
        stderr(&out)
    );
}
