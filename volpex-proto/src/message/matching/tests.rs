//! Unit tests of `matching`.

use super::*;
use std::collections::HashMap;

/// Chooses everything itself and remembers what it chose.
#[derive(Default)]
struct Leader(HashMap<u64, Choice>);

impl Chooser for Leader {
    fn recorded(&mut self, slot: u64) -> Option<Choice> {
        self.0.get(&slot).copied()
    }
    fn may_choose(&mut self, _: u64) -> bool {
        true
    }
    fn record(&mut self, slot: u64, choice: Choice) {
        self.0.insert(slot, choice);
    }
}

/// Knows only what a leader recorded.
struct Follower(HashMap<u64, Choice>);

impl Chooser for Follower {
    fn recorded(&mut self, slot: u64) -> Option<Choice> {
        self.0.get(&slot).copied()
    }
    fn may_choose(&mut self, _: u64) -> bool {
        false
    }
    fn record(&mut self, _: u64, _: Choice) {
        unreachable!("a follower never chooses")
    }
}

fn key(tag: i32, src: u32, seq: u64) -> Key {
    Key {
        comm: 0,
        tag,
        src,
        dst: 9,
        seq,
    }
}

fn any(ranks: &[u32]) -> Source {
    Source::Any(ranks.to_vec().into())
}

fn run(m: &mut Matcher<()>, c: &mut dyn Chooser, marks: &HashMap<u32, u64>) -> Vec<Need> {
    let mut needs = Vec::new();
    m.resolve(
        &|_, src| marks.get(&src).copied().unwrap_or(0),
        c,
        &mut needs,
    );
    needs
}

fn got(m: &mut Matcher<()>, id: RecvId) -> Option<Key> {
    match m.take(id) {
        Some((Ok(Matched::Message { key, .. }), _)) => Some(key),
        _ => None,
    }
}

/// MPI-3.1 section 3.5: a posted specific receive keeps its message even when a
/// wildcard receive posted later could match it.
#[test]
fn posted_specific_receive_keeps_its_message() {
    let mut m = Matcher::<()>::new(9);
    let mut c = Leader::default();
    let marks = HashMap::new();
    let specific = m.post(RecvSpec::exact(0, 1, 5), Mode::Receive, None);
    let wild = m.post(
        RecvSpec {
            comm: 0,
            src: any(&[1, 2]),
            tag: TagSel::Tag(5),
        },
        Mode::Receive,
        Some(0),
    );
    let needs = run(&mut m, &mut c, &marks);
    assert!(needs.contains(&Need::Message {
        want: Want::Key(key(5, 1, 1)),
        needed: false
    }));
    m.arrive(key(5, 1, 0), 0, Bytes::from_static(b"a"), 0);
    run(&mut m, &mut c, &marks);
    assert_eq!(got(&mut m, specific), Some(key(5, 1, 0)));
    assert_eq!(got(&mut m, wild), None);
    m.arrive(key(5, 2, 0), 0, Bytes::from_static(b"b"), 0);
    run(&mut m, &mut c, &marks);
    assert_eq!(got(&mut m, wild), Some(key(5, 2, 0)));
}

/// A receive posted after an unresolved wildcard waits for the wildcard's choice: the
/// seq it claims depends on it.
#[test]
fn later_specific_receive_waits_for_the_wildcard() {
    let mut m = Matcher::<()>::new(9);
    let mut c = Leader::default();
    let marks = HashMap::new();
    let wild = m.post(
        RecvSpec {
            comm: 0,
            src: any(&[1, 2]),
            tag: TagSel::Tag(0),
        },
        Mode::Receive,
        Some(0),
    );
    let specific = m.post(RecvSpec::exact(0, 1, 0), Mode::Receive, None);
    run(&mut m, &mut c, &marks);
    m.arrive(key(0, 1, 0), 0, Bytes::new(), 0);
    let needs = run(&mut m, &mut c, &marks);
    assert_eq!(got(&mut m, wild), Some(key(0, 1, 0)));
    assert!(needs.contains(&Need::Message {
        want: Want::Key(key(0, 1, 1)),
        needed: true
    }));
    m.arrive(key(0, 1, 1), 1, Bytes::new(), 1);
    assert_eq!(got(&mut m, specific), Some(key(0, 1, 1)));
}

/// A follower resolves exactly as the leader recorded, whatever arrived first there.
#[test]
fn follower_takes_the_recorded_choice() {
    let mut m = Matcher::<()>::new(9);
    let mut c = Follower(HashMap::new());
    let marks = HashMap::new();
    let spec = RecvSpec {
        comm: 0,
        src: any(&[1, 2]),
        tag: TagSel::Any,
    };
    let wild = m.post(spec, Mode::Receive, Some(3));
    m.arrive(key(4, 1, 0), 0, Bytes::new(), 0);
    let needs = run(&mut m, &mut c, &HashMap::from([(1, 1)]));
    assert!(needs.contains(&Need::Choice(3)));
    assert_eq!(got(&mut m, wild), None, "no choice yet");
    c.0.insert(3, Some((2, 7)));
    let needs = run(&mut m, &mut c, &marks);
    assert!(needs.contains(&Need::Message {
        want: Want::Key(key(7, 2, 0)),
        needed: true
    }));
    m.arrive(key(7, 2, 0), 0, Bytes::new(), 0);
    assert_eq!(got(&mut m, wild), Some(key(7, 2, 0)));
}

/// ANY_TAG from one source takes the earliest unclaimed message by order, skipping
/// what earlier receives claimed.
#[test]
fn any_tag_takes_the_earliest_unclaimed() {
    let mut m = Matcher::<()>::new(9);
    let mut c = Leader::default();
    let mut marks = HashMap::new();
    let first = m.post(RecvSpec::exact(0, 1, 8), Mode::Receive, None);
    let spec = RecvSpec {
        comm: 0,
        src: Source::Rank(1),
        tag: TagSel::Any,
    };
    let wild = m.post(spec, Mode::Receive, None);
    let needs = run(&mut m, &mut c, &marks);
    let order0 = Want::Order {
        comm: 0,
        src: 1,
        dst: 9,
        order: 0,
    };
    assert!(needs.contains(&Need::Message {
        want: order0,
        needed: true
    }));
    // Order 0 is the tag-8 message the first receive claimed; order 1 has tag 3.
    m.arrive(key(8, 1, 0), 0, Bytes::new(), 0);
    marks.insert(1, 1);
    assert_eq!(got(&mut m, first), Some(key(8, 1, 0)));
    run(&mut m, &mut c, &marks);
    m.arrive(key(3, 1, 0), 1, Bytes::new(), 1);
    marks.insert(1, 2);
    run(&mut m, &mut c, &marks);
    assert_eq!(got(&mut m, wild), Some(key(3, 1, 0)));
}

/// A probe leaves the message for the receive that follows it (MPI-3.1 section 3.8.1).
#[test]
fn probe_then_receive_get_the_same_message() {
    let mut m = Matcher::<()>::new(9);
    let mut c = Leader::default();
    let marks = HashMap::from([(2, 1)]);
    m.arrive(key(6, 2, 0), 0, Bytes::from_static(b"x"), 0);
    let spec = RecvSpec {
        comm: 0,
        src: any(&[1, 2]),
        tag: TagSel::Any,
    };
    let p = m.post(spec.clone(), Mode::Probe, Some(0));
    run(&mut m, &mut c, &marks);
    assert_eq!(got(&mut m, p), Some(key(6, 2, 0)));
    let r = m.post(RecvSpec::exact(0, 2, 6), Mode::Receive, None);
    run(&mut m, &mut c, &marks);
    assert_eq!(got(&mut m, r), Some(key(6, 2, 0)));
    let ip = m.post(spec, Mode::ImmediateProbe, Some(1));
    run(&mut m, &mut c, &marks);
    assert_eq!(m.take(ip), Some((Ok(Matched::Nothing), None)));
    assert_eq!(c.0.get(&1), Some(&None));
}

/// MPI_Iprobe of one stream (MPI-3.1 section 3.8.1) without coordination (one replica
/// per rank) says at once whether its message is here: nothing, while it is not (it is
/// fetched meanwhile), instead of waiting for it.
#[test]
fn uncoordinated_immediate_probe_of_one_stream_does_not_wait() {
    let mut m = Matcher::<()>::new(9);
    let mut c = Leader::default();
    let marks = HashMap::new();
    let ip = m.post(RecvSpec::exact(0, 1, 4), Mode::ImmediateProbe, None);
    let needs = run(&mut m, &mut c, &marks);
    assert_eq!(m.take(ip), Some((Ok(Matched::Nothing), None)));
    assert!(needs.contains(&Need::Message {
        want: Want::Key(key(4, 1, 0)),
        needed: true,
    }));
    m.arrive(key(4, 1, 0), 0, Bytes::from_static(b"x"), 0);
    let ip = m.post(RecvSpec::exact(0, 1, 4), Mode::ImmediateProbe, None);
    run(&mut m, &mut c, &marks);
    assert_eq!(got(&mut m, ip), Some(key(4, 1, 0)));
}

/// A follower's immediate probe waits for its leader's answer even when every source it
/// could match ended: it is not failed (the leader answers "nothing"), while a receive
/// from the same source is.
#[test]
fn coordinated_immediate_probe_is_not_failed_by_an_ended_source() {
    let mut m = Matcher::<&str>::new(9);
    let mut f = Follower(HashMap::new());
    let ip = m.post(RecvSpec::exact(0, 1, 4), Mode::ImmediateProbe, Some(0));
    let r = m.post(
        RecvSpec {
            comm: 0,
            src: any(&[1]),
            tag: TagSel::Tag(5),
        },
        Mode::Receive,
        Some(1),
    );
    let mut needs = Vec::new();
    m.resolve(&|_, _| 0, &mut f, &mut needs);
    m.fail_unresolved_by_candidates(&|_, _| 0, |_, _| Some("ended"));
    assert_eq!(m.take(ip), None);
    assert_eq!(m.take(r), Some((Err("ended"), None)));
    f.0.insert(0, None);
    m.resolve(&|_, _| 0, &mut f, &mut needs);
    assert_eq!(m.take(ip), Some((Ok(Matched::Nothing), None)));
}

/// A dropped receive still claims its message.
#[test]
fn detached_receive_still_claims() {
    let mut m = Matcher::<()>::new(9);
    let mut c = Leader::default();
    let marks = HashMap::new();
    let a = m.post(RecvSpec::exact(0, 1, 0), Mode::Receive, None);
    run(&mut m, &mut c, &marks);
    m.detach(a);
    let b = m.post(RecvSpec::exact(0, 1, 0), Mode::Receive, None);
    run(&mut m, &mut c, &marks);
    m.arrive(key(0, 1, 0), 0, Bytes::new(), 0);
    m.arrive(key(0, 1, 1), 1, Bytes::new(), 1);
    assert!(m.take(a).is_none());
    assert_eq!(got(&mut m, b), Some(key(0, 1, 1)));
}

/// MPI_Cancel of a receive nobody matched: it claims nothing, and the next receive of
/// its stream takes the message it would have got.
#[test]
fn a_cancelled_receive_leaves_its_message_to_the_next() {
    let mut m = Matcher::<()>::new(9);
    let mut c = Leader::default();
    let marks = HashMap::new();
    let r = m.post(RecvSpec::exact(0, 1, 5), Mode::Receive, None);
    run(&mut m, &mut c, &marks);
    assert!(m.may_cancel(r));
    let mut needs = Vec::new();
    assert_eq!(m.cancel(r, &mut needs), Ok(vec![key(5, 1, 0)]));
    assert!(m.is_quiet());
    let next = m.post(RecvSpec::exact(0, 1, 5), Mode::Receive, None);
    let needs = run(&mut m, &mut c, &marks);
    assert!(needs.contains(&Need::Message {
        want: Want::Key(key(5, 1, 0)),
        needed: true
    }));
    m.arrive(key(5, 1, 0), 0, Bytes::from_static(b"a"), 0);
    assert_eq!(got(&mut m, next), Some(key(5, 1, 0)));
}

/// A receive that got its message is not cancelled where it is decided.
#[test]
fn a_matched_receive_is_not_cancelled() {
    let mut m = Matcher::<()>::new(9);
    let mut c = Leader::default();
    let marks = HashMap::new();
    let r = m.post(RecvSpec::exact(0, 1, 5), Mode::Receive, None);
    run(&mut m, &mut c, &marks);
    m.arrive(key(5, 1, 0), 0, Bytes::from_static(b"a"), 0);
    assert!(!m.may_cancel(r));
    assert_eq!(got(&mut m, r), Some(key(5, 1, 0)));
}

/// Two receives of one stream, the first cancelled: the second moves up to seq 0. A
/// follower where both messages had arrived (so both receives completed) puts them
/// back and ends up where the leader is.
#[test]
fn later_receives_of_the_stream_move_up_in_every_replica() {
    let marks = HashMap::new();
    let mut leader = Matcher::<()>::new(9);
    let mut lc = Leader::default();
    let a = leader.post(RecvSpec::exact(0, 1, 5), Mode::Receive, None);
    let b = leader.post(RecvSpec::exact(0, 1, 5), Mode::Receive, None);
    run(&mut leader, &mut lc, &marks);
    assert!(leader.may_cancel(a));
    let mut needs = Vec::new();
    leader.cancel(a, &mut needs).unwrap();
    assert!(needs.contains(&Need::Message {
        want: Want::Key(key(5, 1, 0)),
        needed: true
    }));
    leader.arrive(key(5, 1, 0), 0, Bytes::from_static(b"x"), 0);
    assert_eq!(got(&mut leader, b), Some(key(5, 1, 0)));

    let mut follower = Matcher::<()>::new(9);
    let mut fc = Follower(HashMap::new());
    let a = follower.post(RecvSpec::exact(0, 1, 5), Mode::Receive, None);
    let b = follower.post(RecvSpec::exact(0, 1, 5), Mode::Receive, None);
    run(&mut follower, &mut fc, &marks);
    follower.arrive(key(5, 1, 0), 0, Bytes::from_static(b"x"), 0);
    follower.arrive(key(5, 1, 1), 1, Bytes::from_static(b"y"), 1);
    let mut needs = Vec::new();
    follower.cancel(a, &mut needs).unwrap();
    assert_eq!(got(&mut follower, b), Some(key(5, 1, 0)));
    // The message of seq 1 waits for the next receive.
    let c = follower.post(RecvSpec::exact(0, 1, 5), Mode::Receive, None);
    run(&mut follower, &mut fc, &marks);
    assert_eq!(got(&mut follower, c), Some(key(5, 1, 1)));
}

/// A later claim of the stream that was taken cannot move: the decider says no, and a
/// replica told "cancelled" all the same refuses instead of diverging.
#[test]
fn a_taken_later_claim_prevents_the_cancel() {
    let mut m = Matcher::<()>::new(9);
    let mut c = Leader::default();
    let marks = HashMap::new();
    let a = m.post(RecvSpec::exact(0, 1, 5), Mode::Receive, None);
    let b = m.post(RecvSpec::exact(0, 1, 5), Mode::Receive, None);
    run(&mut m, &mut c, &marks);
    m.arrive(key(5, 1, 1), 1, Bytes::new(), 0);
    assert_eq!(got(&mut m, b), Some(key(5, 1, 1)));
    assert!(!m.may_cancel(a));
    assert_eq!(m.cancel(a, &mut Vec::new()), Err(CancelDiverged));
}

/// A wildcard receive whose slot the leader filled with "cancelled" stays unresolved in
/// a follower (fetching nothing) until the follower cancels it too.
#[test]
fn a_wildcard_cancelled_by_the_leader_waits_for_the_follower_cancel() {
    struct Cancelled;
    impl Chooser for Cancelled {
        fn recorded(&mut self, _: u64) -> Option<Choice> {
            unreachable!("a cancelled slot is not read as a match")
        }
        fn may_choose(&mut self, _: u64) -> bool {
            false
        }
        fn record(&mut self, _: u64, _: Choice) {
            unreachable!("a follower never chooses")
        }
        fn cancelled(&mut self, _: u64) -> bool {
            true
        }
    }
    let mut m = Matcher::<()>::new(9);
    let spec = RecvSpec {
        comm: 0,
        src: any(&[1, 2]),
        tag: TagSel::Any,
    };
    let w = m.post(spec, Mode::Receive, Some(0));
    assert_eq!(m.slot_of(w), Some(0));
    m.arrive(key(4, 1, 0), 0, Bytes::new(), 0);
    let needs = run(&mut m, &mut Cancelled, &HashMap::new());
    assert!(needs.is_empty());
    assert!(m.take(w).is_none());
    m.cancel(w, &mut Vec::new()).unwrap();
    assert!(m.slot_of(w).is_none());
    assert!(!m.has_unresolved());
}

/// A receive posted after the cancelled one that takes any tag from the same source
/// could match differently in another replica once the cancel frees a message: the
/// decider says no while it is pending, yes once it is gone.
#[test]
fn a_pending_any_tag_receive_after_it_prevents_the_cancel() {
    let mut m = Matcher::<()>::new(9);
    let mut c = Leader::default();
    let marks = HashMap::new();
    let a = m.post(RecvSpec::exact(0, 1, 5), Mode::Receive, None);
    let later = RecvSpec {
        comm: 0,
        src: Source::Rank(1),
        tag: TagSel::Any,
    };
    let x = m.post(later, Mode::Receive, None);
    run(&mut m, &mut c, &marks);
    assert!(!m.may_cancel(a));
    m.detach(x);
    // Freed but still pending: still no.
    assert!(!m.may_cancel(a));
    // A receive from another source does not matter.
    let mut m = Matcher::<()>::new(9);
    let a = m.post(RecvSpec::exact(0, 1, 5), Mode::Receive, None);
    let other = RecvSpec {
        comm: 0,
        src: Source::Rank(2),
        tag: TagSel::Any,
    };
    m.post(other, Mode::Receive, None);
    run(&mut m, &mut c, &marks);
    assert!(m.may_cancel(a));
}
