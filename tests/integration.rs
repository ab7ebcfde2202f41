//! The single integration test binary: every test module is listed here.

mod agents;
mod cli;
mod common;
mod generated;
mod interop;
mod resolve;
mod scripted_agent;
