//! Pulling ahead: on which streams (comm, tag, src) a receiver keeps pulls standing for
//! messages it has not asked for yet, how many, and whether they leave at once (eager)
//! or wait for a write to the sender (lazy). Owns the streams' marks and the window
//! policy; the engine (`receive::speculate_after`) makes the pulls. Must never send or
//! decide anything about a message already asked for.
//!
//! When the application takes a message of a stream, the engine asks for the stream's
//! next few messages right away (a collective's lazy stream: its next one; an `ANY_TAG`
//! receive's stream: by order number), half a window at a time, as deferred frames. They
//! leave with the next write to that sender, or as soon as the application waits for
//! something and the loop finds nothing to do, so it is never written on the way to a
//! message. By the time the application posts that receive the pull is already parked at
//! the sender (or answered), and each message costs one write on each side, as with a
//! push protocol. A stream whose speculative pull was still waiting when the application
//! posted the receive after computing for a while without writing to that sender (LU's
//! pipeline) is *eager*: its speculative pulls leave at once, so they are parked at the
//! sender before it sends, and the sender answers inside its send call. It is lazy again
//! once a receive follows the previous one closely (a loop of collectives): there the
//! extra write would cost more than it saves.

use std::time::Duration;

use crate::message::{Key, Set, Want};

/// A point-to-point or eager stream keeps pulls standing for its next messages up to this
/// many bytes (at the size of the last one), and at most `AHEAD_MAX` of them: the
/// receiver holds at most that much it did not ask for yet, per stream. (Lazy streams'
/// pulls wait for a write to the sender, eager ones' leave at once.) At 256 KiB, eight
/// standing pulls of 32 KiB made a 32 KiB ping-pong much slower; 16 KiB, 64 KiB and the
/// 4-rank pipeline were the same either way.
const AHEAD_BYTES: usize = 128 * 1024;
/// See `AHEAD_BYTES`.
pub(super) const AHEAD_MAX: usize = 8;

/// A receive posted this long after its stream's speculative pull was made, with the
/// pull still waiting for a write, turns the stream eager (sooner: lazy).
const EAGER_GAP: Duration = Duration::from_micros(50);

/// The tag of a stream of order-numbered pulls (`ANY_TAG` receives).
const ANY_TAG_STREAM: i32 = i32::MIN;

/// An exchange's block at least this large is not pulled ahead after (see `window`).
const LARGE_COLLECTIVE_BYTES: usize = crate::limits::DIRECT_WRITE_BYTES_MIN;

/// A stream: (comm, tag, src), or (comm, `ANY_TAG_STREAM`, src) for order-numbered pulls.
pub(super) type Stream = (u32, i32, u32);

/// The stream `want` belongs to.
pub(super) fn stream_of(want: &Want) -> Stream {
    match want {
        Want::Key(k) => (k.comm, k.tag, k.src),
        Want::Order { comm, src, .. } => (*comm, ANY_TAG_STREAM, *src),
    }
}

/// The stream of an `ANY_TAG` receive's messages from `src` on `comm`.
pub(super) fn any_tag_stream(comm: u32, src: u32) -> Stream {
    (comm, ANY_TAG_STREAM, src)
}

/// The streams' marks.
#[derive(Debug, Default)]
pub(super) struct Streams {
    /// Streams whose speculative pull was still waiting for a write when the application
    /// needed it, after computing at least `EAGER_GAP`, or whose message came `late`:
    /// theirs go at once.
    eager: Set<Stream>,
    /// Collective streams whose last large message came asking for confirmation: an
    /// exchange's, whose sender holds a large block until its pull comes (see
    /// `Core::send_unsettled`), where one pulled ahead would arrive before its receive
    /// and be copied there.
    confirmed: Set<Stream>,
}

impl Streams {
    /// Whether `stream`'s pulls leave at once.
    pub(super) fn is_eager(&self, stream: &Stream) -> bool {
        self.eager.contains(stream)
    }

    /// The application needs a message of `stream` that was pulled ahead `gap` ago;
    /// `waiting`: that pull still waited for a write to the sender.
    pub(super) fn on_needed(&mut self, stream: Stream, gap: Duration, waiting: bool) {
        if gap < EAGER_GAP {
            self.eager.remove(&stream);
        } else if waiting {
            // It waited while the application computed: the stream's next ones go at once.
            self.eager.insert(stream);
        }
    }

    /// A DATA of `key` came; `late`: its pull came after the sender had it for a while;
    /// `confirm`: its sender kept no copy and waits for a confirmation; `len`: its length
    /// (asked only for a collective's). A point-to-point stream whose message came late
    /// turns eager. Only point-to-point streams: a collective's receives follow one
    /// another closely and their pulls ride on the algorithm's own writes, so pulling
    /// ahead there costs a write per message (small broadcasts at 4 ranks on 2 cores 1.2x
    /// slower). Only a large collective message changes its stream's confirmation mark,
    /// so small collectives pay no lookup here.
    pub(super) fn on_data(
        &mut self,
        key: &Key,
        late: bool,
        confirm: bool,
        len: impl FnOnce() -> usize,
    ) {
        let stream = (key.comm, key.tag, key.src);
        if key.is_point_to_point() {
            if late {
                self.eager.insert(stream);
            }
        } else if len() >= LARGE_COLLECTIVE_BYTES {
            if confirm {
                self.confirmed.insert(stream);
            } else {
                self.confirmed.remove(&stream);
            }
        }
    }

    /// How many of `stream`'s next messages to pull ahead after the application took one
    /// of `len` bytes (of a point-to-point stream: `point_to_point`), and whether the
    /// stream is eager; `None`: none. A point-to-point or eager stream: a few, up to
    /// `AHEAD_BYTES` of messages of this size. A collective's lazy stream: one, since its
    /// messages are taken in a fixed order right after one another and more standing
    /// pulls only make large ones arrive before their receive can take them in place
    /// (broadcast of 1 MiB on 4 ranks: 0.55 -> 0.65 ms); none after a large block of an
    /// exchange (`confirmed`).
    pub(super) fn window(
        &self,
        stream: &Stream,
        point_to_point: bool,
        len: usize,
    ) -> Option<(usize, bool)> {
        let eager = self.is_eager(stream);
        if eager || point_to_point {
            Some(((AHEAD_BYTES / len.max(1)).clamp(1, AHEAD_MAX), eager))
        } else if len >= LARGE_COLLECTIVE_BYTES && self.confirmed.contains(stream) {
            None
        } else {
            Some((1, false))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(comm: u32) -> Key {
        Key {
            comm,
            tag: 3,
            src: 1,
            dst: 0,
            seq: 5,
        }
    }

    #[test]
    fn point_to_point_streams_pull_a_window_of_their_message_size() {
        let s = Streams::default();
        let st = stream_of(&Want::Key(key(0)));
        assert_eq!(s.window(&st, true, 8), Some((AHEAD_MAX, false)));
        assert_eq!(s.window(&st, true, 64 << 10), Some((2, false)));
        assert_eq!(s.window(&st, true, 1 << 20), Some((1, false)));
    }

    #[test]
    fn a_late_message_or_a_waiting_pull_after_a_gap_makes_a_stream_eager() {
        let mut s = Streams::default();
        let k = key(0);
        let st = stream_of(&Want::Key(k));
        assert!(k.is_point_to_point());
        s.on_data(&k, false, false, || 0);
        assert!(!s.is_eager(&st));
        s.on_data(&k, true, false, || 0);
        assert!(s.is_eager(&st));
        // A receive right behind the pull: lazy again.
        s.on_needed(st, EAGER_GAP / 2, true);
        assert!(!s.is_eager(&st));
        s.on_needed(st, EAGER_GAP, false);
        assert!(!s.is_eager(&st));
        s.on_needed(st, EAGER_GAP, true);
        assert!(s.is_eager(&st));
    }

    #[test]
    fn a_collective_stream_pulls_one_ahead_but_none_after_a_large_confirmed_block() {
        let mut s = Streams::default();
        let k = key(1);
        assert!(!k.is_point_to_point());
        let st = stream_of(&Want::Key(k));
        let large = LARGE_COLLECTIVE_BYTES;
        assert_eq!(s.window(&st, false, large), Some((1, false)));
        s.on_data(&k, false, true, || large);
        assert_eq!(s.window(&st, false, large), None);
        assert_eq!(s.window(&st, false, large - 1), Some((1, false)));
        s.on_data(&k, false, false, || 8);
        assert_eq!(
            s.window(&st, false, large),
            None,
            "a small message keeps the mark"
        );
        s.on_data(&k, false, false, || large);
        assert_eq!(s.window(&st, false, large), Some((1, false)));
    }
}
