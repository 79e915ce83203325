//! Buffers the API accepts: plain-data (`bytemuck::Pod`) values, slices, arrays and
//! vectors of them, viewed as bytes without copying.
//!
//! Must never reinterpret bytes that are not plain data: everything goes through
//! `bytemuck`, so there is no `unsafe` here.

pub use bytemuck;
use bytemuck::Pod;

/// A plain-data element type that can be sent (any `bytemuck::Pod` type; derive it with
/// `#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]` and `#[repr(C)]`).
pub trait Equivalence: Pod {}
impl<T: Pod> Equivalence for T {}

/// Something that can be sent: its bytes, and the element size for `Status::count`.
pub trait Buffer {
    /// The bytes to send.
    fn as_bytes(&self) -> &[u8];
}

/// Something a message can be received into.
pub trait BufferMut {
    /// The bytes to fill.
    fn as_bytes_mut(&mut self) -> &mut [u8];
    /// Size of one element, to check the message is whole elements.
    fn elem_bytes(&self) -> usize;
}

impl<T: Equivalence> Buffer for [T] {
    fn as_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }
}

impl<T: Equivalence> BufferMut for [T] {
    fn as_bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(self)
    }
    fn elem_bytes(&self) -> usize {
        std::mem::size_of::<T>()
    }
}

impl<T: Equivalence> Buffer for Vec<T> {
    fn as_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }
}

impl<T: Equivalence> BufferMut for Vec<T> {
    fn as_bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(self)
    }
    fn elem_bytes(&self) -> usize {
        std::mem::size_of::<T>()
    }
}

impl<T: Equivalence, const N: usize> Buffer for [T; N] {
    fn as_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }
}

impl<T: Equivalence, const N: usize> BufferMut for [T; N] {
    fn as_bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(self)
    }
    fn elem_bytes(&self) -> usize {
        std::mem::size_of::<T>()
    }
}

macro_rules! scalar_buffers {
    ($($t:ty),*) => {$(
        impl Buffer for $t {
            fn as_bytes(&self) -> &[u8] {
                bytemuck::bytes_of(self)
            }
        }
        impl BufferMut for $t {
            fn as_bytes_mut(&mut self) -> &mut [u8] {
                bytemuck::bytes_of_mut(self)
            }
            fn elem_bytes(&self) -> usize {
                std::mem::size_of::<$t>()
            }
        }
    )*};
}

scalar_buffers!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, usize, isize, f32, f64);

/// Copies message bytes into a vector of `T`, checking the length is whole elements.
pub fn vec_from_bytes<T: Equivalence>(bytes: &[u8]) -> Result<Vec<T>, crate::Error> {
    let elem = std::mem::size_of::<T>().max(1);
    if !bytes.len().is_multiple_of(elem) {
        return Err(crate::Error::BadLength {
            message_bytes: bytes.len(),
            elem_bytes: elem,
        });
    }
    let mut v = vec![T::zeroed(); bytes.len() / elem];
    bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(bytes);
    Ok(v)
}
