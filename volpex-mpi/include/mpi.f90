! The mpi module for gfortran (use mpi): the constants, sentinels and
! functions of mpif.h in a module. volpexf90 compiles it into mpi.mod at
! first use, with the compiler it wraps (a .mod file belongs to one
! compiler version), in a cache directory next to libvolpexmpi. It has
! no explicit interfaces, like mpif.h: any buffer type passes.
module mpi
  implicit none
  include 'mpif.h'
end module mpi
