//! The single integration test binary: every test module is listed here.

mod agents;
mod broken_journal;
mod cli;
mod common;
mod compensate;
mod credentials;
mod delegate;
mod demo;
mod docs;
mod effects;
mod follow;
mod generated;
mod hostile;
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
mod terminal;
