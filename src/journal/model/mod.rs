//! The journal's model: states, names, observations, and the one pure transition function.
//!
//! State names are the documented ones (docs/architecture.md), exactly: they are stored as TEXT (with `CHECK` constraints
//! in the schema) and printed in JSON. [`AttemptState`] is a plain enum rather than the
//! data-carrying enum a state machine often is: the data (task id, refusal reason, question)
//! lives in [`Attempt`]'s columns, and a plain enum keeps [`transition`] exhaustively testable
//! over every (state, observation) pair.
//!
//! Invariants enforced by [`transition`]: a remote terminal state never goes back; a status
//! strictly older than the one held is ignored; only an operator's `resend` returns an attempt
//! to `INTENT`; an observation that changes nothing yields `None`.
//!
//! `states`: the state enums and their names; `names`: step and workflow names, targets;
//! `machine`: observations and [`transition`]; `records`: the rows the journal returns;
//! `profile`: an agent's recovery profile (`agents probe`); `for_test`: a builder for test
//! attempts (`Attempt::for_test`).

#[cfg(test)]
mod for_test;
mod machine;
mod names;
mod profile;
mod records;
mod states;

pub use machine::*;
pub use names::*;
pub use profile::*;
pub use records::*;
pub use states::*;
