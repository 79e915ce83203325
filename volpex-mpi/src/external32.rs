//! The "external32" data representation (MPI-3.1 section 13.5.2) of MPI_Pack_external
//! and MPI_Unpack_external (section 4.3): every basic element big-endian, IEEE floats,
//! two's complement integers, with the sizes of Table 13.2 (`MPI_LONG` 4 bytes,
//! `MPI_WCHAR` 2, `long double` a 16-byte binary128, booleans 0 or 1). Converts the
//! packed native data of a datatype element by element along its signature; must never
//! see a user buffer (`types` packs and unpacks those).

use crate::datatype::predefined::Basic;
use crate::datatype::signature::walk;
use crate::datatype::Datatype;
use crate::error::{MpiError, Result};
use crate::handles::class;

/// The only data representation MPI_Pack_external knows.
pub const EXTERNAL32: &str = "external32";

/// Checks the `datarep` argument.
pub fn check_datarep(datarep: &str) -> Result<()> {
    if datarep == EXTERNAL32 {
        return Ok(());
    }
    Err(MpiError::new(
        class::UNSUPPORTED_DATAREP,
        format!("data representation {datarep:?} (only \"external32\" is defined for packing)"),
    ))
}

/// MPI_Pack_external_size: the bytes of `count` elements of `dt` in external32.
pub fn size(dt: &Datatype, count: usize) -> Result<u64> {
    dt.sig
        .external
        .checked_mul(count as u64)
        .ok_or_else(|| MpiError::new(class::COUNT, "count too large"))
}

/// Native-order bytes of an integer of `bytes.len()` bytes, as a value.
fn native_int(bytes: &[u8], signed: bool) -> i128 {
    let mut v: u128 = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let at = if cfg!(target_endian = "little") {
            i
        } else {
            bytes.len() - 1 - i
        };
        v |= u128::from(b) << (8 * at);
    }
    extend(v, bytes.len(), signed)
}

fn big_int(bytes: &[u8], signed: bool) -> i128 {
    let v = bytes.iter().fold(0u128, |v, &b| (v << 8) | u128::from(b));
    extend(v, bytes.len(), signed)
}

fn extend(v: u128, len: usize, signed: bool) -> i128 {
    if signed && len < 16 && v >> (8 * len - 1) & 1 == 1 {
        (v | (!0u128 << (8 * len))) as i128
    } else {
        v as i128
    }
}

fn fits(v: i128, len: usize, signed: bool) -> bool {
    if len >= 16 {
        return true;
    }
    let bits = 8 * len as u32;
    if signed {
        let lim = 1i128 << (bits - 1);
        (-lim..lim).contains(&v)
    } else {
        (0..1i128 << bits).contains(&v)
    }
}

fn put_big(out: &mut Vec<u8>, v: i128, len: usize) {
    out.extend((0..len).rev().map(|i| (v >> (8 * i)) as u8));
}

fn put_native(out: &mut Vec<u8>, v: i128, len: usize) {
    let le = (0..len).map(|i| (v >> (8 * i)) as u8);
    if cfg!(target_endian = "little") {
        out.extend(le);
    } else {
        let mut b: Vec<u8> = le.collect();
        b.reverse();
        out.extend(b);
    }
}

/// `bytes` in the other byte order than the native one, if the native one is little.
fn swapped(bytes: &[u8], out: &mut Vec<u8>) {
    if cfg!(target_endian = "little") {
        out.extend(bytes.iter().rev());
    } else {
        out.extend_from_slice(bytes);
    }
}

/// A native `long double` (x86-64: the x87 80-bit format in 16 bytes) as a big-endian
/// binary128: the same sign and exponent, the 63 fraction bits at the top.
#[cfg(target_arch = "x86_64")]
fn long_double_out(b: &[u8], out: &mut Vec<u8>) {
    let mant = u64::from_le_bytes(b[0..8].try_into().unwrap_or([0; 8]));
    let se = u16::from_le_bytes([b[8], b[9]]);
    let frac = u128::from(mant & !(1 << 63)) << 49;
    let q = (u128::from(se) << 112) | frac;
    out.extend_from_slice(&q.to_be_bytes());
}

/// The reverse of `long_double_out` (the 49 lowest fraction bits are dropped).
#[cfg(target_arch = "x86_64")]
fn long_double_in(b: &[u8], out: &mut Vec<u8>) {
    let q = u128::from_be_bytes(b[0..16].try_into().unwrap_or([0; 16]));
    let se = (q >> 112) as u16;
    let integer = if se & 0x7fff != 0 { 1u64 << 63 } else { 0 };
    let mant = ((q >> 49) as u64 & !(1 << 63)) | integer;
    out.extend_from_slice(&mant.to_le_bytes());
    out.extend_from_slice(&se.to_le_bytes());
    out.extend_from_slice(&[0; 6]);
}

/// Elsewhere (aarch64 Linux) `long double` is a binary128 already.
#[cfg(not(target_arch = "x86_64"))]
fn long_double_out(b: &[u8], out: &mut Vec<u8>) {
    swapped(&b[..16], out)
}

#[cfg(not(target_arch = "x86_64"))]
fn long_double_in(b: &[u8], out: &mut Vec<u8>) {
    swapped(&b[..16], out)
}

fn conversion(what: String) -> MpiError {
    MpiError::new(class::CONVERSION, what)
}

/// One element of kind `b`: native (`to_ext`) or external32 bytes in, the other out.
fn convert(b: Basic, input: &[u8], out: &mut Vec<u8>, to_ext: bool) -> Result<()> {
    match b {
        Basic::Byte => out.extend_from_slice(input),
        Basic::Int {
            native,
            ext,
            signed,
        } => {
            let (n, e) = (usize::from(native), usize::from(ext));
            if to_ext {
                let v = native_int(input, signed);
                if !fits(v, e, signed) {
                    return Err(conversion(format!(
                        "{v} does not fit the {e} bytes external32 gives this type"
                    )));
                }
                put_big(out, v, e);
            } else {
                put_native(out, big_int(input, signed), n);
            }
        }
        Basic::Bool { bytes } => {
            let v = i128::from(input.iter().any(|&x| x != 0));
            if to_ext {
                put_big(out, v, usize::from(bytes));
            } else {
                put_native(out, v, usize::from(bytes));
            }
        }
        Basic::Float { .. } => swapped(input, out),
        Basic::Complex { part } => {
            let p = usize::from(part);
            swapped(&input[..p], out);
            swapped(&input[p..2 * p], out);
        }
        Basic::LongDouble | Basic::LongDoubleComplex => {
            for half in input.chunks_exact(16) {
                if to_ext {
                    long_double_out(half, out);
                } else {
                    long_double_in(half, out);
                }
            }
        }
    }
    Ok(())
}

/// Converts `count` elements of `dt`: packed native data to external32 (`to_ext`), or
/// back. `input` must hold them all.
pub fn convert_all(dt: &Datatype, count: usize, input: &[u8], to_ext: bool) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(input.len());
    let mut at = 0usize;
    walk(dt, count, &mut |b: Basic, n: usize| -> Result<()> {
        let unit = if to_ext { b.native() } else { b.external() };
        for _ in 0..n {
            let end = at + unit;
            let one = input
                .get(at..end)
                .ok_or_else(|| MpiError::new(class::TRUNCATE, "the data ends inside an element"))?;
            convert(b, one, &mut out, to_ext)?;
            at = end;
        }
        Ok(())
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::predefined::{index_of, PREDEFINED};

    fn named(name: &str) -> Datatype {
        Datatype::predefined(&PREDEFINED[index_of(name).unwrap()])
    }

    fn round_trip(name: &str, native: &[u8], ext: &[u8]) {
        let t = named(name);
        let n = native.len() / t.size;
        assert_eq!(convert_all(&t, n, native, true).unwrap(), ext, "{name} out");
        assert_eq!(convert_all(&t, n, ext, false).unwrap(), native, "{name} in");
        assert_eq!(size(&t, n).unwrap(), ext.len() as u64);
    }

    /// The values of MPICH's pack_external test, as MPI-3.1 Table 13.2 sizes them.
    #[test]
    fn known_big_endian_values() {
        let ints: Vec<u8> = [1i32, -2].iter().flat_map(|v| v.to_ne_bytes()).collect();
        round_trip("MPI_INT", &ints, &[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe]);
        let longs: Vec<u8> = [1i64, -2].iter().flat_map(|v| v.to_ne_bytes()).collect();
        round_trip("MPI_LONG", &longs, &[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe]);
        round_trip(
            "MPI_LONG_LONG_INT",
            &longs,
            &[
                0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
            ],
        );
        let floats: Vec<u8> = [1f32, 2.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
        round_trip("MPI_FLOAT", &floats, &[0x3f, 0x80, 0, 0, 0x40, 0, 0, 0]);
        let d: Vec<u8> = 1f64.to_ne_bytes().to_vec();
        round_trip("MPI_DOUBLE", &d, &[0x3f, 0xf0, 0, 0, 0, 0, 0, 0]);
        let w: Vec<u8> = 0x41i32.to_ne_bytes().to_vec();
        round_trip("MPI_WCHAR", &w, &[0, 0x41]);
        let t = named("MPI_C_BOOL");
        assert_eq!(convert_all(&t, 2, &[2, 0], true).unwrap(), [1, 0]);
        let di = named("MPI_DOUBLE_INT");
        let mut pair = 1f64.to_ne_bytes().to_vec();
        pair.extend_from_slice(&7i32.to_ne_bytes());
        round_trip(
            "MPI_DOUBLE_INT",
            &pair,
            &[0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7],
        );
        assert_eq!(di.sig.external, 12);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn long_double_is_binary128() {
        // 1.0 and 2.0 as x87: mantissa 1 << 63, exponent 0x3fff / 0x4000.
        let mut native = Vec::new();
        for se in [0x3fffu16, 0x4000] {
            native.extend_from_slice(&(1u64 << 63).to_le_bytes());
            native.extend_from_slice(&se.to_le_bytes());
            native.extend_from_slice(&[0; 6]);
        }
        let mut ext = vec![0u8; 32];
        ext[0] = 0x3f;
        ext[1] = 0xff;
        ext[16] = 0x40;
        round_trip("MPI_LONG_DOUBLE", &native, &ext);
    }

    #[test]
    fn values_that_do_not_fit_are_conversion_errors() {
        let t = named("MPI_LONG");
        let big = (1i64 << 40).to_ne_bytes();
        assert_eq!(
            convert_all(&t, 1, &big, true).unwrap_err().class,
            class::CONVERSION
        );
        assert!(check_datarep("native").is_err());
    }
}
