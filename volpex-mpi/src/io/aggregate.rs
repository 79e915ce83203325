//! Collective reads and writes (MPI-3.1 section 13.4.3's `_all` calls), two-phase as
//! ROMIO does them: when the ranks' accesses interleave in the file, the range they
//! cover is cut into one contiguous domain per rank (the aggregators); in rounds of at
//! most `round_bytes` of each domain, every rank sends each aggregator its pieces that
//! fall there (their descriptors, then their data straight from the caller's buffer), and
//! the aggregator writes each contiguous run of what it got with one gathered write from
//! the transport's own buffers the data arrived in (the bytes are copied only by the
//! transport and the kernel). A read goes the other way: the aggregators read their
//! runs and send each rank its bytes. When the accesses do not interleave (each rank's
//! span is apart from the others'), each rank does its own access: its runs are as
//! large as its view makes them, and nothing crosses the network (ROMIO's
//! `romio_cb_write=automatic`).
//!
//! Every message here is an ordinary message of the file's communicators, so all
//! replicas of a rank send the same bytes; the aggregator's writes are that rank's,
//! applied by its writer replica. The aggregator's other replicas (followers) do not
//! receive the data blocks while the writer lives: they defer those receives and make
//! the writes without their bytes, fetching the blocks only if they become the writer
//! before it reported the writes applied (`write`, docs/FILES.md "Writes without their
//! bytes").
//!
//! Owns the exchange; must never change a file pointer or read the handle tables.

use super::access::{read_at, write_at};
use super::file::{comm_of, Handle};
use super::sys;
use crate::error::{MpiError, Result};
use crate::handles::class;
use crate::raw::{self, Loans};
use crate::state;
use crate::view::Piece;
use std::cell::Cell;
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

use bytes::Bytes;
use volpex::{Communicator, DeferredMessage, PostedMessage};

/// Bytes of each domain one round moves unless the `cb_buffer_size` hint says (ROMIO's
/// default is 16 MiB). A round's bytes are received and then written by the aggregator
/// (and received by each of its replicas): at 4 MiB they are still in the processor's
/// cache when the aggregator writes them, at 16 MiB they were not once its replicas and
/// the senders shared a 32 MiB cache (a 1 GiB strided write at `-r 2`: the aggregator's
/// copy into a tmpfs took 6 times as long, docs/conformance/io.md "Speed").
pub const BUFFER: u64 = 4 << 20;

/// The largest round a hint may ask for.
const BUFFER_MAX: u64 = 1 << 30;

/// The `cb_buffer_size` hint at open (a positive number of bytes, at most `BUFFER_MAX`),
/// rank 0's as in ROMIO (every rank must cut the rounds alike), else `BUFFER`.
pub fn round_bytes(comm: &Communicator, hints: &[(String, String)]) -> Result<u64> {
    let mine = hints
        .iter()
        .find(|(k, _)| k == "cb_buffer_size")
        .and_then(|(_, v)| v.trim().parse::<u64>().ok())
        .filter(|&b| b > 0)
        .map_or(BUFFER, |b| b.min(BUFFER_MAX));
    let mut all = vec![0u64; comm.size() as usize];
    comm.all_gather_into(&[mine][..], &mut all[..])?;
    Ok(all[0])
}

/// The aggregators of a file opened on `comm`: `cb_nodes` of them, spread over the
/// ranks, when the hints say so; else one per host, the lowest rank on each (ROMIO's
/// default). Every replica of every rank must get the same list, so each rank's host is
/// the one its leader replica runs on (`Communicator::decide`).
pub fn aggregators(comm: &Communicator, hints: &[(String, String)]) -> Result<Vec<usize>> {
    let n = comm.size() as usize;
    let wanted = hints
        .iter()
        .find(|(k, _)| k == "cb_nodes")
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .filter(|&k| k > 0);
    if let Some(k) = wanted {
        let k = k.min(n);
        return Ok((0..k).map(|i| i * n / k).collect());
    }
    let host = comm.decide(|| {
        use std::hash::{Hash, Hasher};
        // SipHash with fixed keys: the same name hashes the same in every process.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        crate::types::processor_name().hash(&mut h);
        h.finish()
    })?;
    let mut hosts = vec![0u64; n];
    comm.all_gather_into(&[host][..], &mut hosts[..])?;
    Ok((0..n)
        .filter(|&j| !hosts[..j].contains(&hosts[j]))
        .collect())
}

/// The span `[lo, hi)` of each rank's pieces (`(u64::MAX, 0)`: none).
fn spans(comm: &Communicator, pieces: &[Piece]) -> Result<Vec<[u64; 2]>> {
    let lo = pieces.iter().map(|p| p.0).min().unwrap_or(u64::MAX);
    let hi = pieces.iter().map(|p| p.0 + p.1 as u64).max().unwrap_or(0);
    let mut all = vec![[0u64; 2]; comm.size() as usize];
    comm.all_gather_into(&[[lo, hi]][..], &mut all[..])?;
    Ok(all)
}

/// Whether two ranks' spans overlap.
fn interleaved(spans: &[[u64; 2]]) -> bool {
    let mut s: Vec<[u64; 2]> = spans.iter().copied().filter(|s| s[0] < s[1]).collect();
    s.sort_unstable();
    s.windows(2).any(|w| w[1][0] < w[0][1])
}

/// The aggregators' domains: `[lo, hi)` cut in `n` contiguous parts.
fn domains(lo: u64, hi: u64, n: usize) -> Vec<(u64, u64)> {
    let len = hi - lo;
    let part = len.div_ceil(n as u64).max(1);
    (0..n as u64)
        .map(|i| {
            let a = (lo + i * part).min(hi);
            (a, (a + part).min(hi))
        })
        .collect()
}

/// The parts of `pieces` (with their data positions) inside `[a, b)`: (file offset,
/// data offset, length).
fn clip(
    pieces: &[(u64, usize, usize)],
    a: u64,
    b: u64,
) -> impl Iterator<Item = (u64, usize, usize)> + '_ {
    pieces.iter().filter_map(move |&(off, at, len)| {
        let s = off.max(a);
        let e = (off + len as u64).min(b);
        (s < e).then(|| (s, at + (s - off) as usize, (e - s) as usize))
    })
}

/// The pieces of an access with the data offset of each.
fn with_data(pieces: Vec<Piece>) -> Vec<(u64, usize, usize)> {
    let mut at = 0;
    pieces
        .into_iter()
        .map(|(off, len)| {
            let p = (off, at, len);
            at += len;
            p
        })
        .collect()
}

/// The rounds of a collective access over `spans`: each round, aggregator `i` handles
/// `[round start, round end)` of its domain.
struct Plan {
    domains: Vec<(u64, u64)>,
    rounds: u64,
    /// The aggregators' ranks, by domain.
    aggregators: Vec<usize>,
    /// Bytes of a domain each round moves.
    round: u64,
}

impl Plan {
    fn new(spans: &[[u64; 2]], aggregators: &[usize], round: u64) -> Option<Plan> {
        let lo = spans.iter().map(|s| s[0]).min()?;
        let hi = spans.iter().map(|s| s[1]).max()?;
        if lo >= hi {
            return None;
        }
        let domains = domains(lo, hi, aggregators.len());
        let rounds = domains
            .iter()
            .map(|(a, b)| (b - a).div_ceil(round))
            .max()
            .unwrap_or(0);
        Some(Plan {
            domains,
            rounds,
            aggregators: aggregators.to_vec(),
            round,
        })
    }

    /// Rank `j`'s window in round `r` (empty for a rank that is no aggregator).
    fn window(&self, j: usize, r: u64) -> (u64, u64) {
        let Some(i) = self.aggregators.iter().position(|&a| a == j) else {
            return (0, 0);
        };
        let (a, b) = self.domains[i];
        let s = (a + r * self.round).min(b);
        (s, (s + self.round).min(b))
    }
}

thread_local! {
    /// A write's buffers, kept from call to call.
    static SCRATCH: Cell<(Round, Arrived, Vec<u8>)> = Cell::default();
}

/// The tag of the exchange's messages (the file's communicator is its own: nothing else
/// is sent on it but collectives).
const TAG: i32 = 13;

/// The tag of a write's data blocks, so that an aggregator posts its receives of a
/// round's blocks before it takes the descriptors. They go on a communicator of their
/// own (`Handle::blocks`), where nothing else is sent: a stream of one tag, which the
/// follower of an aggregator receives deferred (`write`).
const DATA_TAG: i32 = 14;

/// What the ranks sent this one in an exchange: the bytes, and where each rank's are.
struct Received {
    bytes: Vec<u8>,
    at: Vec<(usize, usize)>,
}

impl Received {
    /// What rank `j` sent.
    fn from(&self, j: usize) -> &[u8] {
        let (a, n) = self.at[j];
        &self.bytes[a..a + n]
    }
}

/// Messages to every rank, built in one buffer: `flat[at[j]..]` holds rank `j`'s.
#[derive(Default)]
struct Outgoing {
    flat: Vec<u8>,
    counts: Vec<usize>,
}

impl Outgoing {
    /// Ends the message to the next rank.
    fn close(&mut self, start: usize) {
        self.counts.push(self.flat.len() - start);
    }
}

/// Sends each rank `j` its message and receives every rank's (their sizes first, in an
/// all-to-all of counts; then point-to-point, each message received in place).
fn exchange(comm: &Communicator, out: &Outgoing) -> Result<Received> {
    let n = comm.size() as usize;
    let me = comm.rank() as usize;
    let counts: Vec<u64> = out.counts.iter().map(|&c| c as u64).collect();
    let mut rcounts = vec![0u64; n];
    comm.all_to_all_into(&counts[..], &mut rcounts[..])?;
    let mut sat = Vec::with_capacity(n);
    let mut x = 0;
    for &c in &out.counts {
        sat.push(x);
        x += c;
    }
    let mut at = Vec::with_capacity(n);
    let mut total = 0;
    for &c in &rcounts {
        let c =
            usize::try_from(c).map_err(|_| MpiError::new(class::INTERN, "a message too large"))?;
        at.push((total, c));
        total += c;
    }
    // Sends are buffered (the sender log): all of them first, then the receives.
    for step in 1..n {
        let to = (me + step) % n;
        if out.counts[to] > 0 {
            let block = &out.flat[sat[to]..sat[to] + out.counts[to]];
            comm.process_at_rank(to as i32).send_with_tag(block, TAG)?;
        }
    }
    let mut bytes = vec![0; total];
    let (a, c) = at[me];
    if c != out.counts[me] {
        return Err(MpiError::new(
            class::INTERN,
            "an exchange's own block changed size",
        ));
    }
    bytes[a..a + c].copy_from_slice(&out.flat[sat[me]..sat[me] + c]);
    for step in 1..n {
        let from = (me + n - step) % n;
        let (a, c) = at[from];
        if c > 0 {
            comm.process_at_rank(from as i32)
                .receive_into_with_tag(&mut bytes[a..a + c], TAG)?;
        }
    }
    Ok(Received { bytes, at })
}

/// Appends `(file offset, length)` descriptors to `v` (nothing when there are none).
fn encode_into(v: &mut Vec<u8>, desc: &[(u64, usize)]) {
    if desc.is_empty() {
        return;
    }
    v.extend_from_slice(&(desc.len() as u64).to_le_bytes());
    for &(o, l) in desc {
        v.extend_from_slice(&o.to_le_bytes());
        v.extend_from_slice(&(l as u64).to_le_bytes());
    }
}

/// `(file offset, length)` of the pieces a message carries.
type Descriptors = Vec<(u64, usize)>;

/// Decodes what `encode_into` made (nothing may follow the descriptors).
fn decode(b: &[u8]) -> Result<Descriptors> {
    let bad = || MpiError::new(class::INTERN, "a malformed collective I/O message");
    let word = |i: usize| -> Result<u64> {
        let s = b.get(i * 8..i * 8 + 8).ok_or_else(bad)?;
        Ok(u64::from_le_bytes(s.try_into().map_err(|_| bad())?))
    };
    if b.is_empty() {
        return Ok(Vec::new());
    }
    let n = usize::try_from(word(0)?).map_err(|_| bad())?;
    if Some(b.len()) != n.checked_mul(16).and_then(|x| x.checked_add(8)) {
        return Err(bad());
    }
    (0..n)
        .map(|i| {
            let l = usize::try_from(word(2 + 2 * i)?).map_err(|_| bad())?;
            Ok((word(1 + 2 * i)?, l))
        })
        .collect()
}

/// Where the data a rank sends one aggregator in a round of a write is.
#[derive(Clone)]
enum Source {
    /// A run of the caller's buffer: the pieces in a window are a run of the access's
    /// data when the view's file offsets do not go back (MPI-3.1 section 13.3 requires
    /// it of filetypes), so nothing is packed.
    Caller(Range<usize>),
    /// A run of `Round::packed` (pieces whose data is not one run).
    Packed(Range<usize>),
}

/// What this rank sends each aggregator in one round of a write: the descriptors of its
/// pieces in the aggregator's window, and where their data is.
#[derive(Default)]
struct Round {
    desc: Vec<Vec<u8>>,
    data: Vec<Source>,
    packed: Vec<u8>,
}

impl Round {
    /// Fills it for round `r` of `plan` (its memory stays from round to round).
    fn build(&mut self, n: usize, plan: &Plan, r: u64, mine: &[(u64, usize, usize)], data: &[u8]) {
        self.desc.resize_with(n, Vec::new);
        self.data.clear();
        self.packed.clear();
        for (i, desc) in self.desc.iter_mut().enumerate() {
            desc.clear();
            let (a, b) = plan.window(i, r);
            let parts: Vec<_> = clip(mine, a, b).collect();
            let pairs: Vec<(u64, usize)> = parts.iter().map(|&(o, _, l)| (o, l)).collect();
            encode_into(desc, &pairs);
            let one_run = parts.windows(2).all(|w| w[0].1 + w[0].2 == w[1].1);
            self.data.push(match (parts.first(), parts.last()) {
                (Some(f), Some(l)) if one_run => Source::Caller(f.1..l.1 + l.2),
                _ => {
                    let start = self.packed.len();
                    for &(_, at, l) in &parts {
                        self.packed.extend_from_slice(&data[at..at + l]);
                    }
                    Source::Packed(start..self.packed.len())
                }
            });
        }
    }

    /// The data for rank `j`.
    fn data_for<'a>(&'a self, j: usize, data: &'a [u8]) -> &'a [u8] {
        match &self.data[j] {
            Source::Caller(r) => &data[r.clone()],
            Source::Packed(r) => &self.packed[r.clone()],
        }
    }
}

/// What the other ranks sent this aggregator in one round of a write.
#[derive(Default)]
struct Arrived {
    /// Each rank's descriptors.
    desc: Vec<Vec<u8>>,
    /// Each rank's data block as the transport received it (empty: none). A block
    /// received into a buffer of ours was copied twice on the way: the transport asks
    /// a stream's next messages ahead, so a block is nearly always here before its
    /// receive, in a buffer of the transport's (1 GiB strided at `-r 1`: 743 of 768
    /// blocks), and was then copied into ours. The aggregator writes from the
    /// transport's buffers instead, and gives them back (`recycle`) after the round.
    data: Vec<Bytes>,
}

impl Arrived {
    /// Gives the round's data buffers back to the transport for its next large messages
    /// (a freed one would cost a page fault per 4 KiB when taken again).
    fn recycle(&mut self) {
        for b in self.data.drain(..) {
            PostedMessage::recycle(b);
        }
    }
}

/// Blocks of a round an aggregator's follower did not receive, by rank (`None`: none
/// was sent, or it was received), with their announced sizes.
type Deferrals = Vec<Option<(DeferredMessage, usize)>>;

/// One round of a write's exchange: sends each aggregator this rank's descriptors (on
/// `comm`) and data (on `blocks`) for its window (sizes first, in an all-to-all; then two
/// messages, each received in place), and receives what the others send this rank into
/// `into`. With `defer` (this replica is an aggregator but not its rank's file writer),
/// the data blocks are claimed and not received: their entries in `into.data` stay
/// empty, and the claims come back.
fn exchange_pieces(
    comm: &Communicator,
    blocks: &Communicator,
    round: &Round,
    (data, loans): (&[u8], &mut Loans),
    into: &mut Arrived,
    defer: bool,
) -> Result<Option<Deferrals>> {
    let n = comm.size() as usize;
    let me = comm.rank() as usize;
    let sizes: Vec<u64> = (0..n)
        .flat_map(|j| [round.desc[j].len(), round.data_for(j, data).len()])
        .map(|c| c as u64)
        .collect();
    let mut got = vec![0u64; 2 * n];
    comm.all_to_all_into(&sizes[..], &mut got[..])?;
    let size = |c: u64| {
        usize::try_from(c).map_err(|_| MpiError::new(class::INTERN, "a message too large"))
    };
    into.desc.resize_with(n, Vec::new);
    into.recycle();
    // The data blocks' receives first (their pulls leave now), then the sends (buffered:
    // the sender log), then the descriptors.
    let mut posted: Vec<Option<(PostedMessage, usize)>> = Vec::with_capacity(n);
    let mut deferred: Deferrals = Vec::with_capacity(n);
    for j in 0..n {
        let c = if j == me { 0 } else { size(got[2 * j + 1])? };
        let from = blocks.process_at_rank(j as i32);
        let claim = match c {
            0 => None,
            _ if defer => from.defer_message_with_tag(DATA_TAG)?,
            _ => None,
        };
        let got_claim = claim.is_some();
        deferred.push(claim.map(|d| (d, c)));
        posted.push(match c {
            _ if got_claim => None,
            0 => None,
            c => Some((from.post_message_with_tag(DATA_TAG)?, c)),
        });
    }
    // A block that is a run of the caller's buffer is lent to the transport for the
    // length of the call (not copied into the sender log: `write`).
    for step in 1..n {
        let to = (me + step) % n;
        if !round.desc[to].is_empty() {
            comm.process_at_rank(to as i32)
                .send_with_tag(&round.desc[to][..], TAG)?;
        }
        let dest = blocks.process_at_rank(to as i32);
        match &round.data[to] {
            Source::Caller(r) if r.is_empty() => {}
            Source::Caller(r) => loans.send(&dest, r.clone(), DATA_TAG)?,
            Source::Packed(r) if r.is_empty() => {}
            Source::Packed(r) => dest.send_with_tag(&round.packed[r.clone()], DATA_TAG)?,
        }
    }
    for step in 1..n {
        let from = (me + n - step) % n;
        let desc = &mut into.desc[from];
        desc.resize(size(got[2 * from])?, 0);
        if !desc.is_empty() {
            comm.process_at_rank(from as i32)
                .receive_into_with_tag(&mut desc[..], TAG)?;
        }
    }
    for p in posted {
        let block = match p {
            None => Bytes::new(),
            Some((m, c)) => {
                let b = m.wait()?;
                if b.len() != c {
                    PostedMessage::recycle(b);
                    return Err(MpiError::new(
                        class::INTERN,
                        "a collective I/O block of another size than announced",
                    ));
                }
                b
            }
        };
        into.data.push(block);
    }
    Ok(deferred.iter().any(Option::is_some).then_some(deferred))
}

/// Receives the blocks of a round that were deferred after all (into `into`).
fn fetch_deferred(deferred: Deferrals, into: &mut Arrived) -> Result<()> {
    for (j, d) in deferred.into_iter().enumerate() {
        let Some((d, c)) = d else { continue };
        let b = d.fetch()?.wait()?;
        if b.len() != c {
            PostedMessage::recycle(b);
            return Err(MpiError::new(
                class::INTERN,
                "a collective I/O block of another size than announced",
            ));
        }
        into.data[j] = b;
    }
    Ok(())
}

/// The `(file offset, length)` of the pieces of a round an aggregator writes, in the
/// ranks' order, from their descriptors alone (`arrived_pieces` without the bytes).
fn arrived_lengths(me: usize, round: &Round, arrived: &Arrived) -> Result<Vec<(u64, usize)>> {
    let mut pieces = Vec::new();
    for j in 0..arrived.desc.len() {
        let desc = if j == me {
            &round.desc[me][..]
        } else {
            &arrived.desc[j][..]
        };
        pieces.extend(decode(desc)?);
    }
    Ok(pieces)
}

/// The `(file offset, length)` of each write `gather` makes of these pieces that writes
/// anything (an empty write is no file operation), from the pieces' lengths alone.
fn runs((a, b): (u64, u64), pieces: &[(u64, usize)]) -> Result<Vec<(u64, u64)>> {
    let end = |p: &(u64, usize)| p.0 + p.1 as u64;
    if pieces.iter().any(|p| p.0 < a || end(p) > b) {
        return Err(MpiError::new(class::INTERN, "a piece outside its domain"));
    }
    let mut sorted = pieces.to_vec();
    sorted.sort_by_key(|p| p.0);
    let mut out: Vec<(u64, u64)> = Vec::new();
    for p in sorted {
        match out.last_mut() {
            // `gather` joins pieces that touch (in a gathered write) or overlap (merged in
            // its buffer).
            Some(w) if p.0 <= w.0 + w.1 => w.1 = w.1.max(end(&p) - w.0),
            _ => out.push((p.0, p.1 as u64)),
        }
    }
    out.retain(|w| w.1 > 0);
    Ok(out)
}

/// This rank's own pieces of a round (file offset, bytes), from the caller's buffer.
fn own_pieces<'a>(me: usize, round: &'a Round, data: &'a [u8]) -> Result<Vec<(u64, &'a [u8])>> {
    let bytes = round.data_for(me, data);
    let mut pieces = Vec::new();
    let mut at = 0;
    for (o, l) in decode(&round.desc[me])? {
        let chunk = bytes
            .get(at..at + l)
            .ok_or_else(|| MpiError::new(class::INTERN, "a collective I/O message too short"))?;
        pieces.push((o, chunk));
        at += l;
    }
    Ok(pieces)
}

/// The pieces of a round an aggregator writes: (file offset, bytes), in the ranks' order.
fn arrived_pieces<'a>(
    me: usize,
    round: &'a Round,
    data: &'a [u8],
    arrived: &'a Arrived,
) -> Result<Vec<(u64, &'a [u8])>> {
    let mut pieces = Vec::new();
    for j in 0..arrived.data.len() {
        if j == me {
            pieces.extend(own_pieces(me, round, data)?);
            continue;
        }
        let (desc, bytes) = (&arrived.desc[j][..], &arrived.data[j][..]);
        let mut at = 0;
        for (o, l) in decode(desc)? {
            let chunk = bytes.get(at..at + l).ok_or_else(|| {
                MpiError::new(class::INTERN, "a collective I/O message too short")
            })?;
            pieces.push((o, chunk));
            at += l;
        }
    }
    Ok(pieces)
}

/// A gathered write: its file offset and the parts it writes there, one after another.
type Gathered<'a> = (u64, Vec<&'a [u8]>);

/// The writes of a round's pieces in window `[a, b)`: one per run of adjacent pieces,
/// gathered from where the pieces arrived (no copy). Pieces that overlap (ranks writing
/// the same bytes) are laid into `buf` in the ranks' order first, so the later rank's
/// bytes win, as if the ranks wrote one after another.
fn gather<'a>(
    (a, b): (u64, u64),
    pieces: Vec<(u64, &'a [u8])>,
    buf: &'a mut Vec<u8>,
) -> Result<Vec<Gathered<'a>>> {
    let end = |p: &(u64, &[u8])| p.0 + p.1.len() as u64;
    if pieces.iter().any(|p| p.0 < a || end(p) > b) {
        return Err(MpiError::new(class::INTERN, "a piece outside its domain"));
    }
    let mut sorted = pieces.clone();
    sorted.sort_by_key(|p| p.0);
    let runs: Vec<(u64, &[u8])> = if sorted.windows(2).any(|w| w[1].0 < end(&w[0])) {
        buf.resize((b - a) as usize, 0);
        for &(o, chunk) in &pieces {
            let s = (o - a) as usize;
            buf[s..s + chunk.len()].copy_from_slice(chunk);
        }
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for p in &sorted {
            match merged.last_mut() {
                Some(m) if p.0 <= m.1 => m.1 = m.1.max(end(p)),
                _ => merged.push((p.0, end(p))),
            }
        }
        let buf = &buf[..];
        merged
            .into_iter()
            .map(|(s, e)| (s, &buf[(s - a) as usize..(e - a) as usize]))
            .collect()
    } else {
        sorted
    };
    let mut out: Vec<Gathered<'a>> = Vec::new();
    let mut next = None;
    for p in runs {
        match out.last_mut() {
            Some(w) if next == Some(p.0) => w.1.push(p.1),
            _ => out.push((p.0, vec![p.1])),
        }
        next = Some(end(&p));
    }
    Ok(out)
}

/// Bytes of writes a follower made without their bytes that it leaves unresolved (the
/// senders keep their blocks until it resolves them): the file layer's bound on how far
/// a follower runs ahead of its writer.
const DEFERRED_BYTES: u64 = 64 << 20;

/// What resolving a follower's rounds needs of the write they belong to.
struct Context<'a> {
    me: usize,
    n: usize,
    plan: &'a Plan,
    mine: &'a [(u64, usize, usize)],
    data: &'a [u8],
}

impl<'a> Context<'a> {
    fn new(
        me: usize,
        n: usize,
        plan: &'a Plan,
        mine: &'a [(u64, usize, usize)],
        data: &'a [u8],
    ) -> Context<'a> {
        Context {
            me,
            n,
            plan,
            mine,
            data,
        }
    }
}

/// A round whose writes a follower made without their bytes, until they are resolved.
struct Unresolved {
    r: u64,
    window: (u64, u64),
    /// The writes' numbers (0: none, it failed) and lengths, in the order `gather` makes
    /// them.
    writes: Vec<(volpex_files::Seq, u64)>,
    deferred: Deferrals,
    /// The descriptors, and the blocks that were received after all.
    arrived: Arrived,
}

/// A follower's unresolved rounds, oldest first.
#[derive(Default)]
struct Deferred {
    rounds: std::collections::VecDeque<Unresolved>,
    bytes: u64,
}

impl Deferred {
    fn push(&mut self, u: Unresolved) {
        self.bytes += u.writes.iter().map(|w| w.1).sum::<u64>();
        self.rounds.push_back(u);
    }

    fn resolve_all(
        &mut self,
        cx: &Context,
        buf: &mut Vec<u8>,
        failure: &mut Option<MpiError>,
    ) -> Result<()> {
        while !self.rounds.is_empty() {
            self.resolve_one(cx, buf, failure)?;
        }
        Ok(())
    }

    /// Resolves the oldest round: waits until the writer applied its writes and releases
    /// its blocks, or, if this replica writes the rank's files by then, fetches them and
    /// gives the file layer the bytes of the writes not applied.
    fn resolve_one(
        &mut self,
        cx: &Context,
        buf: &mut Vec<u8>,
        failure: &mut Option<MpiError>,
    ) -> Result<()> {
        let Some(u) = self.rounds.pop_front() else {
            return Ok(());
        };
        self.bytes -= u.writes.iter().map(|w| w.1).sum::<u64>();
        let mut needed = Vec::new();
        for (i, &(seq, _)) in u.writes.iter().enumerate() {
            match volpex_files::resolve(seq) {
                Ok(volpex_files::Deferred::Applied) => {}
                Ok(volpex_files::Deferred::Needed) => needed.push(i),
                Err(err) => {
                    failure.get_or_insert(sys(err, "write"));
                }
            }
        }
        let mut arrived = u.arrived;
        if needed.is_empty() {
            for (d, _) in u.deferred.into_iter().flatten() {
                d.skip();
            }
            arrived.recycle();
            return Ok(());
        }
        log::info!(
            "rank {}: this replica writes the rank's files now: fetching the {} blocks of a collective write it made without them",
            cx.me,
            u.deferred.iter().flatten().count()
        );
        fetch_deferred(u.deferred, &mut arrived)?;
        let mut round = Round::default();
        round.build(cx.n, cx.plan, u.r, cx.mine, cx.data);
        let pieces = arrived_pieces(cx.me, &round, cx.data, &arrived)?;
        let writes: Vec<Gathered> = gather(u.window, pieces, buf)?
            .into_iter()
            .filter(|(_, parts)| parts.iter().any(|p| !p.is_empty()))
            .collect();
        for i in needed {
            let (seq, len) = u.writes[i];
            let parts = match writes.get(i) {
                Some((_, parts)) if parts.iter().map(|p| p.len() as u64).sum::<u64>() == len => {
                    parts
                }
                _ => {
                    return Err(MpiError::new(
                        class::INTERN,
                        "a deferred collective write no longer matches its pieces",
                    ))
                }
            };
            if let Err(err) = volpex_files::fill(seq, parts) {
                failure.get_or_insert(sys(err, "write"));
            }
        }
        drop(writes);
        arrived.recycle();
        Ok(())
    }
}

/// A collective write of `data` at view position `pos` (etypes).
pub fn write(h: &Handle, pos: u64, data: &[u8]) -> Result<()> {
    let comm = comm_of(h)?;
    let pieces = h.view.pieces(pos * h.view.esize(), data.len() as u64)?;
    let spans = spans(&comm, &pieces)?;
    if !interleaved(&spans) {
        return write_at(h, pos, data);
    }
    let Some(plan) = Plan::new(&spans, &h.aggregators, h.round) else {
        return Ok(());
    };
    let mine = with_data(pieces);
    // The blocks this rank sends from `data` are lent to the transport, not copied into
    // the sender log, and given back (copied only if some replica of the aggregator
    // has not confirmed them by then) as the call ends: after every rank learnt that the
    // aggregators' writes are done, when the aggregators' followers have released them
    // once their writers reported them applied (docs/FILES.md "Writes without their
    // bytes"). A replaying aggregator replica skips the blocks of writes reported
    // applied, so no replay asks for them again; not where the replicas compare what
    // they write (each needs the bytes, in a replay too).
    raw::lending(data, !volpex_files::verifies(), |loans| {
        let done = write_rounds(h, &comm, &plan, &mine, data, loans);
        let back = loans.give_back();
        done.and(back)
    })
}

/// The rounds of a collective `write` and their outcome, agreed by every rank.
fn write_rounds(
    h: &Handle,
    comm: &Communicator,
    plan: &Plan,
    mine: &[(u64, usize, usize)],
    data: &[u8],
    loans: &mut Loans,
) -> Result<()> {
    let me = comm.rank() as usize;
    let mut failure: Option<MpiError> = None;
    // Memory used again every round, and from call to call (fresh buffers cost a page
    // fault per page).
    let (mut round, mut arrived, mut buf) = SCRATCH.with(|s| s.take());
    let blocks = state::comm(h.blocks)?;
    let fd = h.file.as_raw_fd();
    let n = comm.size() as usize;
    // The follower of an aggregator (a replica that is not its rank's file writer) does
    // not receive the rounds' blocks: it makes each round's writes without their bytes
    // and goes on; once its writer reports them applied, it releases the blocks. If it
    // becomes the writer first, it fetches them from the senders' logs (every replica of
    // a sender keeps them until this replica releases them) and applies what is left.
    // It resolves its oldest rounds once they hold `DEFERRED_BYTES`, and all of them
    // before a write with its bytes and before it returns (the caller's buffer holds its
    // own pieces).
    let mut waiting = Deferred::default();
    for r in 0..plan.rounds {
        round.build(n, plan, r, mine, data);
        let window = plan.window(me, r);
        let defer = window.0 < window.1 && volpex_files::may_defer(fd);
        if !defer {
            waiting.resolve_all(
                &Context::new(me, n, plan, mine, data),
                &mut buf,
                &mut failure,
            )?;
        }
        let deferred = exchange_pieces(comm, &blocks, &round, (data, loans), &mut arrived, defer)?;
        if window.0 >= window.1 {
            continue;
        }
        if let Some(deferred) = deferred {
            let lengths = arrived_lengths(me, &round, &arrived)?;
            // A replaying replica keeps its writes' bytes for reading its files back
            // (`volpex_files::write_deferred`): its own pieces from here.
            let own = own_pieces(me, &round, data)?;
            let mut writes = Vec::new();
            for (at, len) in runs(window, &lengths)? {
                match volpex_files::write_deferred(fd, len, at, &own) {
                    Ok(seq) => writes.push((seq, len)),
                    Err(err) => {
                        failure.get_or_insert(sys(err, "write"));
                        writes.push((0, len));
                    }
                }
            }
            waiting.push(Unresolved {
                r,
                window,
                writes,
                deferred,
                arrived: Arrived {
                    desc: arrived.desc.clone(),
                    data: std::mem::take(&mut arrived.data),
                },
            });
            let cx = Context::new(me, n, plan, mine, data);
            while waiting.bytes > DEFERRED_BYTES {
                waiting.resolve_one(&cx, &mut buf, &mut failure)?;
            }
            continue;
        }
        let pieces = arrived_pieces(me, &round, data, &arrived)?;
        for (at, parts) in gather(window, pieces, &mut buf)? {
            if let Err(err) = volpex_files::write_at(fd, &parts, at) {
                failure.get_or_insert(sys(err, "write"));
            }
        }
    }
    waiting.resolve_all(
        &Context::new(me, n, plan, mine, data),
        &mut buf,
        &mut failure,
    )?;
    arrived.recycle();
    SCRATCH.with(|s| s.set((round, arrived, buf)));
    if h.atomic {
        volpex_files::settle();
    }
    // Every rank learns whether an aggregator failed (its data was in that write).
    let mine_class = failure.as_ref().map_or(class::SUCCESS, |e| e.class);
    let all = super::file::agree(comm, mine_class)?;
    match failure {
        Some(e) => Err(e),
        None if all != class::SUCCESS => Err(MpiError::new(all, "an aggregator's write failed")),
        None => Ok(()),
    }
}

/// A collective read into `out` from view position `pos` (etypes). Returns the bytes
/// read: up to the first byte past the end of the file.
pub fn read(h: &Handle, pos: u64, out: &mut [u8]) -> Result<usize> {
    let comm = comm_of(h)?;
    let pieces = h.view.pieces(pos * h.view.esize(), out.len() as u64)?;
    let spans = spans(&comm, &pieces)?;
    if !interleaved(&spans) {
        return read_at(h, pos, out);
    }
    let Some(plan) = Plan::new(&spans, &h.aggregators, h.round) else {
        return Ok(0);
    };
    let size = super::file::file_size(h)?;
    let mine = with_data(pieces);
    // Bytes read: the data before the first piece byte at or past the end of the file;
    // the buffer past them is left as it was (MPI-3.1 13.4.1: only what was read).
    let mut n_read = 0;
    for &(off, at, len) in &mine {
        if off + len as u64 <= size {
            n_read = at + len;
        } else {
            n_read = at + size.saturating_sub(off) as usize;
            break;
        }
    }
    let n = comm.size() as usize;
    for r in 0..plan.rounds {
        // Requests: to each aggregator, the pieces in its window.
        let mut asked: Vec<Vec<(u64, usize, usize)>> = Vec::with_capacity(n);
        let mut requests = Outgoing::default();
        for i in 0..n {
            let (a, b) = plan.window(i, r);
            let parts: Vec<_> = clip(&mine, a, b).collect();
            let desc: Vec<(u64, usize)> = parts.iter().map(|&(o, _, l)| (o, l)).collect();
            asked.push(parts);
            let start = requests.flat.len();
            encode_into(&mut requests.flat, &desc);
            requests.close(start);
        }
        let got = exchange(&comm, &requests)?;
        let me = comm.rank() as usize;
        let (a, b) = plan.window(me, r);
        let mut buf = vec![0u8; b.saturating_sub(a) as usize];
        if a < b && (0..n).any(|j| !got.from(j).is_empty()) {
            let want = (b.min(size.max(a)) - a) as usize;
            let mut k = 0;
            while k < want {
                match h.file.read_at(&mut buf[k..want], a + k as u64) {
                    Ok(0) => break,
                    Ok(x) => k += x,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(sys(e, "read")),
                }
            }
        }
        // Answers: the bytes each rank asked for, in its order (what the file lacks
        // reads as zeros; the count below stops at the end of the file).
        let mut answers = Outgoing::default();
        for j in 0..n {
            let desc = decode(got.from(j))?;
            let start = answers.flat.len();
            for (o, l) in desc {
                let s = (o - a) as usize;
                let chunk = buf
                    .get(s..s + l)
                    .ok_or_else(|| MpiError::new(class::INTERN, "a request outside the domain"))?;
                answers.flat.extend_from_slice(chunk);
            }
            answers.close(start);
        }
        let back = exchange(&comm, &answers)?;
        for (j, parts) in asked.iter().enumerate() {
            let bytes = back.from(j);
            let mut at = 0;
            for &(_, d, l) in parts {
                let chunk = bytes.get(at..at + l).ok_or_else(|| {
                    MpiError::new(class::INTERN, "a collective I/O answer too short")
                })?;
                let k = l.min(n_read.saturating_sub(d));
                out[d..d + k].copy_from_slice(&chunk[..k]);
                at += l;
            }
        }
    }
    Ok(n_read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_that_overlap_interleave_and_apart_ones_do_not() {
        assert!(!interleaved(&[[0, 10], [10, 20], [u64::MAX, 0]]));
        assert!(interleaved(&[[0, 12], [10, 20]]));
        assert!(interleaved(&[[0, 100], [4, 8]]));
    }

    #[test]
    fn domains_cover_the_range_once() {
        assert_eq!(domains(10, 20, 3), vec![(10, 14), (14, 18), (18, 20)]);
        assert_eq!(domains(0, 2, 4), vec![(0, 1), (1, 2), (2, 2), (2, 2)]);
    }

    #[test]
    fn clipping_keeps_the_data_offsets() {
        let p = with_data(vec![(0, 4), (8, 4)]);
        let c: Vec<_> = clip(&p, 2, 10).collect();
        assert_eq!(c, vec![(2, 2, 2), (8, 4, 2)]);
    }

    #[test]
    fn adjacent_pieces_make_one_gathered_write_and_overlaps_go_through_the_buffer() {
        let (x, y, z) = (vec![1u8; 4], vec![2u8; 4], vec![3u8; 2]);
        let mut buf = Vec::new();
        // Rank order y, x, z; in the file x, y adjacent, then z after a hole.
        let pieces = vec![(14, &y[..]), (10, &x[..]), (20, &z[..])];
        let w = gather((10, 30), pieces, &mut buf).unwrap();
        assert_eq!(w, vec![(10, vec![&x[..], &y[..]]), (20, vec![&z[..]])]);
        assert!(buf.is_empty());
        // x over [10, 14), y over [12, 16): the later rank's bytes win where they overlap.
        let pieces = vec![(10, &x[..]), (12, &y[..]), (20, &z[..])];
        let w = gather((10, 30), pieces, &mut buf).unwrap();
        let flat: Vec<(u64, Vec<u8>)> = w.into_iter().map(|(o, p)| (o, p.concat())).collect();
        assert_eq!(flat, vec![(10, vec![1, 1, 2, 2, 2, 2]), (20, vec![3, 3])]);
        let outside = vec![(8, &x[..])];
        assert!(gather((10, 30), outside, &mut Vec::new()).is_err());
    }

    /// A follower that makes a round's writes without their bytes must make the same
    /// file operations as its writer, which `gather`s them: same offsets, same lengths,
    /// none empty.
    #[test]
    fn runs_from_lengths_alone_are_the_gathered_writes() {
        let bytes = [7u8; 64];
        let cases: Vec<Vec<(u64, usize)>> = vec![
            vec![(14, 4), (10, 4), (20, 2)],
            vec![(10, 4), (12, 4), (20, 2)],
            vec![(10, 0), (12, 0), (20, 2), (22, 3), (30, 0)],
            vec![(10, 8), (11, 2), (18, 1), (25, 5), (24, 1)],
            vec![(16, 0)],
            vec![],
        ];
        for pieces in cases {
            let with_bytes: Vec<(u64, &[u8])> =
                pieces.iter().map(|&(o, l)| (o, &bytes[..l])).collect();
            let mut buf = Vec::new();
            let gathered: Vec<(u64, u64)> = gather((10, 40), with_bytes, &mut buf)
                .unwrap()
                .into_iter()
                .map(|(o, parts)| (o, parts.iter().map(|p| p.len() as u64).sum()))
                .filter(|w| w.1 > 0)
                .collect();
            assert_eq!(runs((10, 40), &pieces).unwrap(), gathered, "{pieces:?}");
        }
        assert!(runs((10, 40), &[(8, 4)]).is_err());
    }

    #[test]
    fn rounds_cut_each_domain_in_windows_of_the_round_size() {
        // Two aggregators over [0, 100): domains [0, 50) and [50, 100), 20 bytes a round.
        let plan = Plan::new(&[[0, 60], [40, 100]], &[0, 1], 20).unwrap();
        assert_eq!(plan.rounds, 3);
        let w: Vec<_> = (0..3)
            .map(|r| (plan.window(0, r), plan.window(1, r)))
            .collect();
        assert_eq!(
            w,
            vec![
                ((0, 20), (50, 70)),
                ((20, 40), (70, 90)),
                ((40, 50), (90, 100))
            ]
        );
        // A rank that is no aggregator has no window.
        let plan = Plan::new(&[[0, 60], [40, 100]], &[1], 20).unwrap();
        assert_eq!((plan.rounds, plan.window(0, 0)), (5, (0, 0)));
    }

    #[test]
    fn a_round_sends_the_callers_bytes_when_they_are_one_run_else_packs_them() {
        let plan = Plan::new(&[[0, 16], [0, 16]], &[0, 1], BUFFER).unwrap();
        let data: Vec<u8> = (0..8).collect();
        let mut round = Round::default();
        // Data in file order: each aggregator's pieces are one run of `data`.
        let mine = with_data(vec![(0, 2), (4, 2), (8, 2), (12, 2)]);
        round.build(2, &plan, 0, &mine, &data);
        assert!(matches!(round.data[0], Source::Caller(_)));
        assert_eq!(round.data_for(0, &data), &[0, 1, 2, 3]);
        assert_eq!(round.data_for(1, &data), &[4, 5, 6, 7]);
        // Out of file order: aggregator 0's pieces are data 0..2 and 4..6: packed.
        let mine = with_data(vec![(0, 2), (8, 2), (4, 2), (12, 2)]);
        round.build(2, &plan, 0, &mine, &data);
        assert!(matches!(round.data[0], Source::Packed(_)));
        assert_eq!(round.data_for(0, &data), &[0, 1, 4, 5]);
        assert_eq!(round.data_for(1, &data), &[2, 3, 6, 7]);
    }

    #[test]
    fn messages_round_trip() {
        let mut m = Vec::new();
        encode_into(&mut m, &[(5, 2), (9, 1)]);
        assert_eq!(decode(&m).unwrap(), vec![(5, 2), (9, 1)]);
        assert_eq!(decode(&[]).unwrap(), vec![]);
        m.push(0);
        assert!(decode(&m).is_err());
        assert!(decode(&m[..20]).is_err());
    }
}
