//! Regeneration in the job's state machine across hosts: where a new incarnation goes
//! (a free slot on a host without its rank; spare or always; hosts where nothing was
//! placed, whose agent starts then; never a host that may be cut off).

use std::time::Duration;

use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::ToLauncher;

use super::super::super::replica::HostState;
use super::super::super::step::{Action, Input};
use super::super::{Config, JobState};
use super::regenerate::{msg, prints, regen, spawns};
use super::{id, running, s};
use crate::cli::Regenerate;

/// Replicas of ranks 0 and 1 on hosts h0 (team 0) and h1 (team 1), each with two slots;
/// `spare` more hosts with one empty slot each. Every agent up, everyone registered.
fn remote_up(mode: Regenerate, spare: usize) -> JobState {
    let mut hosts: Vec<(String, HostState)> = (0..2 + spare)
        .map(|h| (format!("h{h}"), HostState::Launching))
        .collect();
    hosts.truncate(2 + spare);
    let mut st = JobState::new(regen(2, 2, mode), hosts, |_, k| k as usize);
    let mut slots = vec![2, 2];
    slots.extend(std::iter::repeat_n(1, spare));
    st.set_slots(slots);
    for h in 0..2 + spare {
        st.handle(Input::LinkOpened { host: h }, s(0.0));
        st.handle(
            Input::Hello {
                host: h,
                hostname: format!("h{h}"),
                pid: 1,
            },
            s(0.0),
        );
    }
    running(st)
}

fn remote_killed(
    st: &mut JobState,
    host: usize,
    who: ReplicaId,
    inc: u32,
    now: Duration,
) -> Vec<Action> {
    st.handle(
        Input::RemoteExited {
            host,
            rank: who.rank,
            replica: who.replica,
            inc,
            code: None,
            signal: Some(9),
        },
        now,
    )
}

#[test]
fn a_free_slot_on_a_host_without_the_rank_comes_first() {
    let mut st = remote_up(Regenerate::Spare, 1);
    // h0 has a free slot now, h2 an empty one: the least loaded.
    assert_eq!(
        spawns(&remote_killed(&mut st, 0, id(0, 0), 0, s(1.0))),
        [(id(0, 0), 1, 2)]
    );
    // h2 is full; h0 holds no replica of rank 1 any more and has room.
    assert_eq!(
        spawns(&remote_killed(&mut st, 0, id(1, 0), 0, s(2.0))),
        [(id(1, 0), 1, 0)]
    );
    // The agent's reports name the incarnation: the new one's pid is its own.
    st.handle(
        Input::Started {
            host: 2,
            rank: 0,
            replica: 0,
            inc: 1,
            pid: 4242,
        },
        s(2.1),
    );
    assert_eq!(st.replica(id(0, 0)).pid, 4242);
    assert_eq!(st.incarnation(id(0, 0), 0).map(|p| p.host), Some(0));
}

#[test]
fn spare_waits_for_room_and_says_so_once_while_always_oversubscribes() {
    let lose_h0 = |st: &mut JobState| {
        st.handle(
            Input::HostLost {
                host: 0,
                why: "remote shell ended".into(),
            },
            s(1.0),
        )
    };
    let mut st = remote_up(Regenerate::Spare, 0);
    let actions = lose_h0(&mut st);
    assert_eq!(spawns(&actions), []);
    let said: Vec<String> = prints(&actions)
        .into_iter()
        .filter(|p| p.contains("not regenerated"))
        .collect();
    assert_eq!(
        said,
        ["replica 0.0 is not regenerated: no free slot on a host that holds no other replica of rank 0 (--regenerate always would oversubscribe)"]
    );
    assert_eq!(st.failure(), None);

    let mut st = remote_up(Regenerate::Always, 0);
    let actions = lose_h0(&mut st);
    // h1 holds both ranks: the only host up.
    assert_eq!(spawns(&actions), [(id(0, 0), 1, 1), (id(1, 0), 1, 1)]);

    // With a full host that holds no replica of the rank, always takes it first.
    let mut st = remote_up(Regenerate::Always, 1);
    remote_killed(&mut st, 0, id(0, 0), 0, s(1.0));
    assert_eq!(
        spawns(&lose_h0(&mut st)),
        [(id(1, 0), 1, 2)],
        "h2 (full, no replica of rank 1) before h1 (holds 1.1)"
    );
}

#[test]
fn a_host_where_nothing_was_placed_gets_its_agent_with_a_new_incarnation() {
    // h0 and h1 run every replica; h2 is in the hostfile with nothing placed on it.
    let hosts = vec![
        ("h0".to_string(), HostState::Launching),
        ("h1".to_string(), HostState::Launching),
        ("h2".to_string(), HostState::Idle),
    ];
    let mut st = JobState::new(
        Config {
            launch_timeout: s(10.0),
            ..regen(2, 2, Regenerate::Spare)
        },
        hosts,
        |_, k| k as usize,
    );
    st.set_slots(vec![2, 2, 2]);
    for h in 0..2 {
        st.handle(Input::LinkOpened { host: h }, s(0.0));
        st.handle(
            Input::Hello {
                host: h,
                hostname: format!("h{h}"),
                pid: 1,
            },
            s(0.0),
        );
    }
    let mut st = running(st);
    // h0 is lost at 30 s, long after the launch timeout: both its replicas go to h2.
    let actions = st.handle(
        Input::HostLost {
            host: 0,
            why: "remote shell ended".into(),
        },
        s(30.0),
    );
    assert_eq!(spawns(&actions), [(id(0, 0), 1, 2), (id(1, 0), 1, 2)]);
    assert_eq!(st.hosts()[2].state, HostState::Launching);
    st.handle(Input::LinkOpened { host: 2 }, s(30.0));
    // Its launch timeout counts from its start, not the job's.
    assert_eq!(spawns(&st.tick(s(35.0))), []);
    assert_eq!(st.hosts()[2].state, HostState::Launching);
    st.handle(
        Input::Hello {
            host: 2,
            hostname: "h2".into(),
            pid: 9,
        },
        s(36.0),
    );
    assert_eq!(st.hosts()[2].state, HostState::Up);
    assert_eq!(st.failure(), None);
}

#[test]
fn an_agent_that_does_not_come_up_in_time_loses_its_newcomers_and_they_go_elsewhere() {
    let hosts = vec![
        ("h0".to_string(), HostState::Launching),
        ("h1".to_string(), HostState::Launching),
        ("h2".to_string(), HostState::Idle),
        ("h3".to_string(), HostState::Idle),
    ];
    let mut st = JobState::new(regen(1, 2, Regenerate::Spare), hosts, |_, k| k as usize);
    st.set_slots(vec![1, 1, 1, 1]);
    for h in 0..2 {
        st.handle(Input::LinkOpened { host: h }, s(0.0));
        st.handle(
            Input::Hello {
                host: h,
                hostname: format!("h{h}"),
                pid: 1,
            },
            s(0.0),
        );
    }
    let mut st = running(st);
    st.handle(
        Input::HostLost {
            host: 0,
            why: "cut".into(),
        },
        s(20.0),
    );
    st.handle(Input::LinkOpened { host: 2 }, s(20.0));
    let actions = st.tick(s(30.0));
    assert!(matches!(st.hosts()[2].state, HostState::Lost(_)));
    assert_eq!(spawns(&actions), [(id(0, 0), 2, 3)]);
}

#[test]
fn no_new_incarnation_goes_to_a_host_where_a_replica_went_silent() {
    // h0's replicas go silent (the host is cut off, its link still looks up); h0's slots
    // are free then, but it is not trusted; h2 has room.
    let mut st = remote_up(Regenerate::Spare, 1);
    let silent = |st: &mut JobState, who: ReplicaId| {
        st.handle(
            Input::Silent {
                id: who,
                inc: 0,
                silent_for: s(3.0),
            },
            s(5.0),
        )
    };
    assert_eq!(spawns(&silent(&mut st, id(0, 0))), [(id(0, 0), 1, 2)]);
    // h2 is full now: 1.0 is not regenerated rather than sent back to h0.
    assert_eq!(spawns(&silent(&mut st, id(1, 0))), []);
}

#[test]
fn no_new_incarnation_goes_to_a_host_where_a_replica_was_fenced() {
    let mut st = remote_up(Regenerate::Spare, 1);
    let fence = ToLauncher::Fence {
        rank: 0,
        replica: 0,
        incarnation: 0,
    };
    assert_eq!(
        spawns(&msg(&mut st, id(0, 1), 0, fence, s(2.0))),
        [(id(0, 0), 1, 2)]
    );
    let fence = ToLauncher::Fence {
        rank: 1,
        replica: 0,
        incarnation: 0,
    };
    assert_eq!(spawns(&msg(&mut st, id(1, 1), 0, fence, s(2.0))), []);
}

/// A host with a preemption notice takes no new incarnation, even with free slots: it
/// goes, and what started there would have to move again.
#[test]
fn no_new_incarnation_goes_to_a_host_with_a_preemption_notice() {
    let mut st = remote_up(Regenerate::Spare, 2);
    // The spare h2 is noticed (nothing of the job runs there yet).
    st.handle(
        Input::Notice {
            host: 2,
            said: "file /notices/h2 (deadline in 30.0 s, as it says)".into(),
            deadline_in: s(30.0),
        },
        s(1.0),
    );
    st.tick(s(1.0));
    // h0 lost 0.0: h2 and h3 are free and apart from rank 0; h2 is noticed.
    assert_eq!(
        spawns(&remote_killed(&mut st, 0, id(0, 0), 0, s(2.0))),
        [(id(0, 0), 1, 3)]
    );
}

/// A lost host is tried again `HOST_RETRY_AFTER` after it was lost (a preempted machine's
/// replacement, a pod recreated under the same name): the replicas that found no room
/// meanwhile go there with a new agent; lost again, it waits twice as long.
#[test]
fn a_lost_host_is_tried_again_for_the_replicas_that_found_no_room() {
    use super::super::regen::HOST_RETRY_AFTER;
    let mut st = remote_up(Regenerate::Spare, 0);
    let lose_h1 = |st: &mut JobState, at: f64| {
        st.handle(
            Input::HostLost {
                host: 1,
                why: "remote shell ended".into(),
            },
            s(at),
        )
    };
    // h0 holds both ranks: no room for 0.1 and 1.1.
    assert_eq!(spawns(&lose_h1(&mut st, 1.0)), []);
    let retry = 1.0 + HOST_RETRY_AFTER.as_secs_f64();
    assert_eq!(
        st.next_tick(s(retry - 0.05)),
        s(retry),
        "the retry is a deadline"
    );
    assert_eq!(spawns(&st.tick(s(retry - 0.1))), []);
    assert_eq!(
        spawns(&st.tick(s(retry))),
        [(id(0, 1), 1, 1), (id(1, 1), 1, 1)],
        "both go to h1, whose new agent starts with them"
    );
    assert_eq!(st.hosts()[1].state, HostState::Launching);
    // Its agent cannot start: lost again, tried again twice as late.
    assert_eq!(spawns(&lose_h1(&mut st, retry + 1.0)), []);
    let again = retry + 1.0 + 2.0 * HOST_RETRY_AFTER.as_secs_f64();
    assert_eq!(spawns(&st.tick(s(again - 0.1))), []);
    assert_eq!(
        spawns(&st.tick(s(again))),
        [(id(0, 1), 2, 1), (id(1, 1), 2, 1)]
    );
    // Nothing waits any more: no retry deadline.
    assert_eq!(st.next_host_retry(), None);
}

/// A host unreachable at start: its replicas are started again, afresh, on a spare host
/// before the rendezvous, and the table waits for them (before, the job ran at reduced
/// replication, silently).
#[test]
fn the_replicas_of_a_host_unreachable_at_start_start_again_elsewhere() {
    let hosts = (0..3)
        .map(|h| (format!("h{h}"), HostState::Launching))
        .collect();
    let mut st = JobState::new(regen(2, 2, Regenerate::Spare), hosts, |_, k| k as usize);
    st.set_slots(vec![2, 2, 2]);
    for h in 0..3 {
        st.handle(Input::LinkOpened { host: h }, s(0.0));
    }
    for h in [0, 2] {
        let hello = Input::Hello {
            host: h,
            hostname: format!("h{h}"),
            pid: 1,
        };
        st.handle(hello, s(0.0));
    }
    let lost = Input::HostLost {
        host: 1,
        why: "ssh: connection refused".into(),
    };
    let actions = st.handle(lost, s(0.5));
    assert_eq!(spawns(&actions), [(id(0, 1), 1, 2), (id(1, 1), 1, 2)]);
    assert_eq!(st.failure(), None);
    for who in [id(0, 0), id(1, 0)] {
        super::register(&mut st, who, s(0.6));
    }
    assert!(
        !st.tick(s(0.7))
            .iter()
            .any(|a| matches!(a, Action::Send { .. })),
        "the table waits for them"
    );
    for who in [id(0, 1), id(1, 1)] {
        let addr = format!("10.0.2.{}:7000", who.rank);
        st.handle(
            Input::Registered {
                id: who,
                inc: 1,
                addr,
            },
            s(0.8),
        );
    }
    let sent = st.tick(s(0.8));
    assert_eq!(
        sent.iter()
            .filter(|a| matches!(a, Action::Send { .. }))
            .count(),
        4,
        "{sent:?}"
    );
    assert_eq!(st.regenerations(), 2);
}
