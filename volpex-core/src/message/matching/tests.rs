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
