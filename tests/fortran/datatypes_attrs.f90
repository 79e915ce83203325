! Datatype names, attributes and decoding from Fortran (MPI-3.1 sections 6.8,
! 6.7.4, 4.1.13, 4.3, 17.1.9): MPI_TYPE_SET_NAME / GET_NAME with blank-padded
! strings; MPI_TYPE_CREATE_KEYVAL with Fortran copy and delete procedures, which
! take every argument by reference, attribute values as
! INTEGER(KIND=MPI_ADDRESS_KIND), and the predefined MPI_TYPE_DUP_FN,
! MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN; envelopes and contents;
! MPI_PACK_EXTERNAL bytes; MPI_TYPE_MATCH_SIZE and MPI_TYPE_CREATE_F90_REAL;
! then rounds of a halo exchange of matrix rows (strided in Fortran) with
! MPI_SENDRECV within one array, checked against contiguous copies. Each rank
! checks every result and stops with code 1 on a wrong one; rank 0 prints one line.
! Arguments: [ROUNDS [WORK_MS]] (5, 0).
module callbacks
  use mpi
  implicit none
  integer :: copies = 0, deletes = 0
  integer(kind=MPI_ADDRESS_KIND) :: last_deleted = 0
contains
  subroutine copy_fn(oldtype, keyval, extra, val_in, val_out, flag, ierr)
    integer :: oldtype, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra, val_in, val_out
    logical :: flag
    copies = copies + 1
    val_out = val_in * 2 + extra
    flag = .true.
    ierr = MPI_SUCCESS
    if (oldtype == MPI_DATATYPE_NULL .or. keyval == MPI_KEYVAL_INVALID) ierr = MPI_ERR_OTHER
  end subroutine

  subroutine delete_fn(datatype, keyval, val, extra, ierr)
    integer :: datatype, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    deletes = deletes + 1
    last_deleted = val
    ierr = MPI_SUCCESS
    if (datatype == MPI_DATATYPE_NULL .or. keyval == MPI_KEYVAL_INVALID .or. extra /= 3) &
      ierr = MPI_ERR_OTHER
  end subroutine
end module callbacks

program datatypes_attrs
  use mpi
  use callbacks
  use iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function usleep(us) bind(c, name='usleep')
      import c_int
      integer(c_int), value :: us
    end function
  end interface
  integer, parameter :: nx = 6, ny = 5
  integer :: ierr, rank, size, len, vec, dup, dup2, hv, key, key2, key3, t
  integer :: ni, na, nd, comb, ints(3), types(1), sz, i, j, round, rounds, work_ms
  integer :: up, down, row, ivals(2)
  integer(kind=MPI_ADDRESS_KIND) :: val, addrs(1), pos, outsize
  logical :: flag
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=1) :: buf(16)
  character(len=32) :: arg
  double precision :: a(0:nx + 1, ny), want_lo(ny), want_hi(ny), lo(ny), hi(ny)
  double precision :: local, total

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  rounds = 5
  work_ms = 0
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) rounds
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) work_ms
  end if

  ! Names: predefined ones, a blank-padded one, none on a new type.
  call MPI_Type_get_name(MPI_INTEGER, name, len, ierr)
  call check(name == 'MPI_INTEGER' .and. len == 11, 'name of MPI_INTEGER')
  call MPI_Type_get_name(MPI_DOUBLE_PRECISION, name, len, ierr)
  call check(name == 'MPI_DOUBLE_PRECISION' .and. len == 20, 'name of MPI_DOUBLE_PRECISION')
  call MPI_Type_vector(ny, 1, nx + 2, MPI_DOUBLE_PRECISION, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  call MPI_Type_get_name(vec, name, len, ierr)
  call check(len == 0 .and. name == ' ', 'no name yet')
  call MPI_Type_set_name(vec, 'matrix row   ', ierr)
  call MPI_Type_get_name(vec, name, len, ierr)
  call check(name == 'matrix row' .and. len == 10, 'name set')

  ! Envelope and contents.
  call MPI_Type_get_envelope(vec, ni, na, nd, comb, ierr)
  call check(ni == 3 .and. na == 0 .and. nd == 1 .and. comb == MPI_COMBINER_VECTOR, &
             'vector envelope')
  call MPI_Type_get_contents(vec, 3, 0, 1, ints, addrs, types, ierr)
  call check(ints(1) == ny .and. ints(2) == 1 .and. ints(3) == nx + 2, 'vector contents')
  call check(types(1) == MPI_DOUBLE_PRECISION, 'vector contents type')
  val = -16
  call MPI_Type_create_hvector(2, 3, val, MPI_INTEGER, hv, ierr)
  call MPI_Type_get_envelope(hv, ni, na, nd, comb, ierr)
  call check(ni == 2 .and. na == 1 .and. comb == MPI_COMBINER_HVECTOR, 'hvector envelope')
  call MPI_Type_get_contents(hv, 2, 1, 1, ints, addrs, types, ierr)
  call check(ints(2) == 3 .and. addrs(1) == -16 .and. types(1) == MPI_INTEGER, &
             'hvector contents')
  call MPI_Type_free(hv, ierr)

  ! Attributes with Fortran callbacks: the copy doubles and adds EXTRA_STATE.
  val = 3
  call MPI_Type_create_keyval(copy_fn, delete_fn, key, val, ierr)
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, key2, val, ierr)
  call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, key3, val, ierr)
  call MPI_Type_get_attr(vec, key, val, flag, ierr)
  call check(.not. flag, 'no attribute yet')
  val = 10
  call MPI_Type_set_attr(vec, key, val, ierr)
  val = 77
  call MPI_Type_set_attr(vec, key2, val, ierr)
  call MPI_Type_set_attr(vec, key3, val, ierr)
  val = 0
  call MPI_Type_get_attr(vec, key, val, flag, ierr)
  call check(flag .and. val == 10, 'attribute value')
  call MPI_Type_dup(vec, dup, ierr)
  call check(copies == 1, 'copy callback called once')
  call MPI_Type_get_attr(dup, key, val, flag, ierr)
  call check(flag .and. val == 23, 'copied through the callback')
  call MPI_Type_get_attr(dup, key2, val, flag, ierr)
  call check(flag .and. val == 77, 'MPI_TYPE_DUP_FN copies')
  call MPI_Type_get_attr(dup, key3, val, flag, ierr)
  call check(.not. flag, 'MPI_TYPE_NULL_COPY_FN does not copy')
  call MPI_Type_get_name(dup, name, len, ierr)
  call check(len == 0, 'dup has no name')
  val = 11
  call MPI_Type_set_attr(dup, key, val, ierr)
  call check(deletes == 1 .and. last_deleted == 23, 'replacing deletes the old value')
  call MPI_Type_dup(dup, dup2, ierr)
  call MPI_Type_free(dup2, ierr)
  call check(deletes == 2 .and. last_deleted == 25, 'free deletes')
  call MPI_Type_free(dup, ierr)
  call check(deletes == 3 .and. last_deleted == 11 .and. dup == MPI_DATATYPE_NULL, &
             'free deletes again')
  call MPI_Type_delete_attr(vec, key, ierr)
  call check(deletes == 4 .and. last_deleted == 10, 'delete_attr deletes')
  call MPI_Type_free_keyval(key, ierr)
  call check(key == MPI_KEYVAL_INVALID, 'free_keyval')
  call MPI_Type_free_keyval(key2, ierr)
  call MPI_Type_free_keyval(key3, ierr)

  ! external32: big-endian, 4-byte INTEGERs.
  ivals = (/ 1, -2 /)
  pos = 0
  outsize = 16
  call MPI_Pack_external('external32', ivals, 2, MPI_INTEGER, buf, outsize, pos, ierr)
  call check(pos == 8 .and. ichar(buf(4)) == 1 .and. ichar(buf(1)) == 0, 'external32 1')
  call check(ichar(buf(5)) == 255 .and. ichar(buf(8)) == 254, 'external32 -2')
  call MPI_Pack_external_size('external32', 3, MPI_DOUBLE_PRECISION, val, ierr)
  call check(val == 24, 'external32 size')
  ivals = 0
  pos = 0
  call MPI_Unpack_external('external32', buf, outsize, pos, ivals, 2, MPI_INTEGER, ierr)
  call check(ivals(1) == 1 .and. ivals(2) == -2 .and. pos == 8, 'unpack_external')

  ! Sizes and the F90 types.
  call MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, t, ierr)
  call check(t == MPI_REAL8, 'match_size')
  call MPI_Type_create_f90_real(15, 300, t, ierr)
  call MPI_Type_size(t, sz, ierr)
  call MPI_Type_get_envelope(t, ni, na, nd, comb, ierr)
  call check(sz == 8 .and. comb == MPI_COMBINER_F90_REAL .and. ni == 2, 'f90 real')

  ! Halo exchange of rows: row i of a(0:nx+1, ny) is strided; rows 0 and nx+1 are halos.
  up = mod(rank + 1, size)
  down = mod(rank + size - 1, size)
  do j = 1, ny
    do i = 0, nx + 1
      a(i, j) = rank * 100 + i * 10 + j
    end do
  end do
  do round = 1, rounds
    lo = a(1, :)
    hi = a(nx, :)
    call MPI_Sendrecv(hi, ny, MPI_DOUBLE_PRECISION, up, round, want_lo, ny, &
                      MPI_DOUBLE_PRECISION, down, round, MPI_COMM_WORLD, &
                      MPI_STATUS_IGNORE, ierr)
    call MPI_Sendrecv(lo, ny, MPI_DOUBLE_PRECISION, down, round, want_hi, ny, &
                      MPI_DOUBLE_PRECISION, up, round, MPI_COMM_WORLD, &
                      MPI_STATUS_IGNORE, ierr)
    call MPI_Sendrecv(a(nx, 1), 1, vec, up, round, a(0, 1), 1, vec, down, round, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'sendrecv of rows')
    call MPI_Sendrecv(a(1, 1), 1, vec, down, round, a(nx + 1, 1), 1, vec, up, round, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    do j = 1, ny
      call check(a(0, j) == want_lo(j) .and. a(nx + 1, j) == want_hi(j), 'halo rows')
      call check(a(1, j) == lo(j) .and. a(nx, j) == hi(j), 'interior untouched')
    end do
    do row = 1, nx
      a(row, :) = (a(row - 1, :) + 2 * a(row, :) + a(row + 1, :)) / 4
    end do
    if (work_ms > 0) i = usleep(work_ms * 1000)
  end do
  local = 0
  do j = 1, ny
    do i = 0, nx + 1
      local = local + a(i, j) * (i + 1) * j
    end do
  end do
  call MPI_Reduce(local, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call MPI_Type_free(vec, ierr)

  if (rank == 0) print '(a,i0,a,es16.9)', 'datatypes_attrs: ok size ', size, ' checksum ', total
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(a,i0,a,a)', 'rank ', rank, ': FAILED ', what
      flush (6)
      call exit(1)
    end if
  end subroutine

end program datatypes_attrs
