! Point-to-point from Fortran (MPI-3.1 chapter 3): a ring of blocking sends in
! every mode with status(MPI_SOURCE) / status(MPI_TAG) and MPI_GET_COUNT,
! immediate sends and receives with MPI_WAITALL on a status array, MPI_WAITANY
! and MPI_WAITSOME (1-based indices), MPI_ANY_SOURCE and MPI_ANY_TAG, probes,
! MPI_SENDRECV(_REPLACE), persistent requests, MPI_PROC_NULL with
! MPI_STATUS_IGNORE. Each rank checks what it got and stops with code 1 on a
! wrong value; rank 0 prints one line that the test compares.
! Arguments: [ROUNDS [WORK_MS]]: rounds of the ring (20), milliseconds of
! "work" per round (0), so a test can kill a replica while the job runs.
program p2p
  use mpi
  use iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function usleep(us) bind(c, name='usleep')
      import c_int
      integer(c_int), value :: us
    end function
  end interface
  integer, parameter :: n = 100
  integer, parameter :: size_of_room = 8 * n + MPI_BSEND_OVERHEAD
  character :: room(size_of_room)
  integer :: ierr, rank, size, next, prev, round, rounds, work_ms, i, count
  integer :: status(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 4), reqs(4)
  integer :: idx, outcount, indices(4), val, srcs, tags, k, k2, rq
  integer, volatile :: got(2)
  ! Buffers of requests that outlive the call that named them are VOLATILE, so the
  ! compiler neither caches nor moves their accesses (MPI-3.1 section 17.1.17).
  integer, volatile :: pval, pgot
  double precision :: out(n), in(n), total
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

  ! Room for one buffered send at a time (MPI-3.1 section 3.6).
  call MPI_Buffer_attach(room, size_of_room, ierr)
  call check(ierr == MPI_SUCCESS, 'buffer_attach')

  ! A ring of blocking sends in every mode, each after its receive is posted: a
  ! synchronous send completes only once its receive has started and a ready send
  ! needs it posted (MPI-3.1 section 3.4).
  do round = 0, rounds - 1
    do i = 1, n
      out(i) = rank * 1000d0 + round + i * 0.5d0
    end do
    call MPI_Irecv(in, n, MPI_DOUBLE_PRECISION, prev, round, MPI_COMM_WORLD, rq, ierr)
    if (mod(round, 4) == 3) call MPI_Barrier(MPI_COMM_WORLD, ierr)
    select case (mod(round, 4))
    case (0)
      call MPI_Send(out, n, MPI_DOUBLE_PRECISION, next, round, MPI_COMM_WORLD, ierr)
    case (1)
      call MPI_Ssend(out, n, MPI_DOUBLE_PRECISION, next, round, MPI_COMM_WORLD, ierr)
    case (2)
      call MPI_Bsend(out, n, MPI_DOUBLE_PRECISION, next, round, MPI_COMM_WORLD, ierr)
    case default
      call MPI_Rsend(out, n, MPI_DOUBLE_PRECISION, next, round, MPI_COMM_WORLD, ierr)
    end select
    call check(ierr == MPI_SUCCESS, 'send')
    call MPI_Wait(rq, status, ierr)
    call check(status(MPI_SOURCE) == prev .and. status(MPI_TAG) == round, 'status')
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count, ierr)
    call check(count == n, 'get_count')
    do i = 1, n
      call check(in(i) == prev * 1000d0 + round + i * 0.5d0, 'ring value')
    end do
    total = total + in(n)
    if (work_ms > 0) i = usleep(work_ms * 1000)
  end do

  call MPI_Buffer_detach(room, k, ierr)
  call check(ierr == MPI_SUCCESS .and. k == size_of_room, 'buffer_detach')

  ! Immediate operations, completed by MPI_WAITALL with a status array.
  got = -1
  val = rank * 7
  call MPI_Irecv(got(1), 1, MPI_INTEGER, prev, 100, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Irecv(got(2), 1, MPI_INTEGER, next, 101, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Isend(val, 1, MPI_INTEGER, next, 100, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Issend(val, 1, MPI_INTEGER, prev, 101, MPI_COMM_WORLD, reqs(4), ierr)
  call MPI_Waitall(4, reqs, sts, ierr)
  call check(all(reqs == MPI_REQUEST_NULL), 'waitall nulls requests')
  call check(got(1) == prev * 7 .and. got(2) == next * 7, 'waitall values')
  call check(sts(MPI_SOURCE, 1) == prev .and. sts(MPI_SOURCE, 2) == next, 'waitall statuses')

  ! MPI_WAITANY and MPI_WAITSOME give 1-based indices.
  got = -1
  call MPI_Irecv(got(1), 1, MPI_INTEGER, prev, 102, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Send(val, 1, MPI_INTEGER, next, 102, MPI_COMM_WORLD, ierr)
  call MPI_Waitany(1, reqs, idx, status, ierr)
  call check(idx == 1 .and. got(1) == prev * 7, 'waitany index')
  call MPI_Irecv(got(2), 1, MPI_INTEGER, next, 103, MPI_COMM_WORLD, reqs(2), ierr)
  reqs(1) = MPI_REQUEST_NULL
  call MPI_Send(val, 1, MPI_INTEGER, prev, 103, MPI_COMM_WORLD, ierr)
  call MPI_Waitsome(2, reqs, outcount, indices, MPI_STATUSES_IGNORE, ierr)
  call check(outcount == 1 .and. indices(1) == 2 .and. got(2) == next * 7, 'waitsome')
  call MPI_Waitany(2, reqs, idx, MPI_STATUS_IGNORE, ierr)
  call check(idx == MPI_UNDEFINED, 'waitany on no active request')

  ! Wildcards: every rank but 0 sends its rank with tag 10 + rank to rank 0, which
  ! takes them from MPI_ANY_SOURCE with MPI_ANY_TAG, probing each first.
  if (rank == 0) then
    srcs = 0
    tags = 0
    do k = 1, size - 1
      call MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
      call MPI_Get_count(status, MPI_INTEGER, count, ierr)
      call check(count == 1, 'probe count')
      ! (not status(MPI_SOURCE) itself: an argument must not alias another)
      idx = status(MPI_SOURCE)
      k2 = status(MPI_TAG)
      call MPI_Recv(val, 1, MPI_INTEGER, idx, k2, MPI_COMM_WORLD, status, ierr)
      call check(val == idx .and. k2 == 10 + val .and. status(MPI_SOURCE) == idx, 'wildcard')
      srcs = srcs + idx
      tags = tags + k2
    end do
    call check(srcs == size * (size - 1) / 2, 'every source once')
    call check(tags == srcs + 10 * (size - 1), 'every tag once')
    val = rank * 7
  else
    call MPI_Send(rank, 1, MPI_INTEGER, 0, 10 + rank, MPI_COMM_WORLD, ierr)
  end if
  ! No later message may be the one a wildcard matches.
  call MPI_Barrier(MPI_COMM_WORLD, ierr)

  ! Sendrecv and Sendrecv_replace around the ring.
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, next, 5, val, 1, MPI_INTEGER, prev, 5, &
                    MPI_COMM_WORLD, status, ierr)
  call check(val == prev .and. status(MPI_SOURCE) == prev, 'sendrecv')
  val = rank
  call MPI_Sendrecv_replace(val, 1, MPI_INTEGER, next, 6, prev, 6, MPI_COMM_WORLD, &
                            status, ierr)
  call check(val == prev, 'sendrecv_replace')

  ! Persistent requests, started twice.
  call MPI_Send_init(pval, 1, MPI_INTEGER, next, 7, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Recv_init(pgot, 1, MPI_INTEGER, prev, 7, MPI_COMM_WORLD, reqs(2), ierr)
  do k = 1, 2
    pval = rank + 100 * k
    call MPI_Startall(2, reqs, ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call check(pgot == prev + 100 * k, 'persistent')
  end do
  call MPI_Request_free(reqs(1), ierr)
  call MPI_Request_free(reqs(2), ierr)

  ! MPI_PROC_NULL: completes at once, with the empty status.
  call MPI_Recv(in, n, MPI_DOUBLE_PRECISION, MPI_PROC_NULL, 0, MPI_COMM_WORLD, status, ierr)
  call check(status(MPI_SOURCE) == MPI_PROC_NULL, 'proc_null status')
  call MPI_Recv(in, n, MPI_DOUBLE_PRECISION, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &
                MPI_STATUS_IGNORE, ierr)

  call MPI_Reduce(total, in(1), 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,f0.2)', 'p2p: ok size ', size, ' checksum ', in(1)
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

end program p2p
