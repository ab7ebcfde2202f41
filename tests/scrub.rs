//! Issue 30, hole 3: a token an agent echoes back is scrubbed in whatever encoding it comes
//! back — percent-encoded with lower- or mixed-case hex, the way Python's `quote` or
//! JavaScript's `encodeURIComponent` write it, JSON-escaped, or any mixture — from every byte
//! of the journal (database and WAL) and of the output (stderr at `-vvv`, `--format json`,
//! `inspect --events`). And an HTTP 401 or 403 answer to a send is `REFUSED` (exit 4) whatever
//! its body says.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Output;

use a2a_recover::journal::Journal;

use crate::common::commands::the_attempt;
use crate::common::hostile::{Hostile, Mode};
use crate::common::{TestEnv, code, explain, stdout};

const VAR: &str = "A2A_TEST_TOKEN";

/// A token holding what the encoders treat differently: `/` (Python's `quote` leaves it raw),
/// `~!'()*` (JavaScript's `encodeURIComponent` does), a space (`+` or `%20`) and a `+`.
fn token() -> String {
    format!(
        "S/~!'()* +{}",
        &uuid::Uuid::new_v4().simple().to_string()[..6]
    )
}

/// Percent-encodes every byte `raw` does not keep, the hex digits as `case` says (by index).
fn encode(s: &str, raw: impl Fn(u8) -> bool, upper: impl Fn(usize) -> bool) -> String {
    let mut out = String::new();
    let mut digits = 0;
    for b in s.bytes() {
        if raw(b) {
            out.push(char::from(b));
            continue;
        }
        out.push('%');
        for d in format!("{b:02x}").chars() {
            out.push(if upper(digits) {
                d.to_ascii_uppercase()
            } else {
                d
            });
            digits += 1;
        }
    }
    out
}

/// One way an agent spells the token back.
struct Spelling {
    name: &'static str,
    /// As written inside the JSON string of the answer (JSON escapes undone by a parser).
    wire: String,
    /// As the answer's text holds it once parsed.
    text: String,
    /// As a plain-text answer (never parsed) holds it.
    plain: String,
}

/// Every spelling the issue names, and a mixture of them.
fn spellings(token: &str) -> Vec<Spelling> {
    let alnum = |b: u8| b.is_ascii_alphanumeric();
    let same = |name, s: String| Spelling {
        name,
        wire: s.clone(),
        text: s.clone(),
        plain: s,
    };
    let json_level = token.encode_utf16().fold(String::new(), |mut out, u| {
        let _ = write!(out, "\\u{u:04x}");
        out
    });
    // Every other character as `\u00XX` in the text itself (the agent escaped it twice).
    let in_text: String = token
        .chars()
        .enumerate()
        .map(|(i, c)| {
            if i % 2 == 0 {
                format!("\\u{:04X}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect();
    // Byte by byte: raw, %xx, %XX, a JSON escape, and `+` for the space.
    let (mut mix_wire, mut mix_text) = (String::new(), String::new());
    for (i, b) in token.bytes().enumerate() {
        let (wire, text) = match (b, i % 4) {
            (b' ', _) => ("+".to_owned(), "+".to_owned()),
            (_, 0) => (char::from(b).to_string(), char::from(b).to_string()),
            (_, 1) => (format!("%{b:02x}"), format!("%{b:02x}")),
            (_, 2) => (format!("%{b:02X}"), format!("%{b:02X}")),
            _ => (format!("\\u{b:04x}"), char::from(b).to_string()),
        };
        mix_wire.push_str(&wire);
        mix_text.push_str(&text);
    }
    vec![
        same("lower-case hex", encode(token, |_| false, |_| false)),
        same("mixed-case hex", encode(token, |_| false, |i| i % 3 == 0)),
        same(
            "Python quote",
            encode(token, |b| alnum(b) || b"_.-~/".contains(&b), |_| true),
        ),
        same(
            "Python quote_plus, lower-case hex",
            encode(token, |b| alnum(b) || b"_.-~ ".contains(&b), |_| false).replace(' ', "+"),
        ),
        same(
            "JavaScript encodeURIComponent",
            encode(token, |b| alnum(b) || b"-_.!~*'()".contains(&b), |_| true),
        ),
        Spelling {
            name: "JSON escapes of the answer",
            wire: json_level.clone(),
            text: token.to_owned(),
            plain: json_level,
        },
        Spelling {
            name: "JSON escapes in the text",
            wire: in_text.replace('\\', "\\\\"),
            text: in_text.clone(),
            plain: in_text,
        },
        Spelling {
            name: "a mixture",
            wire: mix_wire.clone(),
            text: mix_text,
            plain: mix_wire,
        },
    ]
}

/// The answers an agent echoes the token in: a JSON-RPC error with HTTP 401, the same with
/// HTTP 200, and a plain-text 500 (its text is never parsed).
fn answers(s: &Spelling) -> [(&'static str, Mode); 3] {
    // The message first, so the start of the body that errors quote holds all of it.
    let rpc = format!(
        r#"{{"error":{{"message":"bad token: {}","code":-32603}},"jsonrpc":"2.0","id":{{id}}}}"#,
        s.wire
    );
    [
        (
            "401",
            Mode::Answer {
                status: 401,
                content_type: "application/json".to_owned(),
                body: rpc.clone(),
            },
        ),
        (
            "200",
            Mode::Answer {
                status: 200,
                content_type: "application/json".to_owned(),
                body: rpc,
            },
        ),
        (
            "500",
            Mode::Answer {
                status: 500,
                content_type: "text/plain".to_owned(),
                body: format!("bad token: {}", s.plain),
            },
        ),
    ]
}

/// Where `needle` first is in `haystack`.
fn find(haystack: &[u8], needle: &str) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())
}

/// Every file next to the journal (database, WAL, shared memory, lock), by name.
fn journal_files(journal: &Path) -> Vec<(String, Vec<u8>)> {
    let dir = journal.parent().expect("a directory");
    std::fs::read_dir(dir)
        .expect("the journal directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("read"))
        })
        .collect()
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one token, spelled eight ways, followed through every place it could leak"
)]
fn a_token_echoed_in_any_encoding_is_in_no_journal_byte_or_output() {
    let env = TestEnv::new();
    let token = token();
    let h = Hostile::start();
    let url = h.url().to_owned();
    let run = |args: &[&str]| -> Output {
        env.cmd()
            .env(VAR, &token)
            .args(args)
            .output()
            .expect("run the binary")
    };
    let spellings = spellings(&token);
    // Every output, and what must not be in it.
    let mut outputs: Vec<(String, Output)> = Vec::new();
    let mut steps = Vec::new();
    // Held open, so that no run's close folds the WAL into the database and removes it: the
    // WAL keeps every page any run wrote.
    let mut reader: Option<Journal> = None;
    for (i, s) in spellings.iter().enumerate() {
        for (answer, mode) in answers(s) {
            h.set_mode(mode);
            for format in ["human", "json"] {
                let step = format!("w/s{i}-{answer}-{format}");
                let out = run(&[
                    "delegate",
                    &step,
                    "--agent",
                    &url,
                    "--token-env",
                    VAR,
                    "go",
                    "--format",
                    format,
                    "-vvv",
                ]);
                assert!(
                    matches!(code(&out), 3 | 4),
                    "{} in a {answer}: {}",
                    s.name,
                    explain(&out)
                );
                outputs.push((format!("delegate {step} ({})", s.name), out));
                steps.push((step, format));
                if reader.is_none() {
                    reader = Some(
                        Journal::open_read_only(&env.journal(), std::time::Duration::from_secs(10))
                            .expect("open the journal"),
                    );
                }
            }
        }
    }
    // A pass looks for every step whose send may have been processed (the agent answers its
    // look with the last spelling), and each step's events are shown.
    for format in ["human", "json"] {
        let out = run(&["reconcile", "--format", format, "-vvv"]);
        outputs.push((format!("reconcile ({format})"), out));
    }
    for (step, format) in &steps {
        let out = run(&["inspect", step, "--events", "--format", format, "-vvv"]);
        assert_eq!(code(&out), 0, "{}", explain(&out));
        outputs.push((format!("inspect {step} --events"), out));
    }
    let files = journal_files(&env.journal());
    assert!(
        files
            .iter()
            .any(|(n, b)| n.ends_with("-wal") && !b.is_empty()),
        "a WAL to search: {:?}",
        files.iter().map(|(n, b)| (n, b.len())).collect::<Vec<_>>()
    );
    drop(reader);

    // Each step's events show where the echo was.
    let echoed = outputs
        .iter()
        .filter(|(what, out)| what.starts_with("inspect") && stdout(out).contains("REDACTED"))
        .count();
    let mut places: Vec<(String, Vec<u8>)> = files;
    for (what, out) in outputs {
        places.push((format!("stdout of {what}"), out.stdout));
        places.push((format!("stderr of {what}"), out.stderr));
    }
    let mut needles: Vec<(String, &str)> = vec![("the raw token".to_owned(), token.as_str())];
    for s in &spellings {
        needles.push((format!("{} as sent", s.name), &s.wire));
        needles.push((format!("{} as read", s.name), &s.text));
    }
    for (place, bytes) in &places {
        for (what, needle) in &needles {
            if let Some(at) = find(bytes, needle) {
                let from = at.saturating_sub(300);
                let to = (at + needle.len() + 100).min(bytes.len());
                panic!(
                    "{what} (`{needle}`) is in {place}: …{}…",
                    String::from_utf8_lossy(&bytes[from..to])
                );
            }
        }
        assert!(
            !a2a_recover::scrub::contains(&[&token], bytes),
            "the token, in some encoding, is in {place}:\n{}",
            String::from_utf8_lossy(bytes)
        );
    }
    assert_eq!(
        echoed,
        steps.len(),
        "every step's events show the echo, scrubbed"
    );
    // The token was really sent, and so echoed: the agent received it on every call.
    let bearer = format!("Bearer {token}");
    let calls: Vec<_> = h
        .seen()
        .into_iter()
        .filter(|s| !s.method.is_empty())
        .collect();
    assert!(calls.len() >= steps.len(), "{calls:?}");
    for call in &calls {
        assert_eq!(
            call.authorization.as_deref(),
            Some(bearer.as_str()),
            "{call:?}"
        );
    }
}

/// A 401 or 403 answer to a send is the agent refusing our credentials, whatever its body
/// says: a JSON-RPC error in it (here -32603, "internal error", which alone would leave the
/// send's outcome unknown) does not make the send `send-failed` (exit 3).
#[test]
fn a_401_or_403_whose_body_is_a_json_rpc_error_is_refused_exit_4() {
    let env = TestEnv::new();
    let h = Hostile::start();
    let url = h.url().to_owned();
    for status in [401, 403] {
        h.set_mode(Mode::Answer {
            status,
            content_type: "application/json".to_owned(),
            body: r#"{"jsonrpc":"2.0","id":{id},"error":{"code":-32603,"message":"who are you?"}}"#
                .to_owned(),
        });
        let step = format!("w/http-{status}");
        let out = env
            .cmd()
            .env(VAR, "a-token-it-refuses")
            .args(["delegate", &step, "--agent", &url, "--token-env", VAR, "go"])
            .output()
            .expect("run");
        assert_eq!(code(&out), 4, "{status}: {}", explain(&out));
        assert_eq!(the_attempt(&env, &step)["state"], "REFUSED", "{status}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("HTTP {status}")), "{err}");
        assert!(err.contains("refused the credentials"), "{err}");
    }
    let out = env.run(["inspect", "--pending"]);
    for status in [401, 403] {
        assert!(
            stdout(&out).contains(&format!("w/http-{status}")),
            "{}",
            explain(&out)
        );
    }
}

/// With `--token-cmd`, a 401 runs the command once more and asks again (the token may have
/// expired); a second 401 with a JSON-RPC error body is then `REFUSED`, exit 4.
#[test]
fn a_token_command_refused_twice_with_a_json_rpc_body_is_refused_exit_4() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = TestEnv::new();
    let h = Hostile::start();
    h.set_mode(Mode::Answer {
        status: 401,
        content_type: "application/json".to_owned(),
        body: r#"{"jsonrpc":"2.0","id":{id},"error":{"code":-32603,"message":"expired"}}"#
            .to_owned(),
    });
    let dir = tempfile::tempdir().expect("a temp dir");
    let runs = dir.path().join("runs");
    let script = crate::common::write(
        dir.path(),
        "token.sh",
        &format!(
            "#!/bin/sh\necho run >> '{}'\necho \"token-$(wc -l < '{}')\"\n",
            runs.display(),
            runs.display()
        ),
    );
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let url = h.url().to_owned();
    let out = env
        .cmd()
        .args(["delegate", "w/cmd", "--agent", &url, "--token-cmd"])
        .arg(&script)
        .arg("go")
        .output()
        .expect("run");
    assert_eq!(code(&out), 4, "{}", explain(&out));
    assert_eq!(the_attempt(&env, "w/cmd")["state"], "REFUSED");
    let ran = std::fs::read_to_string(&runs).expect("the command ran");
    assert_eq!(ran.lines().count(), 2, "run, refused, run again");
    let sends: Vec<_> = h
        .seen()
        .into_iter()
        .filter(|s| s.method == "SendMessage")
        .map(|s| s.authorization.unwrap_or_default())
        .collect();
    assert_eq!(sends, ["Bearer token-1", "Bearer token-2"]);
}
