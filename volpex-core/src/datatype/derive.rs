//! What `#[derive(Equivalence)]` (the `volpex-derive` crate) expands to calls: a derived
//! struct travels field by field in declaration order, each field in its own message
//! form (plain data as its memory, `bool` as one byte 0 or 1, `char` as its code point in
//! four little-endian bytes, arrays element by element, nested derived structs the same
//! way), with no padding.
//!
//! Owns the field codecs and their checks. Must never accept a received `bool` byte other
//! than 0 or 1, or a `char` that is not a Unicode scalar value: that is an error, never a
//! value Rust forbids.

use std::borrow::Cow;

use super::{target_of, Equivalence, Target};
use crate::error::Error;

/// Message bytes for as many values as the buffer holds.
pub fn check_len(got: usize, want: usize) -> Result<(), Error> {
    if got == want {
        Ok(())
    } else {
        Err(Error::BufferSize {
            what: "message bytes for the values received",
            expected: want,
            got,
        })
    }
}

/// Appends the message form of `v`.
pub fn put<T: Equivalence>(v: &T, out: &mut Vec<u8>) {
    out.extend_from_slice(&T::encode(std::slice::from_ref(v)));
}

/// Takes one `T` from the front of `r`.
pub fn take<T: Equivalence>(r: &mut &[u8]) -> Result<T, Error> {
    let n = T::WIRE_BYTES;
    check_len(r.len().min(n), n)?;
    let mut v = [T::fill()];
    T::decode(&r[..n], &mut v)?;
    *r = &r[n..];
    let [x] = v;
    Ok(x)
}

/// Appends a `bool` (one byte).
pub fn put_bool(v: bool, out: &mut Vec<u8>) {
    out.push(u8::from(v));
}

/// Takes a `bool`: a byte that is 0 or 1, else an error.
pub fn take_bool(r: &mut &[u8]) -> Result<bool, Error> {
    check_len(r.len().min(1), 1)?;
    let (b, rest) = (r[0], &r[1..]);
    *r = rest;
    match b {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(Error::Usage(
            "received a bool byte that is neither 0 nor 1: the sender's type is not the receiver's",
        )),
    }
}

/// Appends a `char` (its code point, four little-endian bytes).
pub fn put_char(v: char, out: &mut Vec<u8>) {
    out.extend_from_slice(&u32::from(v).to_le_bytes());
}

/// Takes a `char`, checking it is a Unicode scalar value.
pub fn take_char(r: &mut &[u8]) -> Result<char, Error> {
    let n: u32 = take(r)?;
    char::from_u32(u32::from_le(n)).ok_or(Error::Usage(
        "received a char that is not a Unicode scalar value: the sender's type is not the receiver's",
    ))
}

/// The message form of `items`, each appended by `put`.
pub fn encode_all<T>(items: &[T], wire: usize, put: impl Fn(&T, &mut Vec<u8>)) -> Cow<'_, [u8]> {
    let mut out = Vec::with_capacity(items.len() * wire);
    for it in items {
        put(it, &mut out);
    }
    Cow::Owned(out)
}

/// Fills `items` from `bytes`, each taken by `take`.
pub fn decode_all<T>(
    bytes: &[u8],
    items: &mut [T],
    wire: usize,
    take: impl Fn(&mut &[u8]) -> Result<T, Error>,
) -> Result<(), Error> {
    check_len(bytes.len(), items.len() * wire)?;
    let mut r = bytes;
    for it in items.iter_mut() {
        *it = take(&mut r)?;
    }
    Ok(())
}

/// Takes an array, element by element.
pub fn take_array<T, const N: usize>(
    r: &mut &[u8],
    take: impl Fn(&mut &[u8]) -> Result<T, Error>,
) -> Result<[T; N], Error> {
    let mut v = Vec::with_capacity(N);
    for _ in 0..N {
        v.push(take(r)?);
    }
    match v.try_into() {
        Ok(a) => Ok(a),
        Err(_) => unreachable!("N elements were taken"),
    }
}

/// One value as a send buffer.
pub fn bytes_one<T: Equivalence>(v: &T) -> Cow<'_, [u8]> {
    T::encode(std::slice::from_ref(v))
}

/// One value as a receive buffer.
pub fn target_one<T: Equivalence>(v: &mut T) -> Target<'_> {
    target_of(std::slice::from_mut(v))
}

#[cfg(test)]
mod tests {
    use crate::datatype::{vec_from_bytes, Buffer, Equivalence};
    use crate::Error;

    #[derive(crate::Equivalence, Debug, Clone, PartialEq)]
    struct Padded {
        a: u8,
        x: f64,
        ok: bool,
        flags: [bool; 3],
        c: char,
    }

    #[derive(crate::Equivalence, Debug, Clone, PartialEq)]
    struct Outer(Padded, [Padded; 2], u16);

    #[derive(crate::Equivalence, Debug, Clone, PartialEq)]
    struct Pair<T> {
        a: T,
        ok: bool,
    }

    #[test]
    fn generic_structs_derive_for_every_equivalence_type() {
        let v = vec![
            Pair {
                a: 1.5f32,
                ok: true,
            },
            Pair { a: -2.0, ok: false },
        ];
        assert_eq!(Pair::<f32>::WIRE_BYTES, 5);
        assert_eq!(vec_from_bytes::<Pair<f32>>(&v.bytes()).unwrap(), v);
        let nested = [Pair {
            a: padded(3),
            ok: true,
        }];
        assert_eq!(
            vec_from_bytes::<Pair<Padded>>(&nested.bytes()).unwrap(),
            nested
        );
    }

    fn padded(i: u8) -> Padded {
        Padded {
            a: i,
            x: f64::from(i) * 1.5,
            ok: i.is_multiple_of(2),
            flags: [true, false, i > 3],
            c: char::from(b'a' + i),
        }
    }

    #[test]
    fn a_struct_with_padding_and_bools_travels_packed() {
        assert_eq!(Padded::WIRE_BYTES, 1 + 8 + 1 + 3 + 4);
        assert!(std::mem::size_of::<Padded>() > Padded::WIRE_BYTES);
        let v: Vec<Padded> = (0..5).map(padded).collect();
        let bytes = v.bytes().into_owned();
        assert_eq!(bytes.len(), 5 * Padded::WIRE_BYTES);
        assert_eq!(vec_from_bytes::<Padded>(&bytes).unwrap(), v);
        let o = Outer(padded(1), [padded(2), padded(7)], 9);
        assert_eq!(Outer::WIRE_BYTES, 3 * Padded::WIRE_BYTES + 2);
        let b = o.bytes().into_owned();
        assert_eq!(vec_from_bytes::<Outer>(&b).unwrap(), [o]);
    }

    #[test]
    fn a_bool_that_is_not_0_or_1_is_an_error() {
        let mut bytes = padded(1).bytes().into_owned();
        bytes[9] = 2; // `ok`
        assert!(matches!(
            vec_from_bytes::<Padded>(&bytes),
            Err(Error::Usage(_))
        ));
        let mut bytes = padded(1).bytes().into_owned();
        bytes[13..17].copy_from_slice(&0xD800u32.to_le_bytes()); // a surrogate
        assert!(matches!(
            vec_from_bytes::<Padded>(&bytes),
            Err(Error::Usage(_))
        ));
        let bytes = padded(1).bytes().into_owned();
        assert!(matches!(
            vec_from_bytes::<Padded>(&bytes[..5]),
            Err(Error::BadLength { .. })
        ));
    }
}
