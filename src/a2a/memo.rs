//! A bounded memo of a pure function of a URL: what `delegate --plan` and the send path work
//! out of one agent's URL (its card URL, origin, redacted form) for every step is worked out
//! once per URL and process.
//!
//! Invariants: only pure functions are memoized, so a hit returns what a call would; only
//! successes are kept (an error is built afresh, with its own context); at most [`MEMO`]
//! URLs are held, and the memo is emptied whole when full.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// How many URLs one memo holds before it is emptied.
const MEMO: usize = 256;

/// The memo of one function, `URL → result`.
pub(crate) struct Memo(Mutex<Option<HashMap<String, String>>>);

impl Memo {
    pub(crate) const fn new() -> Self {
        Self(Mutex::new(None))
    }

    /// Returns `f(url)`, from the memo or computed now and kept when it succeeds.
    pub(crate) fn get<E>(
        &self,
        url: &str,
        f: impl FnOnce(&str) -> Result<String, E>,
    ) -> Result<String, E> {
        let lock = || self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(hit) = lock().as_ref().and_then(|m| m.get(url).cloned()) {
            return Ok(hit);
        }
        let value = f(url)?;
        let mut memo = lock();
        let map = memo.get_or_insert_with(HashMap::new);
        if map.len() >= MEMO {
            map.clear();
        }
        map.insert(url.to_owned(), value.clone());
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hit_returns_the_first_result_and_errors_are_not_kept() {
        let memo = Memo::new();
        let upper = |u: &str| Ok::<_, ()>(u.to_uppercase());
        assert_eq!(memo.get("http://a/", upper), Ok("HTTP://A/".to_owned()));
        let unreached = |_: &str| -> Result<String, ()> { unreachable!("memoized") };
        assert_eq!(memo.get("http://a/", unreached), Ok("HTTP://A/".to_owned()));
        assert_eq!(memo.get("http://b/", |_| Err::<String, _>(1)), Err(1));
        assert_eq!(memo.get("http://b/", |_| Err::<String, _>(2)), Err(2));
    }

    #[test]
    fn a_full_memo_is_emptied_and_keeps_answering() {
        let memo = Memo::new();
        for i in 0..=MEMO {
            let url = format!("http://h/{i}");
            assert_eq!(memo.get(&url, |u| Ok::<_, ()>(u.to_owned())), Ok(url));
        }
        let held = memo.0.lock().unwrap().as_ref().map_or(0, HashMap::len);
        assert_eq!(held, 1);
    }
}
