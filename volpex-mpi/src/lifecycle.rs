//! MPI_Init and MPI_Finalize (MPI-3.1 section 8.7): joining the job and building the
//! state with its predefined objects (MPI_COMM_WORLD and MPI_COMM_SELF, the predefined
//! datatypes, operations and error handlers, MPI_INFO_ENV), and tearing it down in the
//! order the runtime needs (requests, communicators and files before the universe).
//!
//! Owns the order of the two; must never keep state of its own (`state` holds it).

use std::os::raw::c_int;
use std::sync::Arc;

use crate::datatype::{predefined, Datatype};
use crate::error::{MpiError, Result};
use crate::handles::{self, class, ERRORS_ARE_FATAL, ERRORS_RETURN};
use crate::op::{self, Op};
use crate::state::{self, CommEntry, ErrEntry, ErrKind, State};
use crate::table::Table;
use crate::{ft, info, raw};

/// Joins the job (MPI_Init): builds the tables with their predefined objects.
pub fn init(required: c_int) -> Result<c_int> {
    // MPI-3.1 section 12.4.3: the level granted is at most what the library supports,
    // MPI_THREAD_SERIALIZED (every replica must make the same calls in the same order,
    // which calls from several threads at once would not), and at least the one asked
    // for when that is lower.
    let provided = required.clamp(handles::THREAD_SINGLE, handles::THREAD_SERIALIZED);
    state::start(|| build(required, provided))?;
    Ok(provided)
}

/// The state MPI_Init makes: the universe joined, the tables with their predefined
/// objects, thread level `provided` granted for `required`.
fn build(required: c_int, provided: c_int) -> Result<State> {
    raw::ignore_sigpipe();
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
    for (i, p) in predefined::PREDEFINED.iter().enumerate() {
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
    let infos = {
        let mut t = Table::new(handles::TAG_INFO, "info", class::INFO);
        t.predefine(info::environment(w.1, required)); // MPI_INFO_ENV
        t
    };
    Ok(State {
        universe: Some(universe),
        comms,
        groups,
        types,
        dtypes: state::TypeState::new(),
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
    })
}

/// Leaves the job (MPI_Finalize): drops every request, communicator and object, then the
/// universe, which tells volpexrun this replica finished and serves its log until the
/// whole job is done.
pub fn finalize() -> Result<()> {
    if let Some(mut s) = state::stop()? {
        s.requests.clear_created();
        s.messages.clear_created();
        s.comms = Table::new(handles::TAG_COMM, "communicator", class::COMM);
        s.groups = Table::new(handles::TAG_GROUP, "group", class::GROUP);
        // Files left open are closed (their descriptors) before the universe goes.
        s.files = Table::new(handles::TAG_FILE, "file", class::FILE);
        s.wins = Table::new(handles::TAG_WIN, "window", class::WIN);
        ft::discard_outputs();
        drop(s.universe.take());
    }
    Ok(())
}
