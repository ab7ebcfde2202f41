//! A child process that cannot outlive its test: [`Guarded`] kills (SIGKILL) and reaps it when
//! dropped, also when the test panics before it ended. Every process a test starts (the binary,
//! `listen`, `follow`, an SDK or framework agent) is held in one.

use std::io::Read;
use std::ops::{Deref, DerefMut};
use std::process::{Child, Command, Output};

/// A running child, killed and reaped on drop (a no-op once it was waited for).
pub struct Guarded(Child);

impl Guarded {
    /// Spawns `cmd`, panicking naming `what` when it cannot start.
    #[track_caller]
    pub fn spawn(cmd: &mut Command, what: &str) -> Self {
        Self::from(cmd.spawn().unwrap_or_else(|e| panic!("spawn {what}: {e}")))
    }

    /// Waits for the exit, reading stdout and stderr to their end (as
    /// [`Child::wait_with_output`]); the child stays guarded until it has exited.
    pub fn wait_with_output(mut self) -> std::io::Result<Output> {
        let out = self.stdout.take().map(read_all);
        let err = self.stderr.take().map(read_all);
        let status = self.wait()?;
        let joined = |h: Option<std::thread::JoinHandle<Vec<u8>>>| {
            h.map(|h| h.join().expect("a pipe reader"))
                .unwrap_or_default()
        };
        Ok(Output {
            status,
            stdout: joined(out),
            stderr: joined(err),
        })
    }
}

/// Reads `pipe` to its end on a thread of its own.
fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        buf
    })
}

impl From<Child> for Guarded {
    fn from(child: Child) -> Self {
        Self(child)
    }
}

impl Deref for Guarded {
    type Target = Child;

    fn deref(&self) -> &Child {
        &self.0
    }
}

impl DerefMut for Guarded {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // Once waited for, std knows it exited and sends no signal (its pid may be reused).
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
