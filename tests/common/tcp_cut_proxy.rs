//! A TCP proxy that cuts one connection: it forwards bytes both ways to an upstream named after
//! it starts, and closes the first connection on which the upstream has sent `after` reads'
//! worth of bytes, the way a load balancer drops a long-lived HTTP/2 stream. For gRPC, whose
//! interface is the `host:port` a card names: an agent started with `--grpc-advertise` names
//! the proxy, whose address is known before the agent starts.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// The running proxy; its threads end with the test process.
pub struct TcpCutProxy {
    addr: SocketAddr,
    upstream: Arc<OnceLock<SocketAddr>>,
    cut: Arc<AtomicU64>,
}

impl TcpCutProxy {
    /// Listens on a free port of 127.0.0.1; connections wait for [`TcpCutProxy::forward_to`].
    pub fn bind(after: u64) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let addr = listener.local_addr().unwrap();
        let upstream: Arc<OnceLock<SocketAddr>> = Arc::default();
        let cut = Arc::new(AtomicU64::new(0));
        let cutting = Arc::new(AtomicBool::new(true));
        let (up, counted) = (Arc::clone(&upstream), Arc::clone(&cut));
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let (Ok(client), Some(server)) = (client, up.get().copied()) else {
                    continue;
                };
                let Ok(server) = TcpStream::connect(server) else {
                    continue;
                };
                let (cutting, counted) = (Arc::clone(&cutting), Arc::clone(&counted));
                std::thread::spawn(move || relay(client, server, after, &cutting, &counted));
            }
        });
        Self {
            addr,
            upstream,
            cut,
        }
    }

    /// Its `127.0.0.1:PORT`, for the card.
    pub fn host_port(&self) -> String {
        self.addr.to_string()
    }

    /// Names the upstream (`127.0.0.1:PORT`) every connection goes to.
    pub fn forward_to(&self, upstream: &str) {
        let addr = upstream.parse().expect("an upstream HOST:PORT");
        self.upstream.set(addr).expect("the upstream is named once");
    }

    /// How many connections were cut so far.
    pub fn cut(&self) -> u64 {
        self.cut.load(Ordering::SeqCst)
    }
}

/// Copies both ways; the upstream's side is counted, and the first connection to reach
/// `after` reads is shut down (only one connection is ever cut).
fn relay(client: TcpStream, server: TcpStream, after: u64, cutting: &AtomicBool, cut: &AtomicU64) {
    let (mut c_read, mut s_write) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut c_read, &mut s_write);
        let _ = s_write.shutdown(Shutdown::Write);
    });
    let (mut s_read, mut c_write) = (server, client);
    let mut buf = [0u8; 16 * 1024];
    let mut reads = 0u64;
    loop {
        let n = match s_read.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if c_write.write_all(&buf[..n]).is_err() {
            break;
        }
        reads += 1;
        if reads >= after && cutting.swap(false, Ordering::SeqCst) {
            cut.fetch_add(1, Ordering::SeqCst);
            let _ = c_write.shutdown(Shutdown::Both);
            let _ = s_read.shutdown(Shutdown::Both);
            return;
        }
    }
    let _ = c_write.shutdown(Shutdown::Write);
}
