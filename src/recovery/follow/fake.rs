use std::cell::RefCell;
use std::collections::VecDeque;

use serde_json::Value;

use super::remote::{Item, Remote, RemoteStream};
use super::*;
use crate::recovery::moved::Rechosen;

/// What one subscribe answers: an error, or a stream of items then a clean end (or, with
/// `open`, a stream that stays open and silent, as a server may keep it).
pub(crate) type Subscription = Result<Scripted, A2aError>;

/// One scripted stream's items.
pub(crate) struct Scripted {
    pub(crate) items: Vec<Result<Item, A2aError>>,
    pub(crate) open: bool,
}

/// A stream of these items that then ends cleanly.
#[expect(clippy::unnecessary_wraps, reason = "scripted answers are Results")]
pub(crate) fn ends(items: Vec<Result<Item, A2aError>>) -> Subscription {
    Ok(Scripted { items, open: false })
}

/// A stream of these items that then stays open.
#[expect(clippy::unnecessary_wraps, reason = "scripted answers are Results")]
pub(crate) fn stays_open(items: Vec<Result<Item, A2aError>>) -> Subscription {
    Ok(Scripted { items, open: true })
}

/// A remote whose answers are scripted in order; when a script runs out, the last answer of
/// that kind repeats.
#[derive(Default)]
pub(crate) struct Fake {
    pub(crate) subscribes: RefCell<VecDeque<Subscription>>,
    pub(crate) gets: RefCell<VecDeque<Result<Value, A2aError>>>,
    pub(crate) last_subscribe: RefCell<Option<Subscription>>,
    pub(crate) last_get: RefCell<Option<Result<Value, A2aError>>>,
    pub(crate) calls: RefCell<Vec<&'static str>>,
}

/// Clones an error by its parts (A2aError is not Clone).
pub(crate) fn copy(e: &A2aError) -> A2aError {
    match e {
        A2aError::Rpc { url, method, error } => A2aError::Rpc {
            url: url.clone(),
            method,
            error: error.clone(),
        },
        A2aError::Connect {
            url,
            method,
            detail,
            why,
        } => A2aError::Connect {
            url: url.clone(),
            method,
            detail: detail.clone(),
            why: *why,
        },
        A2aError::Http {
            url,
            method,
            status,
            ..
        } => A2aError::Http {
            url: url.clone(),
            method,
            status: *status,
            retry_after: None,
            snippet: String::new(),
            rpc: None,
            reason: None,
            unattributed: false,
        },
        other => A2aError::Transport {
            url: "http://127.0.0.1/".to_owned(),
            method: "SubscribeToTask",
            detail: other.to_string(),
            transient: true,
        },
    }
}

fn copy_sub(s: &Subscription) -> Subscription {
    match s {
        Ok(scripted) => Ok(Scripted {
            items: scripted
                .items
                .iter()
                .map(|i| match i {
                    Ok(v) => Ok(v.clone()),
                    Err(e) => Err(copy(e)),
                })
                .collect(),
            open: scripted.open,
        }),
        Err(e) => Err(copy(e)),
    }
}

/// One scripted stream.
pub(crate) struct FakeStream(VecDeque<Result<Item, A2aError>>, bool);

impl RemoteStream for FakeStream {
    async fn next(&mut self) -> Option<Result<Item, A2aError>> {
        match self.0.pop_front() {
            Some(item) => Some(item),
            None if self.1 => std::future::pending().await,
            None => None,
        }
    }
}

impl Remote for Fake {
    type Stream = FakeStream;

    async fn subscribe(&self, _task_id: &str) -> Result<FakeStream, A2aError> {
        self.calls.borrow_mut().push("subscribe");
        let next = self.subscribes.borrow_mut().pop_front();
        let answer = match next {
            Some(s) => {
                *self.last_subscribe.borrow_mut() = Some(copy_sub(&s));
                s
            }
            None => copy_sub(
                self.last_subscribe
                    .borrow()
                    .as_ref()
                    .expect("no subscribe scripted"),
            ),
        };
        answer.map(|s| FakeStream(s.items.into(), s.open))
    }

    async fn rechoose(&self, _e: &A2aError) -> Result<Rechosen, JournalError> {
        Ok(Rechosen::Stays)
    }

    async fn get_task(&self, _task_id: &str) -> Result<Value, A2aError> {
        self.calls.borrow_mut().push("get");
        let next = self.gets.borrow_mut().pop_front();
        match next {
            Some(g) => {
                *self.last_get.borrow_mut() = Some(match &g {
                    Ok(v) => Ok(v.clone()),
                    Err(e) => Err(copy(e)),
                });
                g
            }
            None => match self.last_get.borrow().as_ref().expect("no get scripted") {
                Ok(v) => Ok(v.clone()),
                Err(e) => Err(copy(e)),
            },
        }
    }
}
