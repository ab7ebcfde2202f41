//! Recovery: the passes that bring journaled work and remote agents back in step. It imports nothing from the command layer; it reports through values and sinks the
//! caller supplies, and raises [`error::RecoveryError`].
//!
//! | module | what it is |
//! | --- | --- |
//! | [`reconcile`] | the reconcile pass ([`Pass`]): one visit of every attempt that may need work (`reconcile/`: `rows` pages, `intents` bucket 1, `reads` bucket 2, `settle` bucket 3, `reply` replies, `actions`, `preview` the dry run) |
//! | `schedule` | the order a pass starts its items in: per agent, in turn, each below its limit |
//! | [`decide`] | the pass's pure decisions (triage, settled attempts, replies, exit codes) |
//! | [`send`] | the one send path, under a lease (`send/batch.rs`: many attempts at once) |
//! | [`lookup`] | the look before a resend, and journaling what it found |
//! | [`probe`] | `agents probe`: an agent's recovery profile, and what recovery trusts of it |
//! | [`follow`] | following task streams, group-committing their events (`follow/`: `follower` one follow's loop, `follower/observe` what it reads, `group_commit`, `remote` the wire seam) |
//! | `commit` | the one group-commit mechanism (the pass, the follows, `delegate --plan`) |
//! | [`compensate`] | undoing a workflow's effects in reverse order (`compensate/`: `cancel` phase 2, `effects` phase 3, `sends` compensations sent or run, `dry_run`) |
//! | [`verify`] | effect verification recipes |
//! | [`remedy`] | the command a human runs for a row that needs one |
//! | [`registry`] | which registered agent a step goes to |
//! | [`lock`] | the pass lock |
//! | [`moved`] | re-choosing an interface that left the card |
//! | [`not_before`] | journaling agents' not-before times (a `Retry-After` too long to wait) |
//! | [`event`] | what a pass tells as it goes: the one [`Event`] type and its [`Sink`] |
//! | [`error`] | recovery's error type |

pub(crate) mod commit;
pub mod compensate;
pub mod decide;
pub mod detail;
pub mod error;
pub mod event;
pub mod follow;
pub mod lock;
pub mod lookup;
pub mod moved;
pub mod not_before;
pub mod probe;
pub mod push;
pub mod push_tidy;
pub mod reconcile;
pub mod registry;
pub mod remedy;
pub(crate) mod schedule;
pub mod send;
pub mod verify;

pub use commit::WriterMode;
pub use detail::{Detail, Met, Then, Why};
pub use event::{Action, ActionRemedy, Event, Left, OnFollow, Sink, Told, Unheard};
pub use reconcile::{Pass, PassConfig, Summary, WorkflowLocks};
