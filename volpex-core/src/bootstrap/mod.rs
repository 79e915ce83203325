//! Joining a job: the authenticated control connection to the launcher, registration and
//! the rendezvous (address table).
//!
//! Owns the heartbeat connection (`heartbeat`), binding to the CPUs volpexrun chose
//! (`affinity`) and the handover of a draining replica to its next incarnation
//! (`handover`). Must never read the environment (`env` did) nor carry protocol traffic
//! between replicas; after the rendezvous the control connection belongs to the transport.

pub mod affinity;
pub mod files;
pub mod handover;
pub mod heartbeat;

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use volpex_proto::handshake::{self, JobKey, PeerId};
use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::{self, ToLauncher, ToProcess};
use volpex_proto::wire::stream::{read_one, write_one};

use crate::env::Launch;
use crate::error::Error;
use crate::transport::Drain;

/// Everything a process learns when it joins a job.
pub struct Joined {
    /// This process.
    pub me: ReplicaId,
    /// Number of ranks.
    pub ranks: u32,
    /// Replicas per rank.
    pub replicas: u32,
    /// The job key.
    pub key: JobKey,
    /// Where peers reach us.
    pub listeners: crate::transport::Listeners,
    /// The launcher's control address.
    pub launcher_addr: SocketAddr,
    /// Authenticated control connection to the launcher.
    pub launcher: TcpStream,
    /// Every replica's address, `None` if it is dead or has not registered yet.
    pub addrs: Vec<Vec<Option<SocketAddr>>>,
    /// Replicas whose newest incarnation is starting (not registered yet).
    pub starting: Vec<ReplicaId>,
    /// This process's incarnation.
    pub incarnation: u32,
    /// Incarnation of every replica, `[rank][replica]`.
    pub incarnations: Vec<Vec<u32>>,
    /// `Some(n)`: this is a regenerated incarnation, caught up once it received n
    /// messages (see `ToProcess::Table`).
    pub catch_up: Option<u64>,
}

/// Joins the job `launch` describes (what volpexrun passed in the environment). The
/// peer listener gets the TCP congestion control `congestion` before any peer can dial it
/// (`tuning::tune_listener`); `drain` is the drain state the heartbeat shares with the
/// event loop. With `shm`, it also listens for peers on this host through shared memory
/// (docs/SHM.md) before it registers.
pub fn join(
    launch: &Launch,
    connect_timeout: Duration,
    congestion: Option<&str>,
    shm: bool,
    drain: &Arc<Drain>,
) -> Result<Joined, Error> {
    // Before any thread starts: they inherit the binding.
    if let Some(cpus) = &launch.cpus {
        affinity::bind_self(cpus)?;
    }
    let Launch {
        me,
        ranks,
        replicas,
        key,
        launcher: launcher_addr,
        bind: bind_ip,
        heartbeat: beat,
        rendezvous_timeout: rendezvous,
        incarnation,
        ..
    } = *launch;

    let listen = |ip: IpAddr| {
        let l = mio::net::TcpListener::bind(SocketAddr::new(ip, 0))
            .map_err(|e| Error::Bootstrap(format!("cannot listen on {ip}: {e}")))?;
        crate::transport::tuning::tune_listener(&l, congestion);
        let a = l
            .local_addr()
            .map_err(|e| Error::Bootstrap(e.to_string()))?;
        log::info!("replica {me} listening on {a}");
        Ok::<_, Error>((l, a))
    };
    let early = match bind_ip {
        Some(ip) => Some(listen(ip)?),
        None => None,
    };
    let mut s = TcpStream::connect_timeout(&launcher_addr, connect_timeout)
        .map_err(|e| Error::Bootstrap(format!("launcher {launcher_addr}: {e}")))?;
    let (listener, my_addr) = match early {
        Some(l) => l,
        None => listen(
            s.local_addr()
                .map_err(|e| Error::Bootstrap(e.to_string()))?
                .ip(),
        )?,
    };
    let shm = match shm.then(|| crate::transport::ShmListener::bind(my_addr)) {
        Some(Ok(l)) => Some(l),
        Some(Err(e)) => {
            crate::transport::shm_unavailable(me, &e);
            None
        }
        None => None,
    };
    let _ = s.set_nodelay(true);
    s.set_read_timeout(Some(rendezvous))
        .map_err(|e| Error::Bootstrap(e.to_string()))?;
    let server = handshake::client_blocking(&mut s, &key, PeerId::Replica(me, incarnation))
        .map_err(|e| Error::Bootstrap(format!("launcher handshake: {e}")))?;
    if server != PeerId::Launcher {
        return Err(Error::Bootstrap(
            "the control address is not a launcher".into(),
        ));
    }
    let (h, p) = control::encode(&ToLauncher::Register {
        addr: my_addr.to_string(),
    });
    write_one(&mut s, &h, &p).map_err(|e| Error::Bootstrap(e.to_string()))?;
    heartbeat::start(
        launcher_addr,
        &key,
        (me, incarnation),
        beat,
        connect_timeout,
        drain.clone(),
    )?;
    // Death notices for replicas that never registered may come first; the table
    // leaves those out anyway.
    let (table, starting, incarnations, catch_up) = loop {
        let (h, p) = read_one(&mut s).map_err(|e| Error::Bootstrap(format!("rendezvous: {e}")))?;
        match control::decode::<ToProcess>(&h, &p) {
            Ok(ToProcess::Table {
                addrs,
                starting,
                incarnations,
                catch_up,
            }) => break (addrs, starting, incarnations, catch_up),
            Ok(ToProcess::Death { rank, replica, .. }) => {
                log::debug!("replica {rank}.{replica} died before the rendezvous")
            }
            Ok(ToProcess::Joining { .. } | ToProcess::Alive { .. }) => {
                log::debug!("a regenerated replica joined before the rendezvous")
            }
            Ok(ToProcess::Shutdown) => {
                return Err(Error::Bootstrap("the launcher ended the job".into()))
            }
            Ok(ToProcess::Files { .. }) => {
                log::warn!("a files message on the control connection; ignored")
            }
            Err(e) => return Err(Error::Bootstrap(e.to_string())),
        }
    };
    let shape_ok = |lens: Vec<usize>| {
        lens.len() == ranks as usize && lens.iter().all(|&r| r == replicas as usize)
    };
    if !shape_ok(table.iter().map(Vec::len).collect())
        || !shape_ok(incarnations.iter().map(Vec::len).collect())
    {
        return Err(Error::Bootstrap("address table has the wrong shape".into()));
    }
    let starting = starting
        .into_iter()
        .map(|(rank, replica)| ReplicaId::new(rank, replica))
        .filter(|r| r.rank < ranks && r.replica < replicas)
        .collect();
    let addrs = table
        .into_iter()
        .map(|reps| {
            reps.into_iter()
                .map(|a| a.and_then(|s| s.parse::<SocketAddr>().ok()))
                .collect()
        })
        .collect();
    s.set_read_timeout(None)
        .map_err(|e| Error::Bootstrap(e.to_string()))?;
    s.flush().map_err(|e| Error::Bootstrap(e.to_string()))?;
    Ok(Joined {
        me,
        ranks,
        replicas,
        key,
        listeners: crate::transport::Listeners {
            tcp: Some(listener),
            shm,
        },
        launcher_addr,
        launcher: s,
        addrs,
        starting,
        incarnation,
        incarnations,
        catch_up,
    })
}
