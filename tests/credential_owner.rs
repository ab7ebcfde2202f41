//! Issue 30, hole 2: a credential belongs to the agent it was given for. A step that carries its
//! own credential (`delegate --skill S --token-env`, a plan step's `token_cmd`) fails at agent A
//! and is re-delegated to agent B: B gets its registered credential, or none, never the step's
//! — on the re-delegation's send, on a re-run of `delegate` that resumes B's attempt, and on
//! every later pass. Pinned with [`Hostile`] agents on loopback, each logging the
//! `Authorization` header of every request, through the real binary and the real journal; no
//! byte of the journal, nor any output at `-vvv`, holds a token.

use std::path::Path;
use std::process::Output;

use a2a_recover::journal::{Journal, StepName};
use serde_json::Value;

use crate::common::hostile::{Hostile, Mode, Script, Seen};
use crate::common::transcript::Transcript;
use crate::common::{TestEnv, code, explain, json_lines};

/// The step's own credential (given with `--token-env` for the agent it is first sent to).
const STEP_VAR: &str = "A2A_TEST_STEP_TOKEN";
/// Agent B's registered credential (`agents add --token-env`).
const B_VAR: &str = "A2A_TEST_AGENT_B_TOKEN";

fn token(whose: &str) -> String {
    format!("s3cr3t-{whose}-{}", uuid::Uuid::new_v4().simple())
}

fn failing() -> Script {
    Script {
        state: "TASK_STATE_FAILED".to_owned(),
        status_text: Some("no cars left".to_owned()),
        ..Script::default()
    }
}

/// Runs the binary at `-vvv` with both tokens in its environment; asserts the exit code and
/// keeps every byte it wrote.
struct Runner<'a> {
    env: &'a TestEnv,
    tokens: [(&'static str, String); 2],
    seen: Transcript,
}

impl Runner<'_> {
    fn run(&mut self, what: &str, args: &[&str], want: i32) -> Output {
        let mut cmd = self.env.cmd();
        for (var, value) in &self.tokens {
            cmd.env(var, value);
        }
        let out = cmd.args(args).arg("-vvv").output().expect("run the binary");
        assert_eq!(code(&out), want, "{what}: {}", explain(&out));
        self.seen.keep(what, &out);
        out
    }
}

/// The requests an agent received with an `Authorization` header other than `allowed`.
fn foreign(agent: &Hostile, allowed: Option<&str>) -> Vec<Seen> {
    agent
        .seen()
        .into_iter()
        .filter(|s| s.authorization.as_deref() != allowed)
        .collect()
}

/// The JSON-RPC calls an agent received (the card fetches aside).
fn calls(agent: &Hostile) -> Vec<Seen> {
    agent
        .seen()
        .into_iter()
        .filter(|s| !s.method.is_empty())
        .collect()
}

/// The `credentialSource` of each `intent` event of a step, read from the journal file.
fn intent_sources(journal: &Path, step: &str) -> Vec<Value> {
    let j = Journal::open_read_only(journal, std::time::Duration::from_secs(10)).unwrap();
    j.events_of_step(&StepName::parse(step).unwrap())
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "intent")
        .map(|e| e.detail.unwrap_or_default()["credentialSource"].clone())
        .collect()
}

/// `delegate --skill hostile --token-env STEP_VAR`: agent A (registered without a credential)
/// gets the step's token and fails the task; reconcile re-delegates to B (registered with its
/// own), whose send is answered by a 502 page (the attempt stays `INTENT`); `delegate` run again
/// resumes B's attempt (a look, which finds the task); B fails too, and reconcile re-delegates
/// to C (registered without a credential). B only ever receives its own token (the card, the
/// send, the look), C none (the send, a later pass's read), A never B's.
#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one step followed across three agents, every request checked"
)]
fn a_redelegated_step_never_hands_its_own_credential_to_another_agent() {
    let env = TestEnv::new();
    let (step_token, b_token) = (token("step"), token("b"));
    let (a, b, c) = (Hostile::start(), Hostile::start(), Hostile::start());
    a.set_script(failing());
    b.set_script(failing());
    b.set_mode(Mode::Html(502));
    let mut r = Runner {
        env: &env,
        tokens: [(STEP_VAR, step_token.clone()), (B_VAR, b_token.clone())],
        seen: Transcript::default(),
    };
    r.run("agents add A", &["agents", "add", a.url()], 0);
    r.run(
        "agents add B",
        &["agents", "add", b.url(), "--token-env", B_VAR],
        0,
    );
    r.run("agents add C", &["agents", "add", c.url()], 0);
    let delegate = [
        "delegate",
        "w/car",
        "--skill",
        "hostile",
        "--token-env",
        STEP_VAR,
        "rent a car",
    ];
    r.run("delegate", &delegate, 0);
    assert_eq!(a.count("SendMessage"), 1, "the step went to A first");

    // A's task failed: re-delegated to B, whose answer is a 502 page (the send's outcome is
    // unknown, the attempt stays INTENT).
    r.run("reconcile (A failed)", &["reconcile"], 3);
    assert_eq!(
        b.count("SendMessage"),
        1,
        "re-delegated to B: {:?}",
        b.seen()
    );
    // The same step again: it resumes B's attempt (looks for it, finds the task the 502 hid).
    b.set_mode(Mode::Honest);
    r.run("delegate again (resumes B's attempt)", &delegate, 0);
    assert!(b.count("ListTasks") >= 1, "looked for at B: {:?}", b.seen());
    assert_eq!(b.count("SendMessage"), 1, "found, not resent");
    // B failed too: re-delegated to C, which keeps working.
    let out = r.run(
        "reconcile (B failed)",
        &["reconcile", "--format", "json"],
        3,
    );
    let redelegated: Vec<Value> = json_lines(&out)
        .into_iter()
        .filter(|l| l["action"] == "redelegate")
        .collect();
    assert_eq!(redelegated.len(), 1, "{}", explain(&out));
    assert_eq!(c.count("SendMessage"), 1);
    // A later pass reads C's task with C's credential: none.
    r.run("a later reconcile", &["reconcile"], 3);
    assert!(c.count("GetTask") >= 1, "{:?}", c.seen());

    // What each agent received: the step's token only at A, B's own token only at B (on every
    // call: the send, the look, the reads), nothing at C.
    let step_bearer = format!("Bearer {step_token}");
    let b_bearer = format!("Bearer {b_token}");
    assert!(
        calls(&a)
            .iter()
            .all(|s| s.authorization.as_deref() == Some(step_bearer.as_str())),
        "A: {:?}",
        a.seen()
    );
    assert!(
        a.seen()
            .iter()
            .all(|s| s.authorization.as_deref() != Some(b_bearer.as_str())),
        "B's token reached A: {:?}",
        a.seen()
    );
    let wrong = foreign(&b, Some(&b_bearer));
    assert!(
        wrong.is_empty(),
        "B received another credential than its own: {wrong:?}"
    );
    let methods: Vec<String> = calls(&b).into_iter().map(|s| s.method).collect();
    assert_eq!(
        methods,
        ["SendMessage", "ListTasks"],
        "the send and the look"
    );
    let wrong = foreign(&c, None);
    assert!(wrong.is_empty(), "C received a credential: {wrong:?}");

    // The attempts say whose credential they carry, by name only.
    let out = r.run(
        "inspect",
        &["inspect", "w/car", "--events", "--format", "json"],
        0,
    );
    let attempts: Vec<Value> = json_lines(&out)
        .into_iter()
        .filter(|l| l["type"] == "attempt")
        .collect();
    let base = |h: &Hostile| format!("{}/.well-known/agent-card.json", h.url());
    let got: Vec<(Value, Value, Value)> = attempts
        .iter()
        .map(|a| {
            (
                a["agent"].clone(),
                a["tokenEnv"].clone(),
                a["credentialSource"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (base(&a).into(), STEP_VAR.into(), "step".into()),
            (base(&b).into(), B_VAR.into(), "agent".into()),
            (base(&c).into(), Value::Null, "none".into()),
        ]
    );
    assert_eq!(
        intent_sources(&env.journal(), "w/car"),
        ["step", "agent", "none"]
    );

    r.seen.keep_journal_files(&env.journal());
    r.seen.assert_free_of(&step_token);
    r.seen.assert_free_of(&b_token);
}

/// A plan step whose credential is printed by a `token_cmd`: agent A gets it and fails the
/// task; re-delegated to B (registered without a credential), the send carries none.
#[test]
fn a_plan_steps_token_command_stays_with_the_agent_it_was_given_for() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = TestEnv::new();
    let step_token = token("cmd");
    let (a, b) = (Hostile::start(), Hostile::start());
    a.set_script(failing());
    let script = env.path().join("token.sh");
    std::fs::write(&script, format!("#!/bin/sh\necho '{step_token}'\n")).expect("write");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let plan = crate::common::write(
        env.path(),
        "plan.toml",
        &format!(
            "workflow = \"p\"\n\n[[step]]\nname = \"car\"\nskill = \"hostile\"\n\
             text = \"rent a car\"\ntoken_cmd = \"{}\"\n",
            script.display()
        ),
    );
    let mut r = Runner {
        env: &env,
        tokens: [(STEP_VAR, String::new()), (B_VAR, String::new())],
        seen: Transcript::default(),
    };
    r.run("agents add A", &["agents", "add", a.url()], 0);
    r.run("agents add B", &["agents", "add", b.url()], 0);
    r.run(
        "delegate --plan",
        &["delegate", "--plan", &plan.display().to_string()],
        0,
    );
    r.run("reconcile (A failed)", &["reconcile"], 3);
    r.run("a later reconcile", &["reconcile"], 3);

    let bearer = format!("Bearer {step_token}");
    assert_eq!(a.count("SendMessage"), 1);
    assert!(
        calls(&a)
            .iter()
            .all(|s| s.authorization.as_deref() == Some(bearer.as_str())),
        "A: {:?}",
        a.seen()
    );
    assert_eq!(
        b.count("SendMessage"),
        1,
        "re-delegated to B: {:?}",
        b.seen()
    );
    assert!(b.count("GetTask") >= 1, "{:?}", b.seen());
    let wrong = foreign(&b, None);
    assert!(
        wrong.is_empty(),
        "B received the step's credential: {wrong:?}"
    );
    assert_eq!(intent_sources(&env.journal(), "p/car"), ["step", "none"]);

    r.seen.keep_journal_files(&env.journal());
    r.seen.assert_free_of(&step_token);
}

/// A step's `--allow-cross-origin` covers the step's own credential at the agent it was given
/// for, never a re-delegated attempt's: agent B, registered with its own token, whose card names
/// an interface on another origin (C), never hands B's token to C.
#[test]
fn a_steps_cross_origin_allowance_never_covers_a_redelegated_agents_credential() {
    let env = TestEnv::new();
    let (step_token, b_token) = (token("step"), token("b"));
    let (a, b, c) = (Hostile::start(), Hostile::start(), Hostile::start());
    a.set_script(failing());
    b.set_interface_url(c.url());
    let run = |args: &[&str]| {
        env.cmd()
            .env(STEP_VAR, &step_token)
            .env(B_VAR, &b_token)
            .args(args)
            .output()
            .expect("run the binary")
    };
    assert_eq!(code(&run(&["agents", "add", a.url()])), 0);
    let out = run(&["agents", "add", b.url(), "--token-env", B_VAR]);
    assert_eq!(code(&out), 0, "{}", explain(&out));
    let out = run(&[
        "delegate",
        "w/car",
        "--skill",
        "hostile",
        "--token-env",
        STEP_VAR,
        "--allow-cross-origin",
        "rent a car",
    ]);
    assert_eq!(code(&out), 0, "{}", explain(&out));
    assert_eq!(a.count("SendMessage"), 1, "the step went to A first");
    // A failed: the pass re-delegates to B, whose interface is C's.
    for _ in 0..2 {
        let out = run(&["reconcile"]);
        assert_ne!(code(&out), 0, "{}", explain(&out));
    }
    assert!(
        !calls(&c).is_empty(),
        "the re-delegation went to C: {:?}",
        c.seen()
    );
    let leaked: Vec<Seen> = c
        .seen()
        .into_iter()
        .filter(|s| s.authorization.is_some())
        .collect();
    assert!(
        leaked.is_empty(),
        "a credential went to another origin: {leaked:?}"
    );
    let step_bearer = format!("Bearer {step_token}");
    assert!(
        b.seen()
            .iter()
            .chain(c.seen().iter())
            .all(|s| s.authorization.as_deref() != Some(step_bearer.as_str())),
        "the step's token stays with A"
    );
}
