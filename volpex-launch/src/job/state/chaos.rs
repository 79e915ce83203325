//! `--chaos` in the job's state machine: shows the generator the replicas' live states,
//! turns the faults it decides into fault timers (fired like `--fault`'s) and prints each
//! as a `--fault` spec.
//!
//! Must never do I/O or decide a fault itself: the choice is `crate::chaos`'s, the
//! signal `fire_timers`'.

use std::time::Duration;

use super::super::replica::{Replica, ReplicaState};
use super::super::step::Action;
use super::{JobState, Timer};
use crate::chaos::Live;
use crate::fault::FaultAction;

/// What the generator may know of a replica. A new incarnation still catching up counts
/// as gone: it cannot carry its rank alone (it needs a caught-up sibling), so it must not
/// let chaos take that sibling, and it is no target either.
fn live(p: &Replica) -> Live {
    if p.exited || !p.caught_up() {
        return Live::Gone;
    }
    match p.state {
        ReplicaState::Running => Live::Running,
        ReplicaState::Starting | ReplicaState::Finalized => Live::Alive,
        ReplicaState::Finished
        | ReplicaState::Failed(_)
        | ReplicaState::Retired(_)
        | ReplicaState::Ended
        | ReplicaState::Drained => Live::Gone,
    }
}

impl JobState {
    /// Asks the generator for the faults due at `now` while the job runs, and schedules
    /// them; prints every fault decided since the last call (the exits armed at the start
    /// come first).
    pub(super) fn run_chaos(&mut self, now: Duration) {
        let running = self.failure.is_none() && self.shutdown_at.is_none();
        let Some(chaos) = self.chaos.as_mut() else {
            return;
        };
        if !running {
            // The job is over: no more faults, and no deadline left for `next_tick`.
            chaos.stop();
        } else {
            // The current incarnation of every replica.
            let states: Vec<Live> = self.slots.iter().map(|&i| live(&self.procs[i])).collect();
            for fault in chaos.decide(now, &states) {
                let at = match fault.action {
                    FaultAction::Kill(t)
                    | FaultAction::Stop(t)
                    | FaultAction::Cont(t)
                    | FaultAction::Term(t) => t,
                    FaultAction::ExitAfterSends(_) | FaultAction::ExitAfterChoices(_) => continue,
                };
                self.timers.push(Timer { at, fault });
            }
        }
        for f in chaos.take_unreported() {
            self.out.push(Action::Print(format!("chaos: --fault {f}")));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use nix::sys::signal::Signal;
    use volpex_proto::message::ReplicaId;

    use super::super::super::replica::HostState;
    use super::super::super::step::{Action, Input};
    use super::super::{Config, JobState};
    use crate::chaos::{parse_chaos, Chaos};

    fn job(spec: &str, ranks: u32, replicas: u32) -> JobState {
        let config = Config {
            ranks,
            replicas,
            launch_timeout: Duration::from_secs(10),
            heartbeat_timeout: Duration::from_secs(2),
            job_timeout: None,
            faults: Vec::new(),
            chaos: Some(Chaos::new(parse_chaos(spec).unwrap(), ranks, replicas)),
            regenerate: crate::cli::Regenerate::Never,
            max_regenerations: None,
            kill_grace: Duration::from_secs(2),
        };
        let mut st = JobState::new(config, vec![("localhost".into(), HostState::Up)], |_, _| 0);
        for x in 0..ranks {
            for k in 0..replicas {
                let id = ReplicaId::new(x, k);
                st.handle(
                    Input::Spawned {
                        inc: 0,
                        id,
                        pid: 100 + x * 10 + k,
                    },
                    Duration::ZERO,
                );
                let addr = format!("127.0.0.1:{}", 7000 + x * 10 + k);
                st.handle(Input::Registered { inc: 0, id, addr }, Duration::ZERO);
            }
        }
        st
    }

    /// Ticks every 10 ms for `secs`, reporting each SIGKILLed process's exit; returns
    /// every action.
    fn run(st: &mut JobState, secs: u64) -> Vec<Action> {
        let mut all = Vec::new();
        for t in (0..secs * 1000).step_by(10) {
            let now = Duration::from_millis(t);
            let acts = st.tick(now);
            for a in &acts {
                if let Action::Signal {
                    inc: 0,
                    id,
                    signal: Signal::SIGKILL,
                } = a
                {
                    let exit = Input::Exited {
                        inc: 0,
                        id: *id,
                        code: None,
                        signal: Some(9),
                    };
                    all.extend(st.handle(exit, now));
                }
            }
            all.extend(acts);
        }
        all
    }

    #[test]
    fn a_new_incarnation_catching_up_is_neither_a_target_nor_a_sibling() {
        use super::super::super::replica::{Replica, ReplicaState};
        use super::{live, Live};
        let mut p = Replica::newcomer(ReplicaId::new(1, 0), 1, 0, Duration::from_secs(2));
        p.state = ReplicaState::Running;
        assert_eq!(live(&p), Live::Gone);
        p.caught_up_at = Some(Duration::from_secs(3));
        assert_eq!(live(&p), Live::Running);
    }

    #[test]
    fn chaos_faults_are_signals_printed_as_fault_specs_and_never_lose_a_rank() {
        for seed in 0..20 {
            let spec = format!("{seed}:kill=5,stop=5,stop-for=0.1,until=2");
            let mut st = job(&spec, 3, 2);
            let acts = run(&mut st, 3);
            assert!(st.failure().is_none(), "{spec}: {:?}", st.failure());
            let printed = acts
                .iter()
                .filter(|a| matches!(a, Action::Print(t) if t.starts_with("chaos: --fault ")))
                .count();
            let chaos = st.chaos().unwrap();
            assert_eq!(printed, chaos.schedule().len(), "{spec}");
            let signals = acts
                .iter()
                .filter(|a| matches!(a, Action::Signal { inc: 0, .. }))
                .count();
            // Every decided fault is one signal (a stop and its continue are two faults).
            assert_eq!(signals, chaos.schedule().len(), "{spec}: {acts:?}");
            assert!(chaos.timed_count() > 0, "{spec}");
        }
    }

    #[test]
    fn no_fault_and_no_deadline_once_the_job_is_over() {
        let mut st = job("8:kill=100,stop=100", 2, 2);
        st.handle(Input::Interrupted(15), Duration::ZERO);
        let acts = st.tick(Duration::from_secs(1));
        assert!(
            !acts
                .iter()
                .any(|a| matches!(a, Action::Print(t) if t.starts_with("chaos"))),
            "{acts:?}"
        );
        assert_eq!(st.chaos().unwrap().next_at(), None);
        // After the kill grace of the interruption.
        st.tick(Duration::from_secs(3));
        let now = Duration::from_secs(4);
        assert!(st.next_tick(now) > now);
    }

    #[test]
    fn exits_armed_at_the_start_are_printed_at_the_first_tick() {
        let mut st = job("4:exit=1", 2, 3);
        let acts = st.tick(Duration::ZERO);
        let printed: Vec<&Action> = acts
            .iter()
            .filter(|a| matches!(a, Action::Print(t) if t.contains(":exit@sends=")))
            .collect();
        assert_eq!(printed.len(), 4, "{acts:?}");
        assert!(st.tick(Duration::from_millis(10)).is_empty());
    }
}
