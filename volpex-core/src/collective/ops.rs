//! Reduction operations (MPI-3.1 section 5.9): the predefined ones over every primitive
//! numeric type, and user-defined ones, commutative or not.

use bytemuck::Pod;

/// An element-wise reduction: `lhs[i] = lhs[i] op rhs[i]`, where `lhs` holds the
/// contribution of the lower ranks. Non-commutative operations are always combined in
/// rank order.
pub trait Operation<T> {
    /// Combines `rhs` into `lhs`.
    fn combine(&self, lhs: &mut [T], rhs: &[T]);
    /// Whether `a op b == b op a` (lets the algorithms reorder).
    fn is_commutative(&self) -> bool;
    /// How many `T` make one element that the operation combines whole (1 unless
    /// overridden): an algorithm that splits a vector among ranks cuts it only between
    /// elements. A user operation over an MPI derived datatype, run on its bytes,
    /// combines whole instances of the datatype (MPI-3.1 section 5.9.5).
    fn granule(&self) -> usize {
        1
    }
}

/// Primitive types the predefined operations work on.
pub trait Numeric: Pod + PartialOrd {
    /// a + b (wrapping for integers).
    fn add(a: Self, b: Self) -> Self;
    /// a * b (wrapping for integers).
    fn mul(a: Self, b: Self) -> Self;
    /// Bitwise and (on the bit pattern for floats).
    fn band(a: Self, b: Self) -> Self;
    /// Bitwise or.
    fn bor(a: Self, b: Self) -> Self;
    /// Bitwise xor.
    fn bxor(a: Self, b: Self) -> Self;
    /// 1 or 0.
    fn truth(b: bool) -> Self;
    /// Not zero.
    fn is_true(a: Self) -> bool;
}

macro_rules! ints {
    ($($t:ty),*) => {$(
        impl Numeric for $t {
            fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            fn band(a: Self, b: Self) -> Self { a & b }
            fn bor(a: Self, b: Self) -> Self { a | b }
            fn bxor(a: Self, b: Self) -> Self { a ^ b }
            fn truth(b: bool) -> Self { b as $t }
            fn is_true(a: Self) -> bool { a != 0 }
        }
    )*};
}
ints!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, usize, isize);

macro_rules! floats {
    ($($t:ty),*) => {$(
        impl Numeric for $t {
            fn add(a: Self, b: Self) -> Self { a + b }
            fn mul(a: Self, b: Self) -> Self { a * b }
            fn band(a: Self, b: Self) -> Self { <$t>::from_bits(a.to_bits() & b.to_bits()) }
            fn bor(a: Self, b: Self) -> Self { <$t>::from_bits(a.to_bits() | b.to_bits()) }
            fn bxor(a: Self, b: Self) -> Self { <$t>::from_bits(a.to_bits() ^ b.to_bits()) }
            fn truth(b: bool) -> Self { if b { 1.0 } else { 0.0 } }
            fn is_true(a: Self) -> bool { a != 0.0 }
        }
    )*};
}
floats!(f32, f64);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sys {
    Sum,
    Product,
    Min,
    Max,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
}

/// The predefined operations (MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND, MPI_LOR,
/// MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR). All are commutative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SystemOperation(Sys);

impl SystemOperation {
    /// MPI_SUM.
    pub fn sum() -> Self {
        SystemOperation(Sys::Sum)
    }
    /// MPI_PROD.
    pub fn product() -> Self {
        SystemOperation(Sys::Product)
    }
    /// MPI_MIN.
    pub fn min() -> Self {
        SystemOperation(Sys::Min)
    }
    /// MPI_MAX.
    pub fn max() -> Self {
        SystemOperation(Sys::Max)
    }
    /// MPI_LAND.
    pub fn logical_and() -> Self {
        SystemOperation(Sys::LogicalAnd)
    }
    /// MPI_LOR.
    pub fn logical_or() -> Self {
        SystemOperation(Sys::LogicalOr)
    }
    /// MPI_LXOR.
    pub fn logical_xor() -> Self {
        SystemOperation(Sys::LogicalXor)
    }
    /// MPI_BAND.
    pub fn bitwise_and() -> Self {
        SystemOperation(Sys::BitwiseAnd)
    }
    /// MPI_BOR.
    pub fn bitwise_or() -> Self {
        SystemOperation(Sys::BitwiseOr)
    }
    /// MPI_BXOR.
    pub fn bitwise_xor() -> Self {
        SystemOperation(Sys::BitwiseXor)
    }
}

impl<T: Numeric> Operation<T> for SystemOperation {
    fn combine(&self, lhs: &mut [T], rhs: &[T]) {
        for (a, &b) in lhs.iter_mut().zip(rhs) {
            let x = *a;
            *a = match self.0 {
                Sys::Sum => T::add(x, b),
                Sys::Product => T::mul(x, b),
                Sys::Min => {
                    if b < x {
                        b
                    } else {
                        x
                    }
                }
                Sys::Max => {
                    if b > x {
                        b
                    } else {
                        x
                    }
                }
                Sys::LogicalAnd => T::truth(T::is_true(x) && T::is_true(b)),
                Sys::LogicalOr => T::truth(T::is_true(x) || T::is_true(b)),
                Sys::LogicalXor => T::truth(T::is_true(x) != T::is_true(b)),
                Sys::BitwiseAnd => T::band(x, b),
                Sys::BitwiseOr => T::bor(x, b),
                Sys::BitwiseXor => T::bxor(x, b),
            };
        }
    }

    fn is_commutative(&self) -> bool {
        true
    }
}

/// MPI_MINLOC over (value, location) pairs, as `[value, location]` of one type (like
/// MPI_2INT, MPI_2DOUBLE_PRECISION): the smallest value, and of equal values the smallest
/// location.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MinLoc;

/// MPI_MAXLOC over `[value, location]` pairs: the largest value, and of equal values the
/// smallest location.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MaxLoc;

fn pick_loc<T: PartialOrd + Copy>(a: &mut [T; 2], b: &[T; 2], better: fn(&T, &T) -> bool) {
    if better(&b[0], &a[0]) || (b[0] == a[0] && b[1] < a[1]) {
        *a = *b;
    }
}

impl<T: Numeric> Operation<[T; 2]> for MinLoc {
    fn combine(&self, lhs: &mut [[T; 2]], rhs: &[[T; 2]]) {
        for (a, b) in lhs.iter_mut().zip(rhs) {
            pick_loc(a, b, |x, y| x < y);
        }
    }

    fn is_commutative(&self) -> bool {
        true
    }
}

impl<T: Numeric> Operation<[T; 2]> for MaxLoc {
    fn combine(&self, lhs: &mut [[T; 2]], rhs: &[[T; 2]]) {
        for (a, b) in lhs.iter_mut().zip(rhs) {
            pick_loc(a, b, |x, y| x > y);
        }
    }

    fn is_commutative(&self) -> bool {
        true
    }
}

/// A user-defined operation from a function `f(lower, higher) -> combined`.
pub struct UserOperation<F> {
    f: F,
    commutative: bool,
}

impl<F> UserOperation<F> {
    /// An operation the algorithms may apply in any order.
    pub fn commutative(f: F) -> Self {
        UserOperation {
            f,
            commutative: true,
        }
    }

    /// An operation applied strictly in rank order.
    pub fn non_commutative(f: F) -> Self {
        UserOperation {
            f,
            commutative: false,
        }
    }
}

impl<T: Copy, F: Fn(T, T) -> T> Operation<T> for UserOperation<F> {
    fn combine(&self, lhs: &mut [T], rhs: &[T]) {
        for (a, &b) in lhs.iter_mut().zip(rhs) {
            *a = (self.f)(*a, b);
        }
    }

    fn is_commutative(&self) -> bool {
        self.commutative
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_operations() {
        let mut a = [3i32, -1, 0, 6];
        SystemOperation::sum().combine(&mut a, &[1, 1, 1, 1]);
        assert_eq!(a, [4, 0, 1, 7]);
        SystemOperation::max().combine(&mut a, &[5, -2, 1, 0]);
        assert_eq!(a, [5, 0, 1, 7]);
        SystemOperation::logical_and().combine(&mut a, &[1, 1, 0, 2]);
        assert_eq!(a, [1, 0, 0, 1]);
        let mut f = [1.5f64, 2.0];
        SystemOperation::product().combine(&mut f, &[2.0, 0.5]);
        assert_eq!(f, [3.0, 1.0]);
        let mut u = [0b1100u8];
        SystemOperation::bitwise_xor().combine(&mut u, &[0b1010]);
        assert_eq!(u, [0b0110]);
    }

    #[test]
    fn min_and_max_loc_break_ties_by_location() {
        let mut a = [[2.0f64, 5.0], [1.0, 3.0], [4.0, 9.0]];
        MinLoc.combine(&mut a, &[[2.0, 1.0], [0.5, 7.0], [4.0, 10.0]]);
        assert_eq!(a, [[2.0, 1.0], [0.5, 7.0], [4.0, 9.0]]);
        let mut b = [[3i32, 2], [3, 0]];
        MaxLoc.combine(&mut b, &[[3, 1], [7, 4]]);
        assert_eq!(b, [[3, 1], [7, 4]]);
    }

    #[test]
    fn user_operations_keep_argument_order() {
        let op = UserOperation::non_commutative(|a: i64, b: i64| a * 10 + b);
        let mut x = [1i64];
        op.combine(&mut x, &[2]);
        assert_eq!(x, [12]);
        assert!(!Operation::<i64>::is_commutative(&op));
    }
}
