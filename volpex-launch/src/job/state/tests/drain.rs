//! A replica's own preemption notice (SIGTERM) in the job's state machine: its replacement
//! at once, or a handover at its next checkpoint, or a grace that ends first (notices
//! volpexrun watches for a whole host: `notices`).

use volpex_proto::wire::control::{ReplicaStats, ToLauncher, ToProcess};

use super::super::super::replica::ReplicaState;
use super::super::super::step::{Action, Input};
use super::regenerate::{killed, msg, prints, regen, spawns, stats};
use super::{closed, id, local, running, s, state};
use crate::cli::Regenerate;

#[test]
fn a_preemption_notice_starts_the_replacement_at_once_and_ends_the_old_one() {
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    let drain = ToLauncher::Draining {
        grace_ms: 30_000,
        checkpoints: 0,
    };
    let actions = msg(&mut st, id(1, 0), 0, drain.clone(), s(1.0));
    assert_eq!(spawns(&actions), [(id(1, 0), 1, 0)]);
    assert!(actions.contains(&Action::Signal {
        id: id(1, 0),
        inc: 0,
        signal: nix::sys::signal::Signal::SIGKILL
    }));
    // Its siblings and the other rank hear it is gone.
    assert!(actions.contains(&Action::Send {
        to: id(1, 1),
        msg: ToProcess::Death {
            rank: 1,
            replica: 0,
            incarnation: 0
        }
    }));
    // Its own exit afterwards is the drain's, not a loss to regenerate again.
    assert_eq!(spawns(&killed(&mut st, id(1, 0), 0, s(1.1))), []);
    assert_eq!(
        state(&st, id(1, 0)),
        ReplicaState::Starting,
        "the new incarnation"
    );
    // A second notice from the old one changes nothing.
    assert_eq!(msg(&mut st, id(1, 0), 0, drain, s(1.2)), []);
}

/// Once a sender evicted a log entry (its replay budget ran out before any checkpoint),
/// a replacement replaying from the start would retire: a replica that never
/// checkpointed runs on to its next checkpoint and hands over there instead.
#[test]
fn a_preemption_notice_after_an_eviction_waits_for_the_next_checkpoint() {
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    let evicted = ReplicaStats {
        evicted: 1,
        ..stats(10)
    };
    msg(
        &mut st,
        id(0, 1),
        0,
        ToLauncher::Stats { stats: evicted },
        s(0.5),
    );
    let drain = ToLauncher::Draining {
        grace_ms: 30_000,
        checkpoints: 0,
    };
    let actions = msg(&mut st, id(1, 0), 0, drain, s(1.0));
    assert_eq!(spawns(&actions), []);
    assert!(!actions.iter().any(|a| matches!(a, Action::Signal { .. })));
    assert!(
        prints(&actions)[0].contains("at its next checkpoint"),
        "{actions:?}"
    );
    assert_eq!(state(&st, id(1, 0)), ReplicaState::Running);
}

#[test]
fn a_preemption_notice_without_room_for_a_replacement_lets_it_run_on() {
    let mut st = running(local(regen(2, 2, Regenerate::Never)));
    let actions = msg(
        &mut st,
        id(1, 0),
        0,
        ToLauncher::Draining {
            grace_ms: 5_000,
            checkpoints: 0,
        },
        s(1.0),
    );
    assert_eq!(spawns(&actions), []);
    assert!(!actions.iter().any(|a| matches!(a, Action::Signal { .. })));
    assert!(prints(&actions)[0].contains("runs on for up to 5.0 s"));
    assert_eq!(state(&st, id(1, 0)), ReplicaState::Running);
}

#[test]
fn a_preempted_replica_that_checkpoints_is_replaced_when_it_hands_over() {
    // At -r 1 too: the handover is the only source of the rank's state.
    for replicas in [1, 2] {
        let mut st = running(local(regen(2, replicas, Regenerate::Spare)));
        let drain = ToLauncher::Draining {
            grace_ms: 30_000,
            checkpoints: 3,
        };
        let actions = msg(&mut st, id(1, 0), 0, drain, s(1.0));
        assert_eq!(spawns(&actions), [], "it waits for its next checkpoint");
        assert!(!actions.iter().any(|a| matches!(a, Action::Signal { .. })));
        assert!(
            prints(&actions)[0].contains("hands over to its replacement at its next checkpoint")
        );
        let offer = ToLauncher::Handover {
            addr: "127.0.0.1:4000".into(),
        };
        let actions = msg(&mut st, id(1, 0), 0, offer.clone(), s(2.0));
        assert!(actions.contains(&Action::Spawn {
            id: id(1, 0),
            inc: 1,
            host: 0,
            handover: Some("127.0.0.1:4000".into()),
        }));
        // The old one exits drained once the new one took over: nothing to regenerate.
        let exit = Input::Exited {
            id: id(1, 0),
            inc: 0,
            code: Some(volpex_proto::launch::exit::EXIT_DRAINED),
            signal: None,
        };
        assert_eq!(spawns(&st.handle(exit, s(2.5))), []);
        assert_eq!(spawns(&closed(&mut st, id(1, 0), s(2.5))), []);
        assert_eq!(
            st.procs
                .iter()
                .find(|p| p.id == id(1, 0) && p.incarnation == 0)
                .map(|p| p.state.clone()),
            Some(ReplicaState::Drained)
        );
        assert_eq!(state(&st, id(1, 0)), ReplicaState::Starting, "the new one");
        // A second offer from the old incarnation starts nothing.
        assert_eq!(spawns(&msg(&mut st, id(1, 0), 0, offer, s(3.0))), []);
    }
}

#[test]
fn a_draining_replica_whose_grace_ends_first_is_regenerated_from_its_sibling() {
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    let drain = ToLauncher::Draining {
        grace_ms: 1_000,
        checkpoints: 1,
    };
    assert_eq!(spawns(&msg(&mut st, id(1, 0), 0, drain, s(1.0))), []);
    let exit = Input::Exited {
        id: id(1, 0),
        inc: 0,
        code: Some(volpex_proto::launch::exit::EXIT_DRAINED),
        signal: None,
    };
    assert_eq!(
        spawns(&st.handle(exit, s(2.0))),
        [],
        "held for its last words"
    );
    assert_eq!(
        spawns(&closed(&mut st, id(1, 0), s(2.0))),
        [(id(1, 0), 1, 0)]
    );
}

/// A preemption notice at -r 1 to a program that never checkpointed: the handover is
/// promised only if it checkpoints within the grace, and the loss of its rank otherwise
/// is said at once (found from outside: it used to promise the handover plainly).
#[test]
fn a_preempted_last_replica_that_never_checkpointed_is_told_what_it_risks() {
    let mut st = running(local(regen(2, 1, Regenerate::Spare)));
    let drain = ToLauncher::Draining {
        grace_ms: 30_000,
        checkpoints: 0,
    };
    let actions = msg(&mut st, id(1, 0), 0, drain, s(1.0));
    assert_eq!(spawns(&actions), []);
    let said = prints(&actions).join("\n");
    assert!(
        said.contains("only if its program checkpoints within 30.0 s"),
        "{said}"
    );
    assert!(
        said.contains("the rank is lost when the grace ends"),
        "{said}"
    );
}
