//! Exit codes: the documented contract (docs/exit-codes.md), one constant per code.
//!
//! Cron wrappers and scripts branch on these numbers, so each one means one thing forever.
//! `docs/exit-codes.md` mirrors this file.

/// Done; nothing is left to do.
pub const OK: u8 = 0;
/// a2a-recover itself failed: the journal (corrupt, busy past `--timeout`, from a newer
/// version), `agents add` on an unreachable agent or invalid card, an I/O error.
pub const FAILURE: u8 = 1;
/// Usage error: bad flags, a bad plan file, an unknown step or workflow, text that differs from
/// the journaled step, an unset `--token-env` variable.
pub const USAGE: u8 = 2;
/// Work remains: tasks still running, an agent unreachable or answering garbage this pass, a
/// compensation in flight, the deadline reached, or another pass holds the lock.
pub const WORK_REMAINS: u8 = 3;
/// A human must act: a pending question or auth, a step failed for good, `REFUSED`, `LOST`,
/// `UNCERTAIN`, an effect unverified or a compensation failed, a response over the size cap.
pub const NEEDS_HUMAN: u8 = 4;
/// A panic: a bug.
pub const PANIC: u8 = 101;
/// Interrupted by SIGINT, after every observation so far is committed.
pub const SIGINT: u8 = 130;
/// Interrupted by SIGTERM, after every observation so far is committed.
pub const SIGTERM: u8 = 143;

/// Combines the outcomes of several items: 4 wins over 3, and 3 over 0.
///
/// Codes other than 0, 3 and 4 are errors and win over everything.
pub fn worst(a: u8, b: u8) -> u8 {
    fn rank(code: u8) -> u8 {
        match code {
            OK => 0,
            WORK_REMAINS => 1,
            NEEDS_HUMAN => 2,
            _ => 3,
        }
    }
    if rank(b) > rank(a) { b } else { a }
}

/// The help text listing the exit codes (used as clap `after_help`).
pub const HELP: &str = "\
Exit codes:
  0    done; nothing is left to do
  1    a2a-recover itself failed (journal, I/O, agents add on a bad agent)
  2    usage error (bad flags or plan, unknown step, unset --token-env variable)
  3    work remains; run again later
  4    a human must act; `a2a-recover inspect --pending` says what to run
  101  a bug (panic)
  130  interrupted by SIGINT / 143 by SIGTERM, after committing what was seen";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_prefers_human_over_work_over_ok() {
        assert_eq!(worst(OK, WORK_REMAINS), WORK_REMAINS);
        assert_eq!(worst(NEEDS_HUMAN, WORK_REMAINS), NEEDS_HUMAN);
        assert_eq!(worst(WORK_REMAINS, NEEDS_HUMAN), NEEDS_HUMAN);
        assert_eq!(worst(OK, OK), OK);
        assert_eq!(worst(NEEDS_HUMAN, FAILURE), FAILURE);
    }
}
