//! The library's global state: the volpex universe and the handle tables, behind one
//! mutex held only for lookups (a blocking call clones what it needs and lets go, so a
//! thread waiting in `MPI_Recv` never blocks another thread's `MPI_Comm_rank`).
//!
//! Lifecycle (MPI-3.1 section 8.7): not initialized, running (after `MPI_Init`),
//! finalized (after `MPI_Finalize`, which drops every object and then the universe).

use std::os::raw::c_int;
use std::sync::Arc;

use parking_lot::Mutex;
use volpex::{Communicator, Group, InterCommunicator, Universe};

use crate::datatype::Datatype;
use crate::error::{MpiError, Result};
use crate::handles::{self, class, ERRORS_ARE_FATAL, ERRORS_RETURN};
use crate::op::{self, Op};
use crate::request::ReqEntry;
use crate::table::Table;

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
    pub topo: Option<crate::topo::Topology>,
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
    pub f: Option<crate::ffi::raw::ErrFn>,
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
    pub copy: Option<crate::ffi::raw::AttrCopy>,
    /// Called when the attribute goes (None: nothing to call).
    pub delete: Option<crate::ffi::raw::AttrDelete>,
    /// The program's extra_state (a pointer from C, a value from Fortran).
    pub extra: usize,
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
    pub dtypes: crate::typeattr::TypeState,
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
    pub files: Table<crate::io::file::FileEntry>,
    /// Windows (MPI_Win_create, MPI_Win_allocate).
    pub wins: Table<crate::rma::window::WinEntry>,
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

/// Joins the job (MPI_Init): builds the tables with their predefined objects.
pub fn init(required: c_int) -> Result<c_int> {
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
    crate::ffi::raw::ignore_sigpipe();
    // A C or Fortran program has no Rust logger of its own: the runtime's diagnostics go
    // to stderr (VOLPEX_LOG).
    volpex::log_to_stderr();
    let universe = volpex::initialize()?;
    let world = universe.world();
    // Every rank creates MPI_COMM_SELF here, first, so the count of communicators created
    // from the world (which names the next one) is the same everywhere.
    let me = world.group().include(&[world.rank()]);
    let Some(me_comm) = world.create(&me) else {
        return Err(MpiError::new(class::INTERN, "cannot make MPI_COMM_SELF"));
    };
    let mut comms = Table::new(handles::TAG_COMM, "communicator", class::COMM);
    let w = (world.rank(), world.size());
    comms.predefine(CommEntry::intra(world, ERRORS_ARE_FATAL, "MPI_COMM_WORLD"));
    comms.predefine(CommEntry::intra(me_comm, ERRORS_ARE_FATAL, "MPI_COMM_SELF"));
    let mut groups = Table::new(handles::TAG_GROUP, "group", class::GROUP);
    groups.predefine(me.exclude(&[0]));
    let mut types = Table::new(handles::TAG_DATATYPE, "datatype", class::TYPE);
    for (i, p) in crate::datatype::predefined::PREDEFINED.iter().enumerate() {
        let mut t = Datatype::predefined(p);
        t.handle = handles::TAG_DATATYPE | (i as c_int + 1);
        types.predefine(Arc::new(t));
    }
    let mut ops = Table::new(handles::TAG_OP, "operation", class::OP);
    for (name, kind) in op::PREDEFINED {
        ops.predefine(Op {
            name,
            kind: *kind,
            user: None,
        });
    }
    let mut errhandlers = Table::new(handles::TAG_ERRHANDLER, "error handler", class::ARG);
    let predefined = ErrEntry {
        f: None,
        kind: ErrKind::Predefined,
    };
    errhandlers.predefine(predefined); // MPI_ERRORS_ARE_FATAL
    errhandlers.predefine(predefined); // MPI_ERRORS_RETURN
                                       // MPI-3.1 section 12.4.3: the level granted is at most what the library supports,
                                       // MPI_THREAD_SERIALIZED (every replica must make the same calls in the same order,
                                       // which calls from several threads at once would not), and at least the one asked
                                       // for when that is lower.
    let provided = required.clamp(handles::THREAD_SINGLE, handles::THREAD_SERIALIZED);
    let infos = {
        let mut t = Table::new(handles::TAG_INFO, "info", class::INFO);
        t.predefine(crate::info::environment(w.1, required)); // MPI_INFO_ENV
        t
    };
    g.state = Some(State {
        universe: Some(universe),
        comms,
        groups,
        types,
        dtypes: crate::typeattr::TypeState::new(),
        ops,
        requests: Table::new(handles::TAG_REQUEST, "request", class::REQUEST),
        errhandlers,
        file_errhandler: ERRORS_RETURN,
        codes: Vec::new(),
        messages: {
            let mut t = Table::new(handles::TAG_MESSAGE, "message", class::REQUEST);
            t.predefine(None); // MPI_MESSAGE_NO_PROC
            t
        },
        keyvals: Table::new(handles::TAG_KEYVAL, "attribute key", class::KEYVAL),
        infos,
        files: Table::new(handles::TAG_FILE, "file", class::FILE),
        wins: Table::new(handles::TAG_WIN, "window", class::WIN),
        thread_level: provided,
        world: w,
        main_thread: std::thread::current().id(),
    });
    g.phase = Phase::Running;
    Ok(provided)
}

/// Leaves the job (MPI_Finalize): drops every request, communicator and object, then the
/// universe, which tells volpexrun this replica finished and serves its log until the
/// whole job is done.
pub fn finalize() -> Result<()> {
    let state = {
        let mut g = GLOBAL.lock();
        if g.phase != Phase::Running {
            return Err(MpiError::new(
                class::OTHER,
                "MPI_Finalize called while MPI is not running",
            ));
        }
        g.phase = Phase::Finalized;
        g.state.take()
    };
    if let Some(mut s) = state {
        s.requests.clear_created();
        s.messages.clear_created();
        s.comms = Table::new(handles::TAG_COMM, "communicator", class::COMM);
        s.groups = Table::new(handles::TAG_GROUP, "group", class::GROUP);
        // Files left open are closed (their descriptors) before the universe goes.
        s.files = Table::new(handles::TAG_FILE, "file", class::FILE);
        s.wins = Table::new(handles::TAG_WIN, "window", class::WIN);
        crate::ft::discard_outputs();
        drop(s.universe.take());
    }
    Ok(())
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
    User(crate::ffi::raw::ErrFn, c_int),
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
