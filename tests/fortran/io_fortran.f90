! MPI-IO from Fortran (MPI-3.1 chapter 13): `io DIR [ROUNDS [WORK_MS]]`. Every
! rank opens DIR/io.dat (MPI_FILE_OPEN, collective), and each round sets a
! strided view (etype MPI_INTEGER, a filetype of B integers resized to the
! ranks' stride: MPI_TYPE_CREATE_RESIZED with INTEGER(KIND=MPI_ADDRESS_KIND)
! bounds), writes it collectively (MPI_FILE_WRITE_ALL) and nonblocking at an
! explicit INTEGER(KIND=MPI_OFFSET_KIND) offset (MPI_FILE_IWRITE_AT, MPI_WAIT),
! then MPI_FILE_SYNC, a barrier, and reads its neighbour's blocks back
! (MPI_FILE_READ_AT_ALL) and checks them. MPI_FILE_GET_VIEW gives the view
! back, MPI_FILE_GET_SIZE the size; opening a missing file is
! MPI_ERR_NO_SUCH_FILE (MPI_ERRORS_RETURN on files). Rank 0 prints one line.
program io_fortran
  use mpi
  use iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function usleep(us) bind(c, name='usleep')
      import c_int
      integer(c_int), value :: us
    end function
  end interface
  integer, parameter :: b = 32, k = 4
  integer :: ierr, rank, size, fh, blk, strided, r, rounds, work_ms, i, nb
  integer :: status(MPI_STATUS_SIZE), req, etype, ftype, cls, count
  integer :: data(b * k), back(b * k)
  integer(kind=MPI_OFFSET_KIND) :: base, disp, fsize, round_bytes
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent
  character(len=4096) :: dir, arg
  character(len=MPI_MAX_DATAREP_STRING) :: rep
  double precision :: checksum, total

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  call get_command_argument(1, dir)
  rounds = 3
  work_ms = 0
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) rounds
  end if
  if (command_argument_count() >= 3) then
    call get_command_argument(3, arg)
    read (arg, *) work_ms
  end if

  call MPI_FILE_OPEN(MPI_COMM_WORLD, trim(dir) // '/missing/x.dat', MPI_MODE_RDONLY, &
                     MPI_INFO_NULL, fh, ierr)
  call MPI_ERROR_CLASS(ierr, cls, ierr)
  if (cls /= MPI_ERR_NO_SUCH_FILE) call fail('open of a missing file')

  call MPI_FILE_OPEN(MPI_COMM_WORLD, trim(dir) // '/io.dat', &
                     MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) call fail('open')
  call MPI_TYPE_CONTIGUOUS(b, MPI_INTEGER, blk, ierr)
  lb = 0
  extent = int(size, MPI_ADDRESS_KIND) * b * 4
  call MPI_TYPE_CREATE_RESIZED(blk, lb, extent, strided, ierr)
  call MPI_TYPE_COMMIT(strided, ierr)
  round_bytes = 2_MPI_OFFSET_KIND * size * b * k * 4
  checksum = 0
  do r = 0, rounds - 1
    base = r * round_bytes
    do i = 1, b * k
      data(i) = (r * 100 + rank) * 10000 + i
    end do
    disp = base + int(rank, MPI_OFFSET_KIND) * b * 4
    call MPI_FILE_SET_VIEW(fh, disp, MPI_INTEGER, strided, 'native', MPI_INFO_NULL, ierr)
    if (ierr /= MPI_SUCCESS) call fail('set_view')
    call MPI_FILE_WRITE_ALL(fh, data, b * k, MPI_INTEGER, status, ierr)
    call MPI_GET_COUNT(status, MPI_INTEGER, count, ierr)
    if (count /= b * k) call fail('write_all count')
    data = -data
    call MPI_FILE_IWRITE_AT(fh, int(b * k, MPI_OFFSET_KIND), data, b * k, MPI_INTEGER, req, ierr)
    call MPI_WAIT(req, status, ierr)
    call MPI_FILE_GET_VIEW(fh, disp, etype, ftype, rep, ierr)
    if (disp /= base + int(rank, MPI_OFFSET_KIND) * b * 4 .or. etype /= MPI_INTEGER &
        .or. trim(rep) /= 'native') call fail('get_view')
    call MPI_TYPE_FREE(ftype, ierr)
    call MPI_FILE_SYNC(fh, ierr)
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
    call MPI_FILE_SYNC(fh, ierr)
    nb = mod(rank + 1, size)
    disp = base + int(nb, MPI_OFFSET_KIND) * b * 4
    call MPI_FILE_SET_VIEW(fh, disp, MPI_INTEGER, strided, 'native', MPI_INFO_NULL, ierr)
    call MPI_FILE_READ_AT_ALL(fh, 0_MPI_OFFSET_KIND, back, b * k, MPI_INTEGER, status, ierr)
    do i = 1, b * k
      if (back(i) /= (r * 100 + nb) * 10000 + i) call fail('read back')
      checksum = checksum + mod(back(i), 1000)
    end do
    call MPI_FILE_READ_AT_ALL(fh, int(b * k, MPI_OFFSET_KIND), back, b * k, MPI_INTEGER, &
                              status, ierr)
    do i = 1, b * k
      if (back(i) /= -((r * 100 + nb) * 10000 + i)) call fail('read back negated')
    end do
    ierr = usleep(int(work_ms * 1000, c_int))
  end do
  call MPI_FILE_GET_SIZE(fh, fsize, ierr)
  if (fsize /= rounds * round_bytes) call fail('size')
  call MPI_FILE_CLOSE(fh, ierr)
  if (fh /= MPI_FILE_NULL) call fail('close')
  call MPI_TYPE_FREE(strided, ierr)
  call MPI_TYPE_FREE(blk, ierr)
  call MPI_REDUCE(checksum, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,f0.2)', 'io_fortran: ok size ', size, ' checksum ', total
  call MPI_FINALIZE(ierr)
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED ', what
    call exit(1)
  end subroutine
end program io_fortran
