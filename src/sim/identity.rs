//! The identity of each simulated process: a pid of its own and a host, drawn from the seed.
//!
//! A killed process's lease outlives it. A process on the same host whose pid is free is
//! provably dead, and its lease is broken at once; but a lease of another host's process, or of
//! a pid an unrelated program took again, must expire (on virtual time) before anyone takes it.
//! The pid may also go to the very next simulated process (the same pid, another owner: dead).

use std::collections::BTreeSet;

use rand::RngExt as _;
use rand::rngs::StdRng;

use crate::sim_seam::{self, SimProcess};

/// The hosts a seed's processes run on.
const HOSTS: [&str; 2] = ["sim-a pid:[4026531836]", "sim-b pid:[4026531836]"];

/// The pids and hosts of a run's processes.
pub struct Fleet {
    rng: StdRng,
    hosts: usize,
    next_pid: u32,
    /// Pids of killed processes that unrelated programs took again (alive for good).
    strangers: BTreeSet<u32>,
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
            strangers: BTreeSet::new(),
            reuse: None,
            kills: std::collections::BTreeMap::new(),
        }
    }

    /// Installs the identity of the next process and returns its pid.
    pub fn start(&mut self) -> u32 {
        let pid = self.reuse.take().unwrap_or_else(|| {
            self.next_pid += self.rng.random_range(1..=7);
            self.next_pid
        });
        let host = HOSTS[self.rng.random_range(0..self.hosts)];
        sim_seam::set_process(Some(SimProcess {
            pid,
            host,
            alive: self.strangers.clone(),
        }));
        pid
    }

    /// The process of `pid` was killed: its pid stays free, goes to an unrelated program, or to
    /// the next simulated process.
    pub fn killed(&mut self, pid: u32) {
        let what = match self.rng.random_range(0..10) {
            0..=1 => {
                self.strangers.insert(pid);
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

    /// Removes the installed identity (between processes).
    pub fn stop(&self) {
        sim_seam::set_process(None);
    }
}
