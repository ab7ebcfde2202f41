//! The reconcile pass and its pure decision table (placeholder until it lands).

pub mod compensate;
pub mod lookup;
pub mod placeholders;
pub mod verify;
