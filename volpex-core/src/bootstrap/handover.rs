//! Handover: a replica that got a preemption notice (SIGTERM) and reaches its next
//! checkpoint stops there and hands its whole state to its next incarnation: the snapshot
//! of that checkpoint and its sender log. Nothing happens on the replica after the
//! snapshot, so the new incarnation starts exactly where its predecessor stopped: it is
//! caught up at once, needs no sibling (a job at `-r 1` survives a preemption notice), and
//! serves every message its predecessor sent that a receiver may still pull.
//!
//! The predecessor serves the handover on a listener of its own (its event loop goes on
//! serving its log to peers meanwhile), over a connection authenticated with the job key
//! that only a newer incarnation of the same replica may open; it exits with
//! `EXIT_DRAINED` once the new incarnation confirmed it restored. Owns the drain flags,
//! the handover's encoding and its two blocking ends; must never decide when a replica
//! drains (SIGTERM does) or what a snapshot holds.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;

use crate::exit::EXIT_DRAINED;
use crate::message::ReplicaId;
use crate::transport::auth::{self, JobKey, PeerId};

/// Set once SIGTERM arrived and the launcher was told: the next checkpoint hands over.
static DRAINING: AtomicBool = AtomicBool::new(false);
/// Set once the handover is offered: the launcher closes this incarnation's connections
/// when its replacement starts, which is then no reason to exit.
static HANDING_OVER: AtomicBool = AtomicBool::new(false);
/// Checkpoints this process has taken or restored.
static CHECKPOINTS: AtomicU64 = AtomicU64::new(0);

/// The byte a new incarnation sends once it restored the handover.
const RESTORED: u8 = 1;
/// How long the predecessor waits for a connected newcomer's confirmation.
const CONFIRM_WAIT: Duration = Duration::from_secs(120);
/// Largest handover accepted (a bound on a length read from the network).
const MAX_HANDOVER_BYTES: u64 = 1 << 40;

/// Whether this replica drains (got SIGTERM and told the launcher).
pub fn draining() -> bool {
    DRAINING.load(Ordering::Relaxed)
}

pub(crate) fn set_draining() {
    DRAINING.store(true, Ordering::Relaxed);
}

/// Whether this replica offers its handover (its launcher connections may close: it
/// exits once the handover is taken, or when its grace ends).
pub fn handing_over() -> bool {
    HANDING_OVER.load(Ordering::Relaxed)
}

/// Counts a checkpoint taken or restored here.
pub(crate) fn checkpointed() {
    CHECKPOINTS.fetch_add(1, Ordering::Relaxed);
}

/// Checkpoints taken or restored in this process.
pub fn checkpoints() -> u64 {
    CHECKPOINTS.load(Ordering::Relaxed)
}

/// What a draining replica hands its next incarnation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handover {
    /// The checkpoint it stopped at.
    pub number: u64,
    /// Messages it had received (all of them before that checkpoint).
    pub receives: u64,
    /// The encoded snapshot (`checkpoint::Snapshot`).
    pub snapshot: Bytes,
    /// The encoded sender log (`SendLog::export`).
    pub log: Bytes,
}

impl Handover {
    /// Four little-endian u64 (number, receives, snapshot length, log length), then the
    /// snapshot and the log.
    fn write_to(&self, w: &mut impl Write) -> std::io::Result<()> {
        for v in [
            self.number,
            self.receives,
            self.snapshot.len() as u64,
            self.log.len() as u64,
        ] {
            w.write_all(&v.to_le_bytes())?;
        }
        w.write_all(&self.snapshot)?;
        w.write_all(&self.log)?;
        w.flush()
    }

    fn read_from(r: &mut impl Read) -> Result<Handover, String> {
        let mut head = [0u8; 32];
        r.read_exact(&mut head).map_err(|e| e.to_string())?;
        let field = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&head[i * 8..i * 8 + 8]);
            u64::from_le_bytes(b)
        };
        let (number, receives, snap_len, log_len) = (field(0), field(1), field(2), field(3));
        if snap_len.saturating_add(log_len) > MAX_HANDOVER_BYTES {
            return Err(format!(
                "a handover of {} bytes is beyond the bound",
                snap_len.saturating_add(log_len)
            ));
        }
        let mut read = |len: u64| -> Result<Bytes, String> {
            let len = usize::try_from(len).map_err(|_| "handover too large".to_string())?;
            let mut buf = vec![0u8; len];
            r.read_exact(&mut buf).map_err(|e| e.to_string())?;
            Ok(Bytes::from(buf))
        };
        let snapshot = read(snap_len)?;
        let log = read(log_len)?;
        Ok(Handover {
            number,
            receives,
            snapshot,
            log,
        })
    }
}

/// Serves `handover` to the next incarnation of `me` (incarnation `inc` here) on a new
/// listener on `ip` with the TCP congestion control `congestion`, from a thread of its
/// own; returns the listener's address. The process exits with `EXIT_DRAINED` once a
/// newcomer confirmed it restored.
pub fn serve(
    ip: IpAddr,
    key: JobKey,
    me: ReplicaId,
    inc: u32,
    handover: Handover,
    congestion: Option<&str>,
) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(SocketAddr::new(ip, 0))?;
    crate::transport::tuning::tune_listener(&listener, congestion);
    let addr = listener.local_addr()?;
    HANDING_OVER.store(true, Ordering::Relaxed);
    std::thread::Builder::new()
        .name("volpex-handover".into())
        .spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut s) = conn else { continue };
                match serve_one(&mut s, &key, me, inc, &handover) {
                    Ok(newcomer) => {
                        eprintln!(
                            "{}[{me}] handed over checkpoint {} to incarnation {newcomer}; exiting",
                            super::DIAG_PREFIX,
                            handover.number
                        );
                        std::process::exit(EXIT_DRAINED);
                    }
                    Err(e) => log::warn!("replica {me}: handover failed: {e}"),
                }
            }
        })?;
    Ok(addr)
}

/// One newcomer: authenticate it (a newer incarnation of `me` only), send, await its
/// confirmation. Returns its incarnation.
fn serve_one(
    s: &mut TcpStream,
    key: &JobKey,
    me: ReplicaId,
    inc: u32,
    handover: &Handover,
) -> Result<u32, String> {
    s.set_read_timeout(Some(CONFIRM_WAIT))
        .map_err(|e| e.to_string())?;
    let _ = s.set_nodelay(true);
    let newcomer = match auth::server_blocking(s, key, PeerId::Replica(me, inc))? {
        PeerId::Replica(r, i) if r == me && i > inc => i,
        other => return Err(format!("{other:?} is not a newer incarnation of {me}")),
    };
    handover.write_to(s).map_err(|e| e.to_string())?;
    let mut ok = [0u8; 1];
    s.read_exact(&mut ok).map_err(|e| e.to_string())?;
    if ok[0] != RESTORED {
        return Err("the newcomer did not confirm".into());
    }
    Ok(newcomer)
}

/// The newcomer's end: a connection to the predecessor at `addr`, and its handover.
/// Confirm with `confirm` once restored.
pub fn fetch(
    addr: SocketAddr,
    key: &JobKey,
    me: ReplicaId,
    inc: u32,
    timeout: Duration,
) -> Result<(Handover, TcpStream), String> {
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    let _ = s.set_nodelay(true);
    s.set_read_timeout(Some(CONFIRM_WAIT))
        .map_err(|e| e.to_string())?;
    match auth::client_blocking(&mut s, key, PeerId::Replica(me, inc))? {
        PeerId::Replica(r, i) if r == me && i < inc => {}
        other => return Err(format!("{other:?} is not an older incarnation of {me}")),
    }
    let h = Handover::read_from(&mut s)?;
    Ok((h, s))
}

/// Tells the predecessor the handover was restored (it exits then).
pub fn confirm(mut s: TcpStream) -> std::io::Result<()> {
    s.write_all(&[RESTORED])?;
    s.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handover_reads_back_as_written_and_truncation_is_an_error() {
        let h = Handover {
            number: 3,
            receives: 41,
            snapshot: Bytes::from_static(b"snapshot"),
            log: Bytes::from_static(b"the log"),
        };
        let mut buf = Vec::new();
        h.write_to(&mut buf).expect("write");
        assert_eq!(Handover::read_from(&mut buf.as_slice()), Ok(h));
        assert!(Handover::read_from(&mut &buf[..buf.len() - 1]).is_err());
        let mut huge = vec![0u8; 32];
        huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(Handover::read_from(&mut huge.as_slice()).is_err());
    }

    #[test]
    fn only_a_newer_incarnation_of_the_same_replica_gets_the_handover() {
        let key = auth::new_job_key();
        let me = ReplicaId::new(1, 0);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let h = Handover {
            number: 1,
            receives: 2,
            snapshot: Bytes::from_static(b"s"),
            log: Bytes::from_static(b"l"),
        };
        let served = {
            let h = h.clone();
            std::thread::spawn(move || {
                let mut results = Vec::new();
                for _ in 0..2 {
                    let (mut s, _) = listener.accept().expect("accept");
                    results.push(serve_one(&mut s, &key, me, 2, &h));
                }
                results
            })
        };
        // Another replica is refused.
        let other = fetch(addr, &key, ReplicaId::new(1, 1), 3, Duration::from_secs(5));
        assert!(other.is_err());
        let (got, s) = fetch(addr, &key, me, 3, Duration::from_secs(5)).expect("fetch");
        assert_eq!(got, h);
        confirm(s).expect("confirm");
        let results = served.join().expect("thread");
        assert!(results[0].is_err(), "{results:?}");
        assert_eq!(results[1], Ok(3));
    }
}
