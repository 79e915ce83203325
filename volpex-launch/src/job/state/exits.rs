//! How a process exit is judged, in the job's state machine: its program's own end (its
//! code is its rank's), a signal, or one of the runtime's own codes (retired, orphaned,
//! drained, an injected crash), which count only when the replica said so first or
//! volpexrun gave cause. An exit whose replica's last words may still be on their way
//! (its control connection is open) is held until that connection closes.
//!
//! Must never do I/O; what follows an exit is an `Action`.

use std::time::Duration;

use nix::sys::signal::Signal;
use volpex_proto::launch::exit::{EXIT_DRAINED, EXIT_FAULT, EXIT_ORPHANED, EXIT_RETIRED};
use volpex_proto::message::ReplicaId;

use super::super::exit_policy;
use super::super::replica::{describe_exit, HeldExit, ReplicaState};
use super::super::step::Action;
use super::JobState;

/// How long an exit waits for its replica's control connection to close
/// (`JobState::exited`).
const EXIT_HOLD: Duration = Duration::from_secs(1);

/// An exit whose code is the runtime's only if the replica said so first.
fn said_first(code: Option<i32>, signal: Option<i32>) -> bool {
    signal.is_none() && matches!(code, Some(EXIT_RETIRED | EXIT_DRAINED))
}

impl JobState {
    pub(super) fn exited(
        &mut self,
        id: ReplicaId,
        inc: u32,
        code: Option<i32>,
        signal: Option<i32>,
    ) {
        let Some(i) = self.find(id, inc) else {
            log::debug!("unknown incarnation {inc} of replica {id} exited; ignored");
            return;
        };
        self.procs[i].exited = true;
        let p = &self.procs[i];
        if p.control_open && p.state.alive() && said_first(code, signal) {
            // Retired or drained, if it said so on its control connection, whose last
            // words come by another way than its exit: judged when the connection closed.
            log::debug!(
                "replica {id} (incarnation {inc}) exited; held until its control connection closes"
            );
            self.procs[i].held_exit = Some(HeldExit {
                code,
                signal,
                seen_at: self.now,
            });
            return;
        }
        self.judge_exit(i, code, signal);
    }

    /// The control connection of an incarnation closed: every word it sent is in, and
    /// its held exit (if any) is judged.
    pub(super) fn control_closed(&mut self, id: ReplicaId, inc: u32) {
        if let Some(i) = self.find(id, inc) {
            self.procs[i].control_open = false;
            if let Some(h) = self.procs[i].held_exit.take() {
                self.judge_exit(i, h.code, h.signal);
                return;
            }
        }
        self.out.push(Action::CloseControl(id, inc));
    }

    /// Exits held longer than `EXIT_HOLD` are judged with what came (from `tick`): a
    /// process that exited closed its connection, but a cut-off host may never say so.
    pub(super) fn judge_held_exits(&mut self, now: Duration) {
        for i in 0..self.procs.len() {
            let due = self.procs[i]
                .held_exit
                .filter(|h| now.saturating_sub(h.seen_at) >= EXIT_HOLD);
            if let Some(h) = due {
                self.procs[i].held_exit = None;
                self.judge_exit(i, h.code, h.signal);
            }
        }
    }

    fn judge_exit(&mut self, i: usize, code: Option<i32>, signal: Option<i32>) {
        let (id, inc) = (self.procs[i].id, self.procs[i].incarnation);
        self.out.push(Action::CloseControl(id, inc));
        self.exit_seen(i, code, signal);
        // Its process is gone: if it wrote its rank's files, its successor may start.
        self.files_ended(i);
    }

    /// Exit code 76 is the runtime's (the replica gave volpexrun up) when volpexrun has
    /// a reason to be given up: it stalled itself, the replica's remote host looked cut
    /// off (a fence on this machine says nothing of volpexrun's link), or
    /// it ends the job and closes what it holds. Otherwise it is the program's own code
    /// (also in a job that failed already: volpexrun ends those replicas by signals).
    fn orphaned_by_us(&self, i: usize) -> bool {
        let h = self.procs[i].host;
        self.stall_note().is_some()
            || (self.hosts[h].agent && self.regen.is_suspect(h))
            || self.shutdown_at.is_some()
            || self.interrupting()
    }

    fn exit_seen(&mut self, i: usize, code: Option<i32>, signal: Option<i32>) {
        let (id, inc) = (self.procs[i].id, self.procs[i].incarnation);
        match self.procs[i].state {
            ReplicaState::Finalized if code == Some(0) && self.shutdown_at.is_some() => {
                self.procs[i].state = ReplicaState::Finished;
            }
            // A program that never called `initialize()` (`volpexrun -n 2 hostname`): it
            // runs as under mpirun, and exiting 0 is finishing.
            ReplicaState::Starting
                if code == Some(0) && signal.is_none() && self.procs[i].addr.is_none() =>
            {
                log::debug!("replica {id} (incarnation {inc}) finished without the library");
                self.procs[i].state = ReplicaState::Finished;
            }
            ReplicaState::Starting | ReplicaState::Running | ReplicaState::Finalized => {
                let why = describe_exit(code, signal);
                log::info!("replica {id} (incarnation {inc}) {why}");
                let armed = match self.procs[i].incarnation {
                    0 => self
                        .exit_faults
                        .iter()
                        .find(|f| f.rank == id.rank && f.replica == id.replica)
                        .copied(),
                    _ => None,
                };
                // Codes 75 (retired) and 77 (drained) are the runtime's only if the
                // replica said so first: a retired one is no longer alive here (its
                // RETIRED message came), a drained one said it drains. Else they are its
                // program's own, as 76 is unless volpexrun gave it cause.
                match (code, signal) {
                    // Drained: handed over to its next incarnation (no longer the current
                    // one, nothing to regenerate), or its grace ended first.
                    (Some(EXIT_DRAINED), None) if self.procs[i].draining => {
                        self.lose(i, ReplicaState::Drained)
                    }
                    // Killed by a user signal volpexrun forwarded: its program's doing
                    // (it does not handle the signal), as under mpirun; a new incarnation
                    // would not escape it. Its rank ends with 128 + S, as mpirun's job.
                    (_, Some(s)) if self.procs[i].forwarded.contains(&s) => {
                        self.program_codes[id.rank as usize]
                            .get_or_insert(exit_policy::interrupted_code(s));
                        self.procs[i].ended_by_forwarded = true;
                        self.mark_dead(
                            i,
                            ReplicaState::Failed(format!(
                                "{why}, which volpexrun forwarded to it (its program does not handle it)"
                            )),
                        )
                    }
                    // An injected crash (`exit@sends`, `exit@choices`), armed in first
                    // incarnations only: not its program's doing. A program that exits
                    // with the same code by itself is failed as with any other code.
                    (Some(EXIT_FAULT), None) if armed.is_some() => {
                        let f = armed.map(|f| f.to_string()).unwrap_or_default();
                        let why = format!(
                            "exited on its injected fault --fault {f} (exit code {EXIT_FAULT})"
                        );
                        self.lose(i, ReplicaState::Failed(why))
                    }
                    // Lost volpexrun's heartbeat: not its program's doing.
                    (Some(EXIT_ORPHANED), None) if self.orphaned_by_us(i) => {
                        let why = format!(
                            "exited: lost volpexrun's heartbeat (exit code {EXIT_ORPHANED})"
                        );
                        self.lose(i, ReplicaState::Failed(why))
                    }
                    // Killed: not its program's doing.
                    (_, Some(_)) => self.lose(i, ReplicaState::Failed(why)),
                    // Its program failed (or exited without finishing): the exit policy's,
                    // and its code is its rank's if the rank is lost.
                    (Some(c), None) => {
                        if c != 0 {
                            self.program_codes[id.rank as usize].get_or_insert(c);
                        }
                        let why = match (c, &self.procs[i].state) {
                            (0, ReplicaState::Starting | ReplicaState::Running) => format!(
                                "{why} without calling MPI_Finalize (a program that initialized must finalize before it exits; in Rust, let the Universe drop)"
                            ),
                            _ => why,
                        };
                        self.mark_dead(i, ReplicaState::Failed(why))
                    }
                    (None, None) => self.mark_dead(i, ReplicaState::Failed(why)),
                }
            }
            // Fenced, but it had ended by itself before the SIGKILL came (a sibling saw
            // its connections close): its own exit is the truer diagnosis.
            ReplicaState::Failed(_)
                if self.procs[i].fenced && signal != Some(Signal::SIGKILL as i32) =>
            {
                let why = describe_exit(code, signal);
                log::info!("replica {id} {why} (before the fence took effect)");
                self.procs[i].state = ReplicaState::Failed(why);
                // Its program's own failure code is its rank's, if the rank is lost.
                if let (Some(c @ 1..), None) = (code, signal) {
                    self.program_codes[id.rank as usize].get_or_insert(c);
                }
            }
            ReplicaState::Finished
            | ReplicaState::Failed(_)
            | ReplicaState::Retired(_)
            | ReplicaState::Ended
            | ReplicaState::Drained => {}
        }
    }
}
