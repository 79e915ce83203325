//! What the engine hands its driver: the rests of frames a direct write began, frames to
//! write now, frames that may wait for a write to their peer (speculative pulls), frames
//! to itself (handled by the engine in the same call), and events. Owns only the queues and their order: frames to one peer
//! leave in the order they were queued. Never decides what to send.

use std::collections::VecDeque;

use super::EngineEvent;
use crate::message::{ReplicaId, Want};
use crate::wire::Frame;

/// A frame whose first `written` bytes (header included) a direct write already put on
/// link `link` (`Engine::write_ahead`, `Engine::handle_written`): the driver writes the
/// rest on that link before anything else there, or nowhere if the link is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resumed {
    /// The replica it goes to.
    pub to: ReplicaId,
    /// The whole frame.
    pub frame: Frame,
    /// Bytes of the encoded frame already written.
    pub written: usize,
    /// The driver's name for the link they went on.
    pub link: u64,
}

/// The engine's output queues.
#[derive(Debug)]
pub(super) struct Outbox {
    me: ReplicaId,
    /// Rests of frames direct writes began.
    resumed: VecDeque<Resumed>,
    transmit: VecDeque<(ReplicaId, Frame)>,
    /// Frames that may wait for the next write to their peer (speculative pulls).
    deferred: VecDeque<(ReplicaId, Frame)>,
    /// Frames to this replica itself, dispatched by the engine before it returns.
    loopback: VecDeque<Frame>,
    events: VecDeque<EngineEvent>,
}

impl Outbox {
    pub(super) fn new(me: ReplicaId) -> Outbox {
        Outbox {
            me,
            resumed: VecDeque::new(),
            transmit: VecDeque::new(),
            deferred: VecDeque::new(),
            loopback: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// Queues `f` for `to` (to ourselves: on the loopback).
    pub(super) fn send(&mut self, to: ReplicaId, f: Frame) {
        if to == self.me {
            self.loopback.push_back(f);
        } else {
            self.transmit.push_back((to, f));
        }
    }

    /// Queues the rest of a frame a direct write began (never to ourselves).
    pub(super) fn resume(&mut self, r: Resumed) {
        debug_assert_ne!(r.to, self.me, "a direct write to ourselves");
        self.resumed.push_back(r);
    }

    /// Queues `f` for `to` as a frame that may wait for a write to `to` (never to
    /// ourselves: those go on the loopback at once).
    pub(super) fn defer(&mut self, to: ReplicaId, f: Frame) {
        if to == self.me {
            self.loopback.push_back(f);
        } else {
            self.deferred.push_back((to, f));
        }
    }

    /// True when frames wait to be written now.
    #[inline]
    pub(super) fn has_transmit(&self) -> bool {
        !self.transmit.is_empty() || !self.resumed.is_empty()
    }

    /// Whether frames to send now or events wait (`Engine::has_output`).
    #[inline]
    pub(super) fn has_output(&self) -> bool {
        self.has_transmit() || !self.events.is_empty()
    }

    pub(super) fn poll_resumed(&mut self) -> Option<Resumed> {
        self.resumed.pop_front()
    }

    /// A deferred pull for `want` goes now: the application waits for it. Returns
    /// whether it was still deferred.
    pub(super) fn hurry_pull(&mut self, want: Want) -> bool {
        let i = self
            .deferred
            .iter()
            .position(|(_, f)| matches!(f, Frame::Pull { want: w, .. } if *w == want));
        match i.and_then(|i| self.deferred.remove(i)) {
            Some(d) => {
                self.transmit.push_back(d);
                true
            }
            None => false,
        }
    }

    pub(super) fn event(&mut self, e: EngineEvent) {
        self.events.push_back(e);
    }

    pub(super) fn pop_loopback(&mut self) -> Option<Frame> {
        self.loopback.pop_front()
    }

    /// Next frame to write now, skipping those `stale` rejects.
    pub(super) fn poll_transmit(
        &mut self,
        stale: impl Fn(&Frame) -> bool,
    ) -> Option<(ReplicaId, Frame)> {
        while let Some((to, f)) = self.transmit.pop_front() {
            debug_assert_ne!(to, self.me, "a frame to ourselves on the wire");
            if !stale(&f) {
                return Some((to, f));
            }
        }
        None
    }

    pub(super) fn poll_deferred(&mut self) -> Option<(ReplicaId, Frame)> {
        self.deferred.pop_front()
    }

    pub(super) fn poll_deferred_to(
        &mut self,
        rides: impl Fn(ReplicaId) -> bool,
    ) -> Option<(ReplicaId, Frame)> {
        let i = self.deferred.iter().position(|(to, _)| rides(*to))?;
        self.deferred.remove(i)
    }

    pub(super) fn poll_event(&mut self) -> Option<EngineEvent> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ReqId;
    use crate::pull::engine::test_want;

    fn pull(seq: u64) -> Frame {
        Frame::Pull {
            want: want(seq),
            req: ReqId(seq),
            consumed: 0,
        }
    }

    fn want(seq: u64) -> Want {
        test_want(1, 0, seq)
    }

    #[test]
    fn frames_to_ourselves_go_on_the_loopback() {
        let me = ReplicaId::new(0, 0);
        let mut o = Outbox::new(me);
        o.send(me, pull(1));
        o.defer(me, pull(2));
        o.send(ReplicaId::new(1, 0), pull(3));
        assert_eq!(o.pop_loopback(), Some(pull(1)));
        assert_eq!(o.pop_loopback(), Some(pull(2)));
        assert_eq!(
            o.poll_transmit(|_| false),
            Some((ReplicaId::new(1, 0), pull(3)))
        );
        assert_eq!(o.poll_deferred(), None);
    }

    #[test]
    fn a_hurried_pull_leaves_the_deferred_queue_in_order() {
        let peer = ReplicaId::new(1, 0);
        let mut o = Outbox::new(ReplicaId::new(0, 0));
        o.defer(peer, pull(1));
        o.defer(peer, pull(2));
        o.send(peer, pull(3));
        o.hurry_pull(want(2));
        assert_eq!(o.poll_transmit(|_| false), Some((peer, pull(3))));
        assert_eq!(o.poll_transmit(|_| false), Some((peer, pull(2))));
        assert_eq!(o.poll_transmit(|_| false), None);
        assert_eq!(o.poll_deferred_to(|to| to == peer), Some((peer, pull(1))));
    }

    #[test]
    fn stale_frames_are_skipped() {
        let peer = ReplicaId::new(1, 0);
        let mut o = Outbox::new(ReplicaId::new(0, 0));
        o.send(peer, pull(1));
        o.send(peer, pull(2));
        assert_eq!(
            o.poll_transmit(|f| matches!(f, Frame::Pull { req, .. } if *req == ReqId(1))),
            Some((peer, pull(2)))
        );
    }
}
