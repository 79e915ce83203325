//! Point-to-point communication (MPI-3.1 chapter 3) over `volpex::Process`.
//!
//! Every send is buffered: it returns once the message is in this replica's sender log,
//! so the synchronous, buffered and ready modes are the standard mode, and an immediate
//! send's request is complete at once. Messages travel as bytes: the datatype decides
//! which bytes of the buffer (packed when not contiguous) and how many elements a status
//! counts (`MPI_Get_count`).

use std::os::raw::c_int;

use volpex::{Communicator, Process};

use crate::datatype::{Buf, BufMut, Datatype};
use crate::error::{MpiError, Result};
use crate::ffi::raw::Pending;
use crate::handles::{class, MpiStatus, ANY_SOURCE, ANY_TAG, PROC_NULL, UNDEFINED};
use crate::request::{self, status_of, Active};
use crate::state;

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

/// MPI_Send (and Ssend, Bsend, Rsend).
pub fn send(comm: c_int, buf: &Buf<'_>, count: usize, dest: c_int, tag: c_int) -> Result<()> {
    check_send_tag(tag)?;
    let comm = state::comm(comm)?;
    if dest == PROC_NULL {
        return Ok(());
    }
    let bytes = buf.bytes(0, count)?;
    comm.process_at_rank(dest).send_with_tag(&bytes[..], tag)?;
    Ok(())
}

/// MPI_Isend (and the other modes): the request is complete when it returns.
pub fn isend(comm: c_int, buf: &Buf<'_>, count: usize, dest: c_int, tag: c_int) -> Result<c_int> {
    request::add(start_send(comm, buf, count, dest, tag)?)
}

/// Starts an immediate send (MPI_Isend, MPI_Start of a persistent send).
pub fn start_send(
    comm: c_int,
    buf: &Buf<'_>,
    count: usize,
    dest: c_int,
    tag: c_int,
) -> Result<Active> {
    check_send_tag(tag)?;
    let c = state::comm(comm)?;
    if dest == PROC_NULL {
        return Ok(Active::Done(MpiStatus::empty()));
    }
    let bytes = buf.bytes(0, count)?;
    let r = c
        .process_at_rank(dest)
        .immediate_send_with_tag(&bytes[..], tag)?;
    Ok(Active::Volpex(Pending(r, comm)))
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
    let (data, st) = match tag {
        Some(t) => p.receive_vec_with_tag::<u8>(t)?,
        None => p.receive_vec::<u8>()?,
    };
    let room = buf.dt.bytes_of(count)?;
    if data.len() > room {
        return Err(MpiError::new(
            class::TRUNCATE,
            format!(
                "message of {} bytes truncated into a {room}-byte buffer",
                data.len()
            ),
        ));
    }
    buf.write(0, count, &data)?;
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

/// MPI_Irecv into a contiguous buffer that stays valid until the request completes.
pub fn irecv(comm: c_int, mem: &'static mut [u8], src: c_int, tag: c_int) -> Result<c_int> {
    request::add(start_recv(comm, mem, src, tag)?)
}

/// Starts an immediate receive (MPI_Irecv, MPI_Start of a persistent receive).
pub fn start_recv(comm: c_int, mem: &'static mut [u8], src: c_int, tag: c_int) -> Result<Active> {
    let tag = recv_tag(tag)?;
    let c = state::comm(comm)?;
    if src == PROC_NULL {
        return Ok(Active::Done(MpiStatus::empty()));
    }
    let p = source(&c, src);
    let r = match tag {
        Some(t) => p.immediate_receive_into_with_tag(mem, t)?,
        None => p.immediate_receive_into(mem)?,
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
    send(comm, sbuf, scount, dest, stag)?;
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

/// MPI_Mrecv: receives message `*msg` into `buf` and sets `*msg` to MPI_MESSAGE_NULL.
pub fn mrecv(msg: &mut c_int, buf: &mut BufMut<'_>, count: usize) -> Result<MpiStatus> {
    if *msg == crate::handles::MESSAGE_NO_PROC {
        *msg = crate::handles::NULL;
        return Ok(MpiStatus::empty());
    }
    let m = state::with(|s| s.messages.remove(*msg))?
        .ok_or_else(|| MpiError::new(class::REQUEST, "not a message of MPI_Mprobe"))?;
    *msg = crate::handles::NULL;
    if let Some(b) = buf.in_place(0, count)? {
        return Ok(status_of(&m.matched_receive_into(b)?));
    }
    let (data, st) = m.matched_receive_vec::<u8>()?;
    let room = buf.dt.bytes_of(count)?;
    if data.len() > room {
        return Err(MpiError::new(
            class::TRUNCATE,
            format!(
                "message of {} bytes truncated into a {room}-byte buffer",
                data.len()
            ),
        ));
    }
    buf.write(0, count, &data)?;
    Ok(status_of(&st))
}
