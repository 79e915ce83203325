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
//! `EXIT_DRAINED` once the new incarnation confirmed it restored. Owns the handover's two
//! blocking ends (its format is `volpex_proto::checkpoint::Handover`); must never decide
//! when a replica drains (SIGTERM does) or what a snapshot holds.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use volpex_proto::checkpoint::Handover;
use volpex_proto::handshake::{self, JobKey, PeerId};
use volpex_proto::launch::DIAG_PREFIX;
use volpex_proto::message::ReplicaId;

use crate::exit::{self, End};
use crate::transport::Drain;

/// The byte a new incarnation sends once it restored the handover.
const RESTORED: u8 = 1;
/// How long the predecessor waits for a connected newcomer's confirmation.
const CONFIRM_WAIT: Duration = Duration::from_secs(120);

/// Serves `handover` to the next incarnation of `me` (incarnation `inc` here) on a new
/// listener on `ip` with the TCP congestion control `congestion`, from a thread of its
/// own; returns the listener's address. The process exits with `EXIT_DRAINED` once a
/// newcomer confirmed it restored; `drain` says it hands over from now on.
pub fn serve(
    ip: IpAddr,
    key: JobKey,
    (me, inc): (ReplicaId, u32),
    handover: Handover,
    congestion: Option<&str>,
    drain: &Arc<Drain>,
) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(SocketAddr::new(ip, 0))?;
    crate::transport::tuning::tune_listener(&listener, congestion);
    let addr = listener.local_addr()?;
    drain.set_handing_over();
    std::thread::Builder::new()
        .name("volpex-handover".into())
        .spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut s) = conn else { continue };
                match serve_one(&mut s, &key, me, inc, &handover) {
                    Ok(newcomer) => {
                        eprintln!(
                            "{}[{me}] handed over checkpoint {} to incarnation {newcomer}; exiting",
                            DIAG_PREFIX, handover.number
                        );
                        exit::end(End::Drained);
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
    let newcomer = match handshake::server_blocking(s, key, PeerId::Replica(me, inc))? {
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
    match handshake::client_blocking(&mut s, key, PeerId::Replica(me, inc))? {
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
    use bytes::Bytes;

    #[test]
    fn only_a_newer_incarnation_of_the_same_replica_gets_the_handover() {
        let key = handshake::new_job_key();
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
