//! Bounds an agent cannot push us past (issue 30), each pinned against a [`Hostile`] agent on
//! loopback, through the real binary and the real journal: a huge Agent Card (9 MB, 100,000
//! interfaces) is refused naming the bound it is over, in bounded memory, and leaves the
//! journal small; a card over the interface or skill count is refused the same way.

use std::path::Path;

use serde_json::Value;

use crate::common::commands::the_attempt;
use crate::common::hostile::{CardMode, Hostile, run_measured};
use crate::common::{TestEnv, code, explain, json_lines};

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
