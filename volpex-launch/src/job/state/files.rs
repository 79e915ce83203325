//! The program's files, in the job's state machine: reports from the replicas' files
//! connections go to the coordinator (`volpex_files::coordinator`), with the live
//! replicas of the rank as the job knows them; its answers become `Action::SendFiles`.
//! A rank's writer is replaced only once its process is known to be gone: its exit seen
//! here, or, for a process on a host cut off from volpexrun, a heartbeat timeout after it
//! was declared dead (by then it ended itself: it heard nothing from volpexrun).
//!
//! A file the writer could not write (a full disk, a quota, a read-only directory) fails
//! the job at its end, naming the file and the reason; replicas that wrote different
//! bytes (`VOLPEX_VERIFY_OUTPUT=1`) fail it at once. Must never do I/O.

use std::time::Duration;

use volpex_files::coordinator::{Effect, Live};
use volpex_proto::message::ReplicaId;

use super::super::step::Action;
use super::JobState;

/// volpexrun's exit code when a file could not be written or replicas wrote different
/// bytes (sysexits' EX_IOERR).
pub const EXIT_FILES: i32 = 74;

impl JobState {
    /// The rank's live replicas.
    fn alive_of(&self, rank: u32) -> Vec<Live> {
        (0..self.replicas)
            .map(|k| &self.procs[self.idx(ReplicaId::new(rank, k))])
            .filter(|p| p.state.alive())
            .map(|p| Live {
                replica: p.id.replica,
                incarnation: p.incarnation,
                caught_up: p.caught_up(),
            })
            .collect()
    }

    /// A report on the files connection of `procs[i]`.
    pub(super) fn files_report(&mut self, i: usize, bytes: &[u8]) {
        let (id, inc) = (self.procs[i].id, self.procs[i].incarnation);
        let alive = self.alive_of(id.rank);
        let effects = self.files.report(id.rank, id.replica, inc, bytes, &alive);
        self.files_effects(effects);
    }

    /// The rank's live replicas changed.
    pub(super) fn files_membership(&mut self, rank: u32) {
        let alive = self.alive_of(rank);
        let effects = self.files.membership(rank, &alive);
        self.files_effects(effects);
    }

    /// The process of `procs[i]` is gone for sure.
    pub(super) fn files_ended(&mut self, i: usize) {
        let (id, inc) = (self.procs[i].id, self.procs[i].incarnation);
        let alive = self.alive_of(id.rank);
        let effects = self.files.ended(id.rank, id.replica, inc, &alive);
        self.files_effects(effects);
    }

    /// The process of `procs[i]` was on a host cut off from volpexrun: it is counted gone
    /// for the files `wait` from now.
    pub(super) fn files_ended_later(&mut self, i: usize, wait: Duration) {
        self.files_ends.push((self.now + wait, i));
    }

    /// Ends that came due (from `tick`).
    pub(super) fn files_due(&mut self, now: Duration) {
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.files_ends)
            .into_iter()
            .partition(|(t, _)| *t <= now);
        self.files_ends = later;
        for (_, i) in due {
            self.files_ended(i);
        }
    }

    fn files_effects(&mut self, effects: Vec<Effect>) {
        for e in effects {
            match e {
                Effect::Send {
                    rank,
                    replica,
                    incarnation,
                    bytes,
                } => self.out.push(Action::SendFiles {
                    to: ReplicaId::new(rank, replica),
                    inc: incarnation,
                    bytes,
                }),
                Effect::Damaged { message, .. } => {
                    self.out.push(Action::Print(format!("error: {message}")));
                    self.files_damaged.push(message);
                }
                Effect::Mismatch { rank, message } => {
                    if self.failure.is_none() {
                        let now = self.now;
                        self.fail(message, EXIT_FILES, Some(rank), now);
                    }
                }
                Effect::Note { message, .. } => self.out.push(Action::Print(message)),
            }
        }
    }

    /// The first file that could not be written, if any: the job fails with it.
    pub(super) fn files_failure(&self) -> Option<&str> {
        self.files_damaged.first().map(String::as_str)
    }
}
