! MPI_CANCEL of receives from Fortran (MPI-3.1 section 3.8.4) and
! MPI_TEST_CANCELLED, in a ring, every round: a receive nobody matches (a
! specific one and MPI_ANY_SOURCE), cancelled, completes with the cancelled flag;
! a receive that completed is not cancelled and keeps its data; a receive
! cancelled while its message may be on its way is either cancelled (the message
! goes to the next receive) or has the data; a persistent receive is cancelled.
! Every replica of a rank must take the same outcome. Rank 0 prints one line
! that the test compares. Arguments: [ROUNDS [WORK_MS]] (20, 0).
program cancel
  use mpi
  use iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function usleep(us) bind(c, name='usleep')
      import c_int
      integer(c_int), value :: us
    end function
  end interface
  integer, parameter :: n = 32
  integer :: ierr, rank, size, next, prev, round, rounds, work_ms, i, req, k
  integer :: status(MPI_STATUS_SIZE)
  logical :: flag, done
  integer, volatile :: x
  double precision, volatile :: in(n)
  double precision :: out(n), total, all
  character(len=32) :: arg

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
  next = mod(rank + 1, size)
  prev = mod(rank + size - 1, size)
  total = 0
  x = -1

  do round = 0, rounds - 1
    ! Receives nobody matches.
    call MPI_Irecv(x, 1, MPI_INTEGER, prev, 900, MPI_COMM_WORLD, req, ierr)
    call check(cancelled(req), 'specific receive cancelled')
    call check(req == MPI_REQUEST_NULL .and. x == -1, 'cancelled request freed')
    call MPI_Irecv(x, 1, MPI_INTEGER, MPI_ANY_SOURCE, 901, MPI_COMM_WORLD, req, ierr)
    call check(cancelled(req), 'wildcard receive cancelled')

    ! A receive that completed: not cancelled, data intact.
    do i = 1, n
      out(i) = rank * 1000d0 + round + i * 0.25d0
    end do
    call MPI_Irecv(in, n, MPI_DOUBLE_PRECISION, prev, round, MPI_COMM_WORLD, req, ierr)
    call MPI_Send(out, n, MPI_DOUBLE_PRECISION, next, round, MPI_COMM_WORLD, ierr)
    done = .false.
    do while (.not. done)
      call MPI_Request_get_status(req, done, status, ierr)
    end do
    call check(.not. cancelled(req), 'completed receive not cancelled')
    call check(in(n) == prev * 1000d0 + round + n * 0.25d0, 'completed receive data')
    total = total + in(n)

    ! Cancelled while the message may be on its way.
    in = -1
    call MPI_Irecv(in, n, MPI_DOUBLE_PRECISION, prev, 1000 + round, MPI_COMM_WORLD, req, ierr)
    call MPI_Send(out, n, MPI_DOUBLE_PRECISION, next, 1000 + round, MPI_COMM_WORLD, ierr)
    if (cancelled(req)) then
      call check(in(1) == -1, 'cancelled receive left the buffer')
      call MPI_Recv(in, n, MPI_DOUBLE_PRECISION, prev, 1000 + round, MPI_COMM_WORLD, &
                    status, ierr)
    end if
    call check(in(2) == prev * 1000d0 + round + 2 * 0.25d0, 'racing receive data')
    total = total + in(2)

    ! A persistent receive, cancelled twice.
    call MPI_Recv_init(x, 1, MPI_INTEGER, prev, 902, MPI_COMM_WORLD, req, ierr)
    do k = 1, 2
      call MPI_Start(req, ierr)
      call check(cancelled(req) .and. req /= MPI_REQUEST_NULL, 'persistent cancelled')
    end do
    call MPI_Request_free(req, ierr)

    if (work_ms > 0) ierr = usleep(work_ms * 1000)
  end do

  call MPI_Reduce(total, all, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,f0.2)', 'cancel: ok size ', size, ' checksum ', all
  call MPI_Finalize(ierr)

contains

  ! Cancels request r, completes it and tells whether it was cancelled.
  logical function cancelled(r)
    integer, intent(inout) :: r
    integer :: st(MPI_STATUS_SIZE), e
    call MPI_Cancel(r, e)
    call check(e == MPI_SUCCESS, 'MPI_Cancel')
    call MPI_Wait(r, st, e)
    call MPI_Test_cancelled(st, cancelled, e)
  end function

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(a,i0,a,a)', 'rank ', rank, ': FAILED ', what
      flush (6)
      call exit(1)
    end if
  end subroutine

end program cancel
