//! Buffers the API accepts: values of any `Equivalence` type, and slices, arrays and
//! vectors of them; and strided and indexed views (`layout`) that send a matrix column
//! or a face without a copy in user code.
//!
//! `Equivalence` says how a value travels in a message. Plain data (`bytemuck::Pod`:
//! primitives, arrays of them, `#[repr(C)]` structs without padding) travels as its
//! memory, borrowed without a copy; a struct with padding or `bool` fields derives
//! `Equivalence` (`volpex::Equivalence`, the `volpex-derive` macro) and travels field by
//! field, packed, every received `bool` and `char` checked (`derive`).
//!
//! Must never reinterpret bytes that are not plain data: casts go through `bytemuck`,
//! everything else is encoded and decoded, so there is no `unsafe` here.

#[doc(hidden)]
pub mod derive;
pub mod layout;
pub mod partition;

use std::borrow::Cow;

pub use bytemuck;
use bytemuck::Pod;
pub use layout::{Indexed, IndexedMut, LayoutError, Strided, StridedMut};
pub use partition::{Partition, PartitionMut};

use crate::error::Error;

/// A type whose values can be sent (MPI's datatype of a Rust type). Every
/// `bytemuck::Pod` type is one, sent as its memory; derive it for a struct with padding
/// or `bool` fields (`#[derive(volpex::Equivalence)]`), which is sent field by field.
pub trait Equivalence: Sized {
    /// Bytes of one value in a message.
    const WIRE_BYTES: usize;
    /// The message form of `items`: borrowed for plain data, packed otherwise.
    fn encode(items: &[Self]) -> Cow<'_, [u8]>;
    /// Fills `items` from the message form of as many values (`bytes` holds exactly
    /// `items.len() * WIRE_BYTES`); an error for a value no `Self` has (a `bool` byte
    /// that is not 0 or 1).
    fn decode(bytes: &[u8], items: &mut [Self]) -> Result<(), Error>;
    /// A value to fill fresh buffers with.
    fn fill() -> Self;
    /// The memory of `items` when it is their message form (plain data), so a message
    /// can land in it directly.
    fn plain_bytes_mut(items: &mut [Self]) -> Option<&mut [u8]> {
        let _ = items;
        None
    }
}

impl<T: Pod> Equivalence for T {
    const WIRE_BYTES: usize = std::mem::size_of::<T>();
    fn encode(items: &[Self]) -> Cow<'_, [u8]> {
        Cow::Borrowed(bytemuck::cast_slice(items))
    }
    fn decode(bytes: &[u8], items: &mut [Self]) -> Result<(), Error> {
        let dst: &mut [u8] = bytemuck::cast_slice_mut(items);
        derive::check_len(bytes.len(), dst.len())?;
        dst.copy_from_slice(bytes);
        Ok(())
    }
    fn fill() -> Self {
        T::zeroed()
    }
    fn plain_bytes_mut(items: &mut [Self]) -> Option<&mut [u8]> {
        Some(bytemuck::cast_slice_mut(items))
    }
}

/// Something that can be sent: its bytes in message order, borrowed when the layout is
/// contiguous plain data (slices, arrays, vectors, scalars), packed otherwise.
pub trait Buffer {
    /// The bytes to send.
    fn bytes(&self) -> Cow<'_, [u8]>;
}

/// Where a received message goes.
pub enum Target<'a> {
    /// One contiguous run of bytes (a large message may land there from the socket).
    Contiguous(&'a mut [u8]),
    /// A strided or indexed layout, or values decoded one by one, filled from the
    /// message bytes.
    Scattered(Box<dyn Layout + 'a>),
}

/// A non-contiguous layout a message can be received into.
pub trait Layout {
    /// How many bytes it holds.
    fn byte_len(&self) -> usize;
    /// Its current contents in message order (a broadcast root sends them).
    fn pack(&self) -> Vec<u8>;
    /// Spreads `bytes` (at most `byte_len`, whole elements) over the layout in order;
    /// an error when they hold a value the element type does not have.
    fn unpack(&mut self, bytes: &[u8]) -> Result<(), Error>;
}

impl<L: Layout + ?Sized> Layout for &mut L {
    fn byte_len(&self) -> usize {
        (**self).byte_len()
    }
    fn pack(&self) -> Vec<u8> {
        (**self).pack()
    }
    fn unpack(&mut self, bytes: &[u8]) -> Result<(), Error> {
        (**self).unpack(bytes)
    }
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

/// The values a collective takes or fills, with their element type: a slice, an array
/// or a vector of `T`, or one value (a primitive, or a type deriving `Equivalence`), as
/// the `mpi` crate's buffers allow (`world.all_reduce_into(&x, &mut sum, op)`).
pub trait Elements {
    /// The element type.
    type Elem;
    /// The values, as a slice.
    fn elements(&self) -> &[Self::Elem];
}

/// `Elements` to receive into.
pub trait ElementsMut: Elements {
    /// The values, as a mutable slice.
    fn elements_mut(&mut self) -> &mut [Self::Elem];
}

impl<T> Elements for [T] {
    type Elem = T;
    fn elements(&self) -> &[T] {
        self
    }
}

impl<T> ElementsMut for [T] {
    fn elements_mut(&mut self) -> &mut [T] {
        self
    }
}

impl<T> Elements for Vec<T> {
    type Elem = T;
    fn elements(&self) -> &[T] {
        self
    }
}

impl<T> ElementsMut for Vec<T> {
    fn elements_mut(&mut self) -> &mut [T] {
        self
    }
}

impl<T: Clone> Elements for Cow<'_, [T]> {
    type Elem = T;
    fn elements(&self) -> &[T] {
        self
    }
}

impl<T> Elements for Box<[T]> {
    type Elem = T;
    fn elements(&self) -> &[T] {
        self
    }
}

impl<T> ElementsMut for Box<[T]> {
    fn elements_mut(&mut self) -> &mut [T] {
        self
    }
}

impl<T, const N: usize> Elements for [T; N] {
    type Elem = T;
    fn elements(&self) -> &[T] {
        self
    }
}

impl<T, const N: usize> ElementsMut for [T; N] {
    fn elements_mut(&mut self) -> &mut [T] {
        self
    }
}

/// Decodes a message into values one by one (a type that is not plain data).
struct Decode<'a, T>(&'a mut [T]);

impl<T: Equivalence> Layout for Decode<'_, T> {
    fn byte_len(&self) -> usize {
        self.0.len() * T::WIRE_BYTES
    }
    fn pack(&self) -> Vec<u8> {
        T::encode(self.0).into_owned()
    }
    fn unpack(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let n = bytes.len() / T::WIRE_BYTES.max(1);
        T::decode(&bytes[..n * T::WIRE_BYTES], &mut self.0[..n])
    }
}

/// Where a message into `items` goes: their memory for plain data, else decoded.
pub(crate) fn target_of<T: Equivalence>(items: &mut [T]) -> Target<'_> {
    if T::plain_bytes_mut(&mut []).is_some() {
        match T::plain_bytes_mut(items) {
            Some(b) => Target::Contiguous(b),
            None => unreachable!("plain data is plain for every slice"),
        }
    } else {
        Target::Scattered(Box::new(Decode(items)))
    }
}

impl<T: Equivalence> Buffer for [T] {
    fn bytes(&self) -> Cow<'_, [u8]> {
        T::encode(self)
    }
}

impl<T: Equivalence> BufferMut for [T] {
    fn target(&mut self) -> Target<'_> {
        target_of(self)
    }
    fn elem_bytes(&self) -> usize {
        T::WIRE_BYTES
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
        T::WIRE_BYTES
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
        T::WIRE_BYTES
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
        impl Elements for $t {
            type Elem = $t;
            fn elements(&self) -> &[$t] {
                std::slice::from_ref(self)
            }
        }
        impl ElementsMut for $t {
            fn elements_mut(&mut self) -> &mut [$t] {
                std::slice::from_mut(self)
            }
        }
    )*};
}

scalar_buffers!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, usize, isize, f32, f64);

/// Decodes message bytes into a vector of `T`, checking the length is whole values.
pub fn vec_from_bytes<T: Equivalence>(bytes: &[u8]) -> Result<Vec<T>, Error> {
    let elem = T::WIRE_BYTES.max(1);
    if !bytes.len().is_multiple_of(elem) {
        return Err(Error::BadLength {
            message_bytes: bytes.len(),
            elem_bytes: elem,
        });
    }
    let mut v: Vec<T> = (0..bytes.len() / elem).map(|_| T::fill()).collect();
    T::decode(bytes, &mut v)?;
    Ok(v)
}
