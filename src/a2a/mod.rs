//! The A2A v1.0 wire (placeholder until the wire layer lands).

/// A wire error.
#[derive(Debug, thiserror::Error)]
#[error("a2a error")]
pub struct A2aError;

impl A2aError {
    /// Returns the exit code this error maps to.
    pub fn exit_code(&self) -> u8 {
        crate::exit::WORK_REMAINS
    }

    /// Returns a hint for the operator.
    pub fn hint(&self) -> Option<String> {
        None
    }
}
