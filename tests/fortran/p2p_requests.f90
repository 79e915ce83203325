! Point-to-point from Fortran beyond the basics, in a ring, every round:
! generalized requests (MPI-3.1 section 12.2) whose query, free and cancel
! functions are Fortran subroutines taking every argument by reference
! (MPI_GREQUEST_START, MPI_GREQUEST_COMPLETE, MPI_STATUS_SET_ELEMENTS,
! MPI_STATUS_SET_CANCELLED), in MPI_TEST, MPI_REQUEST_GET_STATUS, MPI_CANCEL,
! MPI_WAITANY and MPI_WAIT; an immediate receive into a matrix row (a vector
! type over a column-major array); MPI_MPROBE + MPI_IMRECV; MPI_ISSEND not
! complete before the receive is posted. Rank 0 prints one line that the test
! compares. Arguments: [ROUNDS [WORK_MS [STRICT]]] (20, 0, 1); STRICT 0 leaves
! out the check that a synchronous send is not complete yet (see p2p_ssend.c).
module greq_state
  use mpi
  implicit none
  integer :: queried = 0, freed = 0, cancels = 0
  logical :: complete_at_cancel = .false.
end module

subroutine query_fn(extra, status, ierr)
  use greq_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: status(MPI_STATUS_SIZE), ierr
  queried = queried + 1
  status(MPI_SOURCE) = int(extra)
  status(MPI_TAG) = int(extra) + 1
  call MPI_STATUS_SET_ELEMENTS(status, MPI_INTEGER, 3, ierr)
  call MPI_STATUS_SET_CANCELLED(status, cancels > 0, ierr)
  ierr = MPI_SUCCESS
end subroutine

subroutine free_fn(extra, ierr)
  use greq_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: ierr
  if (extra < 0) stop 1
  freed = freed + 1
  ierr = MPI_SUCCESS
end subroutine

subroutine cancel_fn(extra, complete, ierr)
  use greq_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: complete
  integer :: ierr
  if (extra < 0) stop 1
  cancels = cancels + 1
  complete_at_cancel = complete
  ierr = MPI_SUCCESS
end subroutine

program p2p_requests
  use mpi
  use greq_state
  use iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function usleep(us) bind(c, name='usleep')
      import c_int
      integer(c_int), value :: us
    end function
  end interface
  external query_fn, free_fn, cancel_fn
  integer, parameter :: rows = 4, cols = 5
  integer :: ierr, rank, size, next, prev, round, rounds, work_ms, strict
  integer :: req, reqs(2), idx, n, i, j, msg, rowtype, v, x
  integer :: status(MPI_STATUS_SIZE)
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: flag
  double precision, volatile :: m(rows, cols)
  double precision :: out(cols), total, all
  character(len=32) :: arg

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  rounds = 20
  work_ms = 0
  strict = 1
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) rounds
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) work_ms
  end if
  if (command_argument_count() >= 3) then
    call get_command_argument(3, arg)
    read (arg, *) strict
  end if
  next = mod(rank + 1, size)
  prev = mod(rank + size - 1, size)
  total = 0
  ! One row of a column-major matrix: COLS elements, ROWS apart.
  call MPI_TYPE_VECTOR(cols, 1, rows, MPI_DOUBLE_PRECISION, rowtype, ierr)
  call MPI_TYPE_COMMIT(rowtype, ierr)

  do round = 0, rounds - 1
    ! A generalized request: not done until completed, then its query function.
    queried = 0
    freed = 0
    cancels = 0
    extra = rank * 100 + round
    call MPI_GREQUEST_START(query_fn, free_fn, cancel_fn, extra, req, ierr)
    call check(ierr == MPI_SUCCESS .and. req /= MPI_REQUEST_NULL, 'grequest started')
    call MPI_TEST(req, flag, status, ierr)
    call check(.not. flag .and. queried == 0, 'not done yet')
    call MPI_CANCEL(req, ierr)
    call check(cancels == 1 .and. .not. complete_at_cancel, 'cancel before completion')
    call MPI_GREQUEST_COMPLETE(req, ierr)
    call MPI_REQUEST_GET_STATUS(req, flag, status, ierr)
    call check(flag .and. queried == 1 .and. freed == 0, 'get_status queries only')
    call MPI_CANCEL(req, ierr)
    call check(cancels == 2 .and. complete_at_cancel, 'cancel after completion')
    call MPI_WAIT(req, status, ierr)
    call check(req == MPI_REQUEST_NULL .and. queried == 2 .and. freed == 1, 'wait')
    call check(status(MPI_SOURCE) == extra .and. status(MPI_TAG) == extra + 1, 'status')
    call MPI_GET_COUNT(status, MPI_INTEGER, n, ierr)
    call check(n == 3, 'elements set')
    call MPI_TEST_CANCELLED(status, flag, ierr)
    call check(flag, 'cancelled set')
    total = total + status(MPI_TAG)

    ! MPI_WAITANY over a generalized request and a receive.
    freed = 0
    cancels = 0
    x = -1
    v = rank * 100 + round
    call MPI_GREQUEST_START(query_fn, free_fn, cancel_fn, extra, reqs(1), ierr)
    call MPI_IRECV(x, 1, MPI_INTEGER, prev, 3, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_SEND(v, 1, MPI_INTEGER, next, 3, MPI_COMM_WORLD, ierr)
    call MPI_WAITANY(2, reqs, idx, status, ierr)
    call check(idx == 2 .and. x == prev * 100 + round, 'only the receive is done')
    call MPI_GREQUEST_COMPLETE(reqs(1), ierr)
    call MPI_WAITANY(2, reqs, idx, status, ierr)
    call check(idx == 1 .and. freed == 1 .and. status(MPI_SOURCE) == extra, 'then the grequest')
    total = total + x

    ! An immediate receive into one row of the matrix.
    m = -1d0
    do j = 1, cols
      out(j) = rank * 1000d0 + round * 10 + j
    end do
    i = mod(round, rows) + 1
    call MPI_IRECV(m(i, 1), 1, rowtype, prev, 4, MPI_COMM_WORLD, req, ierr)
    call MPI_SEND(out, cols, MPI_DOUBLE_PRECISION, next, 4, MPI_COMM_WORLD, ierr)
    call MPI_WAIT(req, status, ierr)
    do j = 1, cols
      call check(m(i, j) == prev * 1000d0 + round * 10 + j, 'row received')
      do n = 1, rows
        if (n /= i) call check(m(n, j) == -1d0, 'other rows untouched')
      end do
    end do
    total = total + m(i, cols)

    ! MPI_MPROBE + MPI_IMRECV into a row.
    call MPI_SEND(out, cols, MPI_DOUBLE_PRECISION, next, 5, MPI_COMM_WORLD, ierr)
    call MPI_MPROBE(prev, 5, MPI_COMM_WORLD, msg, status, ierr)
    call MPI_IMRECV(m(1, 1), 1, rowtype, msg, req, ierr)
    call check(msg == MPI_MESSAGE_NULL, 'message taken')
    call MPI_WAIT(req, status, ierr)
    call check(m(1, cols) == prev * 1000d0 + round * 10 + cols, 'imrecv')

    ! MPI_ISSEND: not complete before the next rank posts its receive.
    call MPI_ISSEND(v, 1, MPI_INTEGER, next, 6, MPI_COMM_WORLD, req, ierr)
    call MPI_TEST(req, flag, status, ierr)
    call check(strict == 0 .or. .not. flag, 'synchronous send not complete')
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
    call MPI_RECV(x, 1, MPI_INTEGER, prev, 6, MPI_COMM_WORLD, status, ierr)
    call MPI_WAIT(req, status, ierr)
    call check(x == prev * 100 + round, 'synchronous send delivered')

    if (work_ms > 0) ierr = usleep(work_ms * 1000)
  end do
  call MPI_TYPE_FREE(rowtype, ierr)

  call MPI_REDUCE(total, all, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(A,I0,A,F0.2)') 'p2p_requests: ok size ', size, ' checksum ', all
  call MPI_FINALIZE(ierr)

contains

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      write (*, '(A,I0,A,A)') 'rank ', rank, ': FAILED ', what
      call exit(1)
    end if
  end subroutine
end program
