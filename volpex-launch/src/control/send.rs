//! Writing one control message to a replica's control connection, for the driver (the
//! control server only reads). Owns the blocking write with its timeout; must never decide
//! to whom or what to write.

use std::io::{self, Write};
use std::net::TcpStream as StdStream;
use std::time::{Duration, Instant};

use volpex_proto::limits::HEADER_BYTES;
use volpex_proto::wire::control::{self, ToProcess};

/// A write to a replica that takes longer than this counts as failed.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// Sends one message to a replica; false if the write failed or took `WRITE_TIMEOUT`.
/// The socket is non-blocking (the loop reads it), so a full buffer is waited out here.
pub fn send(w: &mut StdStream, msg: &ToProcess) -> bool {
    let (h, p) = control::encode(msg);
    let mut bytes = Vec::with_capacity(HEADER_BYTES + p.len());
    bytes.extend_from_slice(&h.encode());
    bytes.extend_from_slice(&p);
    let until = Instant::now() + WRITE_TIMEOUT;
    let mut done = 0;
    while done < bytes.len() {
        match w.write(&bytes[done..]) {
            Ok(0) => return false,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(_) => return false,
        }
    }
    true
}
