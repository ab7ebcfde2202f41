//! The single integration test binary: every test module is listed here.

mod cli;
mod common;
mod follow;
mod generated;
mod interop;
mod scripted_agent;
