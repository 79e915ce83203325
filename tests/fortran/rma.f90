! One-sided communication from Fortran (MPI-3.1 chapter 11): a window over an array
! (MPI_WIN_CREATE) and one MPI allocates (MPI_WIN_ALLOCATE), their attributes and name;
! each round, between fences, every rank puts into its right neighbour, gets from its
! left one and adds into rank 0's counter; then post/start/complete/wait around the
! ring. Then a shared-memory window (MPI_WIN_ALLOCATE_SHARED, MPI_WIN_SHARED_QUERY):
! every rank stores into its right neighbour's memory, MPI_WIN_SYNC, MPI_BARRIER, and
! loads its own. Rank 0 prints one line that the test compares. Arguments: [ROUNDS [WORK_MS]].
program rma
  use mpi
  use iso_c_binding, only: c_int, c_ptr, c_f_pointer
  implicit none
  interface
    integer(c_int) function usleep(us) bind(c, name='usleep')
      import c_int
      integer(c_int), value :: us
    end function
  end interface
  integer, parameter :: n = 8
  integer :: ierr, rank, size, left, right, round, rounds, work_ms, i, wa, wc, len
  integer :: world, lg, rg
  ! Changed by MPI between the calls that name them (the window, the gets' buffers):
  ! volatile, so the compiler reads them again (MPI-3.1 section 17.1.17).
  integer, volatile :: a(n), got(n)
  integer :: v(n)
  integer(kind=MPI_ADDRESS_KIND) :: wsize, lb, disp, baseptr, unit
  integer, volatile :: counter(1)
  integer :: mark(1)
  logical :: flag
  double precision :: total, all
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=32) :: arg
  integer :: ws, wunit
  integer(kind=MPI_ADDRESS_KIND) :: rbase, rsize
  type(c_ptr) :: cp
  integer, pointer :: mine(:), theirs(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  rounds = 20
  work_ms = 0
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) rounds
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) work_ms
  end if
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  total = 0
  a = 0

  call MPI_Type_get_extent(MPI_INTEGER, lb, unit, ierr)
  wsize = n * unit
  call MPI_Win_create(a, wsize, int(unit), MPI_INFO_NULL, MPI_COMM_WORLD, wa, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Win_create')
  call MPI_Win_set_name(wa, 'ring', ierr)
  call MPI_Win_get_name(wa, name, len, ierr)
  call check(name == 'ring' .and. len == 4, 'window name')
  call MPI_Win_get_attr(wa, MPI_WIN_SIZE, disp, flag, ierr)
  call check(flag .and. disp == wsize, 'MPI_WIN_SIZE')
  call MPI_Win_get_attr(wa, MPI_WIN_DISP_UNIT, disp, flag, ierr)
  call check(flag .and. disp == unit, 'MPI_WIN_DISP_UNIT')

  call MPI_Win_allocate(unit, int(unit), MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, wc, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Win_allocate')
  call MPI_Win_get_attr(wc, MPI_WIN_BASE, disp, flag, ierr)
  call check(flag .and. disp == baseptr, 'MPI_WIN_BASE')
  call MPI_Win_get_attr(wc, MPI_WIN_CREATE_FLAVOR, disp, flag, ierr)
  call check(flag .and. disp == MPI_WIN_FLAVOR_ALLOCATE, 'MPI_WIN_CREATE_FLAVOR')

  call MPI_Comm_group(MPI_COMM_WORLD, world, ierr)
  call MPI_Group_incl(world, 1, [left], lg, ierr)
  call MPI_Group_incl(world, 1, [right], rg, ierr)

  call MPI_Win_fence(MPI_MODE_NOPRECEDE, wa, ierr)
  call MPI_Win_fence(MPI_MODE_NOPRECEDE, wc, ierr)
  do round = 0, rounds - 1
    do i = 1, n
      v(i) = 1000 * round + 100 * rank + i
    end do
    ! The second half of my window is mine to read until the next fence.
    a(n / 2 + 1:) = -v(n / 2 + 1:)
    call MPI_Win_fence(0, wa, ierr)
    disp = 0
    call MPI_Put(v, n / 2, MPI_INTEGER, right, disp, n / 2, MPI_INTEGER, wa, ierr)
    disp = n / 2
    call MPI_Get(got, n / 2, MPI_INTEGER, left, disp, n / 2, MPI_INTEGER, wa, ierr)
    disp = 0
    mark(1) = rank + 1
    call MPI_Accumulate(mark, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, MPI_SUM, wc, ierr)
    call MPI_Win_fence(0, wa, ierr)
    call MPI_Win_fence(0, wc, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Win_fence')
    do i = 1, n / 2
      call check(a(i) == 1000 * round + 100 * left + i, 'put')
      call check(got(i) == -(1000 * round + 100 * left + n / 2 + i), 'get')
    end do
    if (rank == 0) then
      call MPI_Get(counter, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, wc, ierr)
      call MPI_Win_fence(0, wc, ierr)
      call check(counter(1) == (round + 1) * size * (size + 1) / 2, 'accumulate')
      total = total + counter(1)
    else
      call MPI_Win_fence(0, wc, ierr)
    end if
    total = total + a(1) + got(1)

    call MPI_Win_post(lg, 0, wa, ierr)
    call MPI_Win_start(rg, 0, wa, ierr)
    mark(1) = 7 * round + rank
    call MPI_Put(mark, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, wa, ierr)
    call MPI_Win_complete(wa, ierr)
    call MPI_Win_wait(wa, ierr)
    call check(a(1) == 7 * round + left, 'post/start/complete/wait')
    total = total + a(1)
    if (work_ms > 0) ierr = usleep(work_ms * 1000)
  end do
  call MPI_Win_fence(MPI_MODE_NOSUCCEED, wa, ierr)
  call MPI_Win_fence(MPI_MODE_NOSUCCEED, wc, ierr)
  call MPI_Group_free(lg, ierr)
  call MPI_Group_free(rg, ierr)
  call MPI_Group_free(world, ierr)
  call MPI_Win_free(wa, ierr)
  call MPI_Win_free(wc, ierr)
  call check(wa == MPI_WIN_NULL .and. wc == MPI_WIN_NULL, 'MPI_Win_free')

  call MPI_Win_allocate_shared(2 * unit, int(unit), MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, &
                               ws, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Win_allocate_shared')
  call MPI_Win_shared_query(ws, right, rsize, wunit, rbase, ierr)
  call check(ierr == MPI_SUCCESS .and. rsize == 2 * unit .and. wunit == unit, &
             'MPI_Win_shared_query')
  cp = transfer(baseptr, cp)
  call c_f_pointer(cp, mine, [2])
  cp = transfer(rbase, cp)
  call c_f_pointer(cp, theirs, [2])
  call MPI_Win_lock_all(0, ws, ierr)
  theirs(2) = 10 * rank + 3
  call MPI_Win_sync(ws, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_sync(ws, ierr)
  call check(mine(1) == 0 .and. mine(2) == 10 * left + 3, 'shared load')
  total = total + mine(2)
  call MPI_Win_unlock_all(ws, ierr)
  call MPI_Win_free(ws, ierr)

  call MPI_Reduce(total, all, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,f0.2)', 'rma: ok size ', size, ' checksum ', all
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

end program rma
