//! Reductions (MPI-3.1 section 5.9) on packed bytes: a `Combiner` is an operation made
//! ready for one datatype, checked when the call is made, and run later by a kernel
//! (at once, or on an immediate collective's thread).
//!
//! A predefined operation runs on the datatype's one primitive type (a derived datatype
//! made of one primitive type is a run of them; section 5.9.2 defines the predefined
//! operations on the predefined types only, and MPICH and Open MPI accept those derived
//! ones as we do). A user operation (section 5.9.5) runs on any datatype, derived ones
//! included: the collectives move packed bytes, cut only between whole elements of the
//! datatype (`volpex::Operation::granule`), and each combination unpacks both operands
//! into the memory layout the datatype describes and calls the program's function with
//! the datatype's handle and the number of elements, as the standard says. Both kinds
//! are combined in rank order where the operation does not commute.
//!
//! Owns the operation side of a reduction. Must never move data itself (the algorithms
//! are `volpex`'s) nor hold a raw pointer (`raw::call_user_op` calls the program).

use std::borrow::Cow;
use std::os::raw::c_int;
use std::sync::Arc;

use volpex::Communicator;

use crate::datatype::{BufMut, Datatype, Prim};
use crate::error::{MpiError, Result};
use crate::handles::class;
use crate::op::{self, Elem, OpKind, Predef, User};
use crate::state;
use crate::with_elem;

/// Which reduction a kernel runs.
#[derive(Clone)]
pub enum Red {
    /// MPI_Reduce to `root`; `at_root` says whether this rank is it.
    Reduce {
        /// The root's rank.
        root: c_int,
        /// This rank is the root.
        at_root: bool,
    },
    /// MPI_Allreduce.
    All,
    /// MPI_Scan.
    Scan,
    /// MPI_Exscan.
    Exscan,
    /// MPI_Reduce_scatter_block.
    ScatterBlock,
    /// MPI_Reduce_scatter with these counts, in bytes of packed data.
    Scatter(Vec<usize>),
}

/// An operation made ready for a datatype.
#[derive(Clone)]
pub enum Combiner {
    /// A predefined operation on a primitive type.
    Predefined {
        /// The operation.
        kind: OpKind,
        /// The type it runs on.
        prim: Prim,
    },
    /// The program's function on whole elements of a datatype.
    User(Packed),
}

/// Checks that predefined operation `o` is defined on `T`.
fn defined<T: Elem>(o: &op::Op, type_name: &str) -> Result<()> {
    op::check::<T>(o, type_name)
}

impl Combiner {
    /// Operation handle `op` on datatype `dt`, checked: a predefined operation needs a
    /// datatype of one primitive type it is defined on (MPI_ERR_OP, MPI_ERR_TYPE).
    pub fn new(op: c_int, dt: &Arc<Datatype>) -> Result<Combiner> {
        let o = state::op(op)?;
        if let Some(user) = o.user {
            return Ok(Combiner::User(Packed {
                user,
                dt: dt.clone(),
            }));
        }
        let prim = dt.base.ok_or_else(|| {
            MpiError::new(
                class::TYPE,
                format!(
                    "{} needs a datatype of one predefined type ({} mixes types)",
                    o.name, dt.name
                ),
            )
        })?;
        with_elem!(
            prim,
            defined(&o, &dt.name),
            Err(MpiError::new(
                class::OP,
                format!(
                    "{} is not defined on {} (half or quad precision)",
                    o.name, dt.name
                ),
            ))
        )?;
        Ok(Combiner::Predefined { kind: o.kind, prim })
    }

    /// Runs `red` over this rank's packed `send`, the result into `recv`.
    pub fn reduce(
        &self,
        c: &Communicator,
        red: &Red,
        send: &[u8],
        recv: &mut [u8],
    ) -> Result<(), volpex::Error> {
        match self {
            Combiner::Predefined { kind, prim } => with_elem!(
                *prim,
                reduce_with(c, Predef(*kind), red, send, recv),
                Err(no_operation())
            ),
            Combiner::User(p) => reduce_with::<u8>(c, p.clone(), red, send, recv),
        }
    }

    /// `inout = input op inout` on packed elements, without communicating
    /// (MPI_Reduce_local, section 5.9.7).
    pub fn local(&self, input: &[u8], inout: &mut [u8]) -> Result<(), volpex::Error> {
        match self {
            Combiner::Predefined { kind, prim } => with_elem!(
                *prim,
                predefined_local(*kind, input, inout),
                Err(no_operation())
            ),
            Combiner::User(p) => local_with::<u8>(p.clone(), input, inout),
        }
    }
}

/// What a predefined operation on an opaque type (half or quad precision) would meet,
/// which `Combiner::new` refuses first.
fn no_operation() -> volpex::Error {
    volpex::Error::Usage("no predefined operation is defined on half or quad precision")
}

/// `bytes` as elements of `T`, borrowed when aligned.
fn typed<T: Elem>(bytes: &[u8]) -> Result<Cow<'_, [T]>, volpex::Error> {
    whole::<T>(bytes.len())?;
    Ok(match bytemuck::try_cast_slice::<u8, T>(bytes) {
        Ok(t) => Cow::Borrowed(t),
        Err(_) => Cow::Owned(bytemuck::pod_collect_to_vec(bytes)),
    })
}

/// Checks `len` bytes are whole elements of `T`.
fn whole<T>(len: usize) -> Result<(), volpex::Error> {
    let n = std::mem::size_of::<T>();
    if len.is_multiple_of(n) {
        Ok(())
    } else {
        Err(volpex::Error::BadLength {
            message_bytes: len,
            elem_bytes: n,
        })
    }
}

/// Runs `f` on `bytes` as elements of `T` (through an aligned copy if need be).
fn typed_mut<T: Elem, R>(
    bytes: &mut [u8],
    f: impl FnOnce(&mut [T]) -> R,
) -> Result<R, volpex::Error> {
    whole::<T>(bytes.len())?;
    if (bytes.as_ptr() as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Ok(f(bytemuck::cast_slice_mut(bytes)));
    }
    let mut v: Vec<T> = bytemuck::pod_collect_to_vec(bytes);
    let r = f(&mut v);
    bytes.copy_from_slice(bytemuck::cast_slice(&v));
    Ok(r)
}

fn reduce_with<T: Elem>(
    c: &Communicator,
    o: impl volpex::Operation<T>,
    red: &Red,
    send: &[u8],
    recv: &mut [u8],
) -> Result<(), volpex::Error> {
    let send = typed::<T>(send)?;
    let elem = std::mem::size_of::<T>();
    typed_mut::<T, _>(recv, |r| match red {
        Red::Reduce {
            root,
            at_root: true,
        } => c.process_at_rank(*root).reduce_into_root(&send, r, o),
        Red::Reduce { root, .. } => c.process_at_rank(*root).reduce_into(&send, o),
        Red::All => c.all_reduce_into(&send, r, o),
        Red::Scan => c.scan_into(&send, r, o),
        Red::Exscan => c.exclusive_scan_into(&send, r, o),
        Red::ScatterBlock => c.reduce_scatter_block_into(&send, r, o),
        Red::Scatter(bytes) => {
            let counts: Vec<usize> = bytes.iter().map(|b| b / elem).collect();
            c.reduce_scatter_into(&send, r, &counts, o)
        }
    })?
}

/// `local` for a predefined operation: one pass over `inout`, no copies (a one-sided
/// accumulate applies this to every byte it carries).
fn predefined_local<T: Elem>(
    kind: OpKind,
    input: &[u8],
    inout: &mut [u8],
) -> Result<(), volpex::Error> {
    let input = typed::<T>(input)?;
    typed_mut::<T, _>(inout, |io| {
        // One loop per operation, so each is compiled for its constant operation (and
        // vectorized where it can be), not with a match per element.
        let mut each = |k| combine_each(k, &input, io);
        match kind {
            OpKind::Max => each(OpKind::Max),
            OpKind::Min => each(OpKind::Min),
            OpKind::Sum => each(OpKind::Sum),
            OpKind::Prod => each(OpKind::Prod),
            OpKind::Land => each(OpKind::Land),
            OpKind::Band => each(OpKind::Band),
            OpKind::Lor => each(OpKind::Lor),
            OpKind::Bor => each(OpKind::Bor),
            OpKind::Lxor => each(OpKind::Lxor),
            OpKind::Bxor => each(OpKind::Bxor),
            OpKind::MinLoc => each(OpKind::MinLoc),
            OpKind::MaxLoc => each(OpKind::MaxLoc),
            OpKind::Replace => each(OpKind::Replace),
            OpKind::NoOp => each(OpKind::NoOp),
        }
    })
}

/// `io = input op io` element by element (the input standing for the lower "rank").
#[inline(always)]
fn combine_each<T: Elem>(kind: OpKind, input: &[T], io: &mut [T]) {
    for (o, &i) in io.iter_mut().zip(input) {
        let mut x = i;
        T::combine(kind, &mut x, *o);
        *o = x;
    }
}

fn local_with<T: Elem>(
    o: impl volpex::Operation<T>,
    input: &[u8],
    inout: &mut [u8],
) -> Result<(), volpex::Error> {
    let mut acc = typed::<T>(input)?.into_owned();
    typed_mut::<T, _>(inout, |io| {
        // The input stands for the lower "rank": acc = input op inout.
        o.combine(&mut acc, io);
        io.copy_from_slice(&acc);
    })
}

/// A user operation on the packed bytes of whole elements of `dt`.
#[derive(Clone)]
pub struct Packed {
    user: User,
    dt: Arc<Datatype>,
}

impl Packed {
    /// `n` elements of packed `data` laid out in memory as the datatype says: the
    /// memory, 16-byte aligned, and the offset of the elements' origin in it.
    fn image(&self, data: &[u8], n: usize) -> (Vec<u128>, usize) {
        let (off, len) = self.dt.span(0, n).unwrap_or((0, 0));
        // The memory runs from the origin or the lowest byte, whichever is lower, to
        // the highest byte, so the pointer the function gets is inside it.
        let lo = off.min(0);
        let hi = (off + len as isize).max(0);
        let mut mem = vec![0u128; ((hi - lo) as usize).div_ceil(16)];
        let origin = (-lo) as usize;
        let mut b = BufMut {
            mem: bytemuck::cast_slice_mut(&mut mem),
            origin: origin as isize,
            dt: self.dt.clone(),
        };
        // The memory covers every byte of the elements, so this cannot fail.
        let _ = b.write(0, n, data);
        (mem, origin)
    }
}

impl volpex::Operation<u8> for Packed {
    fn combine(&self, lhs: &mut [u8], rhs: &[u8]) {
        let n = lhs.len().checked_div(self.dt.size).unwrap_or(0);
        if n == 0 {
            return;
        }
        // MPI-3.1 section 5.9.5: the function computes inoutvec = invec op inoutvec,
        // where invec holds the lower ranks' part (lhs); the result goes back to lhs.
        let (mut invec, origin) = self.image(lhs, n);
        let (mut inout, _) = self.image(rhs, n);
        crate::raw::call_user_op(
            self.user.f,
            bytemuck::cast_slice_mut(&mut invec),
            bytemuck::cast_slice_mut(&mut inout),
            origin,
            n,
            self.dt.handle,
        );
        let image = crate::datatype::Buf::new(
            bytemuck::cast_slice(&inout),
            origin as isize,
            self.dt.clone(),
        );
        if let Ok(packed) = image.bytes(0, n) {
            lhs.copy_from_slice(&packed);
        }
    }

    fn is_commutative(&self) -> bool {
        self.user.commute
    }

    fn granule(&self) -> usize {
        self.dt.size.max(1)
    }
}
