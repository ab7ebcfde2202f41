//! The order in which a pass starts its items: one queue per agent, taken round-robin, each
//! agent at most its own concurrency at once, under the pass's global cap.
//!
//! A pass reads its rows in journal order, which groups them by workflow and so, often, by
//! agent. Started in that order under one global cap, a slow (or hung) agent's items would hold
//! every slot while the other agents' items wait behind them: the pass would take the sum of
//! the agents' times. Queued per agent and taken in turn, every agent works at its own limit
//! from the start, and the pass ends when the slowest agent's own work is done.
//!
//! The pass holds at most [`LOOKAHEAD`] queued items (its memory stays flat in the number of
//! rows); an agent whose items all sit beyond that window is reached as the window moves on.

use std::collections::VecDeque;
use std::hash::Hash;

/// How many items a pass reads ahead of the ones running.
pub(crate) const LOOKAHEAD: usize = 8192;

/// How many items a pass that takes workflow locks as it reaches them reads ahead at least
/// (twice `--concurrency` if more): each item read ahead may hold a workflow another host
/// could be working on.
pub(crate) const LOCKING_LOOKAHEAD: usize = 32;

/// Items queued per agent key, with how many of each agent's are running.
#[derive(Debug)]
pub(crate) struct Schedule<K, T> {
    queues: foldhash::HashMap<K, VecDeque<T>>,
    running: foldhash::HashMap<K, usize>,
    /// Agents with queued items, in turn order.
    turn: VecDeque<K>,
    queued: usize,
}

impl<K: Clone + Eq + Hash, T> Schedule<K, T> {
    pub(crate) fn new() -> Self {
        Self {
            queues: foldhash::HashMap::default(),
            running: foldhash::HashMap::default(),
            turn: VecDeque::new(),
            queued: 0,
        }
    }

    /// How many items are queued (not started).
    pub(crate) fn queued(&self) -> usize {
        self.queued
    }

    /// Queues an item of agent `key`.
    pub(crate) fn push(&mut self, key: K, item: T) {
        let queue = self.queues.entry(key.clone()).or_default();
        if queue.is_empty() {
            self.turn.push_back(key);
        }
        queue.push_back(item);
        self.queued += 1;
    }

    /// Takes the next item of the next agent in turn below its limit (`limit(key)` items
    /// running), and counts it as running; `None` when every agent with queued items is at its
    /// limit.
    pub(crate) fn next(&mut self, limit: impl Fn(&K) -> usize) -> Option<(K, T)> {
        for _ in 0..self.turn.len() {
            let key = self.turn.pop_front()?;
            let running = self.running.get(&key).copied().unwrap_or(0);
            if running >= limit(&key).max(1) {
                self.turn.push_back(key);
                continue;
            }
            let queue = self.queues.get_mut(&key)?;
            let item = queue.pop_front()?;
            if queue.is_empty() {
                self.queues.remove(&key);
            } else {
                self.turn.push_back(key.clone());
            }
            self.queued -= 1;
            *self.running.entry(key.clone()).or_default() += 1;
            return Some((key, item));
        }
        None
    }

    /// Counts one of agent `key`'s items as finished.
    pub(crate) fn done(&mut self, key: &K) {
        if let Some(n) = self.running.get_mut(key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.running.remove(key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_take_turns_each_below_its_limit() {
        let mut s = Schedule::new();
        for i in 0..4 {
            s.push("slow", i);
        }
        for i in 0..3 {
            s.push("fast", i);
        }
        let limit = |k: &&str| if *k == "slow" { 2 } else { 1 };
        let mut started = Vec::new();
        while let Some((k, i)) = s.next(limit) {
            started.push((k, i));
        }
        // Interleaved, and no agent above its limit.
        assert_eq!(started, vec![("slow", 0), ("fast", 0), ("slow", 1)]);
        assert_eq!(s.queued(), 4);
        s.done(&"fast");
        assert_eq!(s.next(limit), Some(("fast", 1)));
        assert_eq!(s.next(limit), None);
        s.done(&"slow");
        s.done(&"slow");
        assert_eq!(s.next(limit), Some(("slow", 2)));
        assert_eq!(s.next(limit), Some(("slow", 3)));
        assert_eq!(s.queued(), 1);
    }
}
