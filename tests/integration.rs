//! The single integration test binary: every test module is listed here.

mod cli;
mod common;
mod generated;
mod scripted_agent;
