//! The one shape every collective of the C interface takes (MPI-3.1 chapter 5 and the
//! neighbourhood collectives of section 7.6): a `Job` holds what this rank contributes
//! (its packed input), a kernel that runs the collective on a communicator, and where the
//! packed result goes in the receive buffer (`Output`: pieces filled in order). Each
//! collective is described once; `run` is its blocking form and `start` its immediate
//! one (section 5.12).
//!
//! Blocking: the kernel runs on the communicator, reading the send buffer in place and
//! writing the receive buffer in place when their datatypes are contiguous. Immediate:
//! the input is copied at the call (the program may not change its send buffer until
//! completion, and may reuse it after), the kernel runs on a thread of its own in a
//! fresh context of the communicator (`volpex::Communicator::immediate`), and the result
//! is put in place when the request completes, so the receive buffer is written by the
//! thread that completes the request, never while the program may read it.
//!
//! Owns the jobs and the placing of results (the pieces of a buffer and their packing
//! are `datatype::piece`'s). Must never hold the MPI
//! semantics of a particular collective (they are the kernels, in `coll`) nor a raw
//! pointer (`raw` made the buffers).

use std::borrow::Cow;
use std::os::raw::c_int;

use volpex::Communicator;

use crate::datatype::piece::{pack, packed_span, Piece};
use crate::datatype::{Buf, BufMut};
use crate::error::{MpiError, Result};
use crate::handles::class;
use crate::raw::Pending;
use crate::request;
use crate::state::{self, Active};

/// A collective run on packed bytes: reads this rank's input, writes its result (whose
/// length the `Job` says). Errors are the runtime's: every MPI argument was checked when
/// the job was made.
pub type Kernel =
    Box<dyn FnOnce(&Communicator, &[u8], &mut [u8]) -> Result<(), volpex::Error> + Send>;

/// Where a collective's packed result goes: `pieces` of `buf`, filled in order.
pub struct Output<'a> {
    /// The receive buffer.
    pub buf: BufMut<'a>,
    /// Its pieces, in the order of the packed result.
    pub pieces: Vec<Piece>,
}

impl<'a> Output<'a> {
    /// The result goes to `pieces` of `buf`.
    pub fn new(buf: BufMut<'a>, pieces: Vec<Piece>) -> Output<'a> {
        Output { buf, pieces }
    }

    /// `count` elements of `buf` from its origin.
    pub fn whole(buf: BufMut<'a>, count: usize) -> Output<'a> {
        let dt = buf.dt.clone();
        Output::new(buf, vec![Piece { at: 0, count, dt }])
    }

    /// Bytes of data in all pieces.
    pub fn len(&self) -> Result<usize> {
        self.pieces.iter().try_fold(0usize, |n, p| {
            n.checked_add(p.bytes()?)
                .ok_or_else(|| MpiError::new(class::COUNT, "count too large"))
        })
    }

    /// Whether it has no data.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The memory of the pieces, if it is their packed form (see `packed_span`).
    fn in_place(&mut self) -> Result<Option<&mut [u8]>> {
        Ok(
            packed_span(self.buf.mem.len(), self.buf.origin, &self.pieces)?
                .map(|(s, n)| &mut self.buf.mem[s..s + n]),
        )
    }

    /// The current data of the pieces, packed.
    fn current(&self) -> Result<Vec<u8>> {
        let b = Buf::new(self.buf.mem, self.buf.origin, self.buf.dt.clone());
        Ok(pack(&b, &self.pieces)?.into_owned())
    }

    /// Spreads the packed `data` over the pieces.
    fn write(&mut self, mut data: &[u8]) -> Result<()> {
        for p in self.pieces.iter().filter(|p| p.has_data()) {
            let n = p.bytes()?.min(data.len());
            let mut b = BufMut {
                mem: &mut *self.buf.mem,
                origin: self.buf.origin + p.at,
                dt: p.dt.clone(),
            };
            b.write(0, p.count, &data[..n])?;
            data = &data[n..];
        }
        Ok(())
    }
}

/// A collective of the C interface, ready to run (`run`) or start (`start`).
pub struct Job<'a> {
    /// The communicator's handle.
    pub comm: c_int,
    /// What this rank contributes, packed.
    pub input: Cow<'a, [u8]>,
    /// Where the result goes, if anywhere here.
    pub output: Option<Output<'a>>,
    /// Bytes of the result (written to `output`, or dropped).
    pub result_len: usize,
    /// Whether the result buffer starts with the output's current data (a broadcast's
    /// root) rather than zeros.
    pub preload: bool,
    /// The collective itself.
    pub kernel: Kernel,
}

impl<'a> Job<'a> {
    /// A job whose result fills `output` (or, without one, is `result_len` bytes dropped).
    pub fn new(
        comm: c_int,
        input: Cow<'a, [u8]>,
        output: Option<Output<'a>>,
        result_len: usize,
        kernel: Kernel,
    ) -> Result<Job<'a>> {
        let result_len = match &output {
            Some(o) => o.len()?,
            None => result_len,
        };
        Ok(Job {
            comm,
            input,
            output,
            result_len,
            preload: false,
            kernel,
        })
    }

    /// The result buffer starts with the output's current data.
    pub fn preloaded(mut self) -> Job<'a> {
        self.preload = true;
        self
    }
}

/// Runs `job` to completion (the blocking form).
pub fn run(job: Job<'_>) -> Result<()> {
    let c = state::comm(job.comm)?;
    let Job {
        input,
        output,
        result_len,
        preload,
        kernel,
        ..
    } = job;
    match output {
        Some(mut out) => {
            if let Some(mem) = out.in_place()? {
                return Ok(kernel(&c, &input, mem)?);
            }
            let mut tmp = if preload {
                out.current()?
            } else {
                vec![0u8; result_len]
            };
            kernel(&c, &input, &mut tmp)?;
            out.write(&tmp)
        }
        None => {
            let mut tmp = vec![0u8; result_len];
            Ok(kernel(&c, &input, &mut tmp)?)
        }
    }
}

/// Starts `job` and returns its request's handle (the immediate form): its receive
/// buffer must stay valid until the request completes (MPI-3.1 section 5.12).
pub fn start(job: Job<'static>) -> Result<c_int> {
    let c = state::comm(job.comm)?;
    let Job {
        comm,
        input,
        mut output,
        result_len,
        preload,
        kernel,
    } = job;
    let input = input.into_owned();
    let mut result = match (&output, preload) {
        (Some(out), true) => out.current()?,
        _ => vec![0u8; result_len],
    };
    let run = move |ctx: &Communicator| {
        kernel(ctx, &input, &mut result)?;
        Ok(result)
    };
    let sink = move |bytes: &[u8]| {
        let Some(out) = output.as_mut() else {
            return Ok(());
        };
        if bytes.len() != result_len {
            return Err(volpex::Error::BufferSize {
                what: "immediate collective result (bytes)",
                expected: result_len,
                got: bytes.len(),
            });
        }
        out.write(bytes).map_err(|_| volpex::Error::BufferSize {
            what: "immediate collective receive buffer (bytes)",
            expected: result_len,
            got: 0,
        })
    };
    let r = c.immediate(run, sink)?;
    request::add(Active::Volpex(Pending(r, comm)))
}
