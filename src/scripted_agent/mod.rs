//! The in-crate scripted A2A v1.0 agent (placeholder until it lands).
