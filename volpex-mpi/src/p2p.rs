//! Point-to-point communication (MPI-3.1 chapter 3) over `volpex::Process`.
//!
//! Every send is buffered: it returns once the message is in this replica's sender log,
//! and an immediate send's request is complete at once, but for the synchronous mode,
//! which completes once a receive of the destination claimed the message (MPI-3.1
//! section 3.4; see `volpex::Process::synchronous_send`). The buffered mode also checks
//! the message against the buffer MPI_Buffer_attach gave (`bsend`); the ready mode is
//! the standard one. Messages travel as bytes: the datatype decides
//! which bytes of the buffer (packed when not contiguous) and how many elements a status
//! counts (`MPI_Get_count`). A receive into a contiguous datatype takes the message in
//! place; one into any other datatype spreads it over the elements as it comes
//! (`Scatter`), blocking, immediate, persistent or matched alike.

use std::borrow::Cow;
use std::os::raw::c_int;

use volpex::{BufferMut, Communicator, Layout, Process, Target};

use crate::datatype::signature::SigPart;
use crate::datatype::{Buf, BufMut, Datatype};
use crate::error::{MpiError, Result};
use crate::handles::{class, MpiStatus, ANY_SOURCE, ANY_TAG, PROC_NULL, UNDEFINED};
use crate::raw::Pending;
use crate::request::{self, status_of};
use crate::state::{self, Active, SendMode};

fn check_send_tag(tag: c_int) -> Result<()> {
    if tag < 0 {
        return Err(MpiError::new(class::TAG, format!("invalid send tag {tag}")));
    }
    Ok(())
}

/// `None` for MPI_ANY_TAG, the tag otherwise.
fn recv_tag(tag: c_int) -> Result<Option<c_int>> {
    match tag {
        ANY_TAG => Ok(None),
        t if t >= 0 => Ok(Some(t)),
        t => Err(MpiError::new(
            class::TAG,
            format!("invalid receive tag {t}"),
        )),
    }
}

fn source(comm: &Communicator, src: c_int) -> Process<'_> {
    if src == ANY_SOURCE {
        comm.any_process()
    } else {
        comm.process_at_rank(src)
    }
}

/// MPI_Send, MPI_Bsend, MPI_Ssend, MPI_Rsend.
pub fn send(
    comm: c_int,
    buf: &Buf<'_>,
    count: usize,
    (dest, tag): (c_int, c_int),
    mode: SendMode,
) -> Result<()> {
    check_send_tag(tag)?;
    let comm = state::comm(comm)?;
    if dest == PROC_NULL {
        return Ok(());
    }
    let bytes = buf.bytes(0, count)?;
    let p = comm.process_at_rank(dest);
    match mode {
        SendMode::Synchronous => p.synchronous_send_with_tag(&bytes[..], tag)?,
        SendMode::Buffered => {
            bsend::check(bytes.len())?;
            p.send_with_tag(&bytes[..], tag)?
        }
        SendMode::Standard | SendMode::Ready => p.send_with_tag(&bytes[..], tag)?,
    }
    Ok(())
}

/// MPI_Isend and the other modes, over memory the program leaves alone until the
/// request completes: a standard-mode send of a contiguous buffer lends it to the log
/// instead of copying it (`Process::immediate_send_lent_with_tag`).
pub fn isend(
    comm: c_int,
    buf: &Buf<'static>,
    count: usize,
    to: (c_int, c_int),
    mode: SendMode,
) -> Result<c_int> {
    if mode != SendMode::Standard {
        return request::add(start_send(comm, buf, count, to, mode)?);
    }
    let (dest, tag) = to;
    check_send_tag(tag)?;
    let c = state::comm(comm)?;
    if dest == PROC_NULL {
        return request::add(Active::Done(MpiStatus::empty()));
    }
    let p = c.process_at_rank(dest);
    let r = match buf.bytes(0, count)? {
        Cow::Borrowed(mem) => p.immediate_send_lent_with_tag(mem, tag)?,
        Cow::Owned(packed) => p.immediate_send_with_tag(&packed[..], tag)?,
    };
    request::add(Active::Volpex(Pending(r, comm)))
}

/// Starts an immediate send (MPI_Isend and the other modes, MPI_Start of a persistent
/// send): complete at once but in the synchronous mode.
pub fn start_send(
    comm: c_int,
    buf: &Buf<'_>,
    count: usize,
    (dest, tag): (c_int, c_int),
    mode: SendMode,
) -> Result<Active> {
    check_send_tag(tag)?;
    let c = state::comm(comm)?;
    if dest == PROC_NULL {
        return Ok(Active::Done(MpiStatus::empty()));
    }
    let bytes = buf.bytes(0, count)?;
    let p = c.process_at_rank(dest);
    let r = match mode {
        SendMode::Synchronous => p.immediate_synchronous_send_with_tag(&bytes[..], tag)?,
        SendMode::Buffered => {
            bsend::check(bytes.len())?;
            p.immediate_send_with_tag(&bytes[..], tag)?
        }
        SendMode::Standard | SendMode::Ready => p.immediate_send_with_tag(&bytes[..], tag)?,
    };
    Ok(Active::Volpex(Pending(r, comm)))
}

/// The buffer of the buffered mode (MPI-3.1 section 3.6). A buffered message goes into
/// the sender log like any other and never into this buffer, so a buffered send needs
/// one only to keep MPI's rules: there must be one, and the message with
/// MPI_BSEND_OVERHEAD must fit in it. MPI also counts the messages still pending in it;
/// here none ever is, since whether a message was delivered yet depends on timing, on
/// which the replicas of a rank must not differ (see the determinism contract). So
/// MPI_Buffer_detach returns at once, with the buffer and size attached.
pub mod bsend {
    use std::os::raw::c_int;

    use parking_lot::Mutex;

    use crate::error::{MpiError, Result};
    use crate::handles::{class, BSEND_OVERHEAD};

    /// The attached buffer: its address and size.
    static ATTACHED: Mutex<Option<(usize, usize)>> = Mutex::new(None);

    /// MPI_Buffer_attach.
    pub fn attach(addr: usize, size: c_int) -> Result<()> {
        let size = usize::try_from(size)
            .map_err(|_| MpiError::new(class::COUNT, format!("negative buffer size {size}")))?;
        let mut a = ATTACHED.lock();
        if a.is_some() {
            return Err(MpiError::new(
                class::BUFFER,
                "a buffer is attached already (MPI_Buffer_detach it first)",
            ));
        }
        *a = Some((addr, size));
        Ok(())
    }

    /// MPI_Buffer_detach: the buffer's address and size (null and 0 when none is
    /// attached).
    pub fn detach() -> (usize, c_int) {
        match ATTACHED.lock().take() {
            Some((addr, size)) => (addr, c_int::try_from(size).unwrap_or(c_int::MAX)),
            None => (0, 0),
        }
    }

    /// Refuses a buffered message of `len` bytes that the attached buffer cannot hold.
    pub fn check(len: usize) -> Result<()> {
        let room = ATTACHED.lock().map_or(0, |(_, size)| size);
        if len.saturating_add(BSEND_OVERHEAD) > room {
            return Err(MpiError::new(
                class::BUFFER,
                format!(
                    "a buffered send of {len} bytes needs {} bytes of attached buffer \
                     (MPI_BSEND_OVERHEAD included); {room} are attached",
                    len.saturating_add(BSEND_OVERHEAD)
                ),
            ));
        }
        Ok(())
    }
}

/// `count` elements of a non-contiguous datatype to receive into: a message is spread
/// over them as it arrives (`volpex::Layout`), with no copy in between. A message may
/// fill part of them (MPI_Get_elements then counts the basic elements it holds); one
/// longer than they hold is MPI_ERR_TRUNCATE.
pub struct Scatter<'a> {
    buf: BufMut<'a>,
    count: usize,
}

impl<'a> Scatter<'a> {
    /// The first `count` elements of `buf`.
    pub fn new(buf: BufMut<'a>, count: usize) -> Scatter<'a> {
        Scatter { buf, count }
    }

    /// The first `count` elements of `buf`, borrowed for one call.
    fn of<'b>(buf: &'b mut BufMut<'_>, count: usize) -> Scatter<'b> {
        Scatter::new(
            BufMut {
                mem: &mut *buf.mem,
                origin: buf.origin,
                dt: buf.dt.clone(),
            },
            count,
        )
    }
}

impl Layout for Scatter<'_> {
    fn byte_len(&self) -> usize {
        self.buf.dt.size.saturating_mul(self.count)
    }

    fn pack(&self) -> Vec<u8> {
        // Only a broadcast root packs a layout; the datatype's span was checked against
        // the buffer when it was made (`raw::region`).
        self.buf
            .bytes(0, self.count)
            .map(|b| b.into_owned())
            .unwrap_or_default()
    }

    fn unpack(&mut self, bytes: &[u8]) -> std::result::Result<(), volpex::Error> {
        self.buf
            .write(0, self.count, bytes)
            .map_err(|_| volpex::Error::Usage("receive datatype reaches outside its buffer"))
    }
}

impl BufferMut for Scatter<'_> {
    fn target(&mut self) -> Target<'_> {
        Target::Scattered(Box::new(self))
    }

    /// Any number of bytes: a message may end inside an element (MPI-3.1 section 3.3.1).
    fn elem_bytes(&self) -> usize {
        1
    }
}

/// Where an immediate receive puts its message until the request completes.
pub enum RecvMem {
    /// The bytes of a contiguous buffer, received into in place.
    Bytes(&'static mut [u8]),
    /// Elements of a non-contiguous datatype.
    Scattered(Scatter<'static>),
}

/// Receives into `buf`, in place when its datatype is contiguous.
fn receive(
    p: Process<'_>,
    buf: &mut BufMut<'_>,
    count: usize,
    tag: Option<c_int>,
) -> Result<MpiStatus> {
    if let Some(b) = buf.in_place(0, count)? {
        let st = match tag {
            Some(t) => p.receive_into_with_tag(b, t)?,
            None => p.receive_into(b)?,
        };
        return Ok(status_of(&st));
    }
    let mut s = Scatter::of(buf, count);
    let st = match tag {
        Some(t) => p.receive_into_with_tag(&mut s, t)?,
        None => p.receive_into(&mut s)?,
    };
    Ok(status_of(&st))
}

/// MPI_Recv.
pub fn recv(
    comm: c_int,
    buf: &mut BufMut<'_>,
    count: usize,
    src: c_int,
    tag: c_int,
) -> Result<MpiStatus> {
    let tag = recv_tag(tag)?;
    let c = state::comm(comm)?;
    if src == PROC_NULL {
        return Ok(MpiStatus::empty());
    }
    receive(source(&c, src), buf, count, tag)
}

/// MPI_Irecv into memory that stays valid until the request completes.
pub fn irecv(comm: c_int, mem: RecvMem, src: c_int, tag: c_int) -> Result<c_int> {
    request::add(start_recv(comm, mem, src, tag)?)
}

/// Starts an immediate receive (MPI_Irecv, MPI_Start of a persistent receive).
pub fn start_recv(comm: c_int, mem: RecvMem, src: c_int, tag: c_int) -> Result<Active> {
    let tag = recv_tag(tag)?;
    let c = state::comm(comm)?;
    if src == PROC_NULL {
        return Ok(Active::Done(MpiStatus::empty()));
    }
    let p = source(&c, src);
    let r = match (mem, tag) {
        (RecvMem::Bytes(m), Some(t)) => p.immediate_receive_into_with_tag(m, t)?,
        (RecvMem::Bytes(m), None) => p.immediate_receive_into(m)?,
        (RecvMem::Scattered(s), Some(t)) => {
            p.immediate_receive_target_with_tag(Target::Scattered(Box::new(s)), 1, t)?
        }
        (RecvMem::Scattered(s), None) => {
            p.immediate_receive_target(Target::Scattered(Box::new(s)), 1)?
        }
    };
    Ok(Active::Volpex(Pending(r, comm)))
}

/// MPI_Sendrecv: the send is buffered, so it goes first.
#[allow(clippy::too_many_arguments)]
pub fn sendrecv(
    comm: c_int,
    (sbuf, scount, dest, stag): (&Buf<'_>, usize, c_int, c_int),
    (rbuf, rcount, src, rtag): (&mut BufMut<'_>, usize, c_int, c_int),
) -> Result<MpiStatus> {
    send(comm, sbuf, scount, (dest, stag), SendMode::Standard)?;
    recv(comm, rbuf, rcount, src, rtag)
}

/// MPI_Sendrecv_replace.
pub fn sendrecv_replace(
    comm: c_int,
    buf: &mut BufMut<'_>,
    count: usize,
    (dest, stag): (c_int, c_int),
    (src, rtag): (c_int, c_int),
) -> Result<MpiStatus> {
    check_send_tag(stag)?;
    let c = state::comm(comm)?;
    if dest != PROC_NULL {
        let out = buf.bytes(0, count)?.into_owned();
        c.process_at_rank(dest).send_with_tag(&out[..], stag)?;
    }
    recv(comm, buf, count, src, rtag)
}

/// MPI_Probe.
pub fn probe(comm: c_int, src: c_int, tag: c_int) -> Result<MpiStatus> {
    let tag = recv_tag(tag)?;
    let c = state::comm(comm)?;
    if src == PROC_NULL {
        return Ok(MpiStatus::empty());
    }
    let p = source(&c, src);
    let st = match tag {
        Some(t) => p.probe_with_tag(t)?,
        None => p.probe()?,
    };
    Ok(status_of(&st))
}

/// MPI_Iprobe.
pub fn iprobe(comm: c_int, src: c_int, tag: c_int) -> Result<Option<MpiStatus>> {
    let tag = recv_tag(tag)?;
    let c = state::comm(comm)?;
    if src == PROC_NULL {
        return Ok(Some(MpiStatus::empty()));
    }
    let p = source(&c, src);
    let st = match tag {
        Some(t) => p.immediate_probe_with_tag(t)?,
        None => p.immediate_probe()?,
    };
    Ok(st.as_ref().map(status_of))
}

/// MPI_Get_count: whole elements of `dt` in the message, or MPI_UNDEFINED.
pub fn get_count(st: &MpiStatus, dt: &Datatype) -> c_int {
    let bytes = st.bytes();
    if dt.size == 0 {
        return if bytes == 0 { 0 } else { UNDEFINED };
    }
    let size = dt.size as u64;
    if !bytes.is_multiple_of(size) {
        return UNDEFINED;
    }
    c_int::try_from(bytes / size).unwrap_or(UNDEFINED)
}

/// MPI_Status_set_elements(_x) (MPI-3.1 section 12.3): `st` says that `count` basic
/// elements of `dt` arrived (whole elements of `dt`, then the first basic elements of
/// one more), so that MPI_Get_elements with `dt` gives `count` and MPI_Get_count a
/// matching number.
pub fn set_elements(st: &mut MpiStatus, dt: &Datatype, count: i64) -> Result<()> {
    let count = u64::try_from(count)
        .map_err(|_| MpiError::new(class::COUNT, format!("negative count {count}")))?;
    let too_many = || {
        MpiError::new(
            class::COUNT,
            format!("{count} elements of {} overflow", dt.name),
        )
    };
    let bytes = match count.checked_div(dt.sig.elements) {
        None if count > 0 => {
            return Err(MpiError::new(
                class::TYPE,
                format!("{} has no basic elements to count", dt.name),
            ))
        }
        None => 0,
        Some(whole) => whole
            .checked_mul(dt.size as u64)
            .and_then(|b| b.checked_add(first_elements_bytes(dt, count % dt.sig.elements)))
            .filter(|&b| b < 1 << 63)
            .ok_or_else(too_many)?,
    };
    *st = MpiStatus {
        count_lo: (bytes & 0xffff_ffff) as u32 as c_int,
        count_hi: (bytes >> 32) as u32 as c_int,
        ..*st
    };
    Ok(())
}

/// The bytes the first `n` basic elements of one element of `dt` take (`n` less than
/// the element has), in signature order.
fn first_elements_bytes(dt: &Datatype, mut n: u64) -> u64 {
    let mut bytes = 0u64;
    for part in dt.sig.parts.iter() {
        if n == 0 {
            break;
        }
        let (unit, per, k) = match part {
            SigPart::Basic(b, k) => (b.native() as u64, 1, *k as u64),
            SigPart::Nested(k, t) => (t.size as u64, t.sig.elements, *k as u64),
        };
        if n >= per.saturating_mul(k) {
            bytes += unit * k;
            n -= per * k;
            continue;
        }
        bytes += (n / per) * unit;
        n %= per;
        if let SigPart::Nested(_, t) = part {
            bytes += first_elements_bytes(t, n);
        }
        break;
    }
    bytes
}

/// MPI_Mprobe: waits for a message and takes it for this caller (MPI_MESSAGE_NO_PROC for
/// MPI_PROC_NULL); returns the message handle and its status.
pub fn mprobe(comm: c_int, src: c_int, tag: c_int) -> Result<(c_int, MpiStatus)> {
    let tag = recv_tag(tag)?;
    let c = state::comm(comm)?;
    if src == PROC_NULL {
        return Ok((crate::handles::MESSAGE_NO_PROC, MpiStatus::empty()));
    }
    let p = source(&c, src);
    let (m, st) = match tag {
        Some(t) => p.matched_probe_with_tag(t)?,
        None => p.matched_probe()?,
    };
    let h = state::with(|s| Ok(s.messages.insert(Some(m))))?;
    Ok((h, status_of(&st)))
}

/// MPI_Mrecv: receives message `*msg` into `buf` and sets `*msg` to MPI_MESSAGE_NULL
/// (MPI-3.1 section 3.8.3). MPI_MESSAGE_NO_PROC gives the status of a receive from
/// MPI_PROC_NULL and leaves the buffer alone.
pub fn mrecv(msg: &mut c_int, buf: &mut BufMut<'_>, count: usize) -> Result<MpiStatus> {
    if *msg == crate::handles::MESSAGE_NO_PROC {
        *msg = crate::handles::NULL;
        return Ok(MpiStatus::empty());
    }
    let m = state::with(|s| s.messages.remove(*msg))?
        .ok_or_else(|| MpiError::new(class::REQUEST, "not a message of MPI_Mprobe"))?;
    *msg = crate::handles::NULL;
    let st = match buf.in_place(0, count)? {
        Some(b) => m.matched_receive_into(b)?,
        None => m.matched_receive_into(&mut Scatter::of(buf, count))?,
    };
    Ok(status_of(&st))
}

/// MPI_Imrecv: a matched probe took the whole message already, so it is received at once
/// and the request is complete from the start (MPI-3.1 section 3.8.3 allows either).
pub fn imrecv(msg: &mut c_int, buf: &mut BufMut<'_>, count: usize) -> Result<c_int> {
    let st = mrecv(msg, buf, count)?;
    request::add(Active::Done(st))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::datatype::envelope::{Combiner, Contents};
    use crate::datatype::predefined::{index_of, PREDEFINED};
    use crate::datatype::signature::elements;

    fn named(name: &str) -> Arc<Datatype> {
        Arc::new(Datatype::predefined(
            &PREDEFINED[index_of(name).expect("predefined")],
        ))
    }

    fn made(c: Combiner) -> Contents {
        Contents::new(c, vec![], vec![], vec![])
    }

    /// MPI-3.1 section 12.3: MPI_Get_elements gives back what MPI_Status_set_elements
    /// set, for a basic type, a struct of two kinds and a type nesting it.
    #[test]
    fn set_elements_is_what_get_elements_counts() {
        let st = Arc::new(
            Datatype::derived(
                made(Combiner::Struct),
                &[(0, 2, named("MPI_INT")), (8, 1, named("MPI_DOUBLE"))],
            )
            .expect("struct"),
        );
        let nested =
            Datatype::derived(made(Combiner::Contiguous), &[(0, 3, st.clone())]).expect("nest");
        for dt in [&*named("MPI_DOUBLE"), &*st, &nested] {
            for count in 0..20 {
                let mut status = MpiStatus::empty();
                set_elements(&mut status, dt, count).expect("set");
                assert_eq!(
                    elements(dt, status.bytes()),
                    Some(count as u64),
                    "{}",
                    dt.name
                );
            }
        }
        let mut status = MpiStatus::empty();
        set_elements(&mut status, &st, 4).expect("set");
        assert_eq!(status.bytes(), 16 + 4, "one struct, then one int");
        assert!(set_elements(&mut status, &st, -1).is_err());
    }
}
