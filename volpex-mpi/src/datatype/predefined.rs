//! The predefined datatypes of `mpi.h` (MPI-3.1 sections 3.2.2, 5.9.4, 17.2.5 and
//! 17.1.9), in handle order: their names as MPI_Type_get_name gives them, the element
//! type reductions run on, and their layout as basic elements (what MPI_Get_elements
//! counts and external32 converts, section 13.5.2). Must never hold anything that
//! changes at run time: `state` builds the datatype table from this list.

use crate::datatype::Prim;

/// A basic element: one C or Fortran value of a predefined type, as MPI_Get_elements
/// counts them (a pair type such as `MPI_DOUBLE_INT` is two) and as external32 writes
/// them (MPI-3.1 section 13.5.2, Table 13.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basic {
    /// Raw bytes (`MPI_BYTE`, `MPI_PACKED`, characters): copied as they are.
    Byte,
    /// A two's complement integer of `native` bytes, `ext` bytes in external32
    /// (`MPI_LONG` is 8 here and 4 there).
    Int {
        /// Bytes in memory.
        native: u8,
        /// Bytes in external32.
        ext: u8,
        /// Sign-extended when widened.
        signed: bool,
    },
    /// A boolean (`MPI_C_BOOL`, `MPI_CXX_BOOL`, `MPI_LOGICAL*`): true is 1 in external32.
    Bool {
        /// Bytes in memory and in external32.
        bytes: u8,
    },
    /// An IEEE 754 binary float of this many bytes (2, 4, 8; 16 for Fortran REAL*16,
    /// which gfortran stores as binary128).
    Float {
        /// Bytes in memory and in external32.
        bytes: u8,
    },
    /// C `long double`: the x87 80-bit format in 16 bytes; binary128 in external32.
    LongDouble,
    /// A complex number: two IEEE floats of `part` bytes each.
    Complex {
        /// Bytes of each part.
        part: u8,
    },
    /// A `long double _Complex`: two x87 values.
    LongDoubleComplex,
}

impl Basic {
    /// Bytes in memory.
    pub const fn native(self) -> usize {
        match self {
            Basic::Byte => 1,
            Basic::Int { native, .. } => native as usize,
            Basic::Bool { bytes } | Basic::Float { bytes } => bytes as usize,
            Basic::LongDouble => 16,
            Basic::Complex { part } => 2 * part as usize,
            Basic::LongDoubleComplex => 32,
        }
    }

    /// Bytes in external32.
    pub const fn external(self) -> usize {
        match self {
            Basic::Int { ext, .. } => ext as usize,
            other => other.native(),
        }
    }

    /// Alignment in memory (the C ABI of x86-64 and aarch64 Linux).
    pub const fn align(self) -> usize {
        match self {
            Basic::LongDouble | Basic::LongDoubleComplex => 16,
            Basic::Complex { part } => part as usize,
            Basic::Float { bytes: 16 } | Basic::Int { native: 16, .. } => 16,
            other => other.native(),
        }
    }
}

const BYTE: Basic = Basic::Byte;
const fn int(n: u8) -> Basic {
    Basic::Int {
        native: n,
        ext: n,
        signed: true,
    }
}
const fn uint(n: u8) -> Basic {
    Basic::Int {
        native: n,
        ext: n,
        signed: false,
    }
}
const LONG: Basic = Basic::Int {
    native: 8,
    ext: 4,
    signed: true,
};
const ULONG: Basic = Basic::Int {
    native: 8,
    ext: 4,
    signed: false,
};
/// `wchar_t` is a 4-byte int on Linux; external32 has 2 bytes for it.
const WCHAR: Basic = Basic::Int {
    native: 4,
    ext: 2,
    signed: true,
};
const fn boolean(n: u8) -> Basic {
    Basic::Bool { bytes: n }
}
const fn float(n: u8) -> Basic {
    Basic::Float { bytes: n }
}
const fn complex(n: u8) -> Basic {
    Basic::Complex { part: n }
}
const LDOUBLE: Basic = Basic::LongDouble;

/// What a predefined datatype is.
#[derive(Debug, Clone, Copy)]
pub enum Layout {
    /// `count` basic elements one after the other, no padding.
    Plain(Basic, usize),
    /// A `(value, int)` pair as its C struct: the value at 0, the int after it at the
    /// value's alignment, the whole padded to the struct's alignment.
    Pair(Basic),
    /// `MPI_LB` / `MPI_UB`: a marker of a struct's lower or upper bound, no data.
    Marker(Marker),
}

/// The two bound markers of MPI-1 (MPI-3.1 removed them; Open MPI and MPICH keep them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// `MPI_LB`.
    Lb,
    /// `MPI_UB`.
    Ub,
}

/// One predefined datatype.
#[derive(Debug, Clone, Copy)]
pub struct Predef {
    /// Its name (MPI_Type_get_name).
    pub name: &'static str,
    /// The element type reductions run on (None: no reduction applies, the markers).
    pub prim: Option<Prim>,
    /// Its layout.
    pub layout: Layout,
}

const fn plain(name: &'static str, prim: Prim, b: Basic) -> Predef {
    Predef {
        name,
        prim: Some(prim),
        layout: Layout::Plain(b, 1),
    }
}

const fn two(name: &'static str, prim: Prim, b: Basic) -> Predef {
    Predef {
        name,
        prim: Some(prim),
        layout: Layout::Plain(b, 2),
    }
}

const fn pair(name: &'static str, prim: Prim, b: Basic) -> Predef {
    Predef {
        name,
        prim: Some(prim),
        layout: Layout::Pair(b),
    }
}

/// The predefined datatypes in handle order (handle = TAG_DATATYPE | position + 1), as
/// `mpi.h` numbers them. Types no predefined operation applies to (long double complex,
/// half and quad precision) reduce as `Prim::Opaque`: MPI_ERR_OP for a predefined
/// operation, user operations only; `long double` has MAX, MIN, MAXLOC and MINLOC.
pub const PREDEFINED: &[Predef] = &[
    plain("MPI_CHAR", Prim::I8, BYTE),
    plain("MPI_SIGNED_CHAR", Prim::I8, int(1)),
    plain("MPI_UNSIGNED_CHAR", Prim::U8, uint(1)),
    plain("MPI_BYTE", Prim::U8, BYTE),
    plain("MPI_WCHAR", Prim::I32, WCHAR),
    plain("MPI_SHORT", Prim::I16, int(2)),
    plain("MPI_UNSIGNED_SHORT", Prim::U16, uint(2)),
    plain("MPI_INT", Prim::I32, int(4)),
    plain("MPI_UNSIGNED", Prim::U32, uint(4)),
    plain("MPI_LONG", Prim::I64, LONG),
    plain("MPI_UNSIGNED_LONG", Prim::U64, ULONG),
    plain("MPI_LONG_LONG_INT", Prim::I64, int(8)),
    plain("MPI_UNSIGNED_LONG_LONG", Prim::U64, uint(8)),
    plain("MPI_FLOAT", Prim::F32, float(4)),
    plain("MPI_DOUBLE", Prim::F64, float(8)),
    plain("MPI_LONG_DOUBLE", Prim::LongDouble, LDOUBLE),
    plain("MPI_PACKED", Prim::U8, BYTE),
    plain("MPI_C_BOOL", Prim::U8, boolean(1)),
    plain("MPI_INT8_T", Prim::I8, int(1)),
    plain("MPI_INT16_T", Prim::I16, int(2)),
    plain("MPI_INT32_T", Prim::I32, int(4)),
    plain("MPI_INT64_T", Prim::I64, int(8)),
    plain("MPI_UINT8_T", Prim::U8, uint(1)),
    plain("MPI_UINT16_T", Prim::U16, uint(2)),
    plain("MPI_UINT32_T", Prim::U32, uint(4)),
    plain("MPI_UINT64_T", Prim::U64, uint(8)),
    plain("MPI_AINT", Prim::I64, int(8)),
    plain("MPI_OFFSET", Prim::I64, int(8)),
    plain("MPI_COUNT", Prim::I64, int(8)),
    plain("MPI_C_FLOAT_COMPLEX", Prim::CF32, complex(4)),
    plain("MPI_C_DOUBLE_COMPLEX", Prim::CF64, complex(8)),
    plain(
        "MPI_C_LONG_DOUBLE_COMPLEX",
        Prim::Opaque(32),
        Basic::LongDoubleComplex,
    ),
    pair("MPI_FLOAT_INT", Prim::FloatInt, float(4)),
    pair("MPI_DOUBLE_INT", Prim::DoubleInt, float(8)),
    pair("MPI_LONG_INT", Prim::LongInt, LONG),
    two("MPI_2INT", Prim::TwoInt, int(4)),
    pair("MPI_SHORT_INT", Prim::ShortInt, int(2)),
    pair("MPI_LONG_DOUBLE_INT", Prim::LongDoubleInt, LDOUBLE),
    plain("MPI_CHARACTER", Prim::U8, BYTE),
    plain("MPI_INTEGER", Prim::I32, int(4)),
    plain("MPI_REAL", Prim::F32, float(4)),
    plain("MPI_DOUBLE_PRECISION", Prim::F64, float(8)),
    plain("MPI_LOGICAL", Prim::I32, boolean(4)),
    plain("MPI_COMPLEX", Prim::CF32, complex(4)),
    plain("MPI_DOUBLE_COMPLEX", Prim::CF64, complex(8)),
    two("MPI_2INTEGER", Prim::TwoInt, int(4)),
    two("MPI_2REAL", Prim::TwoF32, float(4)),
    two("MPI_2DOUBLE_PRECISION", Prim::TwoF64, float(8)),
    plain("MPI_INTEGER1", Prim::I8, int(1)),
    plain("MPI_INTEGER2", Prim::I16, int(2)),
    plain("MPI_INTEGER4", Prim::I32, int(4)),
    plain("MPI_INTEGER8", Prim::I64, int(8)),
    plain("MPI_REAL4", Prim::F32, float(4)),
    plain("MPI_REAL8", Prim::F64, float(8)),
    plain("MPI_LOGICAL1", Prim::I8, boolean(1)),
    plain("MPI_LOGICAL2", Prim::I16, boolean(2)),
    plain("MPI_LOGICAL4", Prim::I32, boolean(4)),
    plain("MPI_LOGICAL8", Prim::I64, boolean(8)),
    plain("MPI_INTEGER16", Prim::I128, int(16)),
    plain("MPI_REAL2", Prim::Opaque(2), float(2)),
    plain("MPI_REAL16", Prim::Opaque(16), float(16)),
    plain("MPI_COMPLEX4", Prim::Opaque(4), complex(2)),
    plain("MPI_COMPLEX8", Prim::CF32, complex(4)),
    plain("MPI_COMPLEX16", Prim::CF64, complex(8)),
    plain("MPI_COMPLEX32", Prim::Opaque(32), complex(16)),
    two("MPI_2COMPLEX", Prim::Opaque(16), complex(4)),
    two("MPI_2DOUBLE_COMPLEX", Prim::Opaque(32), complex(8)),
    plain("MPI_CXX_BOOL", Prim::U8, boolean(1)),
    plain("MPI_CXX_FLOAT_COMPLEX", Prim::CF32, complex(4)),
    plain("MPI_CXX_DOUBLE_COMPLEX", Prim::CF64, complex(8)),
    plain(
        "MPI_CXX_LONG_DOUBLE_COMPLEX",
        Prim::Opaque(32),
        Basic::LongDoubleComplex,
    ),
    Predef {
        name: "MPI_LB",
        prim: None,
        layout: Layout::Marker(Marker::Lb),
    },
    Predef {
        name: "MPI_UB",
        prim: None,
        layout: Layout::Marker(Marker::Ub),
    },
];

impl Predef {
    /// MPI_Type_size.
    pub const fn size(&self) -> usize {
        match self.layout {
            Layout::Plain(b, n) => b.native() * n,
            Layout::Pair(b) => b.native() + 4,
            Layout::Marker(_) => 0,
        }
    }
}

/// The size of the predefined type whose handle is `h`, if it is one: known without the
/// state (MPI_Type_size of a basic type is called once per element by some programs).
pub fn size_of_handle(h: i32) -> Option<usize> {
    use crate::handles::TAG_DATATYPE;
    if h & !0x00ff_ffff != TAG_DATATYPE {
        return None;
    }
    let i = usize::try_from(h & 0x00ff_ffff).ok()?.checked_sub(1)?;
    PREDEFINED.get(i).map(Predef::size)
}

/// The position in `PREDEFINED` of the type named `name`.
pub fn index_of(name: &str) -> Option<usize> {
    PREDEFINED.iter().position(|p| p.name == name)
}

/// MPI_Type_match_size (MPI-3.1 section 17.1.9): the name of the Fortran type of
/// `typeclass` (MPI_TYPECLASS_INTEGER 1, REAL 2, COMPLEX 3) with `size` bytes, as Open
/// MPI and MPICH answer (`MPI_INTEGERn`, `MPI_REALn`, `MPI_COMPLEXn`).
pub fn match_size(typeclass: i32, size: i32) -> Option<&'static str> {
    Some(match (typeclass, size) {
        (1, 1) => "MPI_INTEGER1",
        (1, 2) => "MPI_INTEGER2",
        (1, 4) => "MPI_INTEGER4",
        (1, 8) => "MPI_INTEGER8",
        (1, 16) => "MPI_INTEGER16",
        (2, 2) => "MPI_REAL2",
        (2, 4) => "MPI_REAL4",
        (2, 8) => "MPI_REAL8",
        (2, 16) => "MPI_REAL16",
        (3, 4) => "MPI_COMPLEX4",
        (3, 8) => "MPI_COMPLEX8",
        (3, 16) => "MPI_COMPLEX16",
        (3, 32) => "MPI_COMPLEX32",
        _ => return None,
    })
}

/// The Fortran kind MPI_Type_create_f90_real / _complex (MPI-3.1 section 17.1.9) give
/// for precision `p` and exponent range `r` decimal digits (MPI_UNDEFINED, -32766:
/// no requirement), as gfortran's SELECTED_REAL_KIND: the bytes of the real (of each
/// part of the complex), or None if no type has them.
pub fn f90_real_bytes(p: i32, r: i32) -> Option<u8> {
    const UNDEFINED: i32 = -32766;
    let p = if p == UNDEFINED { 0 } else { p };
    let r = if r == UNDEFINED { 0 } else { r };
    if p < 0 || r < 0 {
        return None;
    }
    [(6, 37, 4), (15, 307, 8), (33, 4931, 16)]
        .iter()
        .find(|&&(mp, mr, _)| p <= mp && r <= mr)
        .map(|&(_, _, b)| b)
}

/// As `f90_real_bytes` for MPI_Type_create_f90_integer: the bytes of the smallest
/// integer holding `r` decimal digits (gfortran's SELECTED_INT_KIND).
pub fn f90_integer_bytes(r: i32) -> Option<u8> {
    const UNDEFINED: i32 = -32766;
    let r = if r == UNDEFINED { 0 } else { r };
    [(2, 1), (4, 2), (9, 4), (18, 8), (38, 16)]
        .iter()
        .find(|&&(mr, _)| (0..=mr).contains(&r))
        .map(|&(_, b)| b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handles of `mpi.h` are positions in this table: spot checks of the ends and
    /// of the types added in MPI 3.1's `mpi.h`.
    #[test]
    fn positions_match_mpi_h() {
        assert_eq!(PREDEFINED[0].name, "MPI_CHAR");
        assert_eq!(index_of("MPI_INT"), Some(0x08 - 1));
        assert_eq!(index_of("MPI_REAL8"), Some(0x36 - 1));
        assert_eq!(index_of("MPI_LOGICAL1"), Some(0x37 - 1));
        assert_eq!(index_of("MPI_2DOUBLE_COMPLEX"), Some(0x43 - 1));
        assert_eq!(index_of("MPI_CXX_BOOL"), Some(0x44 - 1));
        assert_eq!(index_of("MPI_UB"), Some(0x49 - 1));
        assert_eq!(PREDEFINED.len(), 0x49);
        assert_eq!(size_of_handle(0x4c00_0008), Some(4));
        assert_eq!(size_of_handle(0x4c00_0022), Some(12), "MPI_DOUBLE_INT");
        assert_eq!(size_of_handle(0x4c00_004a), None);
        assert_eq!(size_of_handle(0x4400_0001), None);
    }

    #[test]
    fn f90_kinds_follow_gfortran() {
        assert_eq!(f90_real_bytes(3, 10), Some(4));
        assert_eq!(f90_real_bytes(7, 30), Some(8));
        assert_eq!(f90_real_bytes(-32766, 30), Some(4));
        assert_eq!(f90_real_bytes(7, -32766), Some(8));
        assert_eq!(f90_real_bytes(40, 10), None);
        assert_eq!(f90_integer_bytes(3), Some(2));
        assert_eq!(f90_integer_bytes(9), Some(4));
        assert_eq!(f90_integer_bytes(10), Some(8));
        assert_eq!(f90_integer_bytes(39), None);
    }
}
