//! The single integration test binary: every test module is listed here.

mod cli;
mod common;
mod compensate;
mod delegate;
mod generated;
mod inspect;
mod interop;
mod interop_recovery;
mod journal;
mod reconcile;
mod reply;
mod scripted_agent;
