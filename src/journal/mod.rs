//! The journal (placeholder until the journal lands).

/// A journal error.
#[derive(Debug, thiserror::Error)]
#[error("journal error")]
pub struct JournalError;

impl JournalError {
    /// Returns a hint for the operator.
    pub fn hint(&self) -> Option<String> {
        None
    }
}
