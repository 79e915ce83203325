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
    pub f: crate::ffi::raw::UserFn,
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
int_elems!(i8, u8, i16, u16, i32, u32, i64, u64);

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

/// `(value, index)` pairs for MINLOC and MAXLOC: the C structs of `MPI_FLOAT_INT` and
/// the others, padding as a named field so they are plain data.
macro_rules! pair_elems {
    ($($name:ident { $v:ty, $($pad:ident: $pt:ty),* ; $i:ty }),*) => {$(
        #[repr(C)]
        #[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
        #[doc = concat!("A `(", stringify!($v), ", index)` pair.")]
        pub struct $name {
            v: $v,
            $($pad: $pt,)*
            i: $i,
        }
        loc_pairs!($name);
    )*};
}
pair_elems!(
    FloatInt { f32, ; i32 },
    TwoInt { i32, ; i32 },
    ShortInt { i16, pad: i16 ; i32 },
    TwoF32 { f32, ; f32 },
    TwoF64 { f64, ; f64 }
);

/// `struct { double; int; }` (16 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct DoubleInt {
    v: f64,
    i: i32,
    pad: i32,
}

/// `struct { long; int; }` (16 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct LongInt {
    v: i64,
    i: i32,
    pad: i32,
}

loc_pairs!(DoubleInt, LongInt);

/// A C `long double` as its 16 bytes, ordered exactly (MIN, MAX, MINLOC, MAXLOC are
/// the predefined operations that need no arithmetic; SUM and PROD are refused). Its
/// format is the platform's: x87 extended precision (a 64-bit significand, then sign and
/// 15-bit exponent) on x86-64, IEEE binary128 elsewhere (AArch64).
#[repr(C, align(16))]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct LongDouble([u8; 16]);

/// Equal values (+0 and -0 too; a NaN is equal to nothing).
impl PartialEq for LongDouble {
    fn eq(&self, other: &Self) -> bool {
        self.partial_cmp(other) == Some(std::cmp::Ordering::Equal)
    }
}

impl LongDouble {
    /// (negative, magnitude) with magnitudes ordered like the values they stand for;
    /// None for a NaN.
    fn key(&self) -> Option<(bool, u128)> {
        let bits = u128::from_le_bytes(self.0);
        let (negative, exponent, magnitude, fraction) = if cfg!(target_arch = "x86_64") {
            let significand = bits as u64;
            let se = (bits >> 64) as u16;
            let exponent = se & 0x7fff;
            let magnitude = (u128::from(exponent) << 64) | u128::from(significand);
            (
                se >> 15 == 1,
                exponent,
                magnitude,
                u128::from(significand << 1),
            )
        } else {
            let magnitude = bits & !(1 << 127);
            let exponent = (magnitude >> 112) as u16;
            (
                bits >> 127 == 1,
                exponent,
                magnitude,
                magnitude & ((1 << 112) - 1),
            )
        };
        if exponent == 0x7fff && fraction != 0 {
            return None;
        }
        Some((negative && magnitude != 0, magnitude))
    }
}

impl PartialOrd for LongDouble {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        let ((na, a), (nb, b)) = (self.key()?, other.key()?);
        Some(match (na, nb) {
            (false, false) => a.cmp(&b),
            (true, true) => b.cmp(&a),
            (true, false) => std::cmp::Ordering::Less,
            (false, true) => std::cmp::Ordering::Greater,
        })
    }
}

impl Elem for LongDouble {
    fn supports(op: OpKind) -> bool {
        matches!(op, OpKind::Max | OpKind::Min)
    }
    fn combine(op: OpKind, a: &mut Self, b: Self) {
        let take = match op {
            OpKind::Max => b > *a,
            OpKind::Min => b < *a,
            _ => false,
        };
        if take {
            *a = b;
        }
    }
}

/// `struct { long double; int; }` (32 bytes), for MINLOC and MAXLOC.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct LongDoubleInt {
    v: LongDouble,
    i: i32,
    pad: [i32; 3],
}

loc_pairs!(LongDoubleInt);

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
/// value for an opaque type (long double), on which no operation is defined.
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
        let mut a = [DoubleInt {
            v: 2.0,
            i: 3,
            pad: 0,
        }];
        Predef(OpKind::MinLoc).combine(
            &mut a,
            &[DoubleInt {
                v: 2.0,
                i: 1,
                pad: 0,
            }],
        );
        assert_eq!(a[0].i, 1);
        Predef(OpKind::MinLoc).combine(
            &mut a,
            &[DoubleInt {
                v: 5.0,
                i: 0,
                pad: 0,
            }],
        );
        assert_eq!((a[0].v, a[0].i), (2.0, 1));
        let mut m = [TwoInt { v: 1, i: 9 }];
        Predef(OpKind::MaxLoc).combine(&mut m, &[TwoInt { v: 7, i: 4 }]);
        assert_eq!((m[0].v, m[0].i), (7, 4));
    }

    #[test]
    fn pair_layouts_match_c() {
        assert_eq!(std::mem::size_of::<DoubleInt>(), Prim::DoubleInt.size());
        assert_eq!(std::mem::size_of::<ShortInt>(), Prim::ShortInt.size());
        assert_eq!(std::mem::size_of::<LongInt>(), Prim::LongInt.size());
        assert_eq!(std::mem::size_of::<Cf64>(), Prim::CF64.size());
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn long_doubles_compare_exactly() {
        // x87: significand (explicit integer bit), then sign and exponent (bias 16383).
        let ld = |neg: bool, exp: u16, sig: u64| {
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&sig.to_le_bytes());
            b[8..10].copy_from_slice(&((u16::from(neg) << 15) | exp).to_le_bytes());
            LongDouble(b)
        };
        let one = ld(false, 16383, 1 << 63);
        let one_and_a_bit = ld(false, 16383, (1 << 63) | 1);
        let two = ld(false, 16384, 1 << 63);
        let minus_two = ld(true, 16384, 1 << 63);
        let zero = ld(false, 0, 0);
        let minus_zero = ld(true, 0, 0);
        let nan = ld(false, 0x7fff, 3 << 62);
        assert!(one < one_and_a_bit && one_and_a_bit < two && minus_two < zero);
        assert_eq!(
            zero.partial_cmp(&minus_zero),
            Some(std::cmp::Ordering::Equal)
        );
        assert!(nan.partial_cmp(&one).is_none());
        let mut m = one;
        LongDouble::combine(OpKind::Max, &mut m, two);
        LongDouble::combine(OpKind::Min, &mut m, minus_two);
        assert_eq!(m.0, minus_two.0);
        assert_eq!(
            std::mem::size_of::<LongDoubleInt>(),
            Prim::LongDoubleInt.size()
        );
        assert!(!LongDouble::supports(OpKind::Sum));
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
