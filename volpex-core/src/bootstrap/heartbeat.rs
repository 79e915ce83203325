//! The replica's side of the heartbeat connection: a second authenticated connection to
//! the launcher that carries nothing but liveness, in both directions.
//!
//! Every `interval` the replica sends `ToLauncher::Heartbeat` and the launcher sends
//! `Liveness::Beat`. The launcher declares a replica dead (and pushes death notices on
//! the main control connection) when it has heard nothing for `timeout`; symmetrically,
//! a replica that has heard nothing from the launcher for `timeout` exits, so the
//! processes on a host that was cut off do not run on forever. A turn of the sending
//! thread far later than its sleep asked means this process did not run (SIGSTOP, starved
//! of CPU): the launcher's clock starts over instead of counting our own stall as its
//! silence. Two small threads own the connection, independent of the application and of the event loop, so a long
//! computation never delays a beat.
//!
//! Preemption notices: with a drain grace set (`VOLPEX_DRAIN_GRACE_MS`), SIGTERM (what a
//! spot or preemptible instance gets before it goes) no longer ends the process at once:
//! the sending thread tells the launcher (`ToLauncher::Draining`); the replica runs on,
//! hands over at its next checkpoint (`handover`) and exits, or exits when the grace
//! ends (exit code `EXIT_DRAINED`).
//!
//! Owns only this connection; must never carry protocol traffic, and never blocks the
//! caller.

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use volpex_proto::handshake::{self, JobKey, PeerId};
use volpex_proto::launch::DIAG_PREFIX;
use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::{self, Liveness, ToLauncher};
use volpex_proto::wire::stream::{read_one, write_one};

use crate::env::Heartbeat;
use crate::error::Error;
use crate::exit::{self, End};
use crate::transport::Drain;

/// Added to two intervals: a heartbeat turn later than this means the process stalled.
const STALL_SLACK: Duration = Duration::from_millis(200);

/// Opens the heartbeat connection and starts its threads; `drain` is where they note a
/// preemption notice and learn that this replica hands over.
pub fn start(
    launcher: SocketAddr,
    key: &JobKey,
    (me, incarnation): (ReplicaId, u32),
    cfg: Heartbeat,
    connect_timeout: Duration,
    drain: Arc<Drain>,
) -> Result<(), Error> {
    let mut s = TcpStream::connect_timeout(&launcher, connect_timeout)
        .map_err(|e| Error::Bootstrap(format!("heartbeat connection to {launcher}: {e}")))?;
    let _ = s.set_nodelay(true);
    s.set_read_timeout(Some(connect_timeout))
        .map_err(|e| Error::Bootstrap(e.to_string()))?;
    let server = handshake::client_blocking(&mut s, key, PeerId::Replica(me, incarnation))
        .map_err(|e| Error::Bootstrap(format!("heartbeat handshake: {e}")))?;
    if server != PeerId::Launcher {
        return Err(Error::Bootstrap(
            "the control address is not a launcher".into(),
        ));
    }
    s.set_read_timeout(None)
        .map_err(|e| Error::Bootstrap(e.to_string()))?;
    // A write that cannot go out for a whole timeout means the launcher is gone.
    s.set_write_timeout(Some(cfg.timeout))
        .map_err(|e| Error::Bootstrap(e.to_string()))?;
    let beat = control::encode(&ToLauncher::Heartbeat);
    write_one(&mut s, &beat.0, &beat.1).map_err(|e| Error::Bootstrap(e.to_string()))?;
    let term = Arc::new(AtomicBool::new(false));
    if cfg.drain_grace.is_some() {
        signal_hook::flag::register(signal_hook::consts::SIGTERM, term.clone())
            .map_err(|e| Error::Bootstrap(format!("cannot catch SIGTERM: {e}")))?;
    }
    let mut draining_since: Option<Duration> = None;
    log::debug!(
        "replica {me}: heartbeat every {:?}, launcher counted gone after {:?} of silence",
        cfg.interval,
        cfg.timeout
    );

    let start = Instant::now();
    let heard_ms = Arc::new(AtomicU64::new(0));
    // Both threads use the one socket (`&TcpStream` reads and writes): one descriptor.
    let s = Arc::new(s);
    let reader = s.clone();
    {
        let heard_ms = heard_ms.clone();
        let drain = drain.clone();
        std::thread::Builder::new()
            .name("volpex-heartbeat-rx".into())
            .spawn(move || loop {
                match read_one(&mut &*reader) {
                    Ok((h, p)) => match control::decode::<Liveness>(&h, &p) {
                        Ok(Liveness::Beat) => {
                            heard_ms.store(start.elapsed().as_millis() as u64, Ordering::Relaxed)
                        }
                        Err(e) => log::warn!("replica {me}: bad heartbeat frame: {e}"),
                    },
                    // Replaced while handing over: the grace bounds its life.
                    Err(_) if drain.handing_over() => return,
                    Err(e) => {
                        // Closed: the launcher ended, or it declared us dead. Either way
                        // nobody will use this replica any more.
                        orphaned(
                            me,
                            &format!("heartbeat connection to the launcher lost ({e})"),
                        );
                    }
                }
            })
            .map_err(|e| Error::Bootstrap(format!("heartbeat thread: {e}")))?;
    }
    std::thread::Builder::new()
        .name("volpex-heartbeat-tx".into())
        .spawn(move || loop {
            let before = start.elapsed();
            std::thread::sleep(cfg.interval);
            if write_one(&mut &*s, &beat.0, &beat.1).is_err()
                && !drain.handing_over()
            {
                orphaned(me, "cannot send a heartbeat to the launcher");
            }
            let now = start.elapsed();
            if let Some(grace) = cfg.drain_grace {
                match draining_since {
                    None if term.load(Ordering::Relaxed) => {
                        draining_since = Some(now);
                        eprintln!(
                            "{}[{me}] SIGTERM: draining (grace {:.1} s)",
                            DIAG_PREFIX,
                            grace.as_secs_f64()
                        );
                        let notice = control::encode(&ToLauncher::Draining {
                            grace_ms: grace.as_millis() as u64,
                            checkpoints: drain.checkpoints(),
                        });
                        if write_one(&mut &*s, &notice.0, &notice.1).is_err() {
                            orphaned(me, "cannot tell the launcher it drains");
                        }
                        drain.set_draining();
                    }
                    Some(t) if now.saturating_sub(t) >= grace => {
                        eprintln!("{}[{me}] drain grace over; exiting", DIAG_PREFIX);
                        exit::end(End::Drained);
                    }
                    None | Some(_) => {}
                }
            }
            // A sleep far longer than asked: this process did not run (stopped, starved),
            // so the launcher's silence was ours; its beats may wait unread. Start over.
            if now.saturating_sub(before) > cfg.interval * 2 + STALL_SLACK {
                heard_ms.store(now.as_millis() as u64, Ordering::Relaxed);
            }
            let heard = Duration::from_millis(heard_ms.load(Ordering::Relaxed));
            if now.saturating_sub(heard) > cfg.timeout && !drain.handing_over() {
                orphaned(
                    me,
                    &format!(
                        "no heartbeat from the launcher for {:.1} s (VOLPEX_HEARTBEAT_TIMEOUT_MS={})",
                        now.saturating_sub(heard).as_secs_f64(),
                        cfg.timeout.as_millis()
                    ),
                );
            }
        })
        .map_err(|e| Error::Bootstrap(format!("heartbeat thread: {e}")))?;
    Ok(())
}

fn orphaned(me: ReplicaId, why: &str) -> ! {
    eprintln!("{}[{me}] {why}; exiting", DIAG_PREFIX);
    exit::end(End::Orphaned);
}
