//! Buffers the API accepts: plain-data (`bytemuck::Pod`) values, slices, arrays and
//! vectors of them, viewed as bytes without copying; and strided and indexed views
//! (`layout`) that send a matrix column or a face without a copy in user code.
//!
//! Must never reinterpret bytes that are not plain data: everything goes through
//! `bytemuck`, so there is no `unsafe` here.

pub mod layout;

use std::borrow::Cow;

pub use bytemuck;
use bytemuck::Pod;
pub use layout::{Indexed, IndexedMut, LayoutError, Strided, StridedMut};

/// A plain-data element type that can be sent (any `bytemuck::Pod` type; derive it with
/// `#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]` and `#[repr(C)]`).
pub trait Equivalence: Pod {}
impl<T: Pod> Equivalence for T {}

/// Something that can be sent: its bytes in message order, borrowed when the layout is
/// contiguous (slices, arrays, vectors, scalars), packed for strided and indexed views.
pub trait Buffer {
    /// The bytes to send.
    fn bytes(&self) -> Cow<'_, [u8]>;
}

/// Where a received message goes.
pub enum Target<'a> {
    /// One contiguous run of bytes (a large message may land there from the socket).
    Contiguous(&'a mut [u8]),
    /// A strided or indexed layout, filled from the message bytes.
    Scattered(&'a mut dyn Layout),
}

/// A non-contiguous layout a message can be received into.
pub trait Layout {
    /// How many bytes it holds.
    fn byte_len(&self) -> usize;
    /// Its current contents in message order (a broadcast root sends them).
    fn pack(&self) -> Vec<u8>;
    /// Spreads `bytes` (at most `byte_len`, whole elements) over the layout in order.
    fn unpack(&mut self, bytes: &[u8]);
}

/// Something a message can be received into.
pub trait BufferMut {
    /// Where the bytes go.
    fn target(&mut self) -> Target<'_>;
    /// Size of one element, to check the message is whole elements.
    fn elem_bytes(&self) -> usize;
}

impl Target<'_> {
    /// Capacity in bytes.
    pub fn byte_len(&self) -> usize {
        match self {
            Target::Contiguous(b) => b.len(),
            Target::Scattered(u) => u.byte_len(),
        }
    }
}

impl<T: Equivalence> Buffer for [T] {
    fn bytes(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(bytemuck::cast_slice(self))
    }
}

impl<T: Equivalence> BufferMut for [T] {
    fn target(&mut self) -> Target<'_> {
        Target::Contiguous(bytemuck::cast_slice_mut(self))
    }
    fn elem_bytes(&self) -> usize {
        std::mem::size_of::<T>()
    }
}

impl<T: Equivalence> Buffer for Vec<T> {
    fn bytes(&self) -> Cow<'_, [u8]> {
        self.as_slice().bytes()
    }
}

impl<T: Equivalence> BufferMut for Vec<T> {
    fn target(&mut self) -> Target<'_> {
        self.as_mut_slice().target()
    }
    fn elem_bytes(&self) -> usize {
        std::mem::size_of::<T>()
    }
}

impl<T: Equivalence, const N: usize> Buffer for [T; N] {
    fn bytes(&self) -> Cow<'_, [u8]> {
        self.as_slice().bytes()
    }
}

impl<T: Equivalence, const N: usize> BufferMut for [T; N] {
    fn target(&mut self) -> Target<'_> {
        self.as_mut_slice().target()
    }
    fn elem_bytes(&self) -> usize {
        std::mem::size_of::<T>()
    }
}

macro_rules! scalar_buffers {
    ($($t:ty),*) => {$(
        impl Buffer for $t {
            fn bytes(&self) -> Cow<'_, [u8]> {
                Cow::Borrowed(bytemuck::bytes_of(self))
            }
        }
        impl BufferMut for $t {
            fn target(&mut self) -> Target<'_> {
                Target::Contiguous(bytemuck::bytes_of_mut(self))
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
