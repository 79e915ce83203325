//! Groups (MPI-3.1 section 6.3) and the derivation of communicator context ids.
//!
//! A context id must be the same in every replica of every member without any message
//! between siblings. Communicators are created collectively, in the same order on every
//! member of the parent, so (parent id, how many communicators the parent has created,
//! a description of the new one) names the new communicator identically everywhere; its
//! id is a hash of that. Ids are even (id + 1 carries collectives) and never 0 (world).

use std::collections::HashMap;
use std::sync::Arc;

/// An ordered set of processes, by their rank in the world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub(crate) world: Arc<[u32]>,
    /// This process's world rank, to answer `rank()`.
    pub(crate) me: u32,
}

impl Group {
    /// Number of processes.
    pub fn size(&self) -> i32 {
        self.world.len() as i32
    }

    /// This process's rank in the group, if it is a member (MPI_Group_rank).
    pub fn rank(&self) -> Option<i32> {
        self.world
            .iter()
            .position(|w| *w == self.me)
            .map(|i| i as i32)
    }

    /// The group of the listed ranks of this group, in that order (MPI_Group_incl).
    /// Ranks outside the group are ignored.
    pub fn include(&self, ranks: &[i32]) -> Group {
        let world = ranks
            .iter()
            .filter_map(|r| {
                usize::try_from(*r)
                    .ok()
                    .and_then(|i| self.world.get(i))
                    .copied()
            })
            .collect::<Vec<u32>>();
        Group {
            world: world.into(),
            me: self.me,
        }
    }

    /// This group without the listed ranks (MPI_Group_excl).
    pub fn exclude(&self, ranks: &[i32]) -> Group {
        let world = self
            .world
            .iter()
            .enumerate()
            .filter(|(i, _)| !ranks.contains(&(*i as i32)))
            .map(|(_, w)| *w)
            .collect::<Vec<u32>>();
        Group {
            world: world.into(),
            me: self.me,
        }
    }

    /// The ranks in `other` of the processes at `ranks` in this group
    /// (MPI_Group_translate_ranks); `None` where a process is not in `other`.
    pub fn translate_ranks(&self, ranks: &[i32], other: &Group) -> Vec<Option<i32>> {
        ranks
            .iter()
            .map(|r| {
                let w = usize::try_from(*r).ok().and_then(|i| self.world.get(i))?;
                other.world.iter().position(|x| x == w).map(|i| i as i32)
            })
            .collect()
    }
}

/// The members of a communicator: world ranks in communicator-rank order, and back.
#[derive(Debug)]
pub(crate) struct Members {
    pub(crate) world: Arc<[u32]>,
    local: HashMap<u32, u32>,
}

impl Members {
    pub(crate) fn new(world: Arc<[u32]>) -> Members {
        let local = world
            .iter()
            .enumerate()
            .map(|(i, w)| (*w, i as u32))
            .collect();
        Members { world, local }
    }

    /// Communicator rank of a world rank.
    pub(crate) fn local(&self, world: u32) -> Option<u32> {
        self.local.get(&world).copied()
    }
}

/// The context id of the `nth` communicator created from `parent`, described by `what`.
pub(crate) fn derive_id(parent: u32, nth: u32, what: &[u8]) -> u32 {
    let mut h = blake3::Hasher::new();
    h.update(b"volpex communicator");
    h.update(&parent.to_le_bytes());
    h.update(&nth.to_le_bytes());
    h.update(what);
    let mut b = [0u8; 4];
    b.copy_from_slice(&h.finalize().as_bytes()[..4]);
    (u32::from_le_bytes(b) & !1).max(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(v: &[u32], me: u32) -> Group {
        Group {
            world: v.to_vec().into(),
            me,
        }
    }

    #[test]
    fn include_exclude_translate() {
        let world = g(&[0, 1, 2, 3, 4], 3);
        let odd = world.include(&[1, 3]);
        assert_eq!(odd.size(), 2);
        assert_eq!(odd.rank(), Some(1));
        let rest = world.exclude(&[1, 3]);
        assert_eq!(rest.rank(), None);
        assert_eq!(&*rest.world, &[0, 2, 4]);
        assert_eq!(
            world.translate_ranks(&[0, 1, 3, 7], &odd),
            vec![None, Some(0), Some(1), None]
        );
    }

    #[test]
    fn ids_are_even_nonzero_and_depend_on_everything() {
        let a = derive_id(0, 0, b"dup");
        assert_eq!(a % 2, 0);
        assert!(a >= 2);
        assert_ne!(a, derive_id(0, 1, b"dup"));
        assert_ne!(a, derive_id(2, 0, b"dup"));
        assert_ne!(a, derive_id(0, 0, b"split 1"));
    }
}
