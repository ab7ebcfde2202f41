//! The single integration test binary: every test module is listed here.

mod cli;
mod common;
mod delegate;
mod follow;
mod generated;
mod inspect;
mod interop;
mod journal;
mod scripted_agent;
