//! Every environment variable a2a-recover reads, declared once.

/// The journal path (`--journal`).
pub const JOURNAL: &str = "A2A_RECOVER_JOURNAL";
/// The output format (`--format`).
pub const FORMAT: &str = "A2A_RECOVER_FORMAT";
/// When to color output (`--color`).
pub const COLOR: &str = "A2A_RECOVER_COLOR";
/// How long a pass waits for a held lock (`--wait`).
pub const WAIT: &str = "A2A_RECOVER_WAIT";
/// The listener's public base URL agents are asked to push to (`delegate --push`), when no
/// flag, plan step or agent registration names one.
pub const PUSH_URL: &str = "A2A_RECOVER_PUSH_URL";
/// The per-request timeout (`--timeout`).
pub const TIMEOUT: &str = "A2A_RECOVER_TIMEOUT";
/// The response size cap (`--max-response-size`).
pub const MAX_RESPONSE_SIZE: &str = "A2A_RECOVER_MAX_RESPONSE_SIZE";
/// The cap on one artifact's accumulated size (`--max-artifact-size`).
pub const MAX_ARTIFACT_SIZE: &str = "A2A_RECOVER_MAX_ARTIFACT_SIZE";
/// The cap on all of a task's artifacts (`--max-task-size`).
pub const MAX_TASK_SIZE: &str = "A2A_RECOVER_MAX_TASK_SIZE";
/// The bound on the bytes one look reads (`--max-look-size`).
pub const MAX_LOOK_SIZE: &str = "A2A_RECOVER_MAX_LOOK_SIZE";
/// The bound on an Agent Card's size (`--max-card-size`).
pub const MAX_CARD_SIZE: &str = "A2A_RECOVER_MAX_CARD_SIZE";
/// Disables color in `--color auto` (<https://no-color.org>).
pub const NO_COLOR: &str = "NO_COLOR";
/// The width tables fit (a positive number of columns); else the terminal's, when stdout is one.
pub const COLUMNS: &str = "COLUMNS";
/// The XDG state directory, for the default journal path.
pub const XDG_STATE_HOME: &str = "XDG_STATE_HOME";
/// The home directory, for the default journal path.
pub const HOME: &str = "HOME";
/// Testing aid: `POINT[:STEP]` makes the process abort at a named crash point.
pub const CRASH_AT: &str = "A2A_RECOVER_CRASH_AT";
/// Hidden testing aid: pins the *displayed* "now" (RFC 3339) for ages in tables.
/// Never used for times sent to agents or for lease expiry.
pub const TEST_NOW: &str = "A2A_RECOVER_TEST_NOW";
/// Hidden testing aid: the lease time of sends (`1s`, `500ms`), instead of eight times
/// `--timeout` and at least two minutes. Lets a test make leases lapse before their item's
/// turn; an operator has no reason to set it (a lease shorter than a request lets another
/// process look while the holder's send is still on the wire).
pub const TEST_SEND_LEASE_TTL: &str = "A2A_RECOVER_TEST_SEND_LEASE_TTL";
/// Hidden testing aid: the request timeout journaled with each send (`0s`, `1s`), whose double
/// is the send's in-flight horizon, instead of `--timeout`. Lets crash tests look again at
/// once; an operator has no reason to set it (a horizon shorter than the agent's processing
/// time lets a look take a send still in flight for absence and resend it).
pub const TEST_SEND_TIMEOUT: &str = "A2A_RECOVER_TEST_SEND_TIMEOUT";
/// Hidden testing aid: the host name leases are journaled with (`host-a`), instead of this
/// host's. Lets one machine play several hosts sharing a journal: processes with different
/// names never break each other's leases early, only by expiry; an operator has no reason to
/// set it (two processes on one host under different names lose the early break of a dead
/// holder's lease).
pub const TEST_HOST: &str = "A2A_RECOVER_TEST_HOST";
/// Set to `1` to rewrite generated files (completions, CLI reference) instead of checking them.
pub const UPDATE_GENERATED: &str = "A2A_RECOVER_UPDATE_GENERATED";
