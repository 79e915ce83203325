//! What a window is (MPI-3.1 section 11.2): its entry in the handle table (`state`
//! holds them), where a process is in its epochs, the operations queued for the epoch's
//! end and where their answers land. Their operations are `rma`'s.
//!
//! Owns these types; must never touch the tables, a window's memory or the network.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::os::raw::c_int;

use crate::datatype::BufMut;

/// MPI_WIN_FLAVOR_CREATE.
pub const FLAVOR_CREATE: c_int = 1;
/// MPI_WIN_FLAVOR_ALLOCATE.
pub const FLAVOR_ALLOCATE: c_int = 2;
/// MPI_WIN_FLAVOR_DYNAMIC.
pub const FLAVOR_DYNAMIC: c_int = 3;
/// MPI_WIN_FLAVOR_SHARED.
pub const FLAVOR_SHARED: c_int = 4;
/// MPI_WIN_UNIFIED: the one memory model here (no separate public copy).
pub const MODEL_UNIFIED: c_int = 2;

/// The predefined window attributes (`mpi.h`).
pub mod key {
    use std::os::raw::c_int;
    /// MPI_WIN_BASE.
    pub const BASE: c_int = 0x6440_0008;
    /// MPI_WIN_SIZE.
    pub const SIZE: c_int = 0x6440_0009;
    /// MPI_WIN_DISP_UNIT.
    pub const DISP_UNIT: c_int = 0x6440_000a;
    /// MPI_WIN_CREATE_FLAVOR.
    pub const CREATE_FLAVOR: c_int = 0x6440_000b;
    /// MPI_WIN_MODEL.
    pub const MODEL: c_int = 0x6440_000c;
}

/// The values of the predefined attributes, where C's MPI_Win_get_attr points: boxed, so
/// they stay put while the table moves.
#[derive(Debug)]
pub struct Fixed {
    /// MPI_WIN_SIZE (an `MPI_Aint`).
    pub size: isize,
    /// MPI_WIN_DISP_UNIT.
    pub disp_unit: c_int,
    /// MPI_WIN_CREATE_FLAVOR.
    pub flavor: c_int,
    /// MPI_WIN_MODEL.
    pub model: c_int,
}

/// Where an answer (a get's data, a fetched value) lands at the origin: `count`
/// elements of the buffer's datatype, written when the epoch ends.
pub struct Landing {
    /// The origin's result buffer.
    pub buf: BufMut<'static>,
    /// Elements.
    pub count: usize,
    /// Bytes of the reply it takes.
    pub len: u64,
}

/// Where a process is in its epochs on one window (MPI-3.1 section 11.5).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Epoch {
    /// Between fences (the last fence did not say MPI_MODE_NOSUCCEED).
    pub fence: bool,
    /// After MPI_Win_start: the targets (ranks of the window's group) until
    /// MPI_Win_complete.
    pub access: Option<Vec<i32>>,
    /// After MPI_Win_post: the origins until MPI_Win_wait or a successful MPI_Win_test.
    pub exposure: Option<Vec<i32>>,
    /// The exposure epoch's batches are applied (by this process's own
    /// MPI_Win_complete, which serves them while its gets wait for their answers).
    pub served: bool,
    /// Passive target (MPI_Win_lock, lock_all): the ranks locked, each with the lock's
    /// kind and whether a request went there in this epoch (which took the lock).
    pub locks: BTreeMap<i32, (LockKind, bool)>,
}

/// A passive-target lock's kind (MPI-3.1 section 11.5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// MPI_LOCK_SHARED.
    Shared,
    /// MPI_LOCK_EXCLUSIVE.
    Exclusive,
}

/// A window.
pub struct WinEntry {
    /// The window's own communicator (a duplicate of the one it was made over): batches
    /// and answers travel on it, apart from the program's messages.
    pub comm: c_int,
    /// The window's acknowledgement communicator (another duplicate), when some process's
    /// part of it allows locks: a passive target acknowledges there each request whose
    /// answer carries nothing, with messages kept out of its log (`rma::passive`).
    pub acks: Option<volpex::Communicator>,
    /// Address of this process's window memory.
    pub base: usize,
    /// Bytes of it.
    pub size: usize,
    /// Displacement unit.
    pub disp_unit: usize,
    /// Whether the memory is ours (MPI_Win_allocate): freed with the window.
    pub owned: bool,
    /// Every rank's (size, displacement unit), to check accesses at the origin.
    pub peers: Vec<(u64, u64)>,
    /// The ranks whose part of the window allows locks (made without info `no_locks` =
    /// `true`): each keeps a receive of every other rank's next request posted, which
    /// MPI_Win_free closes with an empty request.
    pub lockable: Vec<i32>,
    /// The predefined attributes' values.
    pub fixed: Box<Fixed>,
    /// MPI_Win_set_name.
    pub name: String,
    /// MPI_Win_set_errhandler.
    pub errhandler: c_int,
    /// The program's attributes: (keyval, value), in the order set.
    pub attrs: Vec<(c_int, usize)>,
    /// Info hints given at creation or set later.
    pub info: Vec<(String, String)>,
    /// Epochs open.
    pub epoch: Epoch,
    /// This epoch's operations, per target rank, in the order issued.
    pub queued: BTreeMap<i32, Vec<Access<'static>>>,
    /// Where their answers land, per target rank, in the same order.
    pub landings: BTreeMap<i32, Vec<Landing>>,
}

/// `(offset, length)` in bytes of the target's window.
pub type Pieces = Vec<(u64, u64)>;

/// One operation, as the target applies it: its bytes owned where the origin queues it,
/// borrowed from the batch where the target decodes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Access<'a> {
    /// MPI_Put: `data` spread over `pieces`.
    Put {
        /// Where in the window.
        pieces: Pieces,
        /// The origin's bytes, as many as the pieces take.
        data: Cow<'a, [u8]>,
    },
    /// MPI_Get: the bytes of `pieces` go back.
    Get {
        /// Where in the window.
        pieces: Pieces,
    },
    /// MPI_Accumulate, MPI_Get_accumulate (`fetch`), MPI_Fetch_and_op: `target = data op
    /// target` element by element, the old bytes going back first when fetching.
    Acc {
        /// Where in the window.
        pieces: Pieces,
        /// The origin's bytes, as many as the pieces take.
        data: Cow<'a, [u8]>,
        /// The predefined operation's handle.
        op: i32,
        /// The code of the primitive type it runs on (`Prim::code`).
        prim: u8,
        /// Whether the old bytes go back.
        fetch: bool,
    },
    /// MPI_Compare_and_swap: the old bytes go back; `data` replaces them if they equal
    /// `compare`.
    Cas {
        /// The element's offset in the window.
        at: u64,
        /// What the element must hold to be replaced.
        compare: Cow<'a, [u8]>,
        /// Its replacement.
        data: Cow<'a, [u8]>,
    },
}

impl Access<'_> {
    /// The operation with its bytes copied: what an origin applies to its own window,
    /// whose memory its origin buffer may share (a put from a window to itself).
    pub fn into_owned(self) -> Access<'static> {
        let own = |c: Cow<'_, [u8]>| Cow::Owned(c.into_owned());
        match self {
            Access::Put { pieces, data } => Access::Put {
                pieces,
                data: own(data),
            },
            Access::Get { pieces } => Access::Get { pieces },
            Access::Acc {
                pieces,
                data,
                op,
                prim,
                fetch,
            } => Access::Acc {
                pieces,
                data: own(data),
                op,
                prim,
                fetch,
            },
            Access::Cas { at, compare, data } => Access::Cas {
                at,
                compare: own(compare),
                data: own(data),
            },
        }
    }

    /// Whether this operation has an answer (its origin waits for one, even of no bytes).
    pub fn answers(&self) -> bool {
        match self {
            Access::Put { .. } => false,
            Access::Get { .. } | Access::Cas { .. } => true,
            Access::Acc { fetch, .. } => *fetch,
        }
    }
}

/// A window's bytes, by piece: one block of memory (offsets into it), or the regions
/// attached to a dynamic window (window addresses; `crate::raw::Attached`).
pub trait Window {
    /// The `len` bytes at `off`: MPI_ERR_RMA_RANGE where they are not the window's.
    fn piece(&mut self, off: u64, len: u64) -> crate::error::Result<&mut [u8]>;

    /// The `len` bytes at `off` to lend to the log (a get's answer, `rma::passive`'s
    /// `Loans`), where the window is one block of memory only this process stores into;
    /// `None` otherwise. The caller must take the loan back before anything may change
    /// those bytes (a request or epoch that writes the window, the program's own stores
    /// once the MPI call returns) and before the window is freed.
    fn lend(&mut self, _off: u64, _len: u64) -> crate::error::Result<Option<&'static [u8]>> {
        Ok(None)
    }
}
