//! The job's state machine driven by hand: inputs and a clock in, actions checked.

use std::time::Duration;

use nix::sys::signal::Signal;
use volpex_proto::launch::exit::{EXIT_DRAINED, EXIT_ORPHANED, EXIT_RETIRED};
use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::{ReplicaStats, ToLauncher, ToProcess};

use super::super::exit_policy::Verdict;
use super::super::replica::{HostState, ReplicaState};
use super::super::step::{Action, Input};
use super::{Config, JobState};
use crate::cli::Regenerate;
use crate::fault::parse_fault;
use regenerate::{msg, prints, regen, spawns};

fn s(secs: f64) -> Duration {
    Duration::from_secs_f64(secs)
}

fn id(rank: u32, replica: u32) -> ReplicaId {
    ReplicaId::new(rank, replica)
}

fn config(ranks: u32, replicas: u32) -> Config {
    Config {
        ranks,
        replicas,
        launch_timeout: s(10.0),
        heartbeat_timeout: s(2.0),
        job_timeout: None,
        faults: Vec::new(),
        chaos: None,
        regenerate: Regenerate::Never,
        max_regenerations: None,
        kill_grace: s(2.0),
    }
}

/// Every replica on this machine.
fn local(config: Config) -> JobState {
    JobState::new(config, vec![("localhost".into(), HostState::Up)], |_, _| 0)
}

/// Replica k of every rank on remote host `hk`, every agent running.
fn remote(config: Config) -> JobState {
    let hosts = (0..config.replicas)
        .map(|k| (format!("h{k}"), HostState::Launching))
        .collect();
    let mut st = JobState::new(config, hosts, |_, k| k as usize);
    for h in 0..st.hosts().len() {
        st.handle(Input::LinkOpened { host: h }, s(0.0));
    }
    st
}

fn register(st: &mut JobState, who: ReplicaId, now: Duration) -> Vec<Action> {
    let addr = format!("10.0.0.{}:{}", who.rank, 7000 + who.replica);
    st.handle(
        Input::Registered {
            inc: 0,
            id: who,
            addr,
        },
        now,
    )
}

/// Registers every replica and sends the table.
fn running(mut st: JobState) -> JobState {
    let ids: Vec<ReplicaId> = st.replicas().iter().map(|p| p.id).collect();
    for who in ids {
        register(&mut st, who, s(0.0));
    }
    let sent = st.tick(s(0.1));
    assert!(sent.iter().any(|a| matches!(
        a,
        Action::Send {
            msg: ToProcess::Table { .. },
            ..
        }
    )));
    st
}

fn finalized(st: &mut JobState, who: ReplicaId) -> Vec<Action> {
    let msg = ToLauncher::Finalized {
        stats: ReplicaStats::default(),
    };
    st.handle(
        Input::Message {
            inc: 0,
            id: who,
            msg,
        },
        s(1.0),
    )
}

/// Incarnation 0 of `who`'s control connection closed at `now`.
pub(super) fn closed(st: &mut JobState, who: ReplicaId, now: Duration) -> Vec<Action> {
    st.handle(Input::ControlClosed { id: who, inc: 0 }, now)
}

fn exited(
    st: &mut JobState,
    who: ReplicaId,
    code: Option<i32>,
    signal: Option<i32>,
) -> Vec<Action> {
    st.handle(
        Input::Exited {
            inc: 0,
            id: who,
            code,
            signal,
        },
        s(1.0),
    )
}

fn state(st: &JobState, who: ReplicaId) -> ReplicaState {
    st.replica(who).state.clone()
}

fn kill(who: ReplicaId) -> Action {
    Action::Signal {
        inc: 0,
        id: who,
        signal: Signal::SIGKILL,
    }
}

fn stop(who: ReplicaId) -> Action {
    Action::Signal {
        inc: 0,
        id: who,
        signal: Signal::SIGSTOP,
    }
}

fn death(to: ReplicaId, of: ReplicaId) -> Action {
    Action::Send {
        to,
        msg: ToProcess::Death {
            rank: of.rank,
            replica: of.replica,
            incarnation: 0,
        },
    }
}

#[test]
fn the_table_goes_out_once_everyone_registered() {
    let mut st = local(config(2, 2));
    assert_eq!(
        register(&mut st, id(0, 0), s(0.0)),
        [Action::KeepControl(id(0, 0), 0)]
    );
    // A second registration is ignored: its connection is not kept.
    assert_eq!(register(&mut st, id(0, 0), s(0.0)), []);
    register(&mut st, id(0, 1), s(0.0));
    register(&mut st, id(1, 0), s(0.0));
    assert_eq!(st.tick(s(0.5)), [], "1.1 has its grace");
    register(&mut st, id(1, 1), s(0.6));
    let actions = st.tick(s(0.6));
    let to: Vec<ReplicaId> = actions
        .iter()
        .map(|a| match a {
            Action::Send {
                to,
                msg: ToProcess::Table { addrs, .. },
            } => {
                assert_eq!(addrs[1][1].as_deref(), Some("10.0.0.1:7001"));
                *to
            }
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(to, [id(0, 0), id(0, 1), id(1, 0), id(1, 1)]);
    assert_eq!(st.tick(s(0.7)), [], "the table goes out once");
}

#[test]
fn a_replica_that_does_not_register_is_ended_after_the_grace() {
    let mut st = local(config(1, 2));
    register(&mut st, id(0, 0), s(0.0));
    assert_eq!(st.tick(s(0.0)), []);
    assert_eq!(st.tick(s(2.9)), []);
    let actions = st.tick(s(3.0));
    assert!(actions.contains(&kill(id(0, 1))), "{actions:?}");
    assert!(actions.contains(&Action::Send {
        to: id(0, 0),
        msg: ToProcess::Table {
            addrs: vec![vec![Some("10.0.0.0:7000".into()), None]],
            starting: vec![],
            incarnations: vec![vec![0, 0]],
            catch_up: None,
        }
    }));
    assert_eq!(
        state(&st, id(0, 1)),
        ReplicaState::Failed("did not register in time".into())
    );
}

#[test]
fn the_job_succeeds_when_every_rank_finishes() {
    let mut st = running(local(config(2, 1)));
    assert_eq!(finalized(&mut st, id(0, 0)), []);
    assert_eq!(st.tick(s(1.0)), []);
    finalized(&mut st, id(1, 0));
    let shutdown = |to| Action::Send {
        to,
        msg: ToProcess::Shutdown,
    };
    assert_eq!(st.tick(s(1.0)), [shutdown(id(0, 0)), shutdown(id(1, 0))]);
    exited(&mut st, id(0, 0), Some(0), None);
    assert!(!st.all_exited());
    exited(&mut st, id(1, 0), Some(0), None);
    assert!(st.all_exited());
    assert_eq!(state(&st, id(1, 0)), ReplicaState::Finished);
    assert_eq!(st.verdict(), Verdict::Succeeded);
}

/// The slower team's replicas are all stopped before the first of them is killed: one
/// still running when another dies would see its connections close and fail over from it
/// (the MPI-IO benchmark at `-r 2` counted 3 failovers so with nothing failed).
#[test]
fn replicas_ended_at_shutdown_are_all_stopped_before_any_is_killed() {
    let mut st = running(local(config(3, 2)));
    for r in 0..3 {
        finalized(&mut st, id(r, 0));
    }
    let actions = st.tick(s(1.0));
    let signals: Vec<Action> = actions
        .into_iter()
        .filter(|a| matches!(a, Action::Signal { .. }))
        .collect();
    let team1 = [id(0, 1), id(1, 1), id(2, 1)];
    let expected: Vec<Action> = team1
        .iter()
        .map(|&r| stop(r))
        .chain(team1.iter().map(|&r| kill(r)))
        .collect();
    assert_eq!(signals, expected);
}

#[test]
fn slower_siblings_are_ended_when_every_rank_completed() {
    let mut st = running(local(config(1, 2)));
    finalized(&mut st, id(0, 0));
    let actions = st.tick(s(1.0));
    assert_eq!(
        actions,
        [
            Action::Send {
                to: id(0, 0),
                msg: ToProcess::Shutdown
            },
            stop(id(0, 1)),
            kill(id(0, 1))
        ]
    );
    assert_eq!(state(&st, id(0, 1)), ReplicaState::Ended);
    // Its exit announces nothing: it was ended on purpose.
    assert_eq!(
        exited(&mut st, id(0, 1), None, Some(9)),
        [Action::CloseControl(id(0, 1), 0)]
    );
    assert_eq!(state(&st, id(0, 1)), ReplicaState::Ended);
    exited(&mut st, id(0, 0), Some(0), None);
    assert_eq!(st.verdict(), Verdict::Succeeded);
}

#[test]
fn a_death_is_announced_to_the_living_only() {
    let mut st = running(local(config(2, 2)));
    exited(&mut st, id(1, 1), Some(3), None);
    let actions = exited(&mut st, id(0, 1), Some(3), None);
    assert_eq!(
        actions,
        [
            Action::CloseControl(id(0, 1), 0),
            death(id(0, 0), id(0, 1)),
            death(id(1, 0), id(0, 1)),
        ]
    );
    assert_eq!(
        state(&st, id(0, 1)),
        ReplicaState::Failed("exited with code 3".into())
    );
    assert_eq!(st.tick(s(1.0)), [], "every rank still has a replica");
    assert_eq!(st.failure(), None);
}

#[test]
fn a_rank_without_replicas_fails_the_job() {
    let mut st = running(local(config(2, 2)));
    exited(&mut st, id(1, 0), Some(3), None);
    exited(&mut st, id(1, 1), None, Some(9));
    let actions = st.tick(s(1.0));
    assert_eq!(
        actions,
        [
            Action::Mute(Some(1)),
            kill(id(0, 0)),
            kill(id(0, 1)),
            Action::EndAgents
        ]
    );
    let why =
        "rank 1 lost: all 2 replicas failed (1.0: exited with code 3; 1.1: killed by SIGKILL)";
    assert_eq!(st.failure(), Some(why));
    assert_eq!(state(&st, id(0, 0)), ReplicaState::Ended);
    exited(&mut st, id(0, 0), None, Some(9));
    exited(&mut st, id(0, 1), None, Some(9));
    assert!(st.all_exited());
    // The rank's own program exited with 3: the job's exit code, as mpirun's.
    assert_eq!(
        st.verdict(),
        Verdict::Failed {
            why: why.into(),
            code: 3
        }
    );
    assert_eq!(st.verdict().exit_code(), 3);
}

#[test]
fn a_retired_replica_keeps_the_reason_it_sent() {
    let mut st = running(local(config(1, 2)));
    // Its exit came before its RETIRED message: judged when its control connection
    // closed, once every word it sent is in.
    exited(&mut st, id(0, 1), Some(EXIT_RETIRED), None);
    assert_eq!(state(&st, id(0, 1)), ReplicaState::Running, "held");
    let reason = "replica 0.1 fell behind the sender logs".to_string();
    let actions = st.handle(
        Input::Message {
            inc: 0,
            id: id(0, 1),
            msg: ToLauncher::Retired {
                reason: reason.clone(),
            },
        },
        s(1.0),
    );
    assert_eq!(
        prints(&actions),
        [format!("{reason}; the job goes on without it")]
    );
    assert_eq!(
        prints(&closed(&mut st, id(0, 1), s(1.0))),
        Vec::<String>::new()
    );
    assert_eq!(state(&st, id(0, 1)), ReplicaState::Retired(reason));
    assert!(st.failure().is_none());
}

/// Exit codes 75, 76 and 77 from a replica that said nothing are its program's own: the
/// rank fails with that code, nothing is regenerated. 76 is the runtime's (orphaned)
/// only when volpexrun gave cause; an exit held for its last words is judged at the
/// latest a second later even if the connection never says it closed.
#[test]
fn a_programs_own_exit_with_a_runtime_code_is_its_own() {
    for code in [EXIT_RETIRED, EXIT_ORPHANED, EXIT_DRAINED] {
        let mut st = running(local(regen(1, 2, Regenerate::Spare)));
        for k in 0..2 {
            exited(&mut st, id(0, k), Some(code), None);
            assert_eq!(spawns(&closed(&mut st, id(0, k), s(1.0))), [], "{code}");
            assert_eq!(
                state(&st, id(0, k)),
                ReplicaState::Failed(format!("exited with code {code}")),
                "{code}"
            );
            // The job failed with the first: the second's exit is still its own.
            st.tick(s(1.0));
        }
        st.tick(s(1.1));
        assert_eq!(st.verdict().exit_code(), code);
    }
    // The sibling saw the first exit's connections close and had it fenced before its
    // exit came in (so a new incarnation starts): the rank still ends with its
    // program's code, and a fence on this machine is no reason to give volpexrun up.
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    let fence = ToLauncher::Fence {
        rank: 1,
        replica: 1,
        incarnation: 0,
    };
    msg(&mut st, id(1, 0), 0, fence, s(1.0));
    for k in [1, 0] {
        exited(&mut st, id(1, k), Some(EXIT_ORPHANED), None);
        closed(&mut st, id(1, k), s(1.0));
    }
    st.tick(s(1.2));
    assert_eq!(
        state(&st, id(1, 0)),
        ReplicaState::Failed(format!("exited with code {EXIT_ORPHANED}"))
    );
    assert_eq!(st.verdict().exit_code(), EXIT_ORPHANED);
    // Fenced while its exit waits for its last words: the exit decides, nothing starts.
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    exited(&mut st, id(1, 1), Some(EXIT_RETIRED), None);
    let fence = ToLauncher::Fence {
        rank: 1,
        replica: 1,
        incarnation: 0,
    };
    assert_eq!(spawns(&msg(&mut st, id(1, 0), 0, fence, s(1.0))), []);
    closed(&mut st, id(1, 1), s(1.0));
    assert_eq!(
        state(&st, id(1, 1)),
        ReplicaState::Failed(format!("exited with code {EXIT_RETIRED}"))
    );
    // The connection never says it closed: judged after the hold all the same.
    let mut st = running(local(regen(1, 2, Regenerate::Spare)));
    exited(&mut st, id(0, 0), Some(EXIT_DRAINED), None);
    assert_eq!(spawns(&st.tick(s(1.5))), [], "held");
    assert_eq!(state(&st, id(0, 0)), ReplicaState::Running);
    st.tick(s(2.0));
    assert_eq!(
        state(&st, id(0, 0)),
        ReplicaState::Failed(format!("exited with code {EXIT_DRAINED}"))
    );
}

#[test]
fn fencing_ends_a_working_replica_and_nothing_else() {
    let mut st = running(local(config(1, 3)));
    let fence = |st: &mut JobState, by, rank, replica| {
        let msg = ToLauncher::Fence {
            rank,
            replica,
            incarnation: 0,
        };
        st.handle(
            Input::Message {
                inc: 0,
                id: by,
                msg,
            },
            s(1.0),
        )
    };
    assert_eq!(fence(&mut st, id(0, 0), 0, 0), [], "not itself");
    assert_eq!(fence(&mut st, id(0, 0), 3, 0), [], "not outside the job");
    // On this machine a fence waits a moment for the replica's exit.
    assert_eq!(fence(&mut st, id(0, 0), 0, 1), [], "held");
    assert_eq!(st.next_tick(s(1.0)), s(1.2));
    assert_eq!(st.tick(s(1.1)), []);
    finalized(&mut st, id(0, 2));
    assert_eq!(fence(&mut st, id(0, 0), 0, 2), [], "not a finished replica");
    // (Then the job ends: 0.2 finished.)
    let actions = st.tick(s(1.2));
    assert_eq!(
        actions[..4],
        [
            Action::Live("replica 0.1 is unresponsive to 0.0; ending it".into()),
            kill(id(0, 1)),
            death(id(0, 0), id(0, 1)),
            death(id(0, 2), id(0, 1)),
        ]
    );
    assert_eq!(
        state(&st, id(0, 1)),
        ReplicaState::Failed("fenced: unresponsive to replica 0.0".into())
    );
    assert_eq!(fence(&mut st, id(0, 2), 0, 1), [], "once");
    // The SIGKILL did it: the fence stays the diagnosis.
    exited(&mut st, id(0, 1), None, Some(Signal::SIGKILL as i32));
    assert_eq!(
        state(&st, id(0, 1)),
        ReplicaState::Failed("fenced: unresponsive to replica 0.0".into())
    );
}

/// A sibling asks to fence a replica on this machine whose connections closed because
/// its program exited: the exit, a moment later, decides; no fence, nothing regenerated.
#[test]
fn a_fence_waits_a_moment_for_the_exit_of_a_replica_here() {
    let mut st = running(local(regen(1, 2, Regenerate::Spare)));
    let fence = ToLauncher::Fence {
        rank: 0,
        replica: 1,
        incarnation: 0,
    };
    assert_eq!(msg(&mut st, id(0, 0), 0, fence, s(1.0)), []);
    exited(&mut st, id(0, 1), Some(3), None);
    let actions = st.tick(s(1.3));
    assert_eq!(spawns(&actions), []);
    assert!(
        !actions.iter().any(|a| matches!(a, Action::Live(_))),
        "{actions:?}"
    );
    assert_eq!(
        state(&st, id(0, 1)),
        ReplicaState::Failed("exited with code 3".into())
    );
}

#[test]
fn fault_timers_fire_at_their_time() {
    let mut c = config(1, 2);
    c.faults = vec![parse_fault("0.1:kill@1").expect("a fault")];
    let mut st = running(local(c));
    assert_eq!(st.next_tick(s(0.1)), s(0.3));
    assert_eq!(st.next_tick(s(0.9)), s(1.0));
    assert_eq!(st.tick(s(0.99)), []);
    let actions = st.tick(s(1.0));
    assert_eq!(actions, [kill(id(0, 1)), death(id(0, 0), id(0, 1))]);
    assert_eq!(
        state(&st, id(0, 1)),
        ReplicaState::Failed("killed by SIGKILL (fault injection)".into())
    );
    assert_eq!(st.tick(s(2.0)), [], "once");
}

#[test]
fn an_interrupt_ends_every_process_once() {
    let mut st = running(local(config(1, 2)));
    exited(&mut st, id(0, 1), Some(1), None);
    let actions = st.handle(Input::Interrupted(2), s(1.0));
    // Forwarded to the living, as mpirun does; SIGKILL after the grace.
    assert_eq!(
        actions,
        [
            Action::Signal {
                id: id(0, 0),
                inc: 0,
                signal: Signal::SIGINT
            },
            Action::Print(
                "interrupted by SIGINT: forwarded to every process; SIGKILL to those left in 2.0 s (--kill-grace)"
                    .into()
            )
        ]
    );
    assert_eq!(
        st.failure(),
        Some("interrupted by SIGINT; forwarded it to every process")
    );
    assert_eq!(st.verdict().exit_code(), 130);
    // Its exit is an ending, not a death to regenerate or announce.
    assert_eq!(state(&st, id(0, 0)), ReplicaState::Ended);
    assert_eq!(st.next_tick(s(2.9)), s(3.0));
    assert_eq!(st.tick(s(2.9)), []);
    let actions = st.tick(s(3.0));
    assert!(actions.contains(&kill(id(0, 0))), "{actions:?}");
    assert_eq!(st.tick(s(3.1)), [], "once");
    exited(&mut st, id(0, 0), None, Some(9));
    assert!(st.all_exited());
    assert_eq!(st.verdict().exit_code(), 130);
}

/// SIGUSR1 and SIGUSR2 go to every live process and the job goes on, as under mpirun
/// (they ended volpexrun alone and orphaned the job's processes).
#[test]
fn user_signals_are_forwarded_and_end_nothing() {
    let mut st = running(local(config(1, 2)));
    exited(&mut st, id(0, 1), Some(1), None);
    for (sig, signal) in [(10, Signal::SIGUSR1), (12, Signal::SIGUSR2)] {
        let actions = st.handle(Input::Interrupted(sig), s(1.0));
        assert_eq!(
            actions,
            [
                Action::Signal {
                    id: id(0, 0),
                    inc: 0,
                    signal
                },
                Action::Print(format!("{signal}: forwarded to every process"))
            ]
        );
        assert_eq!(st.failure(), None);
        assert!(!st.interrupting());
    }
}

#[test]
fn a_second_interrupt_kills_at_once() {
    let mut st = running(local(config(1, 2)));
    st.handle(Input::Interrupted(15), s(1.0));
    let actions = st.handle(Input::Interrupted(15), s(1.1));
    assert!(actions.contains(&kill(id(0, 0))), "{actions:?}");
    assert!(actions.contains(&kill(id(0, 1))), "{actions:?}");
    assert_eq!(st.verdict().exit_code(), 143);
}

#[test]
fn a_preemption_notice_after_an_interrupt_is_an_ending() {
    let mut st = running(local(Config {
        regenerate: Regenerate::Spare,
        ..config(1, 2)
    }));
    st.handle(Input::Interrupted(15), s(1.0));
    let actions = st.handle(
        Input::Message {
            id: id(0, 1),
            inc: 0,
            msg: volpex_proto::wire::control::ToLauncher::Draining {
                grace_ms: 30_000,
                checkpoints: 0,
            },
        },
        s(1.1),
    );
    assert_eq!(actions, [kill(id(0, 1))]);
    exited(&mut st, id(0, 1), None, Some(9));
    exited(&mut st, id(0, 0), None, Some(15));
    assert!(st.all_exited(), "no new incarnation");
    assert_eq!(st.replicas().len(), 2);
}

#[test]
fn a_program_that_never_initializes_finishes_by_exiting_0() {
    let mut st = local(config(2, 1));
    st.tick(s(0.1));
    exited(&mut st, id(0, 0), Some(0), None);
    exited(&mut st, id(1, 0), Some(0), None);
    st.tick(s(0.2));
    assert!(st.all_exited());
    assert_eq!(st.verdict(), Verdict::Succeeded);
}

#[test]
fn a_program_that_never_initializes_runs_past_the_rendezvous_deadline() {
    let mut st = local(config(2, 1));
    let late = super::RENDEZVOUS_TIMEOUT + s(100.0);
    assert_eq!(st.tick(late), []);
    exited(&mut st, id(0, 0), Some(0), None);
    let actions = st.tick(late + s(1.0));
    assert!(!actions.contains(&kill(id(1, 0))), "{actions:?}");
    // Its own code is the job's: `exit 3`.
    exited(&mut st, id(1, 0), Some(3), None);
    st.tick(late + s(2.0));
    assert!(st.all_exited());
    assert_eq!(st.verdict().exit_code(), 3);
}

#[test]
fn the_job_timeout_names_the_ranks_not_finished() {
    let mut c = config(3, 1);
    c.job_timeout = Some(s(5.0));
    let mut st = running(local(c));
    finalized(&mut st, id(1, 0));
    assert_eq!(st.next_tick(s(4.9)), s(5.0));
    assert_eq!(st.tick(s(4.9)), []);
    st.tick(s(5.0));
    assert_eq!(
        st.failure(),
        Some("job timed out after 5.0 s (ranks not finished: 0, 2)")
    );
}

#[test]
fn replicas_that_do_not_exit_after_shutdown_are_killed() {
    let mut st = running(local(config(1, 1)));
    finalized(&mut st, id(0, 0));
    st.tick(s(1.0));
    assert_eq!(st.tick(s(10.9)), []);
    assert_eq!(st.tick(s(11.0)), [kill(id(0, 0))]);
    exited(&mut st, id(0, 0), None, Some(9));
    assert_eq!(
        st.verdict(),
        Verdict::Failed {
            why: "rank 0: no replica finished cleanly".into(),
            code: super::super::exit_policy::EXIT_RANK_LOST
        }
    );
}

#[test]
fn a_host_that_never_answers_is_unreachable_after_the_launch_timeout() {
    let mut st = remote(config(2, 2));
    st.handle(
        Input::Hello {
            host: 0,
            hostname: "h0".into(),
            pid: 1,
        },
        s(0.5),
    );
    assert_eq!(st.tick(s(9.9)), []);
    let actions = st.tick(s(10.0));
    let why = "no answer within --launch-timeout 10.0 s";
    assert!(actions.contains(&Action::CutHost(1)), "{actions:?}");
    assert!(actions.contains(&Action::Print(format!(
        "host h1 unreachable: {why}; its replicas 0.1 1.1 are lost"
    ))));
    assert!(!actions.contains(&Action::CutHost(0)));
    assert_eq!(
        state(&st, id(1, 1)),
        ReplicaState::Failed(format!("host h1 unreachable: {why}"))
    );
    assert!(st.replica(id(1, 1)).exited);
    assert_eq!(st.hosts()[0].state, HostState::Up);
    assert_eq!(st.failure(), None);
}

#[test]
fn the_job_cannot_start_without_a_reachable_replica_of_every_rank() {
    let mut st = remote(config(2, 2));
    let why = "remote shell exited with code 255 (ssh: connect to host h1: refused)";
    st.handle(
        Input::HostLost {
            host: 1,
            why: why.into(),
        },
        s(0.0),
    );
    assert_eq!(st.failure(), None);
    st.handle(
        Input::HostLost {
            host: 0,
            why: "cannot stage the program: no".into(),
        },
        s(0.0),
    );
    assert_eq!(
        st.failure(),
        Some(
            "cannot start the job: ranks 0, 1 have no replica on a reachable host; \
             unreachable: h0 (cannot stage the program: no); h1 (remote shell exited with code 255 \
             (ssh: connect to host h1: refused))"
        )
    );
}

#[test]
fn agents_name_only_their_own_replicas() {
    let mut st = remote(config(1, 2));
    let started = |host, replica| Input::Started {
        inc: 0,
        host,
        rank: 0,
        replica,
        pid: 4242,
    };
    st.handle(started(0, 1), s(0.1));
    assert_eq!(st.replica(id(0, 1)).pid, 0, "0.1 runs on h1");
    st.handle(started(1, 1), s(0.1));
    assert_eq!(st.replica(id(0, 1)).pid, 4242);
    let failed = Input::StartFailed {
        inc: 0,
        host: 0,
        rank: 7,
        replica: 0,
        error: "x".into(),
    };
    assert_eq!(st.handle(failed, s(0.1)), [], "not a replica of the job");
    let failed = Input::StartFailed {
        inc: 0,
        host: 1,
        rank: 0,
        replica: 1,
        error: "cannot start prog: not found".into(),
    };
    let actions = st.handle(failed, s(0.1));
    assert_eq!(
        actions,
        [
            Action::Print("cannot start prog: not found".into()),
            death(id(0, 0), id(0, 1)),
            Action::ForgetPipes { host: 1, count: 2 }
        ]
    );
}

#[test]
fn a_silent_remote_replica_is_not_waited_for() {
    let mut st = running(remote(config(1, 2)));
    let actions = st.handle(
        Input::Silent {
            inc: 0,
            id: id(0, 1),
            silent_for: s(2.5),
        },
        s(3.0),
    );
    assert_eq!(
        actions,
        [
            death(id(0, 0), id(0, 1)),
            kill(id(0, 1)),
            Action::CloseControl(id(0, 1), 0)
        ]
    );
    assert_eq!(
        state(&st, id(0, 1)),
        ReplicaState::Failed(
            "silent on host h1: no heartbeat for 2.5 s (--heartbeat-timeout 2.0 s), declared dead"
                .into()
        )
    );
    assert!(st.replica(id(0, 1)).exited);
}

#[test]
fn remote_replicas_ended_at_shutdown_get_a_grace_to_report() {
    let mut st = running(remote(config(1, 2)));
    finalized(&mut st, id(0, 0));
    st.tick(s(1.0));
    assert_eq!(state(&st, id(0, 1)), ReplicaState::Ended);
    assert_eq!(st.tick(s(5.9)), []);
    assert_eq!(st.tick(s(6.0)), [Action::CloseControl(id(0, 1), 0)]);
    assert!(st.replica(id(0, 1)).exited);
    // Its host's link ending now is no loss: nothing of it runs and the job is over.
    exited(&mut st, id(0, 0), Some(0), None);
    let ended = Input::LinkEnded {
        host: 1,
        code: Some(0),
        stderr: String::new(),
    };
    assert_eq!(st.handle(ended, s(6.5)), []);
    assert_eq!(st.verdict(), Verdict::Succeeded);
}

#[test]
fn a_link_that_ends_during_the_run_loses_its_host() {
    let mut st = running(remote(config(1, 2)));
    let hello = Input::Hello {
        host: 1,
        hostname: "h1".into(),
        pid: 1,
    };
    assert_eq!(st.handle(hello, s(0.5)), []);
    let ended = Input::LinkEnded {
        host: 1,
        code: Some(255),
        stderr: "Connection reset".into(),
    };
    let actions = st.handle(ended, s(2.0));
    assert_eq!(
        actions,
        [
            Action::CutHost(1),
            death(id(0, 0), id(0, 1)),
            Action::CloseControl(id(0, 1), 0),
            Action::Print(
                "host h1 lost: remote shell exited with code 255 (Connection reset); \
                 its replicas 0.1 are lost"
                    .into()
            )
        ]
    );
}

#[test]
fn remote_hosts_get_a_grace_to_report_exits_after_the_job_failed() {
    let mut st = running(remote(config(1, 2)));
    st.handle(Input::Interrupted(15), s(1.0));
    assert!(!st.all_exited());
    // The kill grace (2 s), then the remote grace (5 s).
    let actions = st.tick(s(3.0));
    assert!(actions.contains(&Action::EndAgents), "{actions:?}");
    assert_eq!(st.tick(s(7.9)), []);
    let actions = st.tick(s(8.0));
    assert!(actions.contains(&Action::CutHost(0)) && actions.contains(&Action::CutHost(1)));
    assert!(st.all_exited());
}

mod drain;
mod endings;
mod notices;
mod regenerate;
mod regenerate_hosts;
