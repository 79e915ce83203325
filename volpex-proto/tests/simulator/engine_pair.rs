//! Engine-pair scenarios: two to four engines driven by hand, frame by frame, each test
//! pinning down one mechanism (confirmed unlogged sends, deferred speculative pulls,
//! choices carried with messages and found by a takeover, settling carried choices,
//! batching choices to followers).

use std::collections::HashSet;
use std::time::Duration;

use bytes::Bytes;
use volpex_proto::limits::UNLOGGED_BYTES_MIN;
use volpex_proto::message::matching::{Matched, Mode, RecvSpec, Source, TagSel};
use volpex_proto::message::{Key, ReplicaId, ReqId, ACK_TAG};
use volpex_proto::pull::{ChoiceState, Engine, RecvError, WriteAhead};
use volpex_proto::wire::Frame;

use crate::harness::{cfg, COMM};

/// Replica 0 of rank 0 (sender) and of rank 1 (receiver), started, in a job of 2 ranks
/// with `replicas` each, and the receive rank 1 posts: tag 3 from rank 0.
fn sender_and_receiver(replicas: u32) -> (ReplicaId, ReplicaId, Engine, Engine, RecvSpec) {
    let (sender, receiver) = (ReplicaId::new(0, 0), ReplicaId::new(1, 0));
    let mut tx = Engine::new(sender, 2, replicas, cfg());
    let mut rx = Engine::new(receiver, 2, replicas, cfg());
    tx.start(Duration::ZERO);
    rx.start(Duration::ZERO);
    let spec = RecvSpec {
        comm: COMM,
        src: Source::Rank(0),
        tag: TagSel::Tag(3),
    };
    (sender, receiver, tx, rx, spec)
}

/// The sender side of an unlogged send: a receiver answers a DATA that asks for
/// confirmation with its watermark at once (not at the next CONSUMED tick), and the
/// sender counts the message delivered only once every live replica's watermark passed
/// it; the message then reads as evicted (GONE to anyone who asks). DESIGN.md "Sender
/// log": a pull for an evicted key is answered GONE.
#[test]
fn confirmed_data_is_acknowledged_at_once_and_not_kept() {
    let now = Duration::ZERO;
    let (sender, receiver, mut tx, mut rx, spec) = sender_and_receiver(2);
    rx.post(now, spec, Mode::Receive);
    let pull = std::iter::from_fn(|| rx.poll_transmit().or_else(|| rx.poll_deferred()))
        .find(|(to, f)| *to == sender && matches!(f, Frame::Pull { .. }))
        .expect("the receive pulls from its own team's replica");
    tx.handle_frame(now, receiver, pull.1);
    let ahead = tx.write_ahead(COMM, 3, 1, UNLOGGED_BYTES_MIN, Some(UNLOGGED_BYTES_MIN));
    assert_eq!(ahead.writes.len(), 1);
    // Replica 1.1 is alive and has not asked: not everyone can confirm.
    assert!(!ahead.confirm);
    tx.handle_peer_down(now, ReplicaId::new(1, 1), true);
    let WriteAhead {
        key,
        order,
        writes,
        confirm,
        ..
    } = tx.write_ahead(COMM, 3, 1, UNLOGGED_BYTES_MIN, Some(UNLOGGED_BYTES_MIN));
    assert!(confirm);
    // Smaller messages, or a caller that keeps the copy, never skip the log.
    assert!(
        !tx.write_ahead(COMM, 3, 1, UNLOGGED_BYTES_MIN - 1, Some(UNLOGGED_BYTES_MIN))
            .confirm
    );
    assert!(!tx.write_ahead(COMM, 3, 1, UNLOGGED_BYTES_MIN, None).confirm);
    assert!(!tx.delivered(COMM, 1, order));

    rx.handle_frame(
        now,
        sender,
        Frame::Data {
            key,
            req: writes[0].req,
            order,
            payload: Bytes::from_static(b"payload"),
            confirm: true,
            late: false,
            sync: false,
        },
    );
    let consumed = std::iter::from_fn(|| rx.poll_transmit())
        .find(|(to, f)| *to == sender && matches!(f, Frame::Consumed { .. }))
        .expect("a confirmed DATA is answered with CONSUMED at once");
    tx.handle_frame(now, receiver, consumed.1);
    assert!(tx.delivered(COMM, 1, order));
    tx.send_unlogged(COMM, 3, 1);
    assert_eq!(tx.stats().unlogged, 1);
    assert_eq!(tx.write_ahead(COMM, 3, 1, 0, None).key.seq, key.seq + 1);
    // Asked again, the unlogged message is GONE.
    tx.handle_frame(
        now,
        receiver,
        Frame::Pull {
            want: volpex_proto::message::Want::Key(key),
            req: ReqId(99),
            consumed: 0,
        },
    );
    assert!(std::iter::from_fn(|| tx.poll_transmit())
        .any(|(to, f)| to == receiver && matches!(f, Frame::Gone { req: ReqId(99), .. })));
}

/// The engine is the only writer of wire bytes: the driver writes a large message's DATA
/// from the sender's buffer with the header the engine made, reports how much went out,
/// and once the message is logged the engine issues the rest on that link (nothing when
/// it went out whole), and a plain DATA to a receiver no direct write reached.
#[test]
fn the_rest_of_a_direct_write_comes_from_the_engine_once_logged() {
    let now = Duration::ZERO;
    let (sender, receiver, mut tx, mut rx, spec) = sender_and_receiver(1);
    // Two receives: pulls for the first two messages.
    rx.post(now, spec.clone(), Mode::Receive);
    rx.post(now, spec, Mode::Receive);
    let pulls: Vec<Frame> =
        std::iter::from_fn(|| rx.poll_transmit().or_else(|| rx.poll_deferred()))
            .filter(|(t, f)| *t == sender && matches!(f, Frame::Pull { .. }))
            .map(|(_, f)| f)
            .collect();
    assert_eq!(pulls.len(), 2, "{pulls:?}");
    for p in pulls {
        tx.handle_frame(now, receiver, p);
    }
    let _ = std::iter::from_fn(|| tx.poll_transmit()).count();
    let len = 100_000;
    let ahead = tx.write_ahead(COMM, 3, 1, len, None);
    assert_eq!(ahead.writes.len(), 1, "one pull waits here");
    let w = &ahead.writes[0];
    assert_eq!(w.to, receiver);
    let header = volpex_proto::wire::Header::decode(&w.header).expect("a valid header");
    assert_eq!(header.len as usize, len);
    assert!(!tx.wrote_ahead(COMM, 3, 1));
    // 1000 bytes went out on link 7.
    tx.handle_written(w.to, w.req, 1000, 7, ahead.confirm);
    assert!(
        tx.wrote_ahead(COMM, 3, 1),
        "begun: it must be logged, not held"
    );
    assert!(
        tx.poll_resumed().is_none(),
        "nothing to resume before the log"
    );
    tx.send(now, COMM, 3, 1, Bytes::from(vec![5u8; len]))
        .expect("the log has room");
    let rest = tx.poll_resumed().expect("the rest of the DATA");
    assert_eq!((rest.to, rest.written, rest.link), (receiver, 1000, 7));
    assert!(matches!(rest.frame, Frame::Data { req, .. } if req == w.req));
    assert!(
        !std::iter::from_fn(|| tx.poll_transmit())
            .any(|(to, f)| to == receiver && matches!(f, Frame::Data { .. })),
        "the receiver does not get the DATA twice"
    );
    // The next message, written whole: nothing more to write once logged.
    let ahead = tx.write_ahead(COMM, 3, 1, len, None);
    assert_eq!(ahead.writes.len(), 1, "the second pull waits here");
    let w = &ahead.writes[0];
    tx.handle_written(
        w.to,
        w.req,
        volpex_proto::limits::HEADER_BYTES + len,
        7,
        false,
    );
    tx.send(now, COMM, 3, 1, Bytes::from(vec![6u8; len]))
        .expect("the log has room");
    assert!(tx.poll_resumed().is_none(), "it went out whole");
    assert!(!std::iter::from_fn(|| tx.poll_transmit())
        .any(|(to, f)| to == receiver && matches!(f, Frame::Data { .. })));
    assert_eq!(tx.stats().served, 2);
}

/// Taking a message leaves speculative pulls for the stream's next ones that wait for a
/// write to their sender (or for the driver to idle); posting the receive that needs
/// the next message sends its pull at once instead, the others still wait. DESIGN.md "Pull protocol": a receive is
/// posted as a pull; posted before the send, the data crosses the network once.
#[test]
fn a_deferred_pull_goes_at_once_when_its_receive_is_posted() {
    let now = Duration::ZERO;
    let (sender, receiver, mut tx, mut rx, spec) = sender_and_receiver(1);
    // The sender sends `payload` to rank 1; the receiver gets what it answers with.
    let deliver = |tx: &mut Engine, rx: &mut Engine, payload: &'static [u8]| {
        tx.send(now, COMM, 3, 1, Bytes::from_static(payload))
            .expect("the log has room");
        while let Some((to, f)) = tx.poll_transmit() {
            if to == receiver {
                rx.handle_frame(now, sender, f);
            }
        }
    };
    let pulls = |e: &mut Engine, deferred: bool| -> Vec<Frame> {
        std::iter::from_fn(|| {
            if deferred {
                e.poll_deferred()
            } else {
                e.poll_transmit()
            }
        })
        .filter(|(to, f)| *to == sender && matches!(f, Frame::Pull { .. }))
        .map(|(_, f)| f)
        .collect()
    };
    let first = rx.post(now, spec.clone(), Mode::Receive);
    for pull in pulls(&mut rx, false) {
        tx.handle_frame(now, receiver, pull);
    }
    deliver(&mut tx, &mut rx, b"one");
    assert!(matches!(rx.take(now, first), Some(Ok(_))));
    // The pull for the second message waits for a write.
    assert!(pulls(&mut rx, false).is_empty());
    let second = rx.post(now, spec, Mode::Receive);
    let sent = pulls(&mut rx, false);
    assert_eq!(sent.len(), 1, "the needed pull goes at once: {sent:?}");
    let waiting = pulls(&mut rx, true);
    assert!(
        !waiting.iter().any(|f| sent.contains(f)),
        "and is not deferred any more: {waiting:?}"
    );
    assert_eq!(waiting.len(), 7, "the seven after it wait: {waiting:?}");
    for pull in sent {
        tx.handle_frame(now, receiver, pull);
    }
    deliver(&mut tx, &mut rx, b"two");
    assert!(matches!(rx.take(now, second), Some(Ok(_))));
}

/// A large message that landed straight in its receive's buffer reaches the engine
/// without payload; the window of pulls asked ahead after it is sized by its real
/// length (128 KiB of 64 KiB messages: two), not as for an empty message (eight).
#[test]
fn a_landed_message_sizes_the_pull_ahead_window_by_its_length() {
    assert_eq!(pulls_ahead_after(COMM, 64 << 10, false), 2);
}

/// A collective's stream asks for its next message ahead, unless the message just taken
/// was a large block of an exchange (it came asking for confirmation): its sender holds
/// such a block until its pull comes (see `Core::send_unsettled`), and one pulled ahead
/// would arrive before its receive and be copied there. A large broadcast's message
/// (no confirmation) is still pulled ahead.
#[test]
fn a_collective_stream_pulls_ahead_except_after_a_large_exchange_block() {
    let collective = COMM + 1;
    assert_eq!(pulls_ahead_after(collective, 1 << 10, true), 1);
    assert_eq!(pulls_ahead_after(collective, 64 << 10, false), 1);
    assert_eq!(pulls_ahead_after(collective, 64 << 10, true), 0);
}

/// The pulls rank 1 asks ahead of rank 0 after taking one message of `len` bytes on
/// `comm` (tag 3) that landed straight in its receive's buffer, its DATA asking for
/// confirmation if `confirm`.
fn pulls_ahead_after(comm: u32, len: usize, confirm: bool) -> usize {
    after_one_message(comm, len, confirm).4.len()
}

/// `pulls_ahead_after`'s scene: the sender, the receiver, their engines, and the pulls
/// the receiver made ahead (not yet given to the sender).
fn after_one_message(
    comm: u32,
    len: usize,
    confirm: bool,
) -> (ReplicaId, ReplicaId, Engine, Engine, Vec<Frame>) {
    after_one_message_tagged(comm, 3, len, confirm)
}

/// `after_one_message` with `tag`.
fn after_one_message_tagged(
    comm: u32,
    tag: i32,
    len: usize,
    confirm: bool,
) -> (ReplicaId, ReplicaId, Engine, Engine, Vec<Frame>) {
    let now = Duration::ZERO;
    let (sender, receiver, mut tx, mut rx, spec) = sender_and_receiver(1);
    let spec = RecvSpec {
        comm,
        tag: TagSel::Tag(tag),
        ..spec
    };
    let first = rx.post(now, spec, Mode::Receive);
    for (to, f) in std::iter::from_fn(|| rx.poll_transmit()) {
        if to == sender {
            tx.handle_frame(now, receiver, f);
        }
    }
    tx.send(now, comm, tag, 1, Bytes::from(vec![7u8; len]))
        .expect("the log has room");
    let data = std::iter::from_fn(|| tx.poll_transmit())
        .find_map(|(to, f)| match f {
            Frame::Data { .. } if to == receiver => Some(f),
            _ => None,
        })
        .expect("the pull is answered");
    let Frame::Data {
        key,
        req,
        order,
        late,
        sync,
        ..
    } = data
    else {
        unreachable!("found as DATA")
    };
    rx.note_landed(key, len);
    rx.handle_frame(
        now,
        sender,
        Frame::Data {
            key,
            req,
            order,
            payload: Bytes::new(),
            confirm,
            late,
            sync,
        },
    );
    assert!(matches!(rx.take(now, first), Some(Ok(_))));
    let pulls = std::iter::from_fn(|| rx.poll_transmit().or_else(|| rx.poll_deferred()))
        .filter(|(to, f)| *to == sender && matches!(f, Frame::Pull { .. }))
        .map(|(_, f)| f)
        .collect();
    (sender, receiver, tx, rx, pulls)
}

/// An acknowledgement (`ACK_TAG`: an empty message a one-sided target sends for a
/// request without an answer) is never pulled ahead: its receiver posts each one before
/// the request it acknowledges, whose write carries the pull, so pulls ahead would only
/// stand at the target. An empty message of another tag is. docs/PROTOCOL.md "Passive
/// target".
#[test]
fn an_acknowledgement_is_not_pulled_ahead() {
    assert_eq!(after_one_message_tagged(COMM, ACK_TAG, 0, false).4.len(), 0);
    assert!(pulls_ahead_after(COMM, 0, false) > 0);
}

/// Freeing a communicator (MPI_Comm_free) withdraws the pulls made ahead on it that no
/// receive waits for, with CANCEL, so the sender answers none of them; a pull a posted
/// receive waits for stays. (Each freed window left such pulls behind for the job's
/// life, and every turn of the loop scanned their deadlines.)
#[test]
fn freeing_a_communicator_withdraws_its_pulls_ahead_but_not_a_receive_s() {
    let now = Duration::ZERO;
    let (sender, receiver, mut tx, mut rx, pulls) = after_one_message(COMM, 64 << 10, false);
    assert_eq!(pulls.len(), 2, "two pulls ahead, for messages 1 and 2");
    for f in pulls {
        tx.handle_frame(now, receiver, f);
    }
    let spec = RecvSpec {
        comm: COMM,
        src: Source::Rank(0),
        tag: TagSel::Tag(3),
    };
    let second = rx.post(now, spec, Mode::Receive);
    rx.forget_contexts(&[COMM, COMM + 1]);
    let cancels: Vec<Frame> = std::iter::from_fn(|| rx.poll_transmit())
        .filter(|(to, f)| *to == sender && matches!(f, Frame::Cancel { .. }))
        .map(|(_, f)| f)
        .collect();
    assert_eq!(cancels.len(), 1, "message 2's pull, not message 1's");
    for f in cancels {
        tx.handle_frame(now, receiver, f);
    }
    let mut answered = 0;
    for n in 1..=2u8 {
        tx.send(now, COMM, 3, 1, Bytes::from(vec![n; 8]))
            .expect("the log has room");
        for (to, f) in std::iter::from_fn(|| tx.poll_transmit()) {
            if to == receiver && matches!(f, Frame::Data { .. }) {
                answered += 1;
                rx.handle_frame(now, sender, f);
            }
        }
    }
    assert_eq!(answered, 1, "only the receive's pull is answered");
    assert!(matches!(rx.take(now, second), Some(Ok(_))));
}

/// A message that depends on a choice its siblings do not hold yet leaves at once,
/// carrying the choice; when the leader then dies, the replica taking over asks the
/// other ranks' replicas too and adopts the choice from the receiver of that message
/// instead of deciding the slot anew. DESIGN.md "Message identity and matching": the
/// choice of source must be the same in every replica of the receiver.
#[test]
fn a_message_carries_its_choices_and_the_takeover_finds_them() {
    let now = Duration::ZERO;
    let (leader, follower) = (ReplicaId::new(0, 0), ReplicaId::new(0, 1));
    let (receiver, other) = (ReplicaId::new(1, 0), ReplicaId::new(1, 1));
    let mut l = Engine::new(leader, 2, 2, cfg());
    let mut f = Engine::new(follower, 2, 2, cfg());
    let mut q = Engine::new(receiver, 2, 2, cfg());
    let mut o = Engine::new(other, 2, 2, cfg());
    for e in [&mut l, &mut f, &mut q, &mut o] {
        e.start(now);
        while e.poll_transmit().is_some() {}
    }
    let slot = l.post_choice().expect("choices are coordinated at r = 2");
    assert!(matches!(l.choice(now, slot), ChoiceState::Yours));
    let chosen = Bytes::from_static(b"the choice");
    l.make_choice(now, slot, chosen.clone());
    while l.poll_transmit().is_some() {} // the choice to the follower is lost with `l`
    l.send(now, COMM, 3, 1, Bytes::from_static(b"depends on it"))
        .expect("room in the log");
    let spec = RecvSpec {
        comm: COMM,
        src: Source::Rank(0),
        tag: TagSel::Tag(3),
    };
    let id = q.post(now, spec, Mode::Receive);
    let pull = std::iter::from_fn(|| q.poll_transmit().or_else(|| q.poll_deferred()))
        .find(|(to, f)| *to == leader && matches!(f, Frame::Pull { .. }))
        .expect("the receive pulls from its own team's replica");
    l.handle_frame(now, receiver, pull.1);
    let answer: Vec<Frame> = std::iter::from_fn(|| l.poll_transmit())
        .filter(|(to, _)| *to == receiver)
        .map(|(_, f)| f)
        .collect();
    assert!(
        matches!(
            &answer[..],
            [
                Frame::Choices {
                    rank: 0,
                    term: 0,
                    stable: 0,
                    ..
                },
                Frame::Data { .. }
            ]
        ),
        "the message leaves at once, after the choice it depends on: {answer:?}"
    );
    for frame in answer {
        q.handle_frame(now, leader, frame);
    }
    assert!(matches!(q.take(now, id), Some(Ok(Matched::Message { .. }))));

    // The leader dies before the follower heard of the choice.
    for e in [&mut f, &mut q, &mut o] {
        e.handle_peer_down(now, leader, true);
    }
    let asked: Vec<(ReplicaId, Frame)> = std::iter::from_fn(|| f.poll_transmit())
        .filter(|(_, fr)| matches!(fr, Frame::Takeover { .. }))
        .collect();
    let asked_whom: HashSet<ReplicaId> = asked.iter().map(|(to, _)| *to).collect();
    assert_eq!(asked_whom, HashSet::from([receiver, other]));
    assert!(matches!(f.choice(now, slot), ChoiceState::Waiting));
    for (to, takeover) in asked {
        let e = if to == receiver { &mut q } else { &mut o };
        e.handle_frame(now, follower, takeover);
        let decided = std::iter::from_fn(|| e.poll_transmit())
            .find(|(to, fr)| *to == follower && matches!(fr, Frame::Decided { .. }))
            .expect("every replica answers a takeover");
        f.handle_frame(now, to, decided.1);
    }
    assert!(
        matches!(f.choice(now, slot), ChoiceState::Made(b) if b == chosen),
        "the new leader adopted the choice the receiver depends on"
    );
}

/// A receiver that got a leader's own choices along with a message carries them before
/// the messages it serves any replica of that rank but the leader itself, which holds
/// them: every DATA between two leaders carried the receiver's own choices back to it
/// (a CHOICES frame of about five entries each way per put + flush at `-r 2`). Once that
/// leader is gone, a new incarnation at its place holds nothing and gets them again.
#[test]
fn a_leader_s_own_choices_are_not_carried_back_to_it() {
    // The leader dies and a new incarnation replays at its place.
    own_choices_carried_back(|q, leader, now| {
        q.handle_peer_down(now, leader, true);
        q.handle_peer_joining(now, leader, 1, false);
    });
}

/// The same with the leader handing its state over to a new incarnation (a preemption
/// notice's handover), announced as starting first and joining without a death notice
/// of its predecessor: its joining ends the predecessor (`Engine::peer_gone`), so it gets
/// them again too.
#[test]
fn a_leader_s_own_choices_go_to_a_newcomer_at_its_place() {
    own_choices_carried_back(|q, leader, now| {
        q.handle_peers_starting(now, &[leader]);
        q.handle_peer_joining(now, leader, 1, true);
    });
}

/// Rank 0's leader makes a choice and sends rank 1's leader `q` a message after it;
/// `q`'s reply carries the choice to rank 0's follower but not back to the leader; then
/// `newcomer` puts a new incarnation at the leader's place, which gets it again.
fn own_choices_carried_back(newcomer: impl Fn(&mut Engine, ReplicaId, Duration)) {
    let now = Duration::ZERO;
    let (leader, follower) = (ReplicaId::new(0, 0), ReplicaId::new(0, 1));
    let receiver = ReplicaId::new(1, 0);
    let mut l = Engine::new(leader, 2, 2, cfg());
    let mut q = Engine::new(receiver, 2, 2, cfg());
    for e in [&mut l, &mut q] {
        e.start(now);
        while e.poll_transmit().is_some() {}
    }
    let slot = l.post_choice().expect("coordinated");
    l.make_choice(now, slot, Bytes::from_static(b"c"));
    while l.poll_transmit().is_some() {}
    // The pull of message `seq` from `src` to `dst` (tag 3), answered by `by`: its frames.
    let pull = |by: &mut Engine, from: ReplicaId, src: u32, seq: u64| -> Vec<Frame> {
        by.handle_frame(
            now,
            from,
            Frame::Pull {
                want: volpex_proto::message::Want::Key(Key {
                    comm: COMM,
                    tag: 3,
                    src,
                    dst: from.rank,
                    seq,
                }),
                req: ReqId(seq + 1),
                consumed: seq,
            },
        );
        std::iter::from_fn(|| by.poll_transmit())
            .filter(|(to, _)| *to == from)
            .map(|(_, f)| f)
            .collect()
    };
    l.send(now, COMM, 3, 1, Bytes::from_static(b"after the choice"))
        .unwrap();
    let to_receiver = pull(&mut l, receiver, 0, 0);
    assert!(
        matches!(
            &to_receiver[..],
            [
                Frame::Choices {
                    rank: 0,
                    term: 0,
                    ..
                },
                Frame::Data { .. }
            ]
        ),
        "{to_receiver:?}"
    );
    for f in to_receiver {
        q.handle_frame(now, leader, f);
    }
    let carries_rank_0 = |frames: &[Frame]| {
        frames
            .iter()
            .any(|f| matches!(f, Frame::Choices { rank: 0, .. }))
    };
    q.send(now, COMM, 3, 0, Bytes::from_static(b"reply"))
        .unwrap();
    let to_leader = pull(&mut q, leader, 1, 0);
    assert!(
        matches!(to_leader.last(), Some(Frame::Data { .. })) && !carries_rank_0(&to_leader),
        "not back to their author: {to_leader:?}"
    );
    let to_follower = pull(&mut q, follower, 1, 0);
    assert!(carries_rank_0(&to_follower), "{to_follower:?}");
    // A new incarnation at the leader's place holds none of them.
    newcomer(&mut q, leader, now);
    while q.poll_transmit().is_some() {}
    let to_newcomer = pull(&mut q, leader, 1, 0);
    assert!(carries_rank_0(&to_newcomer), "{to_newcomer:?}");
}

/// A receiver that got choices along with a message stops carrying them once it hears
/// they became stable: the sender tells it before its next message.
#[test]
fn carried_choices_are_settled_with_the_next_message() {
    let now = Duration::ZERO;
    let (leader, follower, receiver) = (
        ReplicaId::new(0, 0),
        ReplicaId::new(0, 1),
        ReplicaId::new(1, 0),
    );
    let mut l = Engine::new(leader, 2, 2, cfg());
    let slot = l.post_choice().expect("coordinated");
    l.make_choice(now, slot, Bytes::from_static(b"c"));
    let answer_to = |l: &mut Engine, req: u64, seq: u64| -> Vec<Frame> {
        l.handle_frame(
            now,
            receiver,
            Frame::Pull {
                want: volpex_proto::message::Want::Key(Key {
                    comm: COMM,
                    tag: 3,
                    src: 0,
                    dst: 1,
                    seq,
                }),
                req: ReqId(req),
                consumed: seq,
            },
        );
        std::iter::from_fn(|| l.poll_transmit())
            .filter(|(to, _)| *to == receiver)
            .map(|(_, f)| f)
            .collect()
    };
    l.send(now, COMM, 3, 1, Bytes::from_static(b"one")).unwrap();
    let first = answer_to(&mut l, 1, 0);
    assert!(
        matches!(&first[..], [Frame::Choices { stable: 0, entries, .. }, Frame::Data { .. }] if !entries.is_empty())
    );
    // The follower reports it holds the slot: it is stable now.
    l.handle_frame(
        now,
        follower,
        Frame::Consumed {
            comm: u32::MAX,
            src: 0,
            dst: 0,
            watermark: slot + 1,
        },
    );
    l.send(now, COMM, 3, 1, Bytes::from_static(b"two")).unwrap();
    let second = answer_to(&mut l, 2, 1);
    assert!(
        matches!(&second[..], [Frame::Choices { stable, entries, .. }, Frame::Data { .. }] if *stable == slot + 1 && entries.is_empty()),
        "{second:?}"
    );
    l.send(now, COMM, 3, 1, Bytes::from_static(b"three"))
        .unwrap();
    let third = answer_to(&mut l, 3, 2);
    assert!(matches!(&third[..], [Frame::Data { .. }]), "{third:?}");
}

/// A leader sends its follower new choices in batches: the follower's standing pull is
/// answered once `CHOICES_BATCH` choices are made, or `CHOICES_BATCH_WAIT` after the
/// first of fewer (the leader's `poll_timeout` says when), each time with all of them.
#[test]
fn a_leader_sends_its_follower_choices_in_batches() {
    use volpex_proto::limits::{CHOICES_BATCH, CHOICES_BATCH_WAIT};
    let (leader, follower) = (ReplicaId::new(0, 0), ReplicaId::new(0, 1));
    let mut l = Engine::new(leader, 1, 2, cfg());
    let mut f = Engine::new(follower, 1, 2, cfg());
    let start = Duration::ZERO;
    l.start(start);
    f.start(start);
    // Frames between the two; returns the slots of the choices the follower got.
    let pump = |now: Duration, l: &mut Engine, f: &mut Engine| -> Vec<u64> {
        let mut got = Vec::new();
        loop {
            let mut moved = false;
            while let Some((to, fr)) = l.poll_transmit().or_else(|| l.poll_deferred()) {
                if to == follower {
                    if let Frame::Data { key, .. } = &fr {
                        got.push(key.seq);
                    }
                    f.handle_frame(now, leader, fr);
                    moved = true;
                }
            }
            while let Some((to, fr)) = f.poll_transmit().or_else(|| f.poll_deferred()) {
                if to == leader {
                    l.handle_frame(now, follower, fr);
                    moved = true;
                }
            }
            if !moved {
                return got;
            }
        }
    };
    // The follower waits for the first choice with a pull parked at the leader.
    let first = f.post_choice().expect("choices are coordinated at r = 2");
    assert!(matches!(f.choice(start, first), ChoiceState::Waiting));
    pump(start, &mut l, &mut f);
    let choose = |now: Duration, l: &mut Engine| {
        let slot = l.post_choice().expect("the leader chooses");
        assert!(matches!(l.choice(now, slot), ChoiceState::Yours));
        l.make_choice(now, slot, Bytes::from(slot.to_le_bytes().to_vec()));
    };
    // Fewer than a batch: nothing until the wait is over.
    let few = CHOICES_BATCH / 2;
    for _ in 0..few {
        choose(start, &mut l);
    }
    assert_eq!(pump(start, &mut l, &mut f), Vec::<u64>::new());
    let due = start + CHOICES_BATCH_WAIT;
    assert!(l.poll_timeout().is_some_and(|t| t <= due));
    l.handle_timeout(due);
    assert_eq!(pump(due, &mut l, &mut f), (0..few).collect::<Vec<_>>());
    assert!(matches!(f.choice(due, first), ChoiceState::Made(_)));
    // A full batch goes at once, in one answer to the pull standing for its first slot.
    for _ in 0..CHOICES_BATCH - 1 {
        choose(due, &mut l);
    }
    assert_eq!(pump(due, &mut l, &mut f), Vec::<u64>::new());
    choose(due, &mut l);
    assert_eq!(
        pump(due, &mut l, &mut f),
        (few..few + CHOICES_BATCH).collect::<Vec<_>>()
    );
}

/// A timer turn at a fetch's deadline (here the hedge turns of two receives nobody
/// answers, posted 20 ms apart) leaves the next deadline after it: the fetches' deadline
/// floors are made exact at the turn, so a driver does not turn again at once for a
/// deadline already handled.
#[test]
fn a_timer_turn_moves_the_next_deadline_past_the_one_it_handled() {
    let (_, _, _tx, mut rx, spec) = sender_and_receiver(2);
    let other = RecvSpec {
        tag: TagSel::Tag(4),
        ..spec.clone()
    };
    rx.post(Duration::ZERO, spec, Mode::Receive);
    rx.post(Duration::from_millis(20), other, Mode::Receive);
    while rx.poll_transmit().or_else(|| rx.poll_deferred()).is_some() {}
    let mut t = rx.poll_timeout().expect("a pulled message has a deadline");
    while t < Duration::from_millis(1000) {
        rx.handle_timeout(t);
        while rx.poll_transmit().or_else(|| rx.poll_deferred()).is_some() {}
        let next = rx.poll_timeout().expect("the receive still waits");
        assert!(next > t, "the turn at {t:?} left {next:?} due");
        t = next;
    }
}

/// Delivers every frame the engines send each other (frames to engines not in the list
/// are dropped) until none moves.
fn exchange(now: Duration, engines: &mut [&mut Engine]) {
    loop {
        let mut frames = Vec::new();
        for e in engines.iter_mut() {
            let from = e.me();
            while let Some((to, f)) = e.poll_transmit().or_else(|| e.poll_deferred()) {
                frames.push((from, to, f));
            }
        }
        if frames.is_empty() {
            return;
        }
        for (from, to, f) in frames {
            if let Some(e) = engines.iter_mut().find(|e| e.me() == to) {
                e.handle_frame(now, from, f);
            }
        }
    }
}

/// A sender whose program ended (it finalized, say after `main` returned an error)
/// answers pulls for messages it never sent with ENDED; a receive fails with
/// `SenderEnded` once every live replica of the sender ended, and not before (a
/// replica that still runs may yet send it), and so does a wildcard receive that can
/// match nothing else. DESIGN.md "Failure detection": no hang.
#[test]
fn a_receive_from_a_rank_whose_program_ended_fails_instead_of_waiting() {
    let now = Duration::ZERO;
    let (s0, s1, r0) = (
        ReplicaId::new(0, 0),
        ReplicaId::new(0, 1),
        ReplicaId::new(1, 0),
    );
    let mut tx0 = Engine::new(s0, 2, 2, cfg());
    let mut tx1 = Engine::new(s1, 2, 2, cfg());
    let mut rx = Engine::new(r0, 2, 2, cfg());
    for e in [&mut tx0, &mut tx1, &mut rx] {
        e.start(now);
    }
    // Rank 1's replica 1 is not in this scene.
    for e in [&mut tx0, &mut tx1, &mut rx] {
        e.handle_peer_down(now, ReplicaId::new(1, 1), true);
    }
    let exact = rx.post(
        now,
        RecvSpec {
            comm: COMM,
            src: Source::Rank(0),
            tag: TagSel::Tag(3),
        },
        Mode::Receive,
    );
    let wildcard = rx.post(
        now,
        RecvSpec {
            comm: COMM,
            src: Source::Any(vec![0].into()),
            tag: TagSel::Tag(4),
        },
        Mode::Receive,
    );
    exchange(now, &mut [&mut tx0, &mut tx1, &mut rx]);
    assert!(
        rx.take(now, exact).is_none(),
        "parked, waiting for the send"
    );

    tx0.finalize(now);
    exchange(now, &mut [&mut tx0, &mut tx1, &mut rx]);
    assert!(
        rx.take(now, exact).is_none(),
        "replica 0.1 still runs and may send it"
    );
    assert!(rx.take(now, wildcard).is_none());

    tx1.finalize(now);
    exchange(now, &mut [&mut tx0, &mut tx1, &mut rx]);
    for id in [exact, wildcard] {
        match rx.take(now, id) {
            Some(Err(RecvError::SenderEnded { rank: 0 })) => {}
            other => panic!("expected SenderEnded for rank 0, got {other:?}"),
        }
    }
    // A receive posted after the end fails as well: its pulls are answered at once.
    let after = rx.post(
        now,
        RecvSpec {
            comm: COMM,
            src: Source::Rank(0),
            tag: TagSel::Tag(6),
        },
        Mode::Receive,
    );
    exchange(now, &mut [&mut tx0, &mut tx1, &mut rx]);
    assert!(matches!(
        rx.take(now, after),
        Some(Err(RecvError::SenderEnded { rank: 0 }))
    ));
    // A message sent before the end is still served.
    let mut tx2 = Engine::new(s0, 2, 2, cfg());
    tx2.start(now);
    tx2.send(now, COMM, 5, 1, Bytes::from_static(b"before"))
        .expect("room in the log");
    tx2.finalize(now);
    let late = rx.post(
        now,
        RecvSpec {
            comm: COMM,
            src: Source::Rank(0),
            tag: TagSel::Tag(5),
        },
        Mode::Receive,
    );
    exchange(now, &mut [&mut tx2, &mut rx]);
    assert!(matches!(
        rx.take(now, late),
        Some(Ok(Matched::Message { .. }))
    ));
}

/// A failed connection to the last replica of a rank is no proof of death: when a whole
/// machine stalls, connections time out while their processes live on (a `-n 300 -r 3`
/// job on two cores once lost rank 299 that way after its result was out). The receive
/// waits, asks again over a new connection once its ack timeout passes, and gets the
/// message; only the launcher's word makes the rank lost. DESIGN.md "Failure detection".
#[test]
fn a_failed_connection_to_the_last_replica_of_a_rank_is_retried_not_a_lost_rank() {
    let now = Duration::ZERO;
    let (sender, receiver, mut tx, mut rx, spec) = sender_and_receiver(1);
    let first = rx.post(now, spec, Mode::Receive);
    // The pull goes out on a connection that then fails on both ends: it is lost.
    while rx.poll_transmit().or_else(|| rx.poll_deferred()).is_some() {}
    rx.handle_peer_down(now, sender, false);
    tx.handle_peer_down(now, receiver, false);
    assert!(rx.rank_alive(0) && tx.rank_alive(1));
    assert!(
        rx.take(now, first).is_none(),
        "waits for the launcher's word"
    );
    tx.send(now, COMM, 3, 1, Bytes::from_static(b"after the stall"))
        .expect("room in the log");
    // New connections work; the receive asks again when its ack timeout passes.
    let mut t = now;
    let got = loop {
        exchange(t, &mut [&mut tx, &mut rx]);
        if let Some(r) = rx.take(t, first) {
            break r;
        }
        assert!(t < 4 * cfg().ack_timeout, "the receive never asked again");
        t += Duration::from_millis(50);
        for e in [&mut tx, &mut rx] {
            if e.poll_timeout().is_some_and(|d| d <= t) {
                e.handle_timeout(t);
            }
        }
    };
    assert!(
        matches!(got, Ok(Matched::Message { .. })),
        "the message, got {got:?}"
    );
    assert!(
        t >= cfg().ack_timeout,
        "asked again only after the ack timeout"
    );

    // The launcher says the sender is gone: now the rank is lost.
    let second = rx.post(
        t,
        RecvSpec {
            comm: COMM,
            src: Source::Rank(0),
            tag: TagSel::Tag(4),
        },
        Mode::Receive,
    );
    rx.handle_peer_down(t, sender, true);
    assert!(!rx.rank_alive(0));
    assert!(matches!(
        rx.take(t, second),
        Some(Err(RecvError::RankLost { rank: 0 }))
    ));
}

/// A deferred receive (`Engine::defer`) the receiver's team needs after all: the
/// message stays in the log of every sender replica while only deferred (no CONSUMED
/// passes it, however long), and when the replica it would ask first is dead, the
/// receive taken later (`post_claimed`) pulls it from the other. Skipped instead, it
/// counts as received and the senders may drop it.
#[test]
fn a_deferred_message_stays_logged_and_is_fetched_from_a_live_sender_replica() {
    let now = Duration::ZERO;
    let (s0, s1, rx_id) = (
        ReplicaId::new(0, 0),
        ReplicaId::new(0, 1),
        ReplicaId::new(1, 0),
    );
    let mut senders = [Engine::new(s0, 2, 2, cfg()), Engine::new(s1, 2, 2, cfg())];
    let mut rx = Engine::new(rx_id, 2, 2, cfg());
    rx.start(now);
    for s in senders.iter_mut() {
        s.start(now);
        // The receiver's sibling is gone: only this receiver's watermark counts.
        s.handle_peer_down(now, ReplicaId::new(1, 1), true);
        for m in [&b"deferred"[..], b"taken"] {
            s.send(now, COMM, 3, 1, Bytes::copy_from_slice(m))
                .expect("room");
        }
    }
    rx.handle_peer_down(now, ReplicaId::new(1, 1), true);
    // Frames from the receiver to the sender replicas, and back, until none is left.
    let shuttle = |now: Duration, rx: &mut Engine, senders: &mut [Engine; 2]| loop {
        let mut moved = false;
        while let Some((to, f)) = rx.poll_transmit().or_else(|| rx.poll_deferred()) {
            if let Some(s) = senders.iter_mut().find(|s| s.me() == to) {
                s.handle_frame(now, rx_id, f);
            }
            moved = true;
        }
        for s in senders.iter_mut() {
            let from = s.me();
            while let Some((to, f)) = s.poll_transmit().or_else(|| s.poll_deferred()) {
                if to == rx_id {
                    rx.handle_frame(now, from, f);
                    moved = true;
                }
            }
        }
        if !moved {
            break;
        }
    };
    let deferred = rx.defer(COMM, 3, 0).expect("nothing posted before");
    let id = rx.post(now, spec_tag3(), Mode::Receive);
    shuttle(now, &mut rx, &mut senders);
    match rx.take(now, id) {
        Some(Ok(Matched::Message { key, .. })) => assert_eq!(key.seq, 1),
        other => panic!("{other:?}"),
    }
    let later = now + Duration::from_secs(1);
    rx.handle_timeout(later);
    shuttle(later, &mut rx, &mut senders);
    assert!(
        senders.iter().all(|s| !s.delivered(COMM, 1, 0)),
        "every sender replica keeps the deferred message"
    );
    // The replica of the receiver's team dies; the deferred message is taken after all.
    rx.handle_peer_down(later, s0, true);
    let id = rx.post_claimed(later, deferred);
    shuttle(later, &mut rx, &mut senders);
    match rx.take(later, id) {
        Some(Ok(Matched::Message { key, payload })) => {
            assert_eq!((key, &payload[..]), (deferred, &b"deferred"[..]));
        }
        other => panic!("{other:?}"),
    }
    let end = later + Duration::from_secs(1);
    rx.handle_timeout(end);
    shuttle(end, &mut rx, &mut senders);
    assert!(senders[1].delivered(COMM, 1, 1));

    // Skipped instead (a fresh pair of messages): the senders may drop it.
    for s in senders.iter_mut() {
        s.send(end, COMM, 3, 1, Bytes::from_static(b"skipped"))
            .expect("room");
    }
    let deferred = rx.defer(COMM, 3, 0).expect("nothing posted before");
    assert_eq!(deferred.seq, 2);
    rx.skip(deferred);
    let last = end + Duration::from_secs(1);
    rx.handle_timeout(last);
    shuttle(last, &mut rx, &mut senders);
    assert!(senders[1].delivered(COMM, 1, 2));
}

/// Tag 3 from rank 0 on the test communicator.
fn spec_tag3() -> RecvSpec {
    RecvSpec {
        comm: COMM,
        src: Source::Rank(0),
        tag: TagSel::Tag(3),
    }
}
