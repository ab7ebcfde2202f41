//! Running simulated processes, one or several at once, on the run's one thread.
//!
//! Each process is the command's future, as the binary runs it, with its own journal
//! connection, lease identity (owner id, pid, host) and process-wide state
//! (`sim_seam::ProcessContext`, swapped in around each of its polls). Several run interleaved on
//! one executor: when more than one is ready to go on (woken), the run's interleaving generator
//! chooses which is polled next, so the order at every await point comes from the seed. The
//! fault layer yields before and after each exchange while several run, which makes every
//! exchange such a point. A process is killed at a seeded exchange: its future is dropped with
//! the kill flag up (no drop-time commit or lease release runs, as none runs after SIGKILL),
//! while the others go on.

use std::cell::Cell;
use std::ffi::OsString;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context as TaskContext, Poll, Wake, Waker};
use std::time::Duration;

use clap::Parser as _;
use rand::RngExt as _;

use crate::commands::Cli;
use crate::context::Context;
use crate::sim_seam::{self, ProcessContext};

use super::{Exit, Sim, TIMEOUT, schedule};

/// The number of a run's first companion (`overlap`).
pub const COMPANIONS_FROM: u32 = 1001;

/// One process to start.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Its arguments (after `a2a-recover --journal J`).
    pub args: Vec<String>,
    /// The exchange at which it is killed, and whether after the agent processed it.
    pub crash_at: Option<(u64, bool)>,
    /// How long after the others it starts (virtual time).
    pub delay: Duration,
    /// Whether it is a companion (`overlap`): its exit is checked here, as it ends.
    pub companion: bool,
}

/// Who is told when a process's future can go on: it, and through it the group.
struct Woken {
    flag: AtomicBool,
    group: Arc<Mutex<Option<Waker>>>,
}

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.flag.store(true, Ordering::SeqCst);
        if let Some(w) = self
            .group
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            w.wake_by_ref();
        }
    }
}

/// A running process.
struct Child {
    number: u32,
    args: Vec<String>,
    command: String,
    ctx: ProcessContext,
    pid: u32,
    fut: Option<Pin<Box<dyn Future<Output = Option<u8>>>>>,
    woken: Arc<Woken>,
    /// Whether its command started (past its delay).
    begun: Rc<Cell<bool>>,
    /// Whether it ran while another was in flight.
    overlapped: bool,
    companion: bool,
    exit: Option<Exit>,
}

impl Child {
    fn in_flight(&self) -> bool {
        self.begun.get() && self.exit.is_none()
    }
}

impl Sim {
    /// Runs `specs` at once, each a process of its own; returns how each ended (in order). An
    /// exit is [`Exit::Code`] only for a process that ran alone and ended last, so that the
    /// journal as it is now is the one it exited on; else [`Exit::Beside`].
    pub async fn together(&mut self, specs: Vec<Spec>) -> Vec<Exit> {
        let group: Arc<Mutex<Option<Waker>>> = Arc::default();
        let mut children: Vec<Child> = specs
            .into_iter()
            .map(|spec| self.start(spec, &group))
            .collect();
        let several = children.len() > 1;
        std::future::poll_fn(|cx| {
            *group.lock().unwrap_or_else(PoisonError::into_inner) = Some(cx.waker().clone());
            loop {
                let woken: Vec<usize> = (0..children.len())
                    .filter(|&i| {
                        children[i].exit.is_none() && children[i].woken.flag.load(Ordering::SeqCst)
                    })
                    .collect();
                let Some(&first) = woken.first() else {
                    break;
                };
                let i = if woken.len() > 1 {
                    let i = woken[self.interleave.random_range(0..woken.len())];
                    let numbers: Vec<u32> = woken.iter().map(|&w| children[w].number).collect();
                    self.world
                        .log(format!("  poll {} of {numbers:?}", children[i].number));
                    i
                } else {
                    first
                };
                self.poll_child(&mut children, i);
            }
            if children.iter().all(|c| c.exit.is_some()) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
        if several {
            self.outcome.groups += 1;
            if children.iter().any(|c| c.overlapped) {
                let mut kinds: Vec<&str> = children
                    .iter()
                    .map(|c| c.command.split(' ').next().unwrap_or_default())
                    .collect();
                kinds.sort_unstable();
                *self.outcome.overlaps.entry(kinds.join("+")).or_default() += 1;
            }
        }
        // Faults between processes happen after the workload's own.
        if let Some(main) = children.first() {
            self.world.faults.switch(main.number, &main.command);
        }
        self.busy += sim_seam::take_busy();
        let last = self.ended.take();
        children
            .iter()
            .map(|c| match c.exit {
                Some(Exit::Code(code)) if c.overlapped || last != Some(c.number) => {
                    Exit::Beside(code)
                }
                Some(exit) => exit,
                None => Exit::Killed,
            })
            .collect()
    }

    /// Starts one process: its number, lease identity and fault state, and its future.
    ///
    /// The workload's processes are numbered from 1, companions from [`COMPANIONS_FROM`]: a
    /// schedule names the workload's processes as they were before companions were drawn.
    fn start(&mut self, spec: Spec, group: &Arc<Mutex<Option<Waker>>>) -> Child {
        self.outcome.processes += 1;
        let number = if spec.companion {
            self.outcome.companions += 1;
            COMPANIONS_FROM + self.outcome.companions - 1
        } else {
            self.outcome.processes - self.outcome.companions
        };
        let process_number = sim_seam::new_process();
        let command = schedule::command_of(&spec.args);
        self.world.faults.start(number, &command);
        let owner: &'static str = Box::leak(sim_seam::new_uuid().to_string().into_boxed_str());
        let identity = self.fleet.start();
        let pid = identity.pid;
        let killed = self.world.start_process(number, spec.crash_at);
        let at = now();
        self.world
            .log(format!("{at} start {number} {}", spec.args.join(" ")));
        let mut argv: Vec<OsString> = vec!["a2a-recover".into(), "--journal".into()];
        argv.push(self.journal.clone().into_os_string());
        argv.extend([
            "--timeout".into(),
            format!("{}s", TIMEOUT.as_secs()).into(),
            "-q".into(),
        ]);
        argv.extend(spec.args.iter().map(OsString::from));
        let cli = match Cli::try_parse_from(argv) {
            Ok(cli) => cli,
            Err(e) => panic!(
                "the simulator built a bad command line {:?}: {e}",
                spec.args
            ),
        };
        let ctx = match Context::from_global(&cli.global) {
            Ok(ctx) => ctx,
            Err(e) => panic!("the simulator built a bad context: {e}"),
        };
        let begun = Rc::new(Cell::new(false));
        let started = Rc::clone(&begun);
        let delay = spec.delay;
        let run = async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            started.set(true);
            match crate::commands::run(&ctx, &cli.command).await {
                Ok(code) => code,
                Err(err) => crate::error::classify(&err).code,
            }
        };
        let fut = async move {
            let mut run = std::pin::pin!(run);
            let mut killed = std::pin::pin!(killed.notified());
            std::future::poll_fn(|cx| {
                if killed.as_mut().poll(cx).is_ready() {
                    // A kill: what the process holds is dropped with the kill flag up, so no
                    // drop-time commit or lease release runs (as none would after SIGKILL).
                    sim_seam::set_killed(true);
                    return Poll::Ready(None);
                }
                run.as_mut().poll(cx).map(Some)
            })
            .await
        };
        Child {
            number,
            args: spec.args,
            command,
            ctx: ProcessContext {
                owner: Some(owner),
                process: Some(identity),
                number: process_number,
            },
            pid,
            fut: Some(Box::pin(fut)),
            woken: Arc::new(Woken {
                flag: AtomicBool::new(true),
                group: Arc::clone(group),
            }),
            begun,
            overlapped: false,
            companion: spec.companion,
            exit: None,
        }
    }

    /// Polls child `i` with its own process installed; ends it if it is done.
    fn poll_child(&mut self, children: &mut [Child], i: usize) {
        let others_in_flight: Vec<usize> = (0..children.len())
            .filter(|&j| j != i && children[j].in_flight())
            .collect();
        let child = &mut children[i];
        child.woken.flag.store(false, Ordering::SeqCst);
        self.world.set_current(child.number);
        self.world.faults.switch(child.number, &child.command);
        let outer = sim_seam::swap_process(child.ctx.clone());
        let waker = Waker::from(Arc::clone(&child.woken));
        let mut cx = TaskContext::from_waker(&waker);
        let polled = child
            .fut
            .as_mut()
            .map_or(Poll::Ready(None), |f| f.as_mut().poll(&mut cx));
        let done = match polled {
            Poll::Ready(exit) => {
                // Its future is dropped as its process (killed: with the flag still up).
                drop(child.fut.take());
                sim_seam::set_killed(false);
                Some(exit)
            }
            Poll::Pending => None,
        };
        sim_seam::swap_process(outer);
        self.world.set_current(0);
        if child.begun.get() && !others_in_flight.is_empty() {
            child.overlapped = true;
            for j in others_in_flight {
                children[j].overlapped = true;
            }
        }
        if let Some(exit) = done {
            self.end(&mut children[i], exit);
        }
    }

    /// A process ended: exited with `code`, or (`None`) killed.
    fn end(&mut self, child: &mut Child, code: Option<u8>) {
        let point = self.world.end_process(child.number);
        let how = code.map_or_else(|| format!("killed at {point:?}"), |c| format!("exit {c}"));
        self.world.log(format!(
            "{} {} {} -> {how}",
            now(),
            child.number,
            child.args.join(" ")
        ));
        self.ended = Some(child.number);
        let owner = child.ctx.owner.unwrap_or_default();
        if let Some(code) = code {
            self.fleet.exited(child.pid);
            child.exit = Some(Exit::Code(code));
            // Nothing else was in flight while it ran: the journal is the one it exited on.
            if child.companion && !child.overlapped {
                self.check_companion(&child.args, Exit::Code(code));
            }
            return;
        }
        child.exit = Some(Exit::Killed);
        self.killed_owners.insert(owner.to_owned());
        self.fleet.killed(child.pid);
        if let Some(point) = point {
            let command = child.args.first().map_or("", String::as_str);
            self.outcome
                .crash_points
                .insert(format!("{command} {point}"));
        }
    }
}

/// The virtual time, for the run's log.
fn now() -> String {
    sim_seam::virtual_now()
        .map(crate::clock::rfc3339)
        .unwrap_or_default()
}
