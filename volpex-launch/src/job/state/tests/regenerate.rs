//! Regeneration in the job's state machine: a lost replica's new incarnation, its table,
//! `Joining` and `Alive`, stale events of old incarnations, the limits (host choice:
//! `regenerate_hosts`; a replica's own preemption notice: `drain`).

use std::time::Duration;

use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::{ReplicaStats, ToLauncher, ToProcess};

use super::super::super::replica::{Origin, ReplicaState};
use super::super::super::step::{Action, Input};
use super::super::{Config, JobState};
use super::{config, exited, id, kill, local, register, running, s, state};
use crate::cli::Regenerate;
use crate::fault::parse_fault;

pub(super) fn regen(ranks: u32, replicas: u32, mode: Regenerate) -> Config {
    Config {
        regenerate: mode,
        ..config(ranks, replicas)
    }
}

/// The `Spawn` actions among `actions`: (replica, incarnation, host).
pub(super) fn spawns(actions: &[Action]) -> Vec<(ReplicaId, u32, usize)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Spawn { id, inc, host, .. } => Some((*id, *inc, *host)),
            _ => None,
        })
        .collect()
}

pub(super) fn prints(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Print(t) | Action::Live(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

pub(super) fn killed(st: &mut JobState, who: ReplicaId, inc: u32, now: Duration) -> Vec<Action> {
    st.handle(
        Input::Exited {
            id: who,
            inc,
            code: None,
            signal: Some(9),
        },
        now,
    )
}

pub(super) fn msg(
    st: &mut JobState,
    who: ReplicaId,
    inc: u32,
    msg: ToLauncher,
    now: Duration,
) -> Vec<Action> {
    st.handle(Input::Message { id: who, inc, msg }, now)
}

pub(super) fn stats(receives: u64) -> ReplicaStats {
    ReplicaStats {
        receives,
        ..ReplicaStats::default()
    }
}

pub(super) fn newcomer_registers(
    st: &mut JobState,
    who: ReplicaId,
    inc: u32,
    now: Duration,
) -> Vec<Action> {
    st.handle(
        Input::Registered {
            id: who,
            inc,
            addr: format!("10.0.1.{}:{}", who.rank, 8000 + inc),
        },
        now,
    )
}

#[test]
fn a_killed_replica_gets_a_new_incarnation_on_this_machine() {
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    let actions = killed(&mut st, id(1, 0), 0, s(2.0));
    assert!(actions.contains(&Action::Send {
        to: id(1, 1),
        msg: ToProcess::Death {
            rank: 1,
            replica: 0,
            incarnation: 0
        }
    }));
    assert_eq!(spawns(&actions), [(id(1, 0), 1, 0)]);
    assert_eq!(
        prints(&actions),
        ["rank 1 replica 0: starting incarnation 1 on localhost at 2.0 s"]
    );
    // The spawn comes first: the driver prints the loss it answers before this line.
    let spawn = actions
        .iter()
        .position(|a| matches!(a, Action::Spawn { .. }));
    let line = actions.iter().position(|a| matches!(a, Action::Live(_)));
    assert!(spawn < line, "{actions:?}");
    let p = st.replica(id(1, 0));
    assert_eq!((p.incarnation, &p.state), (1, &ReplicaState::Starting));
    assert_eq!(st.regenerations(), 1);
    // The old incarnation keeps its record.
    assert_eq!(
        st.incarnation(id(1, 0), 0).map(|p| p.state.clone()),
        Some(ReplicaState::Failed("killed by SIGKILL".into()))
    );
    assert_eq!(st.tick(s(2.1)), [], "the rank lives: nothing to fail");
}

/// volpexrun was stopped longer than the heartbeat timeout (2 s here): its replicas gave
/// it up and exit, their exits arriving one by one. No sibling is trusted as a source
/// before they are all in: a rank whose replicas all exited is lost, not regenerated from
/// a sibling that was already dead; one whose sibling lives is regenerated after the hold.
#[test]
fn after_a_launcher_stall_no_replica_is_regenerated_from_a_sibling_that_is_exiting_too() {
    let exit_76 = |st: &mut JobState, who: ReplicaId| {
        let input = Input::Exited {
            id: who,
            inc: 0,
            code: Some(76),
            signal: None,
        };
        spawns(&st.handle(input, s(5.0)))
    };
    // Both replicas of rank 0 exit: the rank is lost, nothing starts.
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    st.woke(s(1.2), s(5.0));
    assert_eq!(exit_76(&mut st, id(0, 0)), [], "0.0 during the hold");
    assert_eq!(exit_76(&mut st, id(0, 1)), [], "0.1 during the hold");
    assert_eq!(spawns(&st.tick(s(7.1))), []);
    assert_eq!(st.regenerations(), 0);
    // Only 1.0 exits: after the hold it comes back from 1.1.
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    st.woke(s(1.2), s(5.0));
    assert_eq!(exit_76(&mut st, id(1, 0)), [], "1.0 during the hold");
    assert_eq!(spawns(&st.tick(s(6.0))), [], "still holding");
    assert_eq!(spawns(&st.tick(s(7.1))), [(id(1, 0), 1, 0)]);
}

/// Issue 42 item 3: a rank lost because volpexrun itself was stopped says so.
#[test]
fn a_rank_lost_to_the_launchers_own_stall_names_the_stall() {
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    st.woke(s(1.2), s(21.2));
    for k in 0..2 {
        let input = Input::Exited {
            id: id(0, k),
            inc: 0,
            code: Some(76),
            signal: None,
        };
        st.handle(input, s(21.3));
    }
    st.tick(s(21.3));
    let why = st.failure().unwrap_or_default().to_string();
    assert!(why.starts_with("rank 0 lost"), "{why}");
    assert!(
        why.ends_with("; volpexrun itself did not run for 20.0 s (it was stopped, or starved of CPU), and its processes give it up after 2.0 s without its heartbeat"),
        "{why}"
    );
    // A stall a little shorter than the heartbeat timeout counts (the replicas may have
    // counted a tick and a heartbeat interval more): both exits are in before anything
    // is regenerated.
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    st.woke(s(1.2), s(3.1));
    let input = |k| Input::Exited {
        id: id(1, k),
        inc: 0,
        code: Some(76),
        signal: None,
    };
    assert_eq!(spawns(&st.handle(input(0), s(3.1))), []);
    assert_eq!(spawns(&st.tick(s(3.2))), [], "held");
    st.handle(input(1), s(3.2));
    st.tick(s(3.2));
    assert!(st
        .failure()
        .is_some_and(|w| w.starts_with("rank 1 lost") && w.contains("did not run for 1.9 s")));
    // Without a stall, no such words.
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    killed(&mut st, id(0, 0), 0, s(1.0));
    killed(&mut st, id(0, 1), 0, s(1.0));
    st.tick(s(1.0));
    assert!(st.failure().is_some_and(|w| !w.contains("did not run")));
}

/// Without a stall, the same loss is regenerated at once (the hold is not the rule).
#[test]
fn a_wait_that_ends_on_time_holds_nothing() {
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    st.woke(s(1.2), s(1.3));
    assert_eq!(
        spawns(&killed(&mut st, id(1, 0), 0, s(1.3))),
        [(id(1, 0), 1, 0)]
    );
}

#[test]
fn a_newcomer_gets_its_table_and_the_others_hear_it_is_joining_then_alive() {
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    msg(
        &mut st,
        id(0, 1),
        0,
        ToLauncher::Stats { stats: stats(42) },
        s(1.0),
    );
    msg(
        &mut st,
        id(1, 0),
        0,
        ToLauncher::Stats { stats: stats(99) },
        s(1.0),
    );
    killed(&mut st, id(0, 0), 0, s(2.0));
    let actions = newcomer_registers(&mut st, id(0, 0), 1, s(2.5));
    let joining = ToProcess::Joining {
        rank: 0,
        replica: 0,
        incarnation: 1,
        addr: "10.0.1.0:8001".into(),
        handover: false,
    };
    assert_eq!(
        actions,
        [
            Action::KeepControl(id(0, 0), 1),
            Action::Send {
                to: id(0, 1),
                msg: joining.clone()
            },
            Action::Send {
                to: id(1, 0),
                msg: joining.clone()
            },
            Action::Send {
                to: id(1, 1),
                msg: joining
            },
            Action::Send {
                to: id(0, 0),
                msg: ToProcess::Table {
                    addrs: vec![
                        vec![Some("10.0.1.0:8001".into()), Some("10.0.0.0:7001".into())],
                        vec![Some("10.0.0.1:7000".into()), Some("10.0.0.1:7001".into())],
                    ],
                    starting: vec![],
                    incarnations: vec![vec![1, 0], vec![0, 0]],
                    // Its sibling's count, not another rank's.
                    catch_up: Some(42),
                }
            },
        ]
    );
    let actions = msg(
        &mut st,
        id(0, 0),
        1,
        ToLauncher::CaughtUp { receives: 42 },
        s(3.3),
    );
    assert_eq!(
        prints(&actions),
        ["rank 0 replica 0: incarnation 1 caught up in 1.3 s"]
    );
    let alive: Vec<ReplicaId> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Send {
                to,
                msg:
                    ToProcess::Alive {
                        rank: 0,
                        replica: 0,
                        incarnation: 1,
                    },
            } => Some(*to),
            _ => None,
        })
        .collect();
    assert_eq!(alive, [id(0, 0), id(0, 1), id(1, 0), id(1, 1)]);
    assert_eq!(st.replica(id(0, 0)).caught_up_at, Some(s(3.3)));
}

/// Two replicas lost at once: the first newcomer to register is told the other is
/// starting (not dead: its rank is not lost), and the second is told nothing of the kind.
#[test]
fn a_newcomer_is_told_which_others_are_still_starting() {
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    killed(&mut st, id(0, 0), 0, s(2.0));
    killed(&mut st, id(1, 1), 0, s(2.0));
    let starting_in = |actions: &[Action], to: ReplicaId| {
        actions.iter().find_map(|a| match a {
            Action::Send {
                to: t,
                msg: ToProcess::Table {
                    starting, addrs, ..
                },
            } if *t == to => Some((starting.clone(), addrs[1][1].is_some())),
            _ => None,
        })
    };
    let first = newcomer_registers(&mut st, id(0, 0), 1, s(2.5));
    assert_eq!(starting_in(&first, id(0, 0)), Some((vec![(1, 1)], false)));
    let second = newcomer_registers(&mut st, id(1, 1), 1, s(2.6));
    assert_eq!(starting_in(&second, id(1, 1)), Some((vec![], true)));
}

#[test]
fn a_newcomer_without_known_sibling_counts_catches_up_from_zero() {
    let mut st = running(local(regen(1, 2, Regenerate::Spare)));
    killed(&mut st, id(0, 1), 0, s(1.0));
    let actions = newcomer_registers(&mut st, id(0, 1), 1, s(1.5));
    assert!(actions.iter().any(|a| matches!(
        a,
        Action::Send {
            msg: ToProcess::Table {
                catch_up: Some(0),
                ..
            },
            ..
        }
    )));
}

#[test]
fn events_of_an_old_incarnation_never_touch_the_new_one() {
    let mut st = running(local(Config {
        faults: vec![parse_fault("0.0:kill@5").expect("a fault")],
        ..regen(1, 2, Regenerate::Spare)
    }));
    // Silent, then declared dead and SIGKILLed: its exit comes later.
    let actions = st.handle(
        Input::Silent {
            id: id(0, 0),
            inc: 0,
            silent_for: s(2.5),
        },
        s(2.0),
    );
    assert_eq!(spawns(&actions), [(id(0, 0), 1, 0)]);
    assert!(actions.contains(&Action::Signal {
        id: id(0, 0),
        inc: 0,
        signal: nix::sys::signal::Signal::SIGKILL
    }));
    // The old one's registration, messages, connection and exit are its own.
    assert_eq!(register(&mut st, id(0, 0), s(2.1)), []);
    let done = ToLauncher::Finalized {
        stats: ReplicaStats::default(),
    };
    assert_eq!(msg(&mut st, id(0, 0), 0, done, s(2.2)), []);
    assert_eq!(
        st.handle(
            Input::ControlClosed {
                id: id(0, 0),
                inc: 0
            },
            s(2.3)
        ),
        [Action::CloseControl(id(0, 0), 0)]
    );
    assert_eq!(
        killed(&mut st, id(0, 0), 0, s(2.4)),
        [Action::CloseControl(id(0, 0), 0)]
    );
    assert_eq!(
        st.handle(
            Input::Silent {
                id: id(0, 0),
                inc: 0,
                silent_for: s(3.0)
            },
            s(2.5)
        ),
        []
    );
    let p = st.replica(id(0, 0));
    assert_eq!(
        (p.incarnation, &p.state, p.exited),
        (1, &ReplicaState::Starting, false)
    );
    assert_eq!(st.tick(s(2.6)), []);
    // A timed fault hits the incarnation current when it fires.
    st.handle(
        Input::Spawned {
            id: id(0, 0),
            inc: 1,
            pid: 77,
        },
        s(2.7),
    );
    let actions = st.tick(s(5.0));
    assert!(actions.contains(&Action::Signal {
        id: id(0, 0),
        inc: 1,
        signal: nix::sys::signal::Signal::SIGKILL
    }));
    assert_eq!(spawns(&actions), [(id(0, 0), 2, 0)]);
}

#[test]
fn max_regenerations_is_per_rank() {
    let mut st = running(local(Config {
        max_regenerations: Some(1),
        ..regen(2, 2, Regenerate::Spare)
    }));
    assert_eq!(spawns(&killed(&mut st, id(0, 0), 0, s(1.0))).len(), 1);
    newcomer_registers(&mut st, id(0, 0), 1, s(1.5));
    msg(
        &mut st,
        id(0, 0),
        1,
        ToLauncher::CaughtUp { receives: 0 },
        s(2.0),
    );
    let actions = killed(&mut st, id(0, 0), 1, s(3.0));
    assert_eq!(spawns(&actions), []);
    let why = "rank 0 is not regenerated again: --max-regenerations 1 reached";
    assert_eq!(prints(&actions), [why]);
    assert_eq!(st.regen_notes(), [why]);
    // Another rank has its own count.
    assert_eq!(spawns(&killed(&mut st, id(1, 1), 0, s(4.0))).len(), 1);
    assert_eq!(st.failure(), None);
}

#[test]
fn three_newcomers_dying_before_catching_up_stop_the_rank() {
    let mut st = running(local(regen(1, 2, Regenerate::Spare)));
    assert_eq!(
        spawns(&killed(&mut st, id(0, 0), 0, s(1.0))),
        [(id(0, 0), 1, 0)]
    );
    assert_eq!(
        spawns(&killed(&mut st, id(0, 0), 1, s(2.0))),
        [(id(0, 0), 2, 0)]
    );
    // One that caught up and was then killed resets the count.
    newcomer_registers(&mut st, id(0, 0), 2, s(2.5));
    msg(
        &mut st,
        id(0, 0),
        2,
        ToLauncher::CaughtUp { receives: 0 },
        s(3.0),
    );
    assert_eq!(
        spawns(&killed(&mut st, id(0, 0), 2, s(4.0))),
        [(id(0, 0), 3, 0)]
    );
    assert_eq!(
        spawns(&killed(&mut st, id(0, 0), 3, s(5.0))),
        [(id(0, 0), 4, 0)]
    );
    assert_eq!(
        spawns(&killed(&mut st, id(0, 0), 4, s(6.0))),
        [(id(0, 0), 5, 0)]
    );
    let actions = killed(&mut st, id(0, 0), 5, s(7.0));
    assert_eq!(spawns(&actions), []);
    assert_eq!(
        prints(&actions),
        ["rank 0 is not regenerated again: its last 3 new incarnations failed (ended before catching up, or retired)"]
    );
    assert_eq!(st.failure(), None, "its sibling goes on");
}

#[test]
fn a_newcomer_that_does_not_register_in_time_is_replaced() {
    let mut st = running(local(regen(1, 2, Regenerate::Spare)));
    killed(&mut st, id(0, 1), 0, s(1.0));
    assert_eq!(st.tick(s(60.9)), []);
    let actions = st.tick(s(61.0));
    assert!(actions.contains(&Action::Signal {
        id: id(0, 1),
        inc: 1,
        signal: nix::sys::signal::Signal::SIGKILL
    }));
    assert_eq!(spawns(&actions), [(id(0, 1), 2, 0)]);
    assert_eq!(
        st.incarnation(id(0, 1), 1).map(|p| p.state.clone()),
        Some(ReplicaState::Failed("did not register within 60 s".into()))
    );
}

#[test]
fn a_rank_that_cannot_be_regenerated_is_not_tried_again() {
    let mut st = running(local(regen(1, 2, Regenerate::Spare)));
    killed(&mut st, id(0, 1), 0, s(1.0));
    newcomer_registers(&mut st, id(0, 1), 1, s(1.5));
    let reason = "rank 0 cannot be regenerated: messages evicted; call checkpoint".to_string();
    let actions = msg(
        &mut st,
        id(0, 1),
        1,
        ToLauncher::Retired {
            reason: reason.clone(),
        },
        s(2.0),
    );
    assert_eq!(spawns(&actions), []);
    assert_eq!(st.regen_notes(), [reason]);
}

#[test]
fn no_regeneration_for_a_program_error_a_finished_replica_or_an_ending_job() {
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    // The application failed: the exit policy's business.
    let actions = exited(&mut st, id(0, 0), Some(3), None);
    assert_eq!(spawns(&actions), []);
    // Finalized, then killed: its rank completed.
    let done = ToLauncher::Finalized {
        stats: ReplicaStats::default(),
    };
    msg(&mut st, id(1, 0), 0, done, s(1.0));
    assert_eq!(spawns(&killed(&mut st, id(1, 0), 0, s(1.1))), []);
    // The job fails: nothing more starts.
    st.handle(Input::Interrupted(15), s(1.2));
    assert_eq!(spawns(&killed(&mut st, id(1, 1), 0, s(1.3))), []);
    assert_eq!(st.regenerations(), 0);
}

#[test]
fn never_means_never() {
    let mut st = running(local(regen(1, 2, Regenerate::Never)));
    assert_eq!(spawns(&killed(&mut st, id(0, 0), 0, s(1.0))), []);
    assert_eq!(
        state(&st, id(0, 0)),
        ReplicaState::Failed("killed by SIGKILL".into())
    );
}

#[test]
fn no_regeneration_of_the_last_replica_of_a_rank() {
    let mut st = running(local(regen(2, 1, Regenerate::Always)));
    assert_eq!(spawns(&killed(&mut st, id(1, 0), 0, s(1.0))), []);
    st.tick(s(1.0));
    assert!(st.failure().is_some());
}

#[test]
fn a_fence_request_hits_only_the_incarnation_it_names() {
    let mut st = running(local(regen(1, 2, Regenerate::Spare)));
    killed(&mut st, id(0, 0), 0, s(1.0));
    // 0.1 asks to fence incarnation 0 of 0.0, which was replaced.
    let stale = ToLauncher::Fence {
        rank: 0,
        replica: 0,
        incarnation: 0,
    };
    assert_eq!(msg(&mut st, id(0, 1), 0, stale, s(1.1)), []);
    let fence = ToLauncher::Fence {
        rank: 0,
        replica: 0,
        incarnation: 1,
    };
    // Not while it catches up either (it neither leads nor is asked for messages).
    assert_eq!(msg(&mut st, id(0, 1), 0, fence.clone(), s(1.1)), []);
    assert_eq!(state(&st, id(0, 0)), ReplicaState::Starting);
    // Once caught up, it is an ordinary replica: fenced like any.
    newcomer_registers(&mut st, id(0, 0), 1, s(1.2));
    msg(
        &mut st,
        id(0, 0),
        1,
        ToLauncher::CaughtUp { receives: 0 },
        s(1.3),
    );
    assert_eq!(
        msg(&mut st, id(0, 1), 0, fence, s(1.4)),
        [],
        "held a moment"
    );
    let actions = st.tick(s(1.6));
    assert!(actions.contains(&Action::Signal {
        id: id(0, 0),
        inc: 1,
        signal: nix::sys::signal::Signal::SIGKILL
    }));
}

#[test]
fn new_incarnations_that_retire_even_after_catching_up_stop_the_rank() {
    let mut st = running(local(regen(1, 2, Regenerate::Spare)));
    let mut actions = killed(&mut st, id(0, 0), 0, s(1.0));
    for inc in 1..=3 {
        assert_eq!(spawns(&actions), [(id(0, 0), inc, 0)]);
        newcomer_registers(&mut st, id(0, 0), inc, s(1.0));
        msg(
            &mut st,
            id(0, 0),
            inc,
            ToLauncher::CaughtUp { receives: 0 },
            s(1.0),
        );
        let reason = ToLauncher::Retired {
            reason: "replica 0.0 fell too far behind: message evicted".into(),
        };
        actions = msg(&mut st, id(0, 0), inc, reason, s(1.0));
    }
    assert_eq!(spawns(&actions), [], "a loop of retirements ends");
}

#[test]
fn an_injected_crash_is_regenerated_a_program_error_is_not() {
    let config = Config {
        faults: vec![parse_fault("1.0:exit@sends=5").expect("a fault")],
        ..regen(2, 2, Regenerate::Spare)
    };
    let mut st = running(local(config));
    let exit = |st: &mut JobState, who: ReplicaId, code: i32| {
        st.handle(
            Input::Exited {
                id: who,
                inc: 0,
                code: Some(code),
                signal: None,
            },
            s(1.0),
        )
    };
    // `exit@sends` stands in for a crash.
    let fault = volpex_proto::launch::exit::EXIT_FAULT;
    let actions = exit(&mut st, id(1, 0), fault);
    assert_eq!(spawns(&actions), [(id(1, 0), 1, 0)]);
    let first = st
        .replicas()
        .iter()
        .find(|p| p.id == id(1, 0) && p.incarnation == 0)
        .map(|p| p.state.clone());
    assert!(
        matches!(&first, Some(ReplicaState::Failed(w)) if w.contains("--fault 1.0:exit@sends=5")),
        "{first:?}"
    );
    // A program's own exit code is its failure: the exit policy's, not regenerated;
    // also the fault's code from a replica no fault was armed in.
    assert_eq!(spawns(&exit(&mut st, id(0, 1), 3)), []);
    assert_eq!(spawns(&exit(&mut st, id(1, 1), fault)), []);
    assert_eq!(
        state(&st, id(1, 1)),
        ReplicaState::Failed("exited with code 99".into())
    );
}

/// Issue 42 item 2: every replica of a rank killed at the same moment (`--fault
/// 1.0:kill@2 --fault 1.1:kill@2`) loses the rank, as kills apart do; no new incarnation
/// starts, since none of the killed is a source for another.
#[test]
fn replicas_killed_at_the_same_moment_lose_their_rank_and_start_nothing() {
    for replicas in [2, 3] {
        let faults = (0..replicas)
            .map(|k| parse_fault(&format!("1.{k}:kill@2")).expect("a fault"))
            .collect();
        let config = Config {
            faults,
            ..regen(4, replicas, Regenerate::Spare)
        };
        let mut st = running(local(config));
        let actions = st.tick(s(2.0));
        assert_eq!(spawns(&actions), [], "-r {replicas}: {actions:?}");
        assert_eq!(st.regenerations(), 0);
        let why = st.failure().unwrap_or_default().to_string();
        assert!(why.starts_with("rank 1 lost"), "-r {replicas}: {why}");
        assert_eq!(st.verdict().exit_code(), 70);
    }
}

/// Issue 42 item 2: a new incarnation still catching up holds none of its rank's state,
/// so it is no source for its sibling's; once the last replica holding the state is
/// lost, the newcomers catching up are ended and the rank is lost (exit 70), whatever
/// order the exits come in (every replica of a rank segfaulting).
#[test]
fn a_newcomer_still_catching_up_is_no_source_and_is_ended_with_its_rank() {
    let sigkill = |who: ReplicaId, inc: u32| Action::Signal {
        id: who,
        inc,
        signal: nix::sys::signal::Signal::SIGKILL,
    };
    // -r 2: 1.0 is replaced from 1.1; 1.1 goes before its replacement caught up.
    let mut st = running(local(regen(4, 2, Regenerate::Spare)));
    assert_eq!(
        spawns(&killed(&mut st, id(1, 0), 0, s(2.0))),
        [(id(1, 0), 1, 0)]
    );
    let actions = killed(&mut st, id(1, 1), 0, s(2.01));
    assert_eq!(
        spawns(&actions),
        [],
        "1.1 is not regenerated from 1.0's newcomer"
    );
    assert!(actions.contains(&sigkill(id(1, 0), 1)), "{actions:?}");
    // Its registration, on its way, changes nothing (no table with nothing to catch up),
    // nor does its own retirement, which it may announce on hearing 1.1 died.
    assert_eq!(newcomer_registers(&mut st, id(1, 0), 1, s(2.1)), []);
    let retired = ToLauncher::Retired {
        reason: "rank 1 cannot be regenerated: its last caught-up replica died".into(),
    };
    assert_eq!(msg(&mut st, id(1, 0), 1, retired, s(2.1)), []);
    st.tick(s(2.1));
    let why = st.failure().unwrap_or_default().to_string();
    assert_eq!(
        why,
        "rank 1 lost: all 2 replicas failed (1.0: ended before catching up: no replica holding rank 1's state was left (incarnation 0: killed by SIGKILL); 1.1: killed by SIGKILL)"
    );
    assert_eq!(st.verdict().exit_code(), 70);

    // -r 3: 1.1's replacement comes from 1.2 (which holds the state); when 1.2 goes too,
    // both newcomers are ended.
    let mut st = running(local(regen(4, 3, Regenerate::Spare)));
    assert_eq!(
        spawns(&killed(&mut st, id(1, 0), 0, s(2.0))),
        [(id(1, 0), 1, 0)]
    );
    assert_eq!(
        spawns(&killed(&mut st, id(1, 1), 0, s(2.0))),
        [(id(1, 1), 2, 0)]
    );
    let actions = killed(&mut st, id(1, 2), 0, s(2.0));
    assert_eq!(spawns(&actions), []);
    assert!(actions.contains(&sigkill(id(1, 0), 1)), "{actions:?}");
    assert!(actions.contains(&sigkill(id(1, 1), 2)), "{actions:?}");
    st.tick(s(2.0));
    assert!(st.failure().is_some_and(|w| w.starts_with("rank 1 lost")));
    assert_eq!(st.verdict().exit_code(), 70);
}

/// A newcomer that caught up holds the state: its sibling's replacement comes from it,
/// and it is not ended when the others go.
#[test]
fn a_newcomer_that_caught_up_is_a_source() {
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    killed(&mut st, id(1, 0), 0, s(2.0));
    newcomer_registers(&mut st, id(1, 0), 1, s(2.1));
    msg(
        &mut st,
        id(1, 0),
        1,
        ToLauncher::CaughtUp { receives: 0 },
        s(2.2),
    );
    assert_eq!(
        spawns(&killed(&mut st, id(1, 1), 0, s(3.0))),
        [(id(1, 1), 2, 0)]
    );
    assert_eq!(state(&st, id(1, 0)), ReplicaState::Running);
    assert_eq!(st.failure(), None);
}

/// Issue 42: a user signal volpexrun forwarded that kills every replica of a rank (its
/// program does not handle it) is the program's doing: nothing is regenerated, and the job
/// ends with 128 + S as mpirun's does (it ended with 70, lost to failures, sometimes after
/// starting new incarnations).
#[test]
fn a_forwarded_user_signal_that_kills_a_rank_ends_the_job_as_mpirun() {
    let mut st = running(local(regen(2, 2, Regenerate::Always)));
    st.handle(Input::Interrupted(10), s(1.0));
    let mut actions = exited(&mut st, id(0, 0), None, Some(10));
    actions.extend(exited(&mut st, id(0, 1), None, Some(10)));
    actions.extend(st.tick(s(1.2)));
    assert_eq!(spawns(&actions), [], "{actions:?}");
    let why = st.failure().unwrap_or_default().to_string();
    assert!(
        why.contains("rank 0") && why.contains("SIGUSR1, which volpexrun forwarded"),
        "{why}"
    );
    for k in 0..2 {
        exited(&mut st, id(1, k), None, Some(9));
    }
    assert_eq!(st.verdict().exit_code(), 138);
    // A SIGUSR1 from elsewhere is a failure, as before: replaced.
    let mut st = running(local(regen(1, 2, Regenerate::Always)));
    let actions = exited(&mut st, id(0, 0), None, Some(10));
    assert_eq!(spawns(&actions), [(id(0, 0), 1, 0)], "{actions:?}");
}

/// The tables among `actions`: (to whom, incarnations, catch_up).
fn tables(actions: &[Action]) -> Vec<(ReplicaId, Vec<Vec<u32>>, Option<u64>)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send {
                to,
                msg:
                    ToProcess::Table {
                        incarnations,
                        catch_up,
                        ..
                    },
            } => Some((*to, incarnations.clone(), *catch_up)),
            _ => None,
        })
        .collect()
}

/// Ranks 0 and 1 at `-r 2` here; everyone but 1.0 registered at 0 s (so the table waits
/// for 1.0), then 1.0 killed at `at`, before the rendezvous.
fn killed_before_the_rendezvous(config: Config, at: f64) -> (JobState, Vec<Action>) {
    let mut st = local(config);
    for who in [id(0, 0), id(0, 1), id(1, 1)] {
        register(&mut st, who, s(0.0));
    }
    assert_eq!(st.tick(s(0.0)), [], "1.0 has its grace");
    let actions = killed(&mut st, id(1, 0), 0, s(at));
    (st, actions)
}

/// Before the rendezvous nobody has state: a lost replica is started again from the
/// beginning, the table waits for it and it gets the common table (no catch-up), as one
/// of the first processes; the rank keeps its replication degree.
#[test]
fn a_replica_lost_before_the_rendezvous_is_started_again_and_the_table_waits_for_it() {
    let (mut st, actions) = killed_before_the_rendezvous(regen(2, 2, Regenerate::Spare), 0.5);
    assert_eq!(spawns(&actions), [(id(1, 0), 1, 0)]);
    assert_eq!(
        prints(&actions),
        ["rank 1 replica 0: starting incarnation 1 on localhost at 0.5 s, afresh: it was lost before the rendezvous, which waits for it"]
    );
    let p = st.replica(id(1, 0));
    assert_eq!(p.origin, Origin::Restart);
    assert!(p.caught_up(), "nothing to catch up");
    assert_eq!(st.regenerations(), 1);
    assert_eq!(tables(&st.tick(s(1.0))), [], "the table waits for it");
    // It registers like the first processes: no table of its own, no `Joining`.
    let actions = newcomer_registers(&mut st, id(1, 0), 1, s(1.2));
    assert_eq!(actions, [Action::KeepControl(id(1, 0), 1)]);
    let sent = tables(&st.tick(s(1.2)));
    let incs = vec![vec![0, 0], vec![1, 0]];
    assert_eq!(
        sent,
        [
            (id(0, 0), incs.clone(), None),
            (id(0, 1), incs.clone(), None),
            (id(1, 0), incs.clone(), None),
            (id(1, 1), incs, None),
        ],
        "once to every replica, the new incarnation in it"
    );
    assert_eq!(st.replica(id(1, 0)).state, ReplicaState::Running);
    // Lost again during the run, it is regenerated from its sibling as usual.
    let actions = killed(&mut st, id(1, 0), 1, s(3.0));
    assert_eq!(spawns(&actions), [(id(1, 0), 2, 0)]);
    assert_eq!(st.replica(id(1, 0)).origin, Origin::Replay);
    let actions = newcomer_registers(&mut st, id(1, 0), 2, s(3.5));
    assert!(
        tables(&actions).contains(&(id(1, 0), vec![vec![0, 0], vec![2, 0]], Some(0))),
        "{actions:?}"
    );
}

/// A replica started again late in the stragglers' grace gets the grace from its start.
#[test]
fn a_replica_started_again_gets_the_stragglers_grace_from_its_start() {
    let (mut st, actions) = killed_before_the_rendezvous(regen(2, 2, Regenerate::Spare), 2.5);
    assert_eq!(spawns(&actions), [(id(1, 0), 1, 0)]);
    assert_eq!(tables(&st.tick(s(3.0))), [], "the grace counts from 2.5 s");
    assert_eq!(tables(&st.tick(s(5.4))), []);
    // It never registers: ended at the end of its grace, after which the table is out
    // and it is regenerated from its sibling as a loss during the run is.
    let actions = st.tick(s(5.5));
    assert_eq!(tables(&actions).len(), 4, "{actions:?}");
    assert_eq!(spawns(&actions), [(id(1, 0), 2, 0)]);
    let p = st.replica(id(1, 0));
    assert_eq!(p.origin, Origin::Replay);
    assert_eq!(p.incarnation, 2);
    // The crash-loop guard counted the restart that never registered.
    assert_eq!(st.regenerations(), 2);
}

/// A first replica slower to register than the stragglers' grace (a slow host) is ended
/// when the table goes out and regenerated from its registered sibling, so its rank keeps
/// its replication degree; with `--regenerate never` it is only ended.
#[test]
fn a_replica_that_does_not_register_in_time_is_regenerated_from_its_sibling() {
    for mode in [Regenerate::Spare, Regenerate::Never] {
        let mut st = local(regen(2, 2, mode));
        for who in [id(0, 0), id(0, 1), id(1, 1)] {
            register(&mut st, who, s(0.0));
        }
        assert_eq!(st.tick(s(0.0)), [], "{mode:?}: 1.0 has its grace");
        assert_eq!(st.tick(s(2.9)), [], "{mode:?}");
        let actions = st.tick(s(3.0));
        assert!(actions.contains(&kill(id(1, 0))), "{mode:?}: {actions:?}");
        assert_eq!(tables(&actions).len(), 4, "{mode:?}: {actions:?}");
        // The table goes out first: the newcomer is nobody's table entry before it
        // registers, as any newcomer.
        let table_at = actions.iter().rposition(|a| {
            matches!(
                a,
                Action::Send {
                    msg: ToProcess::Table { .. },
                    ..
                }
            )
        });
        let spawn_at = actions
            .iter()
            .position(|a| matches!(a, Action::Spawn { .. }));
        match mode {
            Regenerate::Never => {
                assert_eq!(spawn_at, None, "{actions:?}");
                assert_eq!(
                    state(&st, id(1, 0)),
                    ReplicaState::Failed("did not register in time".into())
                );
            }
            _ => {
                assert_eq!(spawns(&actions), [(id(1, 0), 1, 0)]);
                assert!(table_at < spawn_at, "{actions:?}");
                let p = st.replica(id(1, 0));
                assert_eq!(p.origin, Origin::Replay);
                assert!(!p.caught_up(), "it replays from its sibling's log");
            }
        }
    }
}

/// The limits hold before the rendezvous too: an incarnation started again that dies
/// before the table went out failed (the crash-loop guard counts it), and
/// `--max-regenerations` counts every start.
#[test]
fn the_limits_hold_before_the_rendezvous() {
    let (mut st, _) = killed_before_the_rendezvous(regen(2, 2, Regenerate::Spare), 0.5);
    for inc in 1..=3 {
        let actions = killed(&mut st, id(1, 0), inc, s(0.5 + f64::from(inc)));
        if inc < 3 {
            assert_eq!(spawns(&actions), [(id(1, 0), inc + 1, 0)]);
        } else {
            assert_eq!(spawns(&actions), []);
            assert_eq!(
                prints(&actions),
                ["rank 1 is not regenerated again: its last 3 new incarnations failed (ended before catching up, or retired)"]
            );
        }
    }
    // The table goes out without it, the job runs at `-r 1` for rank 1.
    assert_eq!(tables(&st.tick(s(4.0))).len(), 4);
    let mut c = regen(2, 2, Regenerate::Spare);
    c.max_regenerations = Some(1);
    let (mut st, actions) = killed_before_the_rendezvous(c, 0.5);
    assert_eq!(spawns(&actions), [(id(1, 0), 1, 0)]);
    let actions = killed(&mut st, id(1, 0), 1, s(1.0));
    assert_eq!(spawns(&actions), []);
    assert_eq!(
        prints(&actions),
        ["rank 1 is not regenerated again: --max-regenerations 1 reached"]
    );
}

/// `--regenerate never` still means never, and says so; a rank that lost every replica
/// before the rendezvous is lost, as later.
#[test]
fn before_the_rendezvous_never_is_never_and_a_rank_needs_a_live_replica() {
    let (mut st, actions) = killed_before_the_rendezvous(regen(2, 2, Regenerate::Never), 0.5);
    assert_eq!(spawns(&actions), []);
    assert_eq!(
        prints(&actions),
        ["replica 1.0 was lost before the rendezvous and is not started again (--regenerate never)"]
    );
    assert_eq!(tables(&st.tick(s(0.6))).len(), 4, "nobody to wait for");
    // Both replicas of rank 1 killed at once: no sibling lives, the rank is lost.
    let mut c = regen(2, 2, Regenerate::Spare);
    c.faults = vec![
        parse_fault("1.0:kill@0.5").expect("a fault"),
        parse_fault("1.1:kill@0.5").expect("a fault"),
    ];
    let mut st = local(c);
    register(&mut st, id(0, 0), s(0.0));
    let actions = st.tick(s(0.5));
    assert_eq!(spawns(&actions), []);
    st.tick(s(0.6));
    assert!(
        st.failure().is_some_and(|w| w.starts_with("rank 1 lost")),
        "{:?}",
        st.failure()
    );
}

/// Replica `who` (incarnation `inc`) drains at `at` and hands over there: its
/// replacement (incarnation `new`) starts.
pub(super) fn hand_over(st: &mut JobState, who: ReplicaId, inc: u32, new: u32, at: f64) {
    let drain = ToLauncher::Draining {
        grace_ms: 30_000,
        checkpoints: 2,
    };
    msg(st, who, inc, drain, s(at));
    let offer = ToLauncher::Handover {
        addr: "127.0.0.1:4000".into(),
    };
    assert_eq!(spawns(&msg(st, who, inc, offer, s(at))), [(who, new, 0)]);
}

/// Incarnation `inc` of `who` exited drained at `at`.
pub(super) fn exited_drained(st: &mut JobState, who: ReplicaId, inc: u32, at: f64) -> Vec<Action> {
    let exit = Input::Exited {
        id: who,
        inc,
        code: Some(volpex_proto::launch::exit::EXIT_DRAINED),
        signal: None,
    };
    st.handle(exit, s(at))
}

/// `hand_over`, then the replacement registers and the old one exits drained: the
/// actions of that exit. The replacement has not caught up.
pub(super) fn handed_over(
    st: &mut JobState,
    who: ReplicaId,
    inc: u32,
    new: u32,
    at: f64,
) -> Vec<Action> {
    hand_over(st, who, inc, new, at);
    newcomer_registers(st, who, new, s(at + 0.1));
    exited_drained(st, who, inc, at + 0.2)
}

/// A replica lost while its rank's state is on its way into a handover newcomer (its
/// draining sibling handed over and exited; the newcomer has not caught up): it has no
/// source at that moment, and is regenerated from the newcomer once it caught up, not
/// left lost for the rest of the run.
#[test]
fn a_replica_lost_during_its_siblings_handover_is_regenerated_after_it() {
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    handed_over(&mut st, id(1, 0), 0, 1, 2.0);
    // 1.1 is lost while 1.0's newcomer takes the state over: nobody to start it from yet.
    let actions = killed(&mut st, id(1, 1), 0, s(2.3));
    assert_eq!(spawns(&actions), []);
    assert_eq!(
        prints(&actions),
        ["replica 1.1 is regenerated once its rank's handover is over (the replica taking it over holds rank 1's state)"]
    );
    assert_eq!(st.failure(), None);
    let actions = msg(
        &mut st,
        id(1, 0),
        1,
        ToLauncher::CaughtUp { receives: 0 },
        s(3.0),
    );
    assert_eq!(spawns(&actions), [(id(1, 1), 2, 0)]);
    assert_eq!(st.replica(id(1, 1)).origin, Origin::Replay);
}
