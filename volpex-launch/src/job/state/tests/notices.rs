//! Preemption notices in the job's state machine (`--preemption-notice`): who gets
//! SIGTERM and when (one replica of a rank at a time), the handovers' times, and the
//! deadline as the drain's bound.

use nix::sys::signal::Signal;
use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::ToLauncher;

use super::super::super::replica::ReplicaState;
use super::super::super::step::{Action, Input};
use super::super::JobState;
use super::regenerate::{msg, newcomer_registers, prints, regen, spawns};
use super::{id, local, register, running, s};
use crate::cli::Regenerate;

/// The replicas `actions` send SIGTERM / SIGKILL, in order.
fn signalled(actions: &[Action], which: Signal) -> Vec<ReplicaId> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Signal { id, signal, .. } if *signal == which => Some(*id),
            _ => None,
        })
        .collect()
}

fn notice(st: &mut JobState, at: f64, deadline_in: f64) -> Vec<Action> {
    let mut actions = st.handle(
        Input::Notice {
            host: 0,
            said: "gcp (preempted)".into(),
            deadline_in: s(deadline_in),
        },
        s(at),
    );
    actions.extend(st.tick(s(at)));
    actions
}

/// Replica `who` (incarnation `inc`) drains, hands over at its checkpoint and its
/// replacement (incarnation `new`) registers and catches up at `at`.
fn hands_over(st: &mut JobState, who: ReplicaId, inc: u32, new: u32, at: f64) -> Vec<Action> {
    super::regenerate::hand_over(st, who, inc, new, at);
    newcomer_registers(st, who, new, s(at));
    msg(st, who, new, ToLauncher::CaughtUp { receives: 0 }, s(at));
    super::regenerate::exited_drained(st, who, inc, at);
    st.tick(s(at))
}

#[test]
fn a_notice_hands_one_replica_of_a_rank_over_at_a_time() {
    let mut st = running(local(regen(2, 2, Regenerate::Spare)));
    let first = notice(&mut st, 1.0, 30.0);
    assert_eq!(
        signalled(&first, Signal::SIGTERM),
        [id(0, 0), id(1, 0)],
        "team 0 first: each rank keeps a replica that is not handing over"
    );
    assert!(prints(&first)[0].starts_with(
        "preemption notice gcp (preempted) for localhost at 1.0 s: it goes at 31.0 s"
    ));
    let second = hands_over(&mut st, id(0, 0), 0, 1, 2.0);
    assert_eq!(
        signalled(&second, Signal::SIGTERM),
        [id(0, 1)],
        "rank 0's next"
    );
    let third = hands_over(&mut st, id(1, 0), 0, 1, 3.0);
    assert_eq!(signalled(&third, Signal::SIGTERM), [id(1, 1)]);
    hands_over(&mut st, id(0, 1), 0, 2, 4.0);
    let last = hands_over(&mut st, id(1, 1), 0, 2, 5.0);
    let said = prints(&last).join("\n");
    assert!(
        said.contains("every replica handed over (0.0 at 2.0 s, 0.1 at 4.0 s, 1.0 at 3.0 s, 1.1 at 5.0 s), 4.0 s after the notice, 26.0 s before the deadline"),
        "{said}"
    );
    let n = &st.notices()[0];
    assert_eq!(n.noticed.len(), 4);
    assert_eq!(st.handed_over_at(id(1, 1), 0), Some(s(5.0)));
    // Nothing is left to end at the deadline.
    assert!(signalled(&st.tick(s(31.0)), Signal::SIGKILL).is_empty());
}

#[test]
fn at_the_deadline_a_replica_not_handed_over_is_ended_and_regenerated() {
    let mut st = running(local(regen(1, 2, Regenerate::Spare)));
    notice(&mut st, 1.0, 5.0);
    assert_eq!(st.next_tick(s(5.9)), s(6.0), "the deadline is a timer");
    let next = hands_over(&mut st, id(0, 0), 0, 1, 2.0);
    assert_eq!(signalled(&next, Signal::SIGTERM), [id(0, 1)]);
    // 0.1 drains but reaches no checkpoint before the deadline: its host is gone then,
    // and it is regenerated from the replacement of 0.0.
    let drain = ToLauncher::Draining {
        grace_ms: 30_000,
        checkpoints: 2,
    };
    msg(&mut st, id(0, 1), 0, drain, s(3.0));
    let at = st.tick(s(6.0));
    assert_eq!(signalled(&at, Signal::SIGKILL), [id(0, 1)]);
    assert_eq!(spawns(&at), [(id(0, 1), 2, 0)]);
    assert!(st.incarnation(id(0, 1), 0).is_some_and(
        |p| matches!(&p.state, ReplicaState::Failed(w) if w.contains("preemption deadline"))
    ));
    assert!(prints(&at)
        .iter()
        .any(|p| p.contains("replicas not handed over were ended: 0.1")));
}

#[test]
fn a_notice_before_the_table_waits_for_it_and_never_without_regeneration() {
    let mut st = local(regen(1, 2, Regenerate::Spare));
    let early = notice(&mut st, 0.0, 30.0);
    assert!(signalled(&early, Signal::SIGTERM).is_empty());
    for k in 0..2 {
        register(&mut st, id(0, k), s(0.0));
    }
    assert_eq!(signalled(&st.tick(s(0.1)), Signal::SIGTERM), [id(0, 0)]);

    let mut never = running(local(regen(1, 2, Regenerate::Never)));
    let actions = notice(&mut never, 1.0, 30.0);
    assert!(signalled(&actions, Signal::SIGTERM).is_empty());
    assert!(prints(&actions)
        .iter()
        .any(|p| p.contains("regeneration is off")));
}

/// A new incarnation taking over its draining predecessor's handover holds the rank's
/// state: when the predecessor exits, a sibling's new incarnation still catching up is
/// not ended for want of a source (a whole machine noticed while the other team was being
/// regenerated lost every rank that way).
#[test]
fn a_handover_newcomer_keeps_its_siblings_newcomer_alive() {
    use super::regenerate::killed;
    let mut st = running(local(regen(1, 2, Regenerate::Spare)));
    assert_eq!(
        spawns(&killed(&mut st, id(0, 1), 0, s(1.0))),
        [(id(0, 1), 1, 0)]
    );
    newcomer_registers(&mut st, id(0, 1), 1, s(1.1));
    // 0.0, the only replica holding the state, hands over at its checkpoint.
    let actions = super::regenerate::handed_over(&mut st, id(0, 0), 0, 2, 2.0);
    assert_eq!(
        signalled(&actions, Signal::SIGKILL),
        [],
        "0.1's newcomer catches up from 0.0's successor"
    );
    assert!(st.incarnation(id(0, 1), 1).is_some_and(|p| p.state.alive()));
    assert_eq!(st.failure(), None);
}
