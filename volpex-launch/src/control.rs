//! The launcher's control server: accepts replica connections, authenticates them with
//! the job key, takes their registration and forwards their control messages as events.
//! A replica opens two connections: the control connection (`Register` first) and the
//! heartbeat connection (`Heartbeat` first), on which this module sends a beat every
//! interval and reports `Silent` when the replica has sent nothing for the timeout.
//! Must never decide anything about the job; `job` does.

use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use volpex::message::ReplicaId;
use volpex::transport::auth::{self, JobKey, PeerId};
use volpex::wire::control::{self, Liveness, ToLauncher, ToProcess};
use volpex::wire::stream::{read_one, write_one};

use crate::error::ControlError;
use crate::job::event::{ControlEvent, Event};

/// How long a new connection may take to authenticate and register.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// A write to a replica that takes longer than this counts as failed.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// Heartbeat timing on the launcher side.
#[derive(Debug, Clone, Copy)]
pub struct Beats {
    /// Beat interval.
    pub interval: Duration,
    /// Silence after which a replica is reported.
    pub timeout: Duration,
}

/// Accepts connections forever (until the process exits), one thread per connection.
pub fn serve(
    listener: TcpListener,
    key: JobKey,
    ranks: u32,
    replicas: u32,
    beats: Beats,
    tx: Sender<Event>,
) {
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let tx = tx.clone();
        let _ = std::thread::Builder::new()
            .name("volpexrun-control".into())
            .spawn(move || {
                if let Err(e) = handle(stream, &key, ranks, replicas, beats, &tx) {
                    log::debug!("control connection dropped: {e}");
                }
            });
    }
}

fn handle(
    mut s: TcpStream,
    key: &JobKey,
    ranks: u32,
    replicas: u32,
    beats: Beats,
    tx: &Sender<Event>,
) -> Result<(), ControlError> {
    let _ = s.set_nodelay(true);
    s.set_read_timeout(Some(HANDSHAKE_TIMEOUT))?;
    let id =
        match auth::server_blocking(&mut s, key, PeerId::Launcher).map_err(ControlError::Auth)? {
            PeerId::Replica(id) if id.rank < ranks && id.replica < replicas => id,
            other => return Err(ControlError::UnexpectedPeer(other)),
        };
    let (h, p) = read_one(&mut s).map_err(|e| ControlError::Frame(e.to_string()))?;
    let addr = match control::decode::<ToLauncher>(&h, &p)
        .map_err(|e| ControlError::Frame(e.to_string()))?
    {
        ToLauncher::Register { addr } => addr,
        ToLauncher::Heartbeat => {
            s.set_read_timeout(None)?;
            heartbeat(s, id, beats, tx);
            return Ok(());
        }
        other @ (ToLauncher::Finalized { .. }
        | ToLauncher::Retired { .. }
        | ToLauncher::Fence { .. }) => {
            return Err(ControlError::NotRegister {
                id,
                msg: Box::new(other),
            })
        }
    };
    s.set_read_timeout(None)?;
    let writer = s.try_clone()?;
    writer.set_write_timeout(Some(WRITE_TIMEOUT))?;
    if tx
        .send(Event::Control(ControlEvent::Registered {
            id,
            addr,
            writer,
        }))
        .is_err()
    {
        return Ok(());
    }
    loop {
        let msg = read_one(&mut s)
            .map_err(|e| e.to_string())
            .and_then(|(h, p)| control::decode::<ToLauncher>(&h, &p).map_err(|e| e.to_string()));
        match msg {
            Ok(msg) => {
                if tx
                    .send(Event::Control(ControlEvent::Message { id, msg }))
                    .is_err()
                {
                    return Ok(());
                }
            }
            Err(e) => {
                log::debug!("control connection of {id} ended: {e}");
                let _ = tx.send(Event::Control(ControlEvent::Closed { id }));
                return Ok(());
            }
        }
    }
}

/// Sends one message to a replica; false if the write failed.
pub fn send(w: &mut TcpStream, msg: &ToProcess) -> bool {
    let (h, p) = control::encode(msg);
    write_one(w, &h, &p).is_ok()
}

/// Runs one replica's heartbeat connection until it has been silent for the timeout.
fn heartbeat(s: TcpStream, id: ReplicaId, beats: Beats, tx: &Sender<Event>) {
    let start = Instant::now();
    let heard_ms = Arc::new(AtomicU64::new(0));
    let closed = Arc::new(AtomicBool::new(false));
    let Ok(mut reader) = s.try_clone() else {
        return;
    };
    {
        let (heard_ms, closed) = (heard_ms.clone(), closed.clone());
        let spawned = std::thread::Builder::new()
            .name("volpexrun-heartbeat-rx".into())
            .spawn(move || {
                while let Ok((h, p)) = read_one(&mut reader) {
                    match control::decode::<ToLauncher>(&h, &p) {
                        Ok(ToLauncher::Heartbeat) => {
                            heard_ms.store(start.elapsed().as_millis() as u64, Ordering::Relaxed)
                        }
                        Ok(
                            other @ (ToLauncher::Register { .. }
                            | ToLauncher::Finalized { .. }
                            | ToLauncher::Retired { .. }
                            | ToLauncher::Fence { .. }),
                        ) => log::warn!("{id}: {other:?} on the heartbeat connection"),
                        Err(e) => {
                            log::debug!("{id}: bad heartbeat frame: {e}");
                            break;
                        }
                    }
                }
                closed.store(true, Ordering::Relaxed);
            });
        if spawned.is_err() {
            return;
        }
    }
    let mut w = s;
    let _ = w.set_write_timeout(Some(beats.interval));
    let (bh, bp) = control::encode(&Liveness::Beat);
    loop {
        std::thread::sleep(beats.interval);
        if !closed.load(Ordering::Relaxed) {
            // A failed write is not a verdict: silence is.
            let _ = write_one(&mut w, &bh, &bp);
        }
        let now = start.elapsed();
        let heard = Duration::from_millis(heard_ms.load(Ordering::Relaxed));
        let silent_for = now.saturating_sub(heard);
        if silent_for > beats.timeout {
            log::debug!(
                "{id}: no heartbeat for {silent_for:?} (timeout {:?})",
                beats.timeout
            );
            let _ = w.shutdown(std::net::Shutdown::Both);
            let _ = tx.send(Event::Control(ControlEvent::Silent { id, silent_for }));
            return;
        }
    }
}
