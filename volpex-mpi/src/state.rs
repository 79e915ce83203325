//! The library's global state: the volpex universe and the handle tables, behind one
//! mutex held only for lookups (a blocking call clones what it needs and lets go, so a
//! thread waiting in `MPI_Recv` never blocks another thread's `MPI_Comm_rank`), and what
//! each table's entries hold (`CommEntry`, `ReqEntry`, `FileEntry`, `TypeState`, ...):
//! the entries are defined here, with the table; their operations are in the modules
//! above (`comm`, `request`, `io`, `typeattr`, ...).
//!
//! Lifecycle (MPI-3.1 section 8.7): not initialized, running (after `MPI_Init`),
//! finalized (after `MPI_Finalize`, which drops every object and then the universe);
//! `lifecycle` builds the state and tears it down, this module only holds it. Must never
//! call a module above the tables (the entries' operations are theirs).

use std::os::raw::c_int;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use volpex::{Communicator, Group, InterCommunicator, Universe};

use crate::datatype::envelope::Combiner;
use crate::datatype::Datatype;
use crate::error::{MpiError, Result};
use crate::grequest::Grequest;
use crate::handles::{self, class, MpiStatus, ERRORS_ARE_FATAL, ERRORS_RETURN};
use crate::op::Op;
use crate::raw::{self, Pending, Region};
use crate::table::Table;
use crate::topology::Topology;
use crate::view::View;

/// A communicator and what the C interface keeps with it.
pub struct CommEntry {
    /// The communicator (of an inter-communicator, its point-to-point face: ranks name
    /// the remote group).
    pub comm: Communicator,
    /// The inter-communicator, for one.
    pub inter: Option<InterCommunicator>,
    /// The hints set with MPI_Comm_set_info or given at creation (MPI-3.1 section
    /// 6.4.4), in the order set.
    pub info: Vec<(String, String)>,
    /// Its error handler (MPI_ERRORS_ARE_FATAL or MPI_ERRORS_RETURN).
    pub errhandler: c_int,
    /// Its name (MPI_Comm_set_name).
    pub name: String,
    /// Its process topology, if it has one.
    pub topo: Option<Topology>,
    /// Attributes the program set: (key, value) in the order set.
    pub attrs: Vec<(c_int, usize)>,
}

impl CommEntry {
    /// An intra-communicator's entry, with `errhandler` and `name`.
    pub fn intra(comm: Communicator, errhandler: c_int, name: &str) -> CommEntry {
        CommEntry {
            comm,
            inter: None,
            info: Vec::new(),
            errhandler,
            name: name.into(),
            topo: None,
            attrs: Vec::new(),
        }
    }
}

/// The kind of object an error handler was made for (MPI-3.1 section 8.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrKind {
    /// MPI_ERRORS_ARE_FATAL and MPI_ERRORS_RETURN: any object.
    Predefined,
    /// MPI_Comm_create_errhandler.
    Comm,
    /// MPI_Win_create_errhandler.
    Win,
    /// MPI_File_create_errhandler.
    File,
}

/// An error handler: the program's function, if it is not a predefined handler.
#[derive(Debug, Clone, Copy)]
pub struct ErrEntry {
    /// The function (None: predefined).
    pub f: Option<raw::ErrFn>,
    /// What it was made for.
    pub kind: ErrKind,
}

/// An error code the program added (MPI_Add_error_class, MPI_Add_error_code; MPI-3.1
/// section 8.5).
#[derive(Debug, Clone)]
pub struct UserCode {
    /// Its class (itself for a class).
    pub class: c_int,
    /// The text MPI_Add_error_string gave it (empty until then).
    pub text: String,
}
/// An attribute key the program made.
#[derive(Debug, Clone, Copy)]
pub struct Keyval {
    /// Called on MPI_Comm_dup (None: MPI_COMM_NULL_COPY_FN, not copied).
    pub copy: Option<raw::AttrCopy>,
    /// Called when the attribute goes (None: nothing to call).
    pub delete: Option<raw::AttrDelete>,
    /// The program's extra_state (a pointer from C, a value from Fortran).
    pub extra: usize,
}

/// High byte of every datatype keyval handle (MPI_Type_create_keyval).
pub const TAG_TYPE_KEYVAL: c_int = 0x25 << 24;

/// A copy function (`MPI_Type_copy_attr_function`, or its Fortran form, every argument
/// by reference).
#[derive(Debug, Clone, Copy)]
pub enum CopyFn {
    /// C.
    C(raw::CopyAttrFn),
    /// Fortran.
    Fortran(raw::FortranCopyAttrFn),
}

/// A delete function (`MPI_Type_delete_attr_function`, or its Fortran form).
#[derive(Debug, Clone, Copy)]
pub enum DeleteFn {
    /// C.
    C(raw::DeleteAttrFn),
    /// Fortran.
    Fortran(raw::FortranDeleteAttrFn),
}

/// A datatype keyval.
#[derive(Debug, Clone, Copy)]
pub struct TypeKeyval {
    /// Called by MPI_Type_dup (None: MPI_TYPE_NULL_COPY_FN, not copied).
    pub copy: Option<CopyFn>,
    /// Called when an attribute goes (None: MPI_TYPE_NULL_DELETE_FN).
    pub delete: Option<DeleteFn>,
    /// The program's extra_state.
    pub extra: usize,
    /// MPI_Type_free_keyval was called: attributes that use it stay and are deleted as
    /// usual; it cannot be given to a call any more.
    pub freed: bool,
}

/// The datatype side of the state (its operations are `typeattr`'s).
pub struct TypeState {
    /// Datatype keyvals.
    pub keyvals: Table<TypeKeyval>,
    /// The F90 types made so far: (combiner, integers of the call, handle).
    pub f90: Vec<(Combiner, Vec<c_int>, c_int)>,
}

impl TypeState {
    /// Empty.
    pub fn new() -> TypeState {
        TypeState {
            keyvals: Table::new(TAG_TYPE_KEYVAL, "datatype keyval", class::KEYVAL),
            f90: Vec::new(),
        }
    }
}

impl Default for TypeState {
    fn default() -> Self {
        TypeState::new()
    }
}

/// An operation in flight.
pub enum Active {
    /// A volpex request (a send's is complete from the start).
    Volpex(Pending),
    /// Complete with this status (an operation with MPI_PROC_NULL, a matched receive).
    Done(MpiStatus),
    /// A generalized request: its volpex request completes when the program says so.
    Generalized(Pending, Arc<Grequest>),
}

/// What a persistent request does at each `MPI_Start`.
#[derive(Clone)]
pub struct Persistent {
    /// A send in this mode, or a receive (None).
    pub send: Option<SendMode>,
    /// Communicator handle.
    pub comm: c_int,
    /// The buffer's memory.
    pub region: Region,
    /// Its datatype.
    pub dt: Arc<Datatype>,
    /// Element count.
    pub count: usize,
    /// Destination or source rank.
    pub peer: c_int,
    /// Tag.
    pub tag: c_int,
}

/// A request in the table (its operations are `request`'s).
pub struct ReqEntry {
    /// The operation in flight (None: an inactive persistent request).
    pub active: Option<Active>,
    /// Set for a persistent request.
    pub persistent: Option<Persistent>,
}

/// A send mode (MPI-3.1 section 3.4; `p2p` sends in it, a persistent send keeps it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendMode {
    /// MPI_Send: buffered in the sender log.
    Standard,
    /// MPI_Bsend: the standard mode, once the message fits the attached buffer.
    Buffered,
    /// MPI_Ssend: complete once a receive claimed the message.
    Synchronous,
    /// MPI_Rsend: the receive must be posted already; a pulled message never depends on
    /// that, so it is the standard mode.
    Ready,
}

/// A split collective begun and not ended: its status (section 13.4.5).
#[derive(Clone, Copy)]
pub struct Split {
    /// Bytes the access moved.
    pub bytes: usize,
    /// A write (`_end` of the other direction is erroneous).
    pub write: bool,
}

/// An open file (its operations are `io::file`'s).
pub struct FileEntry {
    /// The file's own communicator (a duplicate of the one it was opened on).
    pub comm: c_int,
    /// Another duplicate, on which only the data blocks of collective writes go
    /// (`io::aggregate`): a stream of one tag, which an aggregator's follower replica may
    /// receive deferred.
    pub blocks: c_int,
    /// Its path as given.
    pub path: PathBuf,
    /// The access mode.
    pub amode: c_int,
    /// The descriptor.
    pub file: Arc<std::fs::File>,
    /// The view.
    pub view: View,
    /// The individual file pointer, in etypes of the view (the shared one is in a file
    /// of its own: `io::shared`).
    pub pos: u64,
    /// Atomic mode (MPI_File_set_atomicity).
    pub atomic: bool,
    /// Hints given at open, MPI_File_set_info and MPI_File_set_view.
    pub info: Vec<(String, String)>,
    /// Its error handler.
    pub errhandler: c_int,
    /// A split collective in progress.
    pub split: Option<Split>,
    /// The ranks that write and read for the others in collective accesses.
    pub aggregators: Arc<[usize]>,
    /// Bytes of each aggregator's domain one round of a collective access moves.
    pub round: u64,
}

/// Where the library is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before MPI_Init.
    NotStarted,
    /// Between MPI_Init and MPI_Finalize.
    Running,
    /// After MPI_Finalize.
    Finalized,
}

/// Everything behind the handles.
pub struct State {
    /// The job this process joined.
    pub universe: Option<Universe>,
    /// Communicators.
    pub comms: Table<CommEntry>,
    /// Groups.
    pub groups: Table<Group>,
    /// Datatypes.
    pub types: Table<Arc<Datatype>>,
    /// Datatype keyvals and the F90 types.
    pub dtypes: TypeState,
    /// Reduction operations.
    pub ops: Table<Op>,
    /// Requests.
    pub requests: Table<ReqEntry>,
    /// Error handlers.
    pub errhandlers: Table<ErrEntry>,
    /// The error handler of MPI_FILE_NULL: what files opened later start with
    /// (MPI-3.1 section 13.7: MPI_ERRORS_RETURN until the program sets another).
    pub file_errhandler: c_int,
    /// Error codes and classes the program added, from MPI_ERR_LASTCODE + 1 on.
    pub codes: Vec<UserCode>,
    /// Messages taken by MPI_Mprobe, until MPI_Mrecv (slot 1, MPI_MESSAGE_NO_PROC, holds
    /// none).
    pub messages: Table<Option<volpex::Message>>,
    /// Attribute keys the program made.
    pub keyvals: Table<Keyval>,
    /// Info objects: (key, value) pairs in the order set.
    pub infos: Table<Vec<(String, String)>>,
    /// Open files (MPI_File_open).
    pub files: Table<FileEntry>,
    /// Windows (MPI_Win_create, MPI_Win_allocate).
    pub wins: Table<crate::window::WinEntry>,
    /// Thread level granted by MPI_Init_thread.
    pub thread_level: c_int,
    /// This process's rank in MPI_COMM_WORLD and world size.
    pub world: (i32, i32),
    /// The thread that called MPI_Init.
    pub main_thread: std::thread::ThreadId,
}

struct Global {
    phase: Phase,
    state: Option<State>,
}

static GLOBAL: Mutex<Global> = Mutex::new(Global {
    phase: Phase::NotStarted,
    state: None,
});

/// Where the library is.
pub fn phase() -> Phase {
    GLOBAL.lock().phase
}

/// Starts the library (MPI_Init): `build` makes the state (the universe joined, the
/// tables with their predefined objects) under the lock, so that no other thread starts
/// or uses MPI meanwhile; it must not use the state itself.
pub fn start(build: impl FnOnce() -> Result<State>) -> Result<()> {
    let mut g = GLOBAL.lock();
    match g.phase {
        Phase::NotStarted => {}
        Phase::Running => return Err(MpiError::new(class::OTHER, "MPI is already initialized")),
        Phase::Finalized => {
            return Err(MpiError::new(
                class::OTHER,
                "MPI cannot be initialized again after MPI_Finalize",
            ))
        }
    }
    g.state = Some(build()?);
    g.phase = Phase::Running;
    Ok(())
}

/// Ends the library (MPI_Finalize): the state, taken out for the caller to tear down.
pub fn stop() -> Result<Option<State>> {
    let mut g = GLOBAL.lock();
    if g.phase != Phase::Running {
        return Err(MpiError::new(
            class::OTHER,
            "MPI_Finalize called while MPI is not running",
        ));
    }
    g.phase = Phase::Finalized;
    Ok(g.state.take())
}

/// Runs `f` on the state, if MPI is running.
pub fn with<R>(f: impl FnOnce(&mut State) -> Result<R>) -> Result<R> {
    let mut g = GLOBAL.lock();
    match (g.phase, g.state.as_mut()) {
        (Phase::Running, Some(s)) => f(s),
        (Phase::NotStarted, _) => Err(MpiError::new(class::OTHER, "called before MPI_Init")),
        _ => Err(MpiError::new(class::OTHER, "called after MPI_Finalize")),
    }
}

/// The communicator behind handle `h` (a clone: it shares the communicator).
pub fn comm(h: c_int) -> Result<Communicator> {
    with(|s| Ok(s.comms.get(h)?.comm.clone()))
}

/// The intra-communicator behind handle `h`: MPI_ERR_COMM for an inter-communicator
/// (`what` names what needs an intra-communicator).
pub fn intra(h: c_int, what: &str) -> Result<Communicator> {
    with(|s| {
        let e = s.comms.get(h)?;
        if e.inter.is_some() {
            return Err(MpiError::new(
                class::COMM,
                format!("{what} needs an intra-communicator; {h:#x} is an inter-communicator"),
            ));
        }
        Ok(e.comm.clone())
    })
}

/// The inter-communicator behind handle `h`, if it is one.
pub fn inter(h: c_int) -> Result<Option<InterCommunicator>> {
    with(|s| Ok(s.comms.get(h)?.inter.clone()))
}

/// The datatype behind handle `h`, committed.
pub fn datatype(h: c_int) -> Result<Arc<Datatype>> {
    with(|s| {
        let t = s.types.get(h)?;
        if !t.committed {
            return Err(MpiError::new(
                class::TYPE,
                format!("datatype {h:#x} ({}) is not committed", t.name),
            ));
        }
        Ok(t.clone())
    })
}

/// The operation behind handle `h`.
pub fn op(h: c_int) -> Result<Op> {
    with(|s| s.ops.get(h).copied())
}

/// What answers an error.
#[derive(Debug, Clone, Copy)]
pub enum Handler {
    /// MPI_ERRORS_ARE_FATAL.
    Fatal,
    /// MPI_ERRORS_RETURN.
    Return,
    /// The program's function (MPI_Comm_create_errhandler), for this communicator.
    User(raw::ErrFn, c_int),
}

/// The error handler of communicator `h`: MPI_COMM_WORLD's if `h` is not a communicator,
/// MPI_ERRORS_ARE_FATAL outside MPI_Init..MPI_Finalize.
pub fn errhandler(h: c_int) -> Handler {
    let g = GLOBAL.lock();
    let Some(s) = g.state.as_ref() else {
        return Handler::Fatal;
    };
    let (comm, e) = match s.comms.get(h) {
        Ok(c) => (h, c.errhandler),
        Err(_) => match s.comms.get(handles::COMM_WORLD) {
            Ok(c) => (handles::COMM_WORLD, c.errhandler),
            Err(_) => return Handler::Fatal,
        },
    };
    s.handler(e, comm)
}

impl State {
    /// What error handler `e` does for object `obj`.
    pub fn handler(&self, e: c_int, obj: c_int) -> Handler {
        match e {
            ERRORS_RETURN => Handler::Return,
            ERRORS_ARE_FATAL => Handler::Fatal,
            other => match self.errhandlers.get(other) {
                Ok(ErrEntry { f: Some(f), .. }) => Handler::User(*f, obj),
                _ => Handler::Fatal,
            },
        }
    }

    /// Error handler `errh`, checked to be one for objects of `kind` (MPI-3.1 section
    /// 8.3: a handler made for another kind of object is MPI_ERR_ARG).
    pub fn errhandler_for(&self, errh: c_int, kind: ErrKind) -> Result<()> {
        let e = self.errhandlers.get(errh)?;
        if e.kind == ErrKind::Predefined || e.kind == kind {
            Ok(())
        } else {
            Err(MpiError::arg(format!(
                "error handler {errh:#x} was made for {:?} objects, not {kind:?} ones",
                e.kind
            )))
        }
    }
}

/// Sets the error handler of communicator `h`.
pub fn set_errhandler(h: c_int, errh: c_int) -> Result<()> {
    with(|s| {
        s.errhandler_for(errh, ErrKind::Comm)?;
        s.comms.get_mut(h)?.errhandler = errh;
        Ok(())
    })
}

/// " (rank R of N)" for fatal error messages, or nothing before MPI_Init.
pub fn whoami() -> String {
    match GLOBAL.try_lock() {
        Some(g) => match g.state.as_ref() {
            Some(s) => format!(" (rank {} of {})", s.world.0, s.world.1),
            None => String::new(),
        },
        None => String::new(),
    }
}
