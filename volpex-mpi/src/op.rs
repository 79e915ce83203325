//! Reduction operations (MPI-3.1 section 5.9.2): the predefined ones on the predefined
//! types, as `volpex::Operation`s over typed elements, the program's own (MPI_Op_create,
//! run by `coll::reduce`), and the dispatch from a datatype's primitive to the Rust type
//! the collective runs on.

use bytemuck::{Pod, Zeroable};

use crate::error::{MpiError, Result};
use crate::handles::class;

/// A predefined operation, in `mpi.h` handle order (handle = TAG_OP | position + 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// MPI_MAX.
    Max,
    /// MPI_MIN.
    Min,
    /// MPI_SUM.
    Sum,
    /// MPI_PROD.
    Prod,
    /// MPI_LAND.
    Land,
    /// MPI_BAND.
    Band,
    /// MPI_LOR.
    Lor,
    /// MPI_BOR.
    Bor,
    /// MPI_LXOR.
    Lxor,
    /// MPI_BXOR.
    Bxor,
    /// MPI_MINLOC.
    MinLoc,
    /// MPI_MAXLOC.
    MaxLoc,
    /// MPI_REPLACE (one-sided only).
    Replace,
    /// MPI_NO_OP (one-sided only).
    NoOp,
}

/// The predefined operations in handle order, with their names.
pub const PREDEFINED: &[(&str, OpKind)] = &[
    ("MPI_MAX", OpKind::Max),
    ("MPI_MIN", OpKind::Min),
    ("MPI_SUM", OpKind::Sum),
    ("MPI_PROD", OpKind::Prod),
    ("MPI_LAND", OpKind::Land),
    ("MPI_BAND", OpKind::Band),
    ("MPI_LOR", OpKind::Lor),
    ("MPI_BOR", OpKind::Bor),
    ("MPI_LXOR", OpKind::Lxor),
    ("MPI_BXOR", OpKind::Bxor),
    ("MPI_MINLOC", OpKind::MinLoc),
    ("MPI_MAXLOC", OpKind::MaxLoc),
    ("MPI_REPLACE", OpKind::Replace),
    ("MPI_NO_OP", OpKind::NoOp),
];

/// An operation in the op table.
#[derive(Debug, Clone, Copy)]
pub struct Op {
    /// Its name, for errors.
    pub name: &'static str,
    /// What it does (for a user operation: nothing; `user` says).
    pub kind: OpKind,
    /// A user operation (MPI_Op_create).
    pub user: Option<User>,
}

/// A user operation: the program's function and whether it commutes.
#[derive(Debug, Clone, Copy)]
pub struct User {
    /// `void f(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype)`.
    pub f: crate::raw::UserFn,
    /// Whether the algorithms may reorder it.
    pub commute: bool,
}

/// An element type a predefined operation can combine.
pub trait Elem: Pod + Send {
    /// Whether `op` is defined on this type (MPI-3.1 section 5.9.2).
    fn supports(op: OpKind) -> bool;
    /// `a = a op b`, `a` from the lower ranks.
    fn combine(op: OpKind, a: &mut Self, b: Self);
}

macro_rules! int_elems {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn supports(op: OpKind) -> bool {
                !matches!(op, OpKind::MinLoc | OpKind::MaxLoc | OpKind::Replace | OpKind::NoOp)
            }
            fn combine(op: OpKind, a: &mut Self, b: Self) {
                let x = *a;
                *a = match op {
                    OpKind::Max => x.max(b),
                    OpKind::Min => x.min(b),
                    OpKind::Sum => x.wrapping_add(b),
                    OpKind::Prod => x.wrapping_mul(b),
                    OpKind::Land => ((x != 0) && (b != 0)) as $t,
                    OpKind::Lor => ((x != 0) || (b != 0)) as $t,
                    OpKind::Lxor => ((x != 0) != (b != 0)) as $t,
                    OpKind::Band => x & b,
                    OpKind::Bor => x | b,
                    OpKind::Bxor => x ^ b,
                    OpKind::MinLoc | OpKind::MaxLoc | OpKind::Replace | OpKind::NoOp => x,
                };
            }
        }
    )*};
}
int_elems!(i8, u8, i16, u16, i32, u32, i64, u64, i128);

macro_rules! float_elems {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn supports(op: OpKind) -> bool {
                matches!(op, OpKind::Max | OpKind::Min | OpKind::Sum | OpKind::Prod
                    | OpKind::Land | OpKind::Lor | OpKind::Lxor)
            }
            fn combine(op: OpKind, a: &mut Self, b: Self) {
                let x = *a;
                let t = |v: bool| if v { 1.0 } else { 0.0 };
                *a = match op {
                    OpKind::Max => if b > x { b } else { x },
                    OpKind::Min => if b < x { b } else { x },
                    OpKind::Sum => x + b,
                    OpKind::Prod => x * b,
                    OpKind::Land => t(x != 0.0 && b != 0.0),
                    OpKind::Lor => t(x != 0.0 || b != 0.0),
                    OpKind::Lxor => t((x != 0.0) != (b != 0.0)),
                    _ => x,
                };
            }
        }
    )*};
}
float_elems!(f32, f64);

macro_rules! complex_elems {
    ($($name:ident $t:ty),*) => {$(
        #[doc = concat!("A complex number of ", stringify!($t), " as C lays it out.")]
        #[repr(C)]
        #[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
        pub struct $name {
            re: $t,
            im: $t,
        }
        impl Elem for $name {
            fn supports(op: OpKind) -> bool {
                matches!(op, OpKind::Sum | OpKind::Prod)
            }
            fn combine(op: OpKind, a: &mut Self, b: Self) {
                let x = *a;
                *a = match op {
                    OpKind::Sum => $name { re: x.re + b.re, im: x.im + b.im },
                    OpKind::Prod => $name {
                        re: x.re * b.re - x.im * b.im,
                        im: x.re * b.im + x.im * b.re,
                    },
                    _ => x,
                };
            }
        }
    )*};
}
complex_elems!(Cf32 f32, Cf64 f64);

/// MINLOC and MAXLOC on `(v, i)` pair types: the better value wins, the lower index on a
/// tie.
macro_rules! loc_pairs {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn supports(op: OpKind) -> bool {
                matches!(op, OpKind::MinLoc | OpKind::MaxLoc)
            }
            fn combine(op: OpKind, a: &mut Self, b: Self) {
                let better = match op {
                    OpKind::MinLoc => b.v < a.v,
                    OpKind::MaxLoc => b.v > a.v,
                    _ => false,
                };
                if better || (b.v == a.v && b.i < a.i) {
                    *a = b;
                }
            }
        }
    )*};
}

/// `(value, index)` pairs for MINLOC and MAXLOC: the data of the C structs of
/// `MPI_FLOAT_INT` and the others as a message carries it, without the structs'
/// padding (packed: `MPI_DOUBLE_INT` is 12 bytes, its type size).
macro_rules! pair_elems {
    ($($name:ident { $v:ty, $i:ty }),*) => {$(
        #[repr(C, packed)]
        #[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
        #[doc = concat!("A `(", stringify!($v), ", index)` pair.")]
        pub struct $name {
            v: $v,
            i: $i,
        }
        loc_pairs!($name);
    )*};
}
pair_elems!(
    FloatInt { f32, i32 },
    TwoInt { i32, i32 },
    ShortInt { i16, i32 },
    TwoF32 { f32, f32 },
    TwoF64 { f64, f64 },
    DoubleInt { f64, i32 },
    LongInt { i64, i32 }
);

/// A C `long double` as its bytes (x86-64: the x87 80-bit format in 16 bytes; aarch64:
/// binary128), ordered exactly, so MAX, MIN, MAXLOC and MINLOC apply; SUM and PROD are
/// the C compiler's arithmetic (`raw::long_double_combine`), Rust having none of
/// this precision.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct LongDouble([u8; 16]);

impl LongDouble {
    /// An integer whose order is the value's (zeros equal; NaNs aside).
    fn key(self) -> i128 {
        #[cfg(target_arch = "x86_64")]
        let (negative, magnitude) = {
            let [m @ .., s0, s1, _, _, _, _, _, _] = self.0;
            let se = u16::from_le_bytes([s0, s1]);
            let mant = u64::from_le_bytes(m);
            (
                se >> 15 == 1,
                (u128::from(se & 0x7fff) << 64) | u128::from(mant),
            )
        };
        #[cfg(not(target_arch = "x86_64"))]
        let (negative, magnitude) = {
            let b = u128::from_le_bytes(self.0);
            (b >> 127 == 1, b & !(1 << 127))
        };
        if negative {
            -(magnitude as i128)
        } else {
            magnitude as i128
        }
    }
}

impl PartialEq for LongDouble {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl PartialOrd for LongDouble {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.key().cmp(&other.key()))
    }
}

impl Elem for LongDouble {
    fn supports(op: OpKind) -> bool {
        matches!(op, OpKind::Max | OpKind::Min | OpKind::Sum | OpKind::Prod)
    }
    fn combine(op: OpKind, a: &mut Self, b: Self) {
        let better = match op {
            OpKind::Max => b > *a,
            OpKind::Min => b < *a,
            OpKind::Sum | OpKind::Prod => {
                crate::raw::long_double_combine(op == OpKind::Prod, &mut a.0, &b.0);
                false
            }
            _ => false,
        };
        if better {
            *a = b;
        }
    }
}

pair_elems!(LongDoubleInt { LongDouble, i32 });

/// A predefined operation as a `volpex::Operation` on `T` (checked with
/// `Elem::supports` before use).
#[derive(Debug, Clone, Copy)]
pub struct Predef(pub OpKind);

impl<T: Elem> volpex::Operation<T> for Predef {
    fn combine(&self, lhs: &mut [T], rhs: &[T]) {
        for (a, &b) in lhs.iter_mut().zip(rhs) {
            T::combine(self.0, a, b);
        }
    }

    fn is_commutative(&self) -> bool {
        true
    }
}

/// Checks `op` is defined on `T`.
pub fn check<T: Elem>(op: &Op, type_name: &str) -> Result<()> {
    if T::supports(op.kind) {
        Ok(())
    } else {
        Err(MpiError::new(
            class::OP,
            format!("{} is not defined on {type_name}", op.name),
        ))
    }
}

/// Calls `$f::<T>($args)` with `T` the Rust type of primitive `$prim`; `$opaque` is the
/// value for an opaque type (half or quad precision), on which no operation is defined.
#[macro_export]
#[doc(hidden)]
macro_rules! with_elem {
    ($prim:expr, $f:ident ( $($args:expr),* ), $opaque:expr) => {{
        match $prim {
            $crate::datatype::Prim::I8 => $f::<i8>($($args),*),
            $crate::datatype::Prim::U8 => $f::<u8>($($args),*),
            $crate::datatype::Prim::I16 => $f::<i16>($($args),*),
            $crate::datatype::Prim::U16 => $f::<u16>($($args),*),
            $crate::datatype::Prim::I32 => $f::<i32>($($args),*),
            $crate::datatype::Prim::U32 => $f::<u32>($($args),*),
            $crate::datatype::Prim::I64 => $f::<i64>($($args),*),
            $crate::datatype::Prim::U64 => $f::<u64>($($args),*),
            $crate::datatype::Prim::I128 => $f::<i128>($($args),*),
            $crate::datatype::Prim::F32 => $f::<f32>($($args),*),
            $crate::datatype::Prim::F64 => $f::<f64>($($args),*),
            $crate::datatype::Prim::CF32 => $f::<$crate::op::Cf32>($($args),*),
            $crate::datatype::Prim::CF64 => $f::<$crate::op::Cf64>($($args),*),
            $crate::datatype::Prim::FloatInt => $f::<$crate::op::FloatInt>($($args),*),
            $crate::datatype::Prim::DoubleInt => $f::<$crate::op::DoubleInt>($($args),*),
            $crate::datatype::Prim::LongInt => $f::<$crate::op::LongInt>($($args),*),
            $crate::datatype::Prim::TwoInt => $f::<$crate::op::TwoInt>($($args),*),
            $crate::datatype::Prim::ShortInt => $f::<$crate::op::ShortInt>($($args),*),
            $crate::datatype::Prim::TwoF32 => $f::<$crate::op::TwoF32>($($args),*),
            $crate::datatype::Prim::TwoF64 => $f::<$crate::op::TwoF64>($($args),*),
            $crate::datatype::Prim::LongDouble => $f::<$crate::op::LongDouble>($($args),*),
            $crate::datatype::Prim::LongDoubleInt => {
                $f::<$crate::op::LongDoubleInt>($($args),*)
            }
            $crate::datatype::Prim::Opaque(_) => $opaque,
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Prim;
    use volpex::Operation;

    #[test]
    fn minloc_takes_the_lower_index_on_ties() {
        let mut a = [DoubleInt { v: 2.0, i: 3 }];
        Predef(OpKind::MinLoc).combine(&mut a, &[DoubleInt { v: 2.0, i: 1 }]);
        assert_eq!({ a[0].i }, 1);
        Predef(OpKind::MinLoc).combine(&mut a, &[DoubleInt { v: 5.0, i: 0 }]);
        assert_eq!(({ a[0].v }, { a[0].i }), (2.0, 1));
        let mut m = [TwoInt { v: 1, i: 9 }];
        Predef(OpKind::MaxLoc).combine(&mut m, &[TwoInt { v: 7, i: 4 }]);
        assert_eq!(({ m[0].v }, { m[0].i }), (7, 4));
    }

    #[test]
    fn long_doubles_order_exactly() {
        // 1.0, 2.0 and -3.0 as x87 values (or binary128 elsewhere), from C.
        let ld = |v: f64| -> LongDouble {
            let mut b = [0u8; 16];
            if cfg!(target_arch = "x86_64") {
                let bits = v.to_bits();
                let exp = ((bits >> 52) & 0x7ff) as u16 + 16383 - 1023;
                let sign = ((bits >> 63) as u16) << 15;
                let mant = (1u64 << 63) | ((bits & ((1 << 52) - 1)) << 11);
                b[..8].copy_from_slice(&mant.to_le_bytes());
                b[8..10].copy_from_slice(&(sign | exp).to_le_bytes());
            } else {
                let bits = v.to_bits() as u128;
                let exp = ((bits >> 52) & 0x7ff) + 16383 - 1023;
                let q = ((bits >> 63) << 127) | (exp << 112) | ((bits & ((1 << 52) - 1)) << 60);
                b = q.to_le_bytes();
            }
            LongDouble(b)
        };
        let mut a = [ld(1.0), ld(-3.0)];
        Predef(OpKind::Max).combine(&mut a, &[ld(2.0), ld(-2.5)]);
        assert!(a[0] == ld(2.0) && a[1] == ld(-2.5));
        let mut p = [LongDoubleInt { v: ld(1.0), i: 4 }];
        Predef(OpKind::MinLoc).combine(&mut p, &[LongDoubleInt { v: ld(-3.0), i: 7 }]);
        assert_eq!({ p[0].i }, 7);
        let mut s = [ld(1.0), ld(-3.0)];
        Predef(OpKind::Sum).combine(&mut s, &[ld(2.0), ld(-2.5)]);
        assert!(s[0] == ld(3.0) && s[1] == ld(-5.5));
        Predef(OpKind::Prod).combine(&mut s, &[ld(2.0), ld(-2.0)]);
        assert!(s[0] == ld(6.0) && s[1] == ld(11.0));
    }

    #[test]
    fn pair_layouts_match_c() {
        assert_eq!(std::mem::size_of::<DoubleInt>(), Prim::DoubleInt.size());
        assert_eq!(std::mem::size_of::<ShortInt>(), Prim::ShortInt.size());
        assert_eq!(std::mem::size_of::<LongInt>(), Prim::LongInt.size());
        assert_eq!(std::mem::size_of::<Cf64>(), Prim::CF64.size());
    }

    #[test]
    fn undefined_combinations_are_refused() {
        let band = Op {
            name: "MPI_BAND",
            kind: OpKind::Band,
            user: None,
        };
        assert!(check::<f64>(&band, "MPI_DOUBLE").is_err());
        assert!(check::<i32>(&band, "MPI_INT").is_ok());
    }
}
