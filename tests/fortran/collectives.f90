! Collectives from Fortran (MPI-3.1 chapter 5): MPI_BCAST, MPI_REDUCE,
! MPI_ALLREDUCE (also with MPI_IN_PLACE), MPI_GATHER(V), MPI_SCATTER(V),
! MPI_ALLGATHER(V), MPI_ALLTOALL(V), MPI_REDUCE_SCATTER(_BLOCK), MPI_SCAN,
! MPI_EXSCAN, MPI_MINLOC / MPI_MAXLOC on MPI_2DOUBLE_PRECISION and
! MPI_2INTEGER, MPI_LAND / MPI_LOR on MPI_LOGICAL, MPI_SUM on
! MPI_DOUBLE_COMPLEX and a user operation (MPI_OP_CREATE with a Fortran
! subroutine). Each rank checks every result and stops with code 1 on a wrong
! one; rank 0 prints a checksum line.
! Arguments: [ROUNDS [WORK_MS]] (5, 0): rounds of the whole set, milliseconds
! of "work" per round.
module user_ops
  implicit none
contains
  ! The integer maximum, written by the program: inoutvec = max(invec, inoutvec).
  subroutine imax(invec, inoutvec, len, datatype)
    integer, intent(in) :: len, datatype
    integer, intent(in) :: invec(len)
    integer, intent(inout) :: inoutvec(len)
    integer :: i
    do i = 1, len
      inoutvec(i) = max(invec(i), inoutvec(i))
    end do
  end subroutine
end module user_ops

program collectives
  use mpi
  use user_ops
  use iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function usleep(us) bind(c, name='usleep')
      import c_int
      integer(c_int), value :: us
    end function
  end interface
  integer :: ierr, rank, size, round, rounds, work_ms, i, r, k, myop
  integer, allocatable :: counts(:), displs(:), ibuf(:), iall(:)
  double precision, allocatable :: dall(:)
  double precision :: d, dsum, total, pair(2), pairs(2)
  integer :: ipair(2), ipairs(2), scan, exscan
  logical :: l, lall, lany
  double complex :: z, zsum
  character(len=32) :: arg

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
  allocate (counts(size), displs(size), iall(size * (size + 1)), dall(size))
  call MPI_Op_create(imax, .true., myop, ierr)
  call check(ierr == MPI_SUCCESS, 'op_create')
  total = 0

  do round = 0, rounds - 1
    ! Broadcast from a root that moves.
    d = -1
    if (rank == mod(round, size)) d = 3.5d0 * round
    call MPI_Bcast(d, 1, MPI_DOUBLE_PRECISION, mod(round, size), MPI_COMM_WORLD, ierr)
    call check(d == 3.5d0 * round, 'bcast')

    ! Reduce and allreduce (sum over ranks of rank + round).
    d = rank + round
    dsum = -1
    call MPI_Reduce(d, dsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) call check(dsum == size * (size - 1) / 2 + size * round, 'reduce')
    call MPI_Allreduce(MPI_IN_PLACE, d, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(d == size * (size - 1) / 2 + size * round, 'allreduce in place')
    total = total + d

    ! Gather, gatherv (rank r gives r + 1 values), scatter, scatterv.
    call MPI_Gather(rank + round, 1, MPI_INTEGER, iall, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
      do r = 0, size - 1
        call check(iall(r + 1) == r + round, 'gather')
      end do
    end if
    allocate (ibuf(rank + 1))
    ibuf = rank * 10 + round
    do r = 0, size - 1
      counts(r + 1) = r + 1
      displs(r + 1) = r * (r + 1) / 2
    end do
    iall = -1
    call MPI_Gatherv(ibuf, rank + 1, MPI_INTEGER, iall, counts, displs, MPI_INTEGER, 0, &
                     MPI_COMM_WORLD, ierr)
    if (rank == 0) then
      do r = 0, size - 1
        do k = 1, r + 1
          call check(iall(displs(r + 1) + k) == r * 10 + round, 'gatherv')
        end do
      end do
    end if
    if (rank == 0) then
      do r = 0, size - 1
        iall(displs(r + 1) + 1:displs(r + 1) + r + 1) = r * 100 + round
      end do
    end if
    ibuf = -1
    call MPI_Scatterv(iall, counts, displs, MPI_INTEGER, ibuf, rank + 1, MPI_INTEGER, 0, &
                      MPI_COMM_WORLD, ierr)
    call check(all(ibuf == rank * 100 + round), 'scatterv')
    deallocate (ibuf)
    if (rank == 0) then
      do r = 0, size - 1
        iall(r + 1) = 1000 + r
      end do
    end if
    call MPI_Scatter(iall, 1, MPI_INTEGER, k, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call check(k == 1000 + rank, 'scatter')

    ! Allgather(v), alltoall(v).
    call MPI_Allgather(dble(rank * round), 1, MPI_DOUBLE_PRECISION, dall, 1, &
                       MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
    do r = 0, size - 1
      call check(dall(r + 1) == dble(r * round), 'allgather')
    end do
    allocate (ibuf(rank + 1))
    ibuf = rank + round
    iall = -1
    call MPI_Allgatherv(ibuf, rank + 1, MPI_INTEGER, iall, counts, displs, MPI_INTEGER, &
                        MPI_COMM_WORLD, ierr)
    do r = 0, size - 1
      call check(all(iall(displs(r + 1) + 1:displs(r + 1) + r + 1) == r + round), 'allgatherv')
    end do
    deallocate (ibuf)
    allocate (ibuf(size))
    do r = 0, size - 1
      ibuf(r + 1) = rank * 1000 + r
    end do
    call MPI_Alltoall(ibuf, 1, MPI_INTEGER, iall, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    do r = 0, size - 1
      call check(iall(r + 1) == r * 1000 + rank, 'alltoall')
    end do
    counts = 1
    do r = 0, size - 1
      displs(r + 1) = size - 1 - r
    end do
    call MPI_Alltoallv(ibuf, counts, displs, MPI_INTEGER, iall, counts, displs, MPI_INTEGER, &
                       MPI_COMM_WORLD, ierr)
    do r = 0, size - 1
      call check(iall(size - r) == r * 1000 + (size - 1 - rank), 'alltoallv')
    end do

    ! Reduce_scatter(_block): every rank gives 1 per element; rank r gets size.
    ibuf = 1
    call MPI_Reduce_scatter_block(ibuf, k, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(k == size, 'reduce_scatter_block')
    counts = 1
    call MPI_Reduce_scatter(ibuf, k, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(k == size, 'reduce_scatter')
    deallocate (ibuf)

    ! Scan and exscan of rank + 1.
    call MPI_Scan(rank + 1, scan, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(scan == (rank + 1) * (rank + 2) / 2, 'scan')
    call MPI_Exscan(rank + 1, exscan, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank > 0) call check(exscan == rank * (rank + 1) / 2, 'exscan')

    ! MINLOC / MAXLOC on Fortran pairs: (value, location).
    pair = (/ dble(mod(rank * 7 + round, size)), dble(rank) /)
    call MPI_Allreduce(pair, pairs, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
    call check(pairs(1) == dble(size - 1), 'maxloc value')
    ipair = (/ rank + round, rank /)
    call MPI_Allreduce(ipair, ipairs, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD, ierr)
    call check(ipairs(1) == round .and. ipairs(2) == 0, 'minloc')

    ! LOGICAL and DOUBLE COMPLEX.
    l = rank >= 0
    call MPI_Allreduce(l, lall, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
    l = rank == size - 1
    call MPI_Allreduce(l, lany, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
    call check(lall .and. lany, 'logical')
    z = dcmplx(dble(rank), dble(round))
    call MPI_Allreduce(z, zsum, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(zsum == dcmplx(dble(size * (size - 1) / 2), dble(size * round)), 'complex')

    ! The program's own operation.
    call MPI_Allreduce(rank * 3 + round, k, 1, MPI_INTEGER, myop, MPI_COMM_WORLD, ierr)
    call check(k == (size - 1) * 3 + round, 'user op')
    total = total + k

    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (work_ms > 0) i = usleep(work_ms * 1000)
  end do
  call MPI_Op_free(myop, ierr)
  call check(myop == MPI_OP_NULL, 'op_free')
  if (rank == 0) print '(a,i0,a,f0.2)', 'collectives: ok size ', size, ' checksum ', total
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

end program collectives
