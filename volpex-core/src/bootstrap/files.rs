//! The replica's side of the files connection: a third authenticated connection to the
//! launcher, opened at the program's first operation on a file the layer replicates
//! (`volpex_files`), carrying the layer's reports (`ToLauncher::Files`) out and the
//! launcher's answers (`ToProcess::Files`) in. A thread of its own reads it, so an
//! answer reaches a replica that waits for it at once, whatever the event loop does.
//!
//! Owns only the connection; must never look into what it carries.

use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use parking_lot::Mutex;

use volpex_proto::handshake::{self, JobKey, PeerId};
use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::{self, ToLauncher, ToProcess};
use volpex_proto::wire::stream::{read_one, write_one};

/// Starts the file layer of this replica; its connection opens at the first use.
pub fn activate(
    launcher: SocketAddr,
    key: JobKey,
    me: ReplicaId,
    incarnation: u32,
    connect_timeout: Duration,
) {
    let connect: volpex_files::Connect =
        Box::new(move || connect(launcher, key, me, incarnation, connect_timeout));
    volpex_files::activate(
        volpex_files::Identity {
            rank: me.rank,
            replica: me.replica,
            incarnation,
            retire_code: crate::exit::EXIT_RETIRED,
        },
        connect,
    );
}

fn connect(
    launcher: SocketAddr,
    key: JobKey,
    me: ReplicaId,
    incarnation: u32,
    timeout: Duration,
) -> std::io::Result<volpex_files::Sender> {
    let other = |e: String| std::io::Error::other(e);
    let mut s = TcpStream::connect_timeout(&launcher, timeout)?;
    let _ = s.set_nodelay(true);
    s.set_read_timeout(Some(timeout))?;
    let server = handshake::client_blocking(&mut s, &key, PeerId::Replica(me, incarnation))
        .map_err(|e| other(format!("files connection handshake: {e}")))?;
    if server != PeerId::Launcher {
        return Err(other("the control address is not a launcher".into()));
    }
    s.set_read_timeout(None)?;
    let mut reader = s.try_clone()?;
    std::thread::Builder::new()
        .name("volpex-files-rx".into())
        .spawn(move || loop {
            match read_one(&mut reader) {
                Ok((h, p)) => match control::decode::<ToProcess>(&h, &p) {
                    Ok(ToProcess::Files { bytes }) => volpex_files::deliver(&bytes),
                    Ok(other) => log::warn!("{me}: {other:?} on the files connection"),
                    Err(e) => log::warn!("{me}: bad frame on the files connection: {e}"),
                },
                Err(e) => {
                    volpex_files::link_lost(&e.to_string());
                    return;
                }
            }
        })?;
    let w = Mutex::new(s);
    Ok(Box::new(move |bytes: &[u8]| {
        let (h, p) = control::encode(&ToLauncher::Files {
            bytes: bytes.to_vec(),
        });
        write_one(&mut *w.lock(), &h, &p)
    }))
}
