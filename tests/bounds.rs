//! Bounds an agent cannot push us past (issue 30, holes 6 and 7), each pinned against a
//! [`Hostile`] agent on loopback, through the real binary and the real journal:
//!
//! - a `Retry-After` of years (u64::MAX seconds, more than u64 holds, ten years, year 9999, an
//!   HTTP date ten years ahead) skips the agent at once, naming when it may be tried again; the
//!   agent's not-before is journaled, so the next pass and `follow` make no request to it, and
//!   `status` shows it. Asserted on request counts and outcomes, never on seconds;
//! - a huge Agent Card (9 MB, 100,000 interfaces) is refused naming the bound it is over, in
//!   bounded memory, and leaves the journal small; a card over the interface or skill count is
//!   refused the same way.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::common::commands::{reconcile, the_attempt};
use crate::common::hostile::{CardMode, Hostile, Mode, run_measured};
use crate::common::{TestEnv, actions, code, explain, json_lines, stdout};

/// `Retry-After` values of years: u64::MAX seconds, more seconds than u64 holds, ten years, the
/// year 9999, and an HTTP date ten years ahead.
fn years() -> Vec<String> {
    let ahead = a2a_recover::clock::system_now() + chrono::TimeDelta::days(3653);
    vec![
        u64::MAX.to_string(),
        "99999999999999999999999999".to_owned(),
        "315360000".to_owned(),
        "Fri, 31 Dec 9999 23:59:59 GMT".to_owned(),
        ahead.format("%a, %d %b %Y %H:%M:%S GMT").to_string(),
    ]
}

/// Returns the `notBefore` of a skipped action, checked to lie ahead, at most a day.
fn not_before_of(action: &Value) -> String {
    assert_eq!(action["outcome"], "skipped", "{action}");
    let at = action["detail"]["notBefore"]
        .as_str()
        .unwrap_or_else(|| panic!("no notBefore: {action}"));
    let parsed: DateTime<Utc> = at.parse().expect("an RFC 3339 time");
    let now = a2a_recover::clock::system_now();
    assert!(parsed > now, "{at} is not ahead");
    assert!(
        parsed <= now + chrono::TimeDelta::hours(24),
        "{at} is more than a day ahead"
    );
    let reason = action["detail"]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("Retry-After") && reason.contains(&format!("not tried again before {at}")),
        "{reason}"
    );
    at.to_owned()
}

/// A WORKING step delegated to a new [`Hostile`] agent, which from then on answers every call
/// with 429 and `retry_after`.
fn busy_step(retry_after: &str) -> (TestEnv, Hostile) {
    let env = TestEnv::new();
    let h = Hostile::start();
    let out = env.run(["delegate", "w/busy", "--agent", h.url(), "book a room"]);
    assert_eq!(code(&out), 0, "{}", explain(&out));
    h.set_mode(Mode::Busy(retry_after.to_owned()));
    (env, h)
}

/// A `Retry-After` of years: one request, a `skipped` action naming when the agent may be
/// tried again, exit 3; the next pass and `follow` make no request to the agent; `status`
/// shows the not-before.
#[test]
fn a_retry_after_of_years_skips_the_agent_at_once_and_the_next_pass_too() {
    for retry_after in years() {
        let (env, h) = busy_step(&retry_after);
        let seen = h.seen().len();
        let out = reconcile(&env, &["--format", "json"]);
        assert_eq!(code(&out), 3, "{retry_after}: {}", explain(&out));
        assert_eq!(
            h.seen().len() - seen,
            1,
            "{retry_after}: requests to the agent"
        );
        let acts = actions(&out);
        assert_eq!(acts.len(), 1, "{retry_after}: {acts:#?}");
        let at = not_before_of(&acts[0]);
        let summary = json_lines(&out).pop().unwrap();
        assert_eq!(summary["skippedAgents"][0]["notBefore"], at, "{summary}");

        // The next pass honours it: no request, the same not-before.
        let out = reconcile(&env, &["--format", "json"]);
        assert_eq!(code(&out), 3, "{retry_after}: {}", explain(&out));
        assert_eq!(
            h.seen().len() - seen,
            1,
            "{retry_after}: the next pass called"
        );
        assert_eq!(not_before_of(&actions(&out)[0]), at);
        let out = reconcile(&env, &[]);
        assert_eq!(code(&out), 3, "{}", explain(&out));
        assert!(
            stdout(&out).contains(&format!("not tried again before {at}; passes skip it")),
            "{}",
            explain(&out)
        );
        // So does `follow`: exit 3, no request.
        let out = env.run(["follow", "w/busy"]);
        assert_eq!(code(&out), 3, "{retry_after}: {}", explain(&out));
        assert_eq!(h.seen().len() - seen, 1, "{retry_after}: follow called");

        let out = env.run(["status", "--format", "json"]);
        let status = json_lines(&out).pop().unwrap();
        let paused = &status["pausedAgents"][0];
        assert_eq!(paused["notBefore"], at, "{status}");
        assert_eq!(paused["agent"], format!("{}/rpc", h.url()), "{status}");
        let out = env.run(["status"]);
        assert!(
            stdout(&out).contains("Not before:") && stdout(&out).contains(&at),
            "{}",
            explain(&out)
        );
    }
}

/// `follow` meets the `Retry-After` of years itself: one request, exit 3 naming when, and the
/// not-before it journaled keeps the next pass from calling.
#[test]
fn follow_stops_at_a_retry_after_of_years_and_the_next_pass_honours_it() {
    let (env, h) = busy_step(&u64::MAX.to_string());
    let seen = h.seen().len();
    let out = env.run(["follow", "w/busy", "--format", "json"]);
    assert_eq!(code(&out), 3, "{}", explain(&out));
    assert_eq!(h.seen().len() - seen, 1, "requests to the agent");
    let summary = json_lines(&out).pop().unwrap();
    assert_eq!(summary["end"], "skipped", "{summary}");
    let out = reconcile(&env, &["--format", "json"]);
    assert_eq!(code(&out), 3, "{}", explain(&out));
    assert_eq!(h.seen().len() - seen, 1, "the pass called");
    not_before_of(&actions(&out)[0]);
}

/// A `Retry-After` within the 30 s a pass waits, but past its `--deadline`, is not waited for
/// either: one request, skipped at once, the not-before what the agent asked.
#[test]
fn a_retry_after_past_the_deadline_skips_the_agent_at_once() {
    let (env, h) = busy_step("29");
    let seen = h.seen().len();
    let out = reconcile(&env, &["--format", "json", "--deadline", "2s"]);
    assert_eq!(code(&out), 3, "{}", explain(&out));
    assert_eq!(h.seen().len() - seen, 1, "requests to the agent");
    let acts = actions(&out);
    assert_eq!(acts.len(), 1, "{acts:#?}");
    assert_eq!(acts[0]["outcome"], "skipped", "{acts:#?}");
    let reason = acts[0]["detail"]["reason"].as_str().unwrap();
    assert!(reason.contains("left before the deadline"), "{reason}");
}

/// Peak resident memory of a run refused a 9 MB card, in KiB: the card is refused before it
/// is parsed (about 10 MiB for the binary itself, 1 MiB of the card read).
const CARD_RSS_BOUND_KIB: u64 = 48 * 1024;

/// Bytes the journal (its file and its WAL) may hold after a refused huge card: its intent
/// and the refusal, never the card.
const CARD_JOURNAL_BOUND: u64 = 512 * 1024;

/// The journal file and its WAL together, in bytes.
fn journal_bytes(env: &TestEnv) -> u64 {
    let file = env.journal_file();
    let wal = Path::new(&format!("{}-wal", file.display())).to_path_buf();
    [file, wal]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

/// A 9 MB card of 100,000 interfaces: `delegate` refuses the step (REFUSED, exit 4) naming the
/// bound, `agents add` exits 1 naming it and registers nothing, both within a peak memory of
/// [`CARD_RSS_BOUND_KIB`], and the journal stays under [`CARD_JOURNAL_BOUND`].
#[test]
fn a_huge_card_is_refused_naming_its_bound_in_bounded_memory() {
    let env = TestEnv::new();
    let h = Hostile::start();
    h.set_card(CardMode::Huge {
        interfaces: 100_000,
        skills: 0,
    });
    let m = run_measured(
        &env,
        ["delegate", "w/huge", "--agent", h.url(), "book a room"],
        &[],
    );
    let (peak, bytes) = (m.peak_rss_kib, journal_bytes(&env));
    let figures = format!("peak {peak} KiB, journal {bytes} bytes");
    assert_eq!(code(&m.out), 4, "{figures}\n{}", explain(&m.out));
    let err = String::from_utf8_lossy(&m.out.stderr).into_owned();
    assert!(
        err.contains("1048576-byte") && err.contains("--max-card-size"),
        "{err}"
    );
    let a = the_attempt(&env, "w/huge");
    assert_eq!(a["state"], "REFUSED", "{a}");
    assert_eq!(h.count("SendMessage"), 0, "a refused card was sent to");
    assert!(
        peak < CARD_RSS_BOUND_KIB,
        "delegate peaked at {peak} KiB (bound {CARD_RSS_BOUND_KIB} KiB)"
    );
    assert!(
        bytes < CARD_JOURNAL_BOUND,
        "the journal holds {bytes} bytes (bound {CARD_JOURNAL_BOUND})"
    );

    let m = run_measured(&env, ["agents", "add", h.url()], &[]);
    assert_eq!(code(&m.out), 1, "{}", explain(&m.out));
    let err = String::from_utf8_lossy(&m.out.stderr).into_owned();
    assert!(err.contains("--max-card-size"), "{err}");
    assert!(
        m.peak_rss_kib < CARD_RSS_BOUND_KIB,
        "agents add peaked at {} KiB (bound {CARD_RSS_BOUND_KIB} KiB)",
        m.peak_rss_kib
    );
    let list = env.run(["agents", "list", "--format", "json"]);
    assert!(
        !json_lines(&list).iter().any(|r| r["type"] == "agent"),
        "{}",
        explain(&list)
    );
}

/// A card well under the size bound that lists more interfaces, or more skills, than the
/// bound on each is refused the same way, naming that bound.
#[test]
fn a_card_over_the_interface_or_skill_bound_is_refused_naming_it() {
    for (interfaces, skills, bound) in [(100, 0, "64 interfaces"), (0, 1100, "1024 skills")] {
        let env = TestEnv::new();
        let h = Hostile::start();
        h.set_card(CardMode::Huge { interfaces, skills });
        let out = env.run(["delegate", "w/many", "--agent", h.url(), "book a room"]);
        assert_eq!(code(&out), 4, "{}", explain(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(bound),
            "{}",
            explain(&out)
        );
        assert_eq!(the_attempt(&env, "w/many")["state"], "REFUSED");
        assert_eq!(h.count("SendMessage"), 0);
        let out = env.run(["agents", "add", h.url()]);
        assert_eq!(code(&out), 1, "{}", explain(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(bound),
            "{}",
            explain(&out)
        );
    }
}

/// The agents table's card snapshot keeps what a2a-recover reads from it (interfaces,
/// security, capabilities, skill ids, names and tags), not the rest of the card.
#[test]
fn the_journaled_card_is_a_trimmed_snapshot() {
    let env = TestEnv::new();
    let h = Hostile::start();
    let out = env.run(["agents", "add", h.url()]);
    assert_eq!(code(&out), 0, "{}", explain(&out));
    let j = env.open_journal();
    let card_url = format!("{}/.well-known/agent-card.json", h.url());
    let agent = j.agent(&card_url).unwrap().expect("registered");
    let card: Value = serde_json::from_str(agent.card_json.as_deref().unwrap()).unwrap();
    assert!(card.get("defaultInputModes").is_none(), "{card}");
    assert!(card["skills"][0].get("description").is_none(), "{card}");
    assert_eq!(card["skills"][0]["id"], "hostile", "{card}");
    assert_eq!(card["supportedInterfaces"].as_array().unwrap().len(), 1);
    let list = env.run(["agents", "list", "--format", "json"]);
    let agent = json_lines(&list)
        .into_iter()
        .find(|r| r["type"] == "agent")
        .expect("an agent record");
    assert_eq!(agent["skills"][0]["tags"][0], "test", "{agent}");
    assert_eq!(agent["capabilities"]["streaming"], true, "{agent}");
}
