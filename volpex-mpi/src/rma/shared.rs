//! Shared-memory windows (MPI-3.1 section 11.2.3: MPI_Win_allocate_shared,
//! MPI_Win_shared_query) under replication.
//!
//! Processes of a shared window read and write each other's memory by load and store,
//! which the runtime cannot see, log or replay. So every *team* (replica k of every rank
//! of the window's communicator) shares one memory of its own: a sealed memfd
//! (`volpex::shared`) that the team's leader (rank 0's replica k) makes and hands to the
//! others over an abstract Unix socket named for the job, the window's communicator and
//! k. Each team thus sees exactly what a failure-free run sees, as long as its members
//! synchronize with each other rather than with another team's: MPI_Barrier over a
//! communicator holding the window's processes and MPI_Win_fence on the window end in a
//! *team barrier* in the memory itself, after their messages (docs/PROTOCOL.md,
//! "Shared-memory windows").
//!
//! A team is one failure unit: the memory of a lost member cannot be rebuilt (its stores
//! are gone, and a replacement replaying from the start would find its team far ahead).
//! The member's link to the leader (the leader's to each member) closes when it dies; a
//! team barrier waiting for it sees that, marks the memory lost, and every member of
//! the team ends (exit code 1, naming the window) before it could load what the lost
//! member did not store; other teams go on. A new incarnation (replaying the program)
//! that reaches MPI_Win_allocate_shared joins its team if the team is still making the
//! window, and ends when the team made it without it (the leader no longer listens, or
//! no member comes).
//!
//! Owns the teams' memory, their links and their barriers; must never touch the memory
//! but its control words (the program owns the rest), nor let a member go on past a
//! barrier its team could not complete.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::raw::c_int;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
use nix::unistd::getuid;
use parking_lot::Mutex;
use volpex::shared::{recv_fd, send_fd, SharedMemory};
use volpex::{Communicator, Group};

use super::object;
use crate::error::{MpiError, Result};
use crate::handles::{class, PROC_NULL};
use crate::state;
use crate::window::FLAVOR_SHARED;

/// The control page at the start of a team's memory; the ranks' memory follows.
const HEADER_BYTES: usize = 4096;
/// Control words: team barrier arrivals so far, and 0 or 1 + the rank whose member was
/// lost.
const ARRIVED: usize = 0;
const LOST: usize = 1;
/// How long the leader waits for its team to join, and a member for its leader: as long
/// as one team may lag behind another (they meet only in the window's creation).
const JOIN_TIMEOUT: Duration = Duration::from_secs(120);
/// What a member says when it joins: its rank, and whether it is a new incarnation.
const HELLO_BYTES: usize = 8;

/// One team's memory and links for one window.
struct Team {
    mem: SharedMemory,
    /// Each rank's memory: offset from the start, bytes.
    regions: Vec<(usize, usize)>,
    /// Each rank's displacement unit.
    units: Vec<c_int>,
    /// The window's processes, to know which barriers hold them all.
    group: Group,
    /// The window's communicator, whose runtime a waiting member keeps driving (it
    /// answers its peers meanwhile).
    comm: Communicator,
    /// The leader's links to every member (with their ranks), or a member's to the
    /// leader (rank 0): a link that closes is a member lost.
    links: Vec<(i32, UnixStream)>,
    /// Team barriers this process has entered.
    barriers: u64,
}

/// Every shared window of this process, by handle.
static TEAMS: Mutex<BTreeMap<c_int, Team>> = Mutex::new(BTreeMap::new());

/// Where each rank's memory starts (after the control page) and how many bytes the
/// memory takes: contiguous (rank r + 1's right after rank r's, MPI-3.1 section 11.2.3)
/// unless `noncontig` (info `alloc_shared_noncontig`), which starts each on a page.
fn layout(sizes: &[u64], noncontig: bool) -> Result<(Vec<(usize, usize)>, usize)> {
    let too_big = || MpiError::new(class::NO_MEM, "the shared window's sizes overflow");
    let mut at = HEADER_BYTES;
    let mut regions = Vec::with_capacity(sizes.len());
    for &s in sizes {
        let s = usize::try_from(s).map_err(|_| too_big())?;
        if noncontig {
            at = at.checked_next_multiple_of(4096).ok_or_else(too_big)?;
        }
        regions.push((at, s));
        at = at.checked_add(s).ok_or_else(too_big)?;
    }
    Ok((regions, at))
}

/// The abstract socket team `team` of the window over communicator `comm_id` meets at:
/// unique on the host to this run of the job (a hash of its secret key, which the name
/// must not show: abstract names are listed in /proc/net/unix; the launcher's address
/// alone comes back in a later job, while a process of the earlier one may still
/// listen), nothing left in the file system.
fn meeting_point(comm_id: u32, team: u32) -> String {
    use std::hash::{Hash, Hasher};
    let key = std::env::var("VOLPEX_JOB_KEY")
        .or_else(|_| std::env::var("VOLPEX_LAUNCHER"))
        .unwrap_or_else(|_| format!("pid{}", std::process::id()));
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    format!("volpex-win/{:016x}/{comm_id:08x}/{team}", h.finish())
}

/// Ends this replica: its team's memory is lost (see the module's doc).
fn end_team(what: &str, why: &str) -> ! {
    crate::errhandler::end_replica(
        what,
        &format!(
            "{why}; the memory this replica shares with its team (replica k of every rank) \
             cannot be rebuilt, so this replica ends and the other teams go on"
        ),
    )
}

/// MPI_Win_allocate_shared (section 11.2.3, collective): `size` bytes for this process
/// in its team's memory; returns the window and the address of this process's memory.
/// MPI_ERR_RMA_SHARED when the processes are not all on one host.
pub fn allocate(
    size: usize,
    disp_unit: c_int,
    info: Vec<(String, String)>,
    comm_h: c_int,
) -> Result<(c_int, usize)> {
    const WHAT: &str = "MPI_Win_allocate_shared";
    let comm = state::intra(comm_h, WHAT)?;
    let local = comm.split_by_host(0)?;
    if local.is_none_or(|l| l.size() != comm.size()) {
        return Err(MpiError::new(
            class::RMA_SHARED,
            "the communicator's processes are not all on one host",
        ));
    }
    let noncontig = info
        .iter()
        .any(|(k, v)| k == "alloc_shared_noncontig" && v == "true");
    let h = object::create(0, size, disp_unit, info, comm_h, FLAVOR_SHARED, false)?;
    let (wcomm, peers) = object::with(h, |e| Ok((e.comm, e.peers.clone())))?;
    let wcomm = state::comm(wcomm)?;
    let sizes: Vec<u64> = peers.iter().map(|p| p.0).collect();
    let (regions, total) = layout(&sizes, noncontig)?;
    let team = state::with(|s| Ok(s.universe.as_ref().map_or(0, |u| u.replica())))?;
    let name = meeting_point(wcomm.id(), team);
    let joined = match wcomm.rank() {
        0 => lead(&wcomm, &name, total),
        me => join(&wcomm, &name, total, me),
    };
    let (mem, links) = match joined {
        Ok(j) => j,
        Err(e) if crate::ft::regenerated()? => end_team(
            WHAT,
            &format!(
                "this replica is a new incarnation, and team {team} made the window \
                 without it or lost it ({e})"
            ),
        ),
        Err(e) => end_team(
            WHAT,
            &format!("team {team} could not share the window's memory ({e})"),
        ),
    };
    let me = wcomm.rank() as usize;
    let base = address(&mem, regions[me]);
    object::with(h, |e| {
        e.base = base;
        Ok(())
    })?;
    let entry = Team {
        mem,
        regions,
        units: peers.iter().map(|p| p.1 as c_int).collect(),
        group: wcomm.group(),
        comm: wcomm,
        links,
        barriers: 0,
    };
    // Nobody stores before the whole team has the memory: under replication a member
    // may run ahead of a sibling on the other teams' messages (a late joiner found
    // another member's stores in its fresh memory).
    let mut teams = TEAMS.lock();
    team_barrier(h, teams.entry(h).or_insert(entry));
    Ok((h, base))
}

/// Waits a little for a team member, driving the runtime meanwhile (the process answers
/// its peers and notices its launcher's end).
fn pause(comm: &Communicator) {
    if comm.drive_for(Duration::from_millis(1)).is_err() {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The leader: makes the memory, hands it to the others of `comm` as they come.
fn lead(
    comm: &Communicator,
    name: &str,
    total: usize,
) -> io::Result<(SharedMemory, Vec<(i32, UnixStream)>)> {
    let n = comm.size() as usize;
    let (mem, fd) = SharedMemory::create(total)?;
    let listener = UnixListener::bind_addr(&SocketAddr::from_abstract_name(name)?)?;
    listener.set_nonblocking(true)?;
    let deadline = Instant::now() + JOIN_TIMEOUT;
    let mut links: Vec<(i32, UnixStream)> = Vec::new();
    while links.len() + 1 < n {
        let mut sock = match listener.accept() {
            Ok((sock, _)) => sock,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if Instant::now() > deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("{} of {} members joined", links.len() + 1, n),
                    ));
                }
                pause(comm);
                continue;
            }
            Err(e) => return Err(e),
        };
        // Anyone on the host can reach an abstract socket: only our own user's
        // processes get the memory.
        if getsockopt(&sock, PeerCredentials).map(|c| c.uid()) != Ok(getuid().as_raw()) {
            continue;
        }
        sock.set_nonblocking(false)?;
        sock.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut hello = [0u8; HELLO_BYTES];
        sock.read_exact(&mut hello)?;
        let rank = u32::from_le_bytes([hello[0], hello[1], hello[2], hello[3]]);
        if rank == 0 || rank as usize >= n || links.iter().any(|l| l.0 == rank as i32) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a member said it was rank {rank}"),
            ));
        }
        send_fd(&sock, &fd, &(total as u64).to_le_bytes())?;
        sock.set_nonblocking(true)?;
        links.push((rank as i32, sock));
    }
    Ok((mem, links))
}

/// A member: asks the leader for the memory.
fn join(
    comm: &Communicator,
    name: &str,
    total: usize,
    me: i32,
) -> io::Result<(SharedMemory, Vec<(i32, UnixStream)>)> {
    let addr = SocketAddr::from_abstract_name(name)?;
    let deadline = Instant::now() + JOIN_TIMEOUT;
    let mut sock = loop {
        match UnixStream::connect_addr(&addr) {
            Ok(s) => break s,
            Err(e) if Instant::now() > deadline => return Err(e),
            Err(_) => pause(comm),
        }
    };
    sock.set_read_timeout(Some(JOIN_TIMEOUT))?;
    let mut hello = [0u8; HELLO_BYTES];
    hello[..4].copy_from_slice(&(me as u32).to_le_bytes());
    sock.write_all(&hello)?;
    let mut len = [0u8; 8];
    let (got, fd) = recv_fd(&sock, &mut len)?;
    let fd = fd.filter(|_| got == 8 && u64::from_le_bytes(len) == total as u64);
    let fd = fd.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the leader sent no memory of the right size",
        )
    })?;
    let mem = SharedMemory::open(fd, total)?;
    sock.set_nonblocking(true)?;
    Ok((mem, vec![(0, sock)]))
}

/// The rank of a member whose link closed (it ended), if any.
fn closed_link(links: &mut [(i32, UnixStream)]) -> Option<i32> {
    let mut byte = [0u8; 1];
    links.iter_mut().find_map(|(r, s)| match s.read(&mut byte) {
        Ok(0) => Some(*r),
        Ok(_) => None,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => None,
        Err(_) => Some(*r),
    })
}

/// Waits until every member of the team entered as many team barriers as this one has;
/// a member lost ends this replica.
fn team_barrier(h: c_int, t: &mut Team) {
    let n = t.regions.len() as u64;
    t.barriers += 1;
    let want = t.barriers * n;
    let arrived = t.mem.word(ARRIVED);
    arrived.fetch_add(1, Ordering::AcqRel);
    let mut polls = 0u32;
    loop {
        if arrived.load(Ordering::Acquire) >= want {
            return;
        }
        let mut lost = t.mem.word(LOST).load(Ordering::Acquire);
        if lost == 0 && polls % 64 == 63 {
            if let Some(r) = closed_link(&mut t.links) {
                // It may have passed this barrier and ended since: only a member that
                // did not come is lost.
                if arrived.load(Ordering::Acquire) >= want {
                    return;
                }
                lost = r as u64 + 1;
                t.mem.word(LOST).store(lost, Ordering::Release);
            }
        }
        if lost != 0 {
            end_team(
                "a team barrier",
                &format!(
                    "shared window {h}: rank {}'s replica in this replica's team was lost",
                    lost - 1
                ),
            );
        }
        polls = polls.wrapping_add(1);
        if polls < 1000 {
            std::hint::spin_loop();
        } else if t.comm.drive_for(Duration::from_micros(20)).is_err() {
            std::thread::sleep(Duration::from_micros(20));
        }
    }
}

/// After a barrier over `comm` (MPI_Barrier): a team barrier on every shared window
/// whose processes all belong to `comm`, in the order the windows were made (every
/// member calls the same barriers in the same order, MPI-3.1 section 5.12).
pub fn after_barrier(comm: &Communicator) {
    let mut teams = TEAMS.lock();
    if teams.is_empty() {
        return;
    }
    let g = comm.group();
    for (&h, t) in teams.iter_mut() {
        let all: Vec<i32> = (0..t.regions.len() as i32).collect();
        if t.group
            .translate_ranks(&all, &g)
            .iter()
            .all(Option::is_some)
        {
            team_barrier(h, t);
        }
    }
}

/// After MPI_Win_fence on window `win`: a team barrier if it is a shared window.
pub fn after_fence(win: c_int) {
    if let Some(t) = TEAMS.lock().get_mut(&win) {
        team_barrier(win, t);
    }
}

/// MPI_Win_free of window `win` (after `object::free`): its memory goes.
pub fn free(win: c_int) {
    TEAMS.lock().remove(&win);
}

/// MPI_Win_shared_query (section 11.2.3): rank `rank`'s (size, displacement unit,
/// address) in window `win`; for MPI_PROC_NULL the lowest rank's with memory (size 0
/// and a null address when none has).
pub fn query(win: c_int, rank: c_int) -> Result<(usize, c_int, usize)> {
    let teams = TEAMS.lock();
    let t = teams.get(&win).ok_or_else(|| {
        MpiError::new(
            class::RMA_FLAVOR,
            "MPI_Win_shared_query on a window not made by MPI_Win_allocate_shared",
        )
    })?;
    let r = match rank {
        PROC_NULL => t.regions.iter().position(|r| r.1 > 0).unwrap_or(0),
        r => usize::try_from(r)
            .ok()
            .filter(|&r| r < t.regions.len())
            .ok_or_else(|| {
                MpiError::new(
                    class::RANK,
                    format!("rank {r} is not in the window's group"),
                )
            })?,
    };
    Ok((t.regions[r].1, t.units[r], address(&t.mem, t.regions[r])))
}

/// Where a rank's memory is: null for none, as Open MPI and MPICH answer (MPICH's
/// `win_shared_noncontig_put` checks it).
fn address(mem: &SharedMemory, (off, size): (usize, usize)) -> usize {
    match size {
        0 => 0,
        _ => mem.addr() + off,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_by_default_page_aligned_when_asked() {
        let (r, total) = layout(&[10, 0, 6], false).expect("fits");
        assert_eq!(r, vec![(4096, 10), (4106, 0), (4106, 6)]);
        assert_eq!(total, 4112);
        let (r, total) = layout(&[10, 0, 6], true).expect("fits");
        assert_eq!(r, vec![(4096, 10), (8192, 0), (8192, 6)]);
        assert_eq!(total, 8198);
        assert!(layout(&[u64::MAX, 1], false).is_err());
    }
}
