//! The single integration test binary: every test module is listed here.

mod agents;
mod broken_journal;
mod cli;
mod common;
mod compensate;
mod delegate;
mod effects;
mod follow;
mod generated;
mod inspect;
mod interop;
mod interop_recovery;
mod journal;
mod plan;
mod readme;
mod reconcile;
mod reply;
mod resolve;
mod scripted_agent;
mod signals;
mod soak;
