//! Inter-communicators (MPI-3.1 section 6.6): two disjoint groups, the local one and the
//! remote one, whose point-to-point ranks name the other group. Made from an
//! intra-communicator of each group and a peer communicator both leaders belong to
//! (`InterCommunicator::new`, MPI_Intercomm_create); merged back into one
//! intra-communicator (`merge`, MPI_Intercomm_merge); duplicated, split and cut down like
//! any communicator (`duplicate`, `split`, `create`; section 6.4.2).
//!
//! An inter-communicator is three communicators every replica of every member of both
//! groups names alike: a copy of the local group (collectives inside the group), a
//! hidden *bridge* over both groups, the lower group first (the group whose leader has
//! the lower world rank), which carries the traffic between the groups that the MPI
//! library's inter-communicator collectives and the creation of new communicators need,
//! and the point-to-point face (`point_to_point`: a communicator whose ranks are the
//! remote group's, in a context of its own). The bridge's context is named by the
//! contexts of both local copies, which the two leaders exchange when the
//! inter-communicator is made; what a member learns then is recorded like a split's
//! result, so a replica restored from a checkpoint makes it again without a message.
//!
//! Owns the derivation of those contexts and the exchange between the leaders. Must never
//! run a collective algorithm (the bridge's and the local copy's own collectives do) nor
//! interpret the program's data.

use std::sync::Arc;

use super::communicator::{Communicator, Partner};
use super::group::{derive_id, Group};
use super::receive::message;
use super::Tag;
use crate::error::Error;
use volpex_proto::message::matching::Mode;

/// An inter-communicator (MPI-3.1 section 6.6). Clones share the same communicator.
#[derive(Clone)]
pub struct InterCommunicator {
    local: Communicator,
    bridge: Communicator,
    p2p: Communicator,
    /// The remote group's world ranks, in its rank order.
    remote: Arc<[u32]>,
    /// The local group comes first in the bridge.
    low: bool,
}

/// A description of one side that the leaders exchange: its local copy's context, its
/// leader's world rank and its members' world ranks.
fn encode_side(local: &Communicator, leader: u32) -> Vec<i64> {
    let world = &local.members.world;
    let mut v = Vec::with_capacity(3 + world.len());
    v.extend([i64::from(local.id()), i64::from(leader), world.len() as i64]);
    v.extend(world.iter().map(|&w| i64::from(w)));
    v
}

/// The remote side an exchange described: (context, leader, members).
fn decode_side(v: &[i64], ranks: u32) -> Result<(u32, u32, Vec<u32>), Error> {
    let bad = Error::Usage("intercomm_create: the remote leader sent a malformed description");
    let [id, leader, n, rest @ ..] = v else {
        return Err(bad);
    };
    let world: Option<Vec<u32>> = rest
        .iter()
        .map(|&w| u32::try_from(w).ok().filter(|&w| w < ranks))
        .collect();
    match (u32::try_from(*id), u32::try_from(*leader), world) {
        (Ok(id), Ok(leader), Some(world)) if *n as usize == world.len() && !world.is_empty() => {
            Ok((id, leader, world))
        }
        _ => Err(bad),
    }
}

impl InterCommunicator {
    /// Joins the group of `local_comm` with another group into an inter-communicator
    /// (MPI_Intercomm_create, MPI-3.1 section 6.6.2). Collective over `local_comm`; every
    /// member names the same `local_leader`. The leader passes `peer`: a communicator
    /// holding both leaders, and the remote leader's rank in it; the two leaders exchange
    /// their groups there, in a context of the peer's own reserved for this exchange,
    /// matched by `tag`, so it never meets the program's messages on the peer. The groups
    /// must be disjoint.
    pub fn new(
        local_comm: &Communicator,
        local_leader: i32,
        peer: Option<(&Communicator, i32)>,
        tag: Tag,
    ) -> Result<InterCommunicator, Error> {
        let leader = local_comm.check_rank(local_leader)?;
        let local = local_comm.duplicate();
        let nth = local.next_creation();
        let inner = local.inner.clone();
        let remote = match inner.restored_split(local.id(), nth) {
            Some(r) => r,
            None => Self::learn_remote(&local, leader, peer, tag)?,
        };
        inner.splits.lock().push((local.id(), nth, remote.clone()));
        let (remote_id, remote_leader, remote_world) = decode_side(&remote, inner.ranks)?;
        if remote_world
            .iter()
            .any(|w| local.members.local(*w).is_some())
        {
            return Err(Error::Usage(
                "intercomm_create: the local and the remote group overlap",
            ));
        }
        let my_leader = local.world_rank(leader)?;
        let low = my_leader < remote_leader;
        let (low_id, high_id) = if low {
            (local.id(), remote_id)
        } else {
            (remote_id, local.id())
        };
        let name = derive_id(
            low_id,
            0,
            &[b"intercomm".as_slice(), &high_id.to_le_bytes()].concat(),
        );
        let remote: Arc<[u32]> = remote_world.into();
        Ok(Self::assemble(local, name, remote, low))
    }

    /// The leader's exchange with the remote leader, then a broadcast of what it learned
    /// over the local copy: the remote side's description.
    fn learn_remote(
        local: &Communicator,
        leader: u32,
        peer: Option<(&Communicator, i32)>,
        tag: Tag,
    ) -> Result<Vec<i64>, Error> {
        let mut remote = Vec::new();
        if local.rank == leader {
            let Some((peer, remote_leader)) = peer else {
                return Err(Error::Usage(
                    "intercomm_create: the local leader needs the peer communicator",
                ));
            };
            let dst = peer.check_rank(remote_leader)?;
            let ctx = derive_id(peer.id(), u32::MAX, b"intercomm leaders");
            let mine = encode_side(local, local.world_rank(leader)?);
            peer.send_on(ctx, tag, dst, bytemuck::cast_slice(&mine))?;
            let spec = peer.spec(ctx, Partner::Rank(remote_leader), Some(tag))?;
            let id = peer.post(spec, Mode::Receive)?;
            let (_, data) = message(peer.wait(id)?)?;
            remote = crate::datatype::vec_from_bytes::<i64>(&data)?;
        }
        let mut len = [remote.len() as u64];
        local
            .process_at_rank(leader as i32)
            .broadcast_into(&mut len)?;
        remote.resize(len[0] as usize, 0);
        local
            .process_at_rank(leader as i32)
            .broadcast_into(&mut remote[..])?;
        Ok(remote)
    }

    /// The inter-communicator whose bridge has context `name` (members: the lower group,
    /// then the higher one), with `local` as its local copy.
    fn assemble(local: Communicator, name: u32, remote: Arc<[u32]>, low: bool) -> Self {
        let mine = local.members.world.iter().copied();
        let theirs = remote.iter().copied();
        let world: Vec<u32> = if low {
            mine.chain(theirs).collect()
        } else {
            theirs.chain(mine).collect()
        };
        let bridge = match local.named(name, world.into()) {
            Some(b) => b,
            None => unreachable!("a process is a member of its own group"),
        };
        let p2p = local.addressing(
            derive_id(name, u32::MAX, b"intercomm p2p"),
            remote.clone(),
            local.rank,
        );
        InterCommunicator {
            local,
            bridge,
            p2p,
            remote,
            low,
        }
    }

    /// This process's rank in the local group (MPI_Comm_rank).
    pub fn rank(&self) -> i32 {
        self.local.rank()
    }

    /// The size of the local group (MPI_Comm_size).
    pub fn size(&self) -> i32 {
        self.local.size()
    }

    /// The size of the remote group (MPI_Comm_remote_size).
    pub fn remote_size(&self) -> i32 {
        self.remote.len() as i32
    }

    /// The local group (MPI_Comm_group).
    pub fn group(&self) -> Group {
        self.local.group()
    }

    /// The remote group (MPI_Comm_remote_group).
    pub fn remote_group(&self) -> Group {
        Group {
            world: self.remote.clone(),
            me: self.local.inner.me.rank,
        }
    }

    /// The local group as an intra-communicator of its own (a copy made with this
    /// inter-communicator, used by nothing else): collectives inside the group.
    pub fn local(&self) -> &Communicator {
        &self.local
    }

    /// Both groups as one intra-communicator, the lower group first (`is_low`), in
    /// contexts used by nothing else: the traffic between the groups.
    pub fn bridge(&self) -> &Communicator {
        &self.bridge
    }

    /// The point-to-point face: ranks name the remote group, statuses report remote
    /// ranks, `any_process()` matches the remote group only (MPI-3.1 section 6.6.1).
    pub fn point_to_point(&self) -> &Communicator {
        &self.p2p
    }

    /// Whether the local group comes first in the bridge.
    pub fn is_low(&self) -> bool {
        self.low
    }

    /// The bridge rank of rank `r` of the remote group.
    pub fn remote_in_bridge(&self, r: i32) -> i32 {
        if self.low {
            self.local.size() + r
        } else {
            r
        }
    }

    /// The bridge rank of rank `r` of the local group.
    pub fn local_in_bridge(&self, r: i32) -> i32 {
        if self.low {
            r
        } else {
            self.remote_size() + r
        }
    }

    /// One intra-communicator of both groups (MPI_Intercomm_merge, MPI-3.1 section
    /// 6.6.2): the group whose members pass `high` false first; when both pass the same,
    /// the lower group (`is_low`) first. Collective over both groups.
    pub fn merge(&self, high: bool) -> Result<Communicator, Error> {
        match self
            .bridge
            .split_by_color_with_key(Some(0), i32::from(high))?
        {
            Some(c) => Ok(c),
            None => unreachable!("every member passes a color"),
        }
    }

    /// A new inter-communicator with the same groups and contexts of its own
    /// (MPI_Comm_dup). Collective over both groups; no message.
    pub fn duplicate(&self) -> InterCommunicator {
        let local = self.local.duplicate();
        let bridge = self.bridge.duplicate();
        Self::assemble(local, bridge.id(), self.remote.clone(), self.low)
    }

    /// MPI_Comm_split on an inter-communicator (MPI-3.1 section 6.4.2): the members of
    /// each group passing the same color form the local group of a new one, ranked by
    /// `key` then by rank, with the remote group's members of that color as its remote
    /// group. `None` for `color` None (MPI_UNDEFINED), and where no remote member passed
    /// the same color.
    pub fn split(&self, color: Option<i32>, key: i32) -> Result<Option<InterCommunicator>, Error> {
        let Some(both) = self.bridge.split_by_color_with_key(color, key)? else {
            return Ok(None);
        };
        let (mine, theirs): (Vec<u32>, Vec<u32>) = both
            .members
            .world
            .iter()
            .partition(|w| self.local.members.local(**w).is_some());
        if theirs.is_empty() {
            return Ok(None);
        }
        let side: &[u8] = if self.low { b"low" } else { b"high" };
        let local_id = derive_id(
            both.id(),
            u32::MAX,
            &[b"intercomm local ".as_slice(), side].concat(),
        );
        let Some(local) = both.named(local_id, mine.into()) else {
            unreachable!("a process is a member of its own color")
        };
        let name = derive_id(both.id(), u32::MAX, b"intercomm bridge");
        Ok(Some(Self::assemble(local, name, theirs.into(), self.low)))
    }

    /// MPI_Comm_create on an inter-communicator (MPI-3.1 section 6.4.2): each group
    /// passes a subgroup of its own local group (the same one at every member of the
    /// group); the members of those subgroups form a new inter-communicator, in subgroup
    /// order. `None` outside the subgroup, and everywhere when either subgroup is empty.
    pub fn create(&self, group: &Group) -> Result<Option<InterCommunicator>, Error> {
        if group
            .world
            .iter()
            .any(|w| self.local.members.local(*w).is_none())
        {
            return Err(Error::Usage(
                "create on an inter-communicator: the group is not a subgroup of the local group",
            ));
        }
        let me = group.rank();
        self.split(me.map(|_| 0), me.unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a leader sends (`encode_side`'s layout) is read back whole, and anything
    /// else is refused, never trusted (a world rank past the job, a wrong count).
    #[test]
    fn a_side_description_is_checked() {
        let v = [12i64, 3, 2, 3, 1];
        assert_eq!(decode_side(&v, 4).ok(), Some((12, 3, vec![3, 1])));
        for bad in [
            &[12i64, 3, 2, 3][..],
            &[12, 3, 2, 3, 4],
            &[12, 3, 0],
            &[-1, 3, 1, 0],
            &[12, 3],
        ] {
            assert!(decode_side(bad, 4).is_err(), "{bad:?}");
        }
    }
}
