//! The binary on a real pseudo-terminal: its stdout is the terminal's side of a pty of a given
//! width (what an operator's terminal window is), stderr is piped. What the terminal is shown
//! comes back as an [`Output`], line ends as the program wrote them.

use std::io::Read as _;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt as _;
use std::process::{Command, Output, Stdio};

use super::child::Guarded;
use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use rustix::termios::{OptionalActions, Winsize, tcgetattr, tcsetattr, tcsetwinsize};

/// Runs `cmd` with its stdout on a pseudo-terminal `columns` wide (stdin empty, stderr piped)
/// and returns what it printed and how it ended.
pub fn run_on_terminal(mut cmd: Command, columns: u16) -> Output {
    let (master, slave) = open(columns);
    let mut child = Guarded::spawn(
        cmd.stdin(Stdio::null())
            .stdout(Stdio::from(slave))
            .stderr(Stdio::piped()),
        "the binary on a pty",
    );
    // The child holds the only other end now: the reader ends when it exits.
    drop(cmd);
    let reader = std::thread::spawn(move || {
        let mut master = std::fs::File::from(master);
        let mut bytes = Vec::new();
        let mut buf = [0u8; 4096];
        // Linux answers EIO once every slave is closed: that is the end of the output.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&buf[..n]);
        }
        bytes
    });
    let mut stderr = Vec::new();
    child
        .stderr
        .take()
        .expect("piped stderr")
        .read_to_end(&mut stderr)
        .expect("read stderr");
    let status = child.wait().expect("wait for the binary");
    let stdout = reader.join().expect("the pty reader");
    Output {
        status,
        stdout,
        stderr,
    }
}

/// A pty pair `columns` wide and 50 rows high; output processing off on the terminal's side,
/// so `\n` stays `\n` (no `\r` added).
fn open(columns: u16) -> (OwnedFd, OwnedFd) {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("open a pty");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let name = ptsname(&master, Vec::new()).expect("ptsname");
    // Never the test's controlling terminal.
    let noctty = rustix::fs::OFlags::NOCTTY.bits() as i32;
    let slave: OwnedFd = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(noctty)
        .open(name.to_str().expect("a UTF-8 pts path"))
        .expect("open the pty's terminal side")
        .into();
    let mut attrs = tcgetattr(&slave).expect("tcgetattr");
    attrs
        .output_modes
        .remove(rustix::termios::OutputModes::OPOST);
    tcsetattr(&slave, OptionalActions::Now, &attrs).expect("tcsetattr");
    tcsetwinsize(
        &slave,
        Winsize {
            ws_row: 50,
            ws_col: columns,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )
    .expect("set the pty's size");
    (master, slave)
}
