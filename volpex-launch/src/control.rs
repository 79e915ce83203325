//! The launcher's control server: accepts replica connections, authenticates them with
//! the job key, takes their registration and forwards their control messages as events.
//! Must never decide anything about the job; `job` does.

use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use crossbeam_channel::Sender;
use volpex::message::ReplicaId;
use volpex::transport::auth::{self, JobKey, PeerId};
use volpex::wire::control::{self, ToLauncher, ToProcess};
use volpex::wire::stream::{read_one, write_one};

use crate::job::Event;

/// How long a new connection may take to authenticate and register.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// A write to a replica that takes longer than this counts as failed.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// What a control connection reported.
#[derive(Debug)]
pub enum ControlEvent {
    /// A replica authenticated and registered its peer address.
    Registered {
        /// Who.
        id: ReplicaId,
        /// Its listener address.
        addr: String,
        /// Where to write to it.
        writer: TcpStream,
    },
    /// A message from a registered replica.
    Message {
        /// Who.
        id: ReplicaId,
        /// What.
        msg: ToLauncher,
    },
    /// The connection ended.
    Closed {
        /// Who.
        id: ReplicaId,
    },
}

/// Accepts connections forever (until the process exits), one thread per connection.
pub fn serve(listener: TcpListener, key: JobKey, ranks: u32, replicas: u32, tx: Sender<Event>) {
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let tx = tx.clone();
        let _ = std::thread::Builder::new()
            .name("volpexrun-control".into())
            .spawn(move || {
                if let Err(e) = handle(stream, &key, ranks, replicas, &tx) {
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
    tx: &Sender<Event>,
) -> Result<(), String> {
    let _ = s.set_nodelay(true);
    s.set_read_timeout(Some(HANDSHAKE_TIMEOUT))
        .map_err(|e| e.to_string())?;
    let id = match auth::server_blocking(&mut s, key, PeerId::Launcher)? {
        PeerId::Replica(id) if id.rank < ranks && id.replica < replicas => id,
        other => return Err(format!("unexpected peer {other:?}")),
    };
    let (h, p) = read_one(&mut s).map_err(|e| e.to_string())?;
    let addr = match control::decode::<ToLauncher>(&h, &p).map_err(|e| e.to_string())? {
        ToLauncher::Register { addr } => addr,
        other => return Err(format!("{id}: expected Register, got {other:?}")),
    };
    s.set_read_timeout(None).map_err(|e| e.to_string())?;
    let writer = s.try_clone().map_err(|e| e.to_string())?;
    writer
        .set_write_timeout(Some(WRITE_TIMEOUT))
        .map_err(|e| e.to_string())?;
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
