//! Whether each agent answers: what every request of a client came to, by the URL it went to
//! (an interface URL, or a card URL for a card fetch), for a pass to journal as its agents'
//! health ([`A2aClient::take_reach`](super::A2aClient::take_reach)).
//!
//! An answer of any kind, an error of the agent's own included, is an answer; a connection
//! refused or cut, a timeout, a stream gone silent or cut, or a gateway's 502, 503 or 504 is
//! not ([`A2aError::answered`]); a request never made (a credential variable unset, the agent's
//! circuit open) says nothing.

use std::sync::{Mutex, PoisonError};

use chrono::{DateTime, Utc};

use super::error::A2aError;

/// What the requests to one URL came to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reach {
    /// When it last answered.
    pub answered: Option<DateTime<Utc>>,
    /// When a request to it last got no answer.
    pub failed: Option<DateTime<Utc>>,
    /// The first request with no answer since it last answered (`None` while it answers).
    pub failing_since: Option<DateTime<Utc>>,
}

impl Reach {
    /// Notes one request's result at `at`.
    pub fn note(&mut self, answered: bool, at: DateTime<Utc>) {
        if answered {
            self.answered = Some(self.answered.map_or(at, |t| t.max(at)));
            self.failing_since = None;
        } else {
            self.failed = Some(self.failed.map_or(at, |t| t.max(at)));
            self.failing_since.get_or_insert(at);
        }
    }

    /// Folds in what another URL of the same agent came to: the latest answer and failure; a
    /// failure streak that began before the agent's latest answer begins at its latest failure
    /// instead (the agent answered in between).
    pub fn merge(&mut self, other: &Self) {
        let later = |a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>| a.max(b);
        self.answered = later(self.answered, other.answered);
        self.failed = later(self.failed, other.failed);
        let since = match (self.failing_since, other.failing_since) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.failing_since = match (since, self.answered) {
            (Some(s), Some(a)) if s < a => self.failed.filter(|f| *f > a),
            (s, _) => s,
        };
    }

    /// Whether the latest result was no answer.
    pub fn failing(&self) -> bool {
        match (self.answered, self.failed) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(a), Some(f)) => f > a,
        }
    }
}

/// The reach of every URL a client called since it was last taken.
#[derive(Debug, Default)]
pub(super) struct Reaches(Mutex<foldhash::HashMap<String, Reach>>);

impl Reaches {
    /// Notes what a request to `url` came to, now; a request never made is not noted.
    pub(super) fn record<T>(&self, url: &str, result: &Result<T, A2aError>) {
        let answered = match result {
            Ok(_) => true,
            Err(e) => match e.answered() {
                Some(answered) => answered,
                None => return,
            },
        };
        let at = crate::clock::system_now();
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(reach) = map.get_mut(url) {
            reach.note(answered, at);
        } else {
            let mut reach = Reach::default();
            reach.note(answered, at);
            map.insert(url.to_owned(), reach);
        }
    }

    /// Returns what was noted, by URL, and forgets it.
    pub(super) fn take(&self) -> Vec<(String, Reach)> {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut all: Vec<(String, Reach)> = map.drain().collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    #[test]
    fn a_failure_streak_begins_at_the_first_failure_after_an_answer() {
        let mut r = Reach::default();
        r.note(false, t(1));
        r.note(true, t(2));
        assert!(!r.failing());
        assert_eq!(r.failing_since, None);
        r.note(false, t(3));
        r.note(false, t(4));
        assert!(r.failing());
        assert_eq!(
            (r.answered, r.failed, r.failing_since),
            (Some(t(2)), Some(t(4)), Some(t(3)))
        );
    }

    #[test]
    fn another_url_answering_later_ends_an_earlier_streak() {
        let mut a = Reach::default();
        a.note(false, t(1));
        let mut b = Reach::default();
        b.note(true, t(2));
        let mut merged = a;
        merged.merge(&b);
        assert!(!merged.failing());
        assert_eq!(merged.failing_since, None);
        a.note(false, t(3));
        let mut merged = a;
        merged.merge(&b);
        assert!(merged.failing());
        assert_eq!(merged.failing_since, Some(t(3)));
    }

    #[test]
    fn a_request_never_made_says_nothing() {
        let reaches = Reaches::default();
        let skipped: Result<(), A2aError> = Err(A2aError::Skipped {
            url: "http://a.example/".into(),
            method: "GetTask",
            reason: "open".into(),
            not_before: None,
        });
        reaches.record("http://a.example/", &skipped);
        assert!(reaches.take().is_empty());
        reaches.record("http://a.example/", &Ok::<(), A2aError>(()));
        let taken = reaches.take();
        assert_eq!(taken.len(), 1);
        assert!(taken[0].1.answered.is_some());
        assert!(reaches.take().is_empty(), "taking forgets");
    }
}
