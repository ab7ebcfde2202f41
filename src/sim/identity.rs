//! The identity of each simulated process: a pid of its own and a host, drawn from the seed.
//!
//! A killed process's lease outlives it. A process on the same host whose pid is free is
//! provably dead, and its lease is broken at once; but a lease of another host's process, or of
//! a pid an unrelated program took again, must expire (on virtual time) before anyone takes it.
//! The pid may also go to the very next simulated process (the same pid, another owner: dead).
//! Processes that run at once are alive to each other.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use rand::RngExt as _;
use rand::rngs::StdRng;

use crate::sim_seam::SimProcess;

/// The hosts a seed's processes run on.
const HOSTS: [&str; 2] = ["sim-a pid:[4026531836]", "sim-b pid:[4026531836]"];

/// The pids and hosts of a run's processes.
pub struct Fleet {
    rng: StdRng,
    hosts: usize,
    next_pid: u32,
    /// The pids alive: of the simulated processes running, and of killed processes that
    /// unrelated programs took again (alive for good). Shared with every process's identity.
    alive: Arc<Mutex<BTreeSet<u32>>>,
    /// A killed process's pid the next process takes.
    reuse: Option<u32>,
    /// What each kill did to its pid, by name.
    pub kills: std::collections::BTreeMap<&'static str, u32>,
}

impl Fleet {
    /// A fleet of one or two hosts, drawn from the run's `seed` (a generator of its own, so
    /// that the workload's draws stay as they were).
    pub fn new(seed: u64) -> Self {
        let mut own: StdRng = rand::SeedableRng::seed_from_u64(seed ^ 0x5EED_F1EE7);
        let hosts = own.random_range(1..=HOSTS.len());
        Self {
            rng: own,
            hosts,
            next_pid: 1000,
            alive: Arc::default(),
            reuse: None,
            kills: std::collections::BTreeMap::new(),
        }
    }

    /// The identity of the next process (alive until it [exits](Self::exited) or is
    /// [killed](Self::killed)).
    pub fn start(&mut self) -> SimProcess {
        let pid = self.reuse.take().unwrap_or_else(|| {
            self.next_pid += self.rng.random_range(1..=7);
            self.next_pid
        });
        let host = HOSTS[self.rng.random_range(0..self.hosts)];
        self.pids().insert(pid);
        SimProcess {
            pid,
            host,
            alive: Arc::clone(&self.alive),
        }
    }

    fn pids(&self) -> std::sync::MutexGuard<'_, BTreeSet<u32>> {
        self.alive.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The process of `pid` exited: its pid is free.
    pub fn exited(&self, pid: u32) {
        self.pids().remove(&pid);
    }

    /// The process of `pid` was killed: its pid stays free, goes to an unrelated program, or to
    /// the next simulated process.
    pub fn killed(&mut self, pid: u32) {
        self.pids().remove(&pid);
        let what = match self.rng.random_range(0..10) {
            0..=1 => {
                self.pids().insert(pid);
                "pid-taken"
            }
            2..=3 => {
                self.reuse = Some(pid);
                "pid-reused"
            }
            _ => "pid-free",
        };
        *self.kills.entry(what).or_default() += 1;
    }
}
