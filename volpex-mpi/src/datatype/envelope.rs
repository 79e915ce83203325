//! How a datatype was made (MPI-3.1 section 4.1.13): the combiner and the arguments of
//! its constructor, which MPI_Type_get_envelope and MPI_Type_get_contents return. Every
//! constructor records its call here; this module must never compute a type map.
//!
//! The MPI-1 constructors (`MPI_Type_hvector`, `MPI_Type_hindexed`, `MPI_Type_struct`)
//! record the MPI-2 combiners (`MPI_COMBINER_HVECTOR`, ...), as Open MPI and MPICH do
//! since MPI 3.0 removed the `_INTEGER` forms: those constants exist in `mpi.h` and are
//! never returned.

use std::os::raw::c_int;
use std::sync::Arc;

use crate::datatype::Datatype;
use crate::error::{MpiError, Result};
use crate::handles::class;

/// The combiners of `mpi.h` (MPI-3.1 Table 4.1), with their numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Combiner {
    /// A predefined type.
    Named = 1,
    /// MPI_Type_dup.
    Dup = 2,
    /// MPI_Type_contiguous.
    Contiguous = 3,
    /// MPI_Type_vector.
    Vector = 4,
    /// MPI_Type_create_hvector (and MPI_Type_hvector).
    Hvector = 5,
    /// MPI_Type_indexed.
    Indexed = 6,
    /// MPI_Type_create_hindexed (and MPI_Type_hindexed).
    Hindexed = 7,
    /// MPI_Type_create_indexed_block.
    IndexedBlock = 8,
    /// MPI_Type_create_hindexed_block.
    HindexedBlock = 9,
    /// MPI_Type_create_struct (and MPI_Type_struct).
    Struct = 10,
    /// MPI_Type_create_subarray.
    Subarray = 11,
    /// MPI_Type_create_darray.
    Darray = 12,
    /// MPI_Type_create_resized.
    Resized = 13,
    // 14-16: MPI_COMBINER_HVECTOR_INTEGER, _HINDEXED_INTEGER, _STRUCT_INTEGER (MPI-1
    // Fortran forms, removed in MPI 3.0): reserved, never returned.
    /// MPI_Type_create_f90_real.
    F90Real = 17,
    /// MPI_Type_create_f90_complex.
    F90Complex = 18,
    /// MPI_Type_create_f90_integer.
    F90Integer = 19,
}

impl Combiner {
    /// The function that makes types of this combiner, for messages.
    pub fn constructor(self) -> &'static str {
        match self {
            Combiner::Named => "a predefined type",
            Combiner::Dup => "MPI_Type_dup",
            Combiner::Contiguous => "MPI_Type_contiguous",
            Combiner::Vector => "MPI_Type_vector",
            Combiner::Hvector => "MPI_Type_create_hvector",
            Combiner::Indexed => "MPI_Type_indexed",
            Combiner::Hindexed => "MPI_Type_create_hindexed",
            Combiner::IndexedBlock => "MPI_Type_create_indexed_block",
            Combiner::HindexedBlock => "MPI_Type_create_hindexed_block",
            Combiner::Struct => "MPI_Type_create_struct",
            Combiner::Subarray => "MPI_Type_create_subarray",
            Combiner::Darray => "MPI_Type_create_darray",
            Combiner::Resized => "MPI_Type_create_resized",
            Combiner::F90Real => "MPI_Type_create_f90_real",
            Combiner::F90Complex => "MPI_Type_create_f90_complex",
            Combiner::F90Integer => "MPI_Type_create_f90_integer",
        }
    }
}

/// The arguments of a constructor call, in the order MPI_Type_get_contents returns them
/// (MPI-3.1 Table 4.2): integers, addresses, datatypes. The datatypes are the ones the
/// call was given, as they were then (a type freed since stays alive here).
#[derive(Debug, Clone)]
pub struct Contents {
    /// The combiner.
    pub combiner: Combiner,
    /// `array_of_integers`.
    pub ints: Vec<c_int>,
    /// `array_of_addresses`.
    pub addrs: Vec<isize>,
    /// `array_of_datatypes`.
    pub types: Vec<Arc<Datatype>>,
}

impl Contents {
    /// A predefined type's (nothing but the combiner).
    pub fn named() -> Contents {
        Contents::new(Combiner::Named, vec![], vec![], vec![])
    }

    /// Contents with these arrays.
    pub fn new(
        combiner: Combiner,
        ints: Vec<c_int>,
        addrs: Vec<isize>,
        types: Vec<Arc<Datatype>>,
    ) -> Contents {
        Contents {
            combiner,
            ints,
            addrs,
            types,
        }
    }

    /// MPI_Type_get_envelope: (num_integers, num_addresses, num_datatypes, combiner).
    pub fn envelope(&self) -> [c_int; 4] {
        let n = |l: usize| c_int::try_from(l).unwrap_or(c_int::MAX);
        [
            n(self.ints.len()),
            n(self.addrs.len()),
            n(self.types.len()),
            self.combiner as c_int,
        ]
    }

    /// Checks the room MPI_Type_get_contents was given (MPI-3.1 section 4.1.13: an
    /// array too small is an error; calling it on a predefined type is erroneous).
    pub fn check_room(&self, ints: usize, addrs: usize, types: usize) -> Result<()> {
        if self.combiner == Combiner::Named {
            return Err(MpiError::new(
                class::TYPE,
                "MPI_Type_get_contents of a predefined datatype (MPI_COMBINER_NAMED)",
            ));
        }
        let need = [self.ints.len(), self.addrs.len(), self.types.len()];
        if ints < need[0] || addrs < need[1] || types < need[2] {
            return Err(MpiError::arg(format!(
                "MPI_Type_get_contents: room for ({ints}, {addrs}, {types}) integers, \
                 addresses and datatypes; {} needs ({}, {}, {})",
                self.combiner.constructor(),
                need[0],
                need[1],
                need[2]
            )));
        }
        Ok(())
    }
}
