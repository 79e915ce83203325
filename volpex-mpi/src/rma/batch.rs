//! One origin's operations on one target in one epoch, as the bytes that travel between
//! them (a batch), and what the target does with them: it applies them to its window in
//! the order the origin issued them and answers with the data of those that return some
//! (gets, fetching accumulates, compare-and-swap), in the same order.
//!
//! Owns the batch format and the arithmetic on window bytes; must never communicate or
//! hold a pointer: the window is a byte slice it is given.
//!
//! Format (little-endian): a count of operations, then each: a kind byte, then its
//! pieces (`u64` count, then `(u64 offset, u64 length)` each, offsets into the target's
//! window), then by kind: put: the data; get: nothing; accumulate: op handle (`i32`), the
//! primitive's code (`u8`), whether it fetches (`u8`), the data; compare-and-swap: the
//! compare bytes then the new bytes (one element: the one piece's length each).

use std::borrow::Cow;

use crate::coll::reduce::Combiner;
use crate::datatype::Prim;
use crate::error::{MpiError, Result};
use crate::handles::class;
use crate::op::OpKind;
use crate::window::{Access, Pieces};

fn total(pieces: &Pieces) -> u64 {
    pieces.iter().map(|&(_, l)| l).sum()
}

const PUT: u8 = 1;
const GET: u8 = 2;
const ACC: u8 = 3;
const CAS: u8 = 4;

/// Bytes `ops` take encoded.
fn encoded_len(ops: &[Access]) -> usize {
    let pieces = |p: &Pieces| 8 + 16 * p.len();
    8 + ops
        .iter()
        .map(|op| match op {
            Access::Put { pieces: p, data } => 1 + pieces(p) + data.len(),
            Access::Get { pieces: p } => 1 + pieces(p),
            Access::Acc {
                pieces: p, data, ..
            } => 1 + pieces(p) + 6 + data.len(),
            Access::Cas { compare, data, .. } => 1 + 24 + compare.len() + data.len(),
        })
        .sum::<usize>()
}

/// The bytes of `ops`.
pub fn encode(ops: &[Access]) -> Vec<u8> {
    encode_after(&[], ops)
}

/// `head`, then the bytes of `ops`, in one buffer of the right size (an operation's
/// data is copied once, here).
pub fn encode_after(head: &[u8], ops: &[Access]) -> Vec<u8> {
    let mut v = Vec::with_capacity(head.len() + encoded_len(ops));
    v.extend_from_slice(head);
    v.extend_from_slice(&(ops.len() as u64).to_le_bytes());
    let pieces = |v: &mut Vec<u8>, p: &Pieces| {
        v.extend_from_slice(&(p.len() as u64).to_le_bytes());
        for &(o, l) in p {
            v.extend_from_slice(&o.to_le_bytes());
            v.extend_from_slice(&l.to_le_bytes());
        }
    };
    for op in ops {
        match op {
            Access::Put { pieces: p, data } => {
                v.push(PUT);
                pieces(&mut v, p);
                v.extend_from_slice(data);
            }
            Access::Get { pieces: p } => {
                v.push(GET);
                pieces(&mut v, p);
            }
            Access::Acc {
                pieces: p,
                data,
                op,
                prim,
                fetch,
            } => {
                v.push(ACC);
                pieces(&mut v, p);
                v.extend_from_slice(&op.to_le_bytes());
                v.push(*prim);
                v.push(*fetch as u8);
                v.extend_from_slice(data);
            }
            Access::Cas { at, compare, data } => {
                v.push(CAS);
                pieces(&mut v, &vec![(*at, compare.len() as u64)]);
                v.extend_from_slice(compare);
                v.extend_from_slice(data);
            }
        }
    }
    v
}

/// A batch that does not decode: another process of this job sent it, so this is a bug
/// or memory corruption, never the program's mistake.
fn malformed(why: &str) -> MpiError {
    MpiError::new(class::INTERN, format!("malformed one-sided batch: {why}"))
}

/// Reads a batch.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: u64) -> Result<&'a [u8]> {
        let n = usize::try_from(n).map_err(|_| malformed("a length"))?;
        if n > self.0.len() {
            return Err(malformed("cut short"));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn i32(&mut self) -> Result<i32> {
        let b = self.take(4)?;
        let mut a = [0u8; 4];
        a.copy_from_slice(b);
        Ok(i32::from_le_bytes(a))
    }
    fn pieces(&mut self) -> Result<Pieces> {
        let n = self.u64()?;
        // Each piece takes 16 bytes: a count beyond what is left is a lie.
        if n > self.0.len() as u64 / 16 {
            return Err(malformed("more pieces than bytes"));
        }
        (0..n).map(|_| Ok((self.u64()?, self.u64()?))).collect()
    }
}

/// The operations in `bytes`.
pub fn decode(bytes: &[u8]) -> Result<Vec<Access<'_>>> {
    let mut r = Reader(bytes);
    let n = r.u64()?;
    if n > bytes.len() as u64 {
        return Err(malformed("more operations than bytes"));
    }
    let mut ops = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let op = match r.u8()? {
            PUT => {
                let pieces = r.pieces()?;
                let data = Cow::Borrowed(r.take(total(&pieces))?);
                Access::Put { pieces, data }
            }
            GET => Access::Get {
                pieces: r.pieces()?,
            },
            ACC => {
                let pieces = r.pieces()?;
                let op = r.i32()?;
                let prim = r.u8()?;
                let fetch = r.u8()? != 0;
                let data = Cow::Borrowed(r.take(total(&pieces))?);
                Access::Acc {
                    pieces,
                    data,
                    op,
                    prim,
                    fetch,
                }
            }
            CAS => {
                let pieces = r.pieces()?;
                let &[(at, len)] = &pieces[..] else {
                    return Err(malformed("a compare-and-swap of several pieces"));
                };
                let compare = Cow::Borrowed(r.take(len)?);
                let data = Cow::Borrowed(r.take(len)?);
                Access::Cas { at, compare, data }
            }
            k => return Err(malformed(&format!("kind {k}"))),
        };
        ops.push(op);
    }
    if !r.0.is_empty() {
        return Err(malformed("bytes after the last operation"));
    }
    Ok(ops)
}

pub use crate::window::Window;

impl Window for &mut [u8] {
    fn piece(&mut self, off: u64, len: u64) -> Result<&mut [u8]> {
        let size = self.len();
        let range = usize::try_from(off)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(o, l)| Some(o..o.checked_add(l)?))
            .filter(|r| r.end <= size)
            .ok_or_else(|| {
                MpiError::new(
                    class::RMA_RANGE,
                    format!("an access of {len} bytes at byte {off} of a window of {size} bytes"),
                )
            })?;
        Ok(&mut self[range])
    }
}

/// How an accumulate combines: MPI_REPLACE, MPI_NO_OP, or an operation on a primitive.
enum Combine {
    Replace,
    Nothing,
    With(Combiner),
}

/// How predefined operation `kind` combines on `prim` (checked at the origin, which
/// refuses what MPI-3.1 section 11.3.4 does not define).
fn combiner(kind: OpKind, prim: Prim) -> Combine {
    match kind {
        OpKind::Replace => Combine::Replace,
        OpKind::NoOp => Combine::Nothing,
        kind => Combine::With(Combiner::Predefined { kind, prim }),
    }
}

/// Applies `ops` to window `mem` in order; returns the reply (the data of the
/// operations that return some, in order). `kind_of` gives an op handle's operation.
pub fn apply(
    mem: &mut dyn Window,
    ops: &[Access],
    kind_of: &dyn Fn(i32) -> Result<OpKind>,
) -> Result<Vec<u8>> {
    let mut reply = Vec::new();
    for op in ops {
        match op {
            Access::Put { pieces, data } => {
                let mut d = &data[..];
                for &p in pieces {
                    let m = mem.piece(p.0, p.1)?;
                    let (a, b) = d.split_at(m.len().min(d.len()));
                    m[..a.len()].copy_from_slice(a);
                    d = b;
                }
            }
            Access::Get { pieces } => {
                for &p in pieces {
                    reply.extend_from_slice(mem.piece(p.0, p.1)?);
                }
            }
            Access::Acc {
                pieces,
                data,
                op,
                prim,
                fetch,
            } => {
                let prim = Prim::from_code(*prim).ok_or_else(|| malformed("a primitive code"))?;
                let how = combiner(kind_of(*op)?, prim);
                let mut d = &data[..];
                for &p in pieces {
                    let m = mem.piece(p.0, p.1)?;
                    if *fetch {
                        reply.extend_from_slice(m);
                    }
                    let (a, b) = d.split_at(m.len().min(d.len()));
                    d = b;
                    match &how {
                        Combine::Replace => m[..a.len()].copy_from_slice(a),
                        Combine::Nothing => {}
                        Combine::With(c) => c.local(a, &mut m[..a.len()])?,
                    }
                }
            }
            Access::Cas { at, compare, data } => {
                let m = mem.piece(*at, compare.len() as u64)?;
                reply.extend_from_slice(m);
                if m == &compare[..] {
                    m.copy_from_slice(data);
                }
            }
        }
    }
    Ok(reply)
}

/// The window range `(offset, length)` whose bytes are the whole answer of `ops`, when
/// they are gets of consecutive pieces only (MPI_Get of a window's neighbouring blocks):
/// the target then answers from its window, without building the answer first.
pub fn answer_range(ops: &[Access]) -> Option<(u64, u64)> {
    let mut range: Option<(u64, u64)> = None;
    for op in ops {
        let Access::Get { pieces } = op else {
            return None;
        };
        for &(o, l) in pieces {
            range = match range {
                None => Some((o, l)),
                Some((s, n)) if s + n == o => Some((s, n + l)),
                Some(_) => return None,
            };
        }
    }
    range
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(op: i32) -> Result<OpKind> {
        crate::op::PREDEFINED
            .get(usize::try_from(op - 1).map_err(|_| malformed("op"))?)
            .map(|&(_, k)| k)
            .ok_or_else(|| malformed("op"))
    }

    fn op_handle(k: OpKind) -> i32 {
        crate::op::PREDEFINED
            .iter()
            .position(|&(_, p)| p == k)
            .map(|i| i as i32 + 1)
            .unwrap_or(0)
    }

    #[test]
    fn a_batch_survives_its_bytes() {
        let ops = vec![
            Access::Put {
                pieces: vec![(0, 4), (8, 4)],
                data: Cow::Owned((0..8).collect()),
            },
            Access::Get {
                pieces: vec![(4, 4)],
            },
            Access::Acc {
                pieces: vec![(0, 8)],
                data: Cow::Owned(vec![1; 8]),
                op: 3,
                prim: Prim::I32.code().unwrap_or(0),
                fetch: true,
            },
            Access::Cas {
                at: 16,
                compare: Cow::Owned(vec![0; 8]),
                data: Cow::Owned(vec![9; 8]),
            },
        ];
        let bytes = encode(&ops);
        assert_eq!(bytes.len(), encoded_len(&ops));
        assert_eq!(decode(&bytes).ok(), Some(ops));
    }

    #[test]
    fn gets_of_neighbouring_pieces_answer_from_one_window_range() {
        let get = |p: Pieces| Access::Get { pieces: p };
        let ops = vec![get(vec![(8, 4), (12, 4)]), get(vec![(16, 8)])];
        assert_eq!(answer_range(&ops), Some((8, 16)));
        assert_eq!(answer_range(&[get(vec![(8, 4)]), get(vec![(0, 4)])]), None);
        let put = Access::Put {
            pieces: vec![(0, 4)],
            data: Cow::Owned(vec![1; 4]),
        };
        assert_eq!(answer_range(&[get(vec![(8, 4)]), put]), None);
        assert_eq!(answer_range(&[]), None);
    }

    #[test]
    fn cut_or_lying_batches_are_refused() {
        let b = encode(&[Access::Put {
            pieces: vec![(0, 4)],
            data: Cow::Owned(vec![1, 2, 3, 4]),
        }]);
        for n in 0..b.len() {
            assert!(decode(&b[..n]).is_err(), "cut at {n}");
        }
        let mut lie = b.clone();
        lie[0] = 200;
        assert!(decode(&lie).is_err());
    }

    #[test]
    fn operations_apply_in_order_and_reply_in_order() {
        let mut mem = [0u8; 24];
        let i32s = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let ops = vec![
            Access::Put {
                pieces: vec![(0, 8)],
                data: Cow::Owned(i32s(&[5, 7])),
            },
            Access::Acc {
                pieces: vec![(0, 8)],
                data: Cow::Owned(i32s(&[1, 2])),
                op: op_handle(OpKind::Sum),
                prim: Prim::I32.code().unwrap_or(0),
                fetch: true,
            },
            Access::Get {
                pieces: vec![(0, 8)],
            },
            Access::Cas {
                at: 16,
                compare: Cow::Owned(i32s(&[0])),
                data: Cow::Owned(i32s(&[42])),
            },
            Access::Cas {
                at: 16,
                compare: Cow::Owned(i32s(&[0])),
                data: Cow::Owned(i32s(&[43])),
            },
        ];
        let reply = apply(&mut &mut mem[..], &ops, &kind).expect("applies");
        assert_eq!(reply, i32s(&[5, 7, 6, 9, 0, 42]));
        assert_eq!(&mem[..8], &i32s(&[6, 9])[..]);
        assert_eq!(&mem[16..20], &i32s(&[42])[..]);
    }

    #[test]
    fn an_access_outside_the_window_is_a_range_error() {
        let mut mem = [0u8; 8];
        let e = apply(
            &mut &mut mem[..],
            &[Access::Get {
                pieces: vec![(4, 8)],
            }],
            &kind,
        )
        .err()
        .map(|e| e.class);
        assert_eq!(e, Some(class::RMA_RANGE));
    }
}
