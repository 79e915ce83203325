! Nonblocking collectives and user operations from Fortran (MPI-3.1 sections
! 5.8, 5.9.5, 5.12): each immediate collective against its blocking twin on
! the same inputs (MPI_IBCAST, MPI_IREDUCE, MPI_IALLREDUCE, MPI_ISCAN,
! MPI_IEXSCAN, MPI_IREDUCE_SCATTER(_BLOCK), MPI_IGATHER(V), MPI_ISCATTER(V),
! MPI_IALLGATHER(V), MPI_IALLTOALL(V/W)), all of them outstanding at once with
! point-to-point requests in one MPI_WAITALL; MPI_ALLTOALLW with an INTEGER
! block to even ranks and a DOUBLE PRECISION one to odd ranks; a Fortran user
! operation on a derived type (2x2 matrices, MPI_TYPE_CONTIGUOUS of 4
! INTEGERs), not commutative, in MPI_ALLREDUCE, MPI_IALLREDUCE and
! MPI_REDUCE_LOCAL. Each rank checks its results and stops with code 1 on a
! wrong one; rank 0 prints a checksum line.
! Arguments: [ROUNDS [WORK_MS]] (3, 0).
module coll_nb_ops
  implicit none
  integer :: m22
contains
  ! 2x2 matrices (mod 10007) multiplied: inoutvec = invec * inoutvec.
  subroutine matmul22(invec, inoutvec, len, datatype)
    integer, intent(in) :: len, datatype
    integer, intent(in) :: invec(4, len)
    integer, intent(inout) :: inoutvec(4, len)
    integer :: i, r(4)
    if (datatype /= m22) stop 1
    do i = 1, len
      r(1) = mod(invec(1, i) * inoutvec(1, i) + invec(2, i) * inoutvec(3, i), 10007)
      r(2) = mod(invec(1, i) * inoutvec(2, i) + invec(2, i) * inoutvec(4, i), 10007)
      r(3) = mod(invec(3, i) * inoutvec(1, i) + invec(4, i) * inoutvec(3, i), 10007)
      r(4) = mod(invec(3, i) * inoutvec(2, i) + invec(4, i) * inoutvec(4, i), 10007)
      inoutvec(:, i) = r
    end do
  end subroutine

  subroutine mat_of(r, i, m)
    integer, intent(in) :: r, i
    integer, intent(out) :: m(4)
    m = [mod(r + 2 + i, 10007), mod(r * 3 + i, 10007), mod(i + 1, 10007), mod(r + 1, 10007)]
  end subroutine

  ! The product of ranks 0..n-1's matrices number i, in rank order.
  subroutine mat_prod(n, i, out)
    integer, intent(in) :: n, i
    integer, intent(out) :: out(4)
    integer :: r, m(4), acc(4)
    acc = [1, 0, 0, 1]
    do r = 0, n - 1
      call mat_of(r, i, m)
      call matmul22(acc, m, 1, m22)
      acc = m
    end do
    out = acc
  end subroutine

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(a)', 'FAILED: ' // what
      stop 1
    end if
  end subroutine
end module coll_nb_ops

program coll_nonblocking
  use mpi
  use coll_nb_ops
  use iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function usleep(us) bind(c, name='usleep')
      import c_int
      integer(c_int), value :: us
    end function
  end interface
  integer, parameter :: k = 4, maxn = 8
  integer :: ierr, rank, size, round, rounds, work_ms, i, j, root, mop, req, q
  integer :: snd(maxn * k), a(maxn * k), b(maxn * k), counts(maxn), displs(maxn)
  integer :: g(maxn * k, 10), reqs(12), ring_in, ring_out, total
  integer :: mats(4, 3), got(4, 3), want(4)
  integer :: sc(maxn), sd(maxn), rc(maxn), rd(maxn), st(maxn), rt(maxn)
  integer :: wsend(4 * maxn), wrecv(4 * maxn), wrecv2(4 * maxn)
  integer :: commute
  double precision :: checksum, allsum, dv
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  rounds = 3
  work_ms = 0
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) rounds
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) work_ms
  end if
  call check(size <= maxn, 'at most 8 ranks')
  call MPI_Type_contiguous(4, MPI_INTEGER, m22, ierr)
  call MPI_Type_commit(m22, ierr)
  call MPI_Op_create(matmul22, .false., mop, ierr)
  call MPI_Op_commutative(mop, commute, ierr)
  call check(commute == 0, 'MPI_OP_COMMUTATIVE of a non-commutative operation')
  checksum = 0
  total = size * (size + 1) / 2
  do i = 1, size
    counts(i) = i
    displs(i) = (i - 1) * i / 2
  end do

  do round = 0, rounds - 1
    root = mod(round, size)
    do i = 1, size * k
      snd(i) = rank * 100 + i + round
    end do

    ! Each immediate form against its blocking twin.
    a(1:k) = -1
    b(1:k) = -1
    if (rank == root) then
      a(1:k) = snd(1:k)
      b(1:k) = snd(1:k)
    end if
    call MPI_Bcast(a, k, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call MPI_Ibcast(b, k, MPI_INTEGER, root, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(a(1:k) == b(1:k)), 'MPI_IBCAST')
    call MPI_Reduce(snd, a, k, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
    call MPI_Ireduce(snd, b, k, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    if (rank == root) call check(all(a(1:k) == b(1:k)), 'MPI_IREDUCE')
    call MPI_Allreduce(snd, a, k, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
    call MPI_Iallreduce(snd, b, k, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(a(1:k) == b(1:k)), 'MPI_IALLREDUCE')
    b(1:k) = snd(1:k)
    call MPI_Iallreduce(MPI_IN_PLACE, b, k, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(a(1:k) == b(1:k)), 'MPI_IALLREDUCE in place')
    call MPI_Scan(snd, a, k, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Iscan(snd, b, k, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(a(1:k) == b(1:k)), 'MPI_ISCAN')
    call MPI_Exscan(snd, a, k, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Iexscan(snd, b, k, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    if (rank > 0) call check(all(a(1:k) == b(1:k)), 'MPI_IEXSCAN')
    call MPI_Reduce_scatter_block(snd, a, k, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Ireduce_scatter_block(snd, b, k, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(a(1:k) == b(1:k)), 'MPI_IREDUCE_SCATTER_BLOCK')
    call MPI_Reduce_scatter(snd, a, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Ireduce_scatter(snd, b, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(a(1:rank + 1) == b(1:rank + 1)), 'MPI_IREDUCE_SCATTER')
    call MPI_Gather(snd, k, MPI_INTEGER, a, k, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call MPI_Igather(snd, k, MPI_INTEGER, b, k, MPI_INTEGER, root, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    if (rank == root) call check(all(a(1:size * k) == b(1:size * k)), 'MPI_IGATHER')
    call MPI_Gatherv(snd, rank + 1, MPI_INTEGER, a, counts, displs, MPI_INTEGER, root, &
                     MPI_COMM_WORLD, ierr)
    call MPI_Igatherv(snd, rank + 1, MPI_INTEGER, b, counts, displs, MPI_INTEGER, root, &
                      MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    if (rank == root) call check(all(a(1:total) == b(1:total)), 'MPI_IGATHERV')
    call MPI_Scatter(snd, k, MPI_INTEGER, a, k, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call MPI_Iscatter(snd, k, MPI_INTEGER, b, k, MPI_INTEGER, root, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(a(1:k) == b(1:k)), 'MPI_ISCATTER')
    call MPI_Scatterv(snd, counts, displs, MPI_INTEGER, a, rank + 1, MPI_INTEGER, root, &
                      MPI_COMM_WORLD, ierr)
    call MPI_Iscatterv(snd, counts, displs, MPI_INTEGER, b, rank + 1, MPI_INTEGER, root, &
                       MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(a(1:rank + 1) == b(1:rank + 1)), 'MPI_ISCATTERV')
    call MPI_Allgather(snd, k, MPI_INTEGER, a, k, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call MPI_Iallgather(snd, k, MPI_INTEGER, b, k, MPI_INTEGER, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(a(1:size * k) == b(1:size * k)), 'MPI_IALLGATHER')
    call MPI_Allgatherv(snd, rank + 1, MPI_INTEGER, a, counts, displs, MPI_INTEGER, &
                        MPI_COMM_WORLD, ierr)
    call MPI_Iallgatherv(snd, rank + 1, MPI_INTEGER, b, counts, displs, MPI_INTEGER, &
                         MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(a(1:total) == b(1:total)), 'MPI_IALLGATHERV')
    call MPI_Alltoall(snd, k, MPI_INTEGER, a, k, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call MPI_Ialltoall(snd, k, MPI_INTEGER, b, k, MPI_INTEGER, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(a(1:size * k) == b(1:size * k)), 'MPI_IALLTOALL')
    do i = 1, size
      sc(i) = k
      sd(i) = (i - 1) * k
    end do
    call MPI_Alltoallv(snd, sc, sd, MPI_INTEGER, a, sc, sd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call MPI_Ialltoallv(snd, sc, sd, MPI_INTEGER, b, sc, sd, MPI_INTEGER, MPI_COMM_WORLD, &
                        req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(a(1:size * k) == b(1:size * k)), 'MPI_IALLTOALLV')
    checksum = checksum + sum(dble(b(1:size * k)))

    ! MPI_ALLTOALLW: to rank j an INTEGER (even j) or a DOUBLE PRECISION (odd j),
    ! each in its own 8-byte slot (byte displacements).
    do j = 1, size
      sc(j) = 1
      sd(j) = 8 * (j - 1)
      rc(j) = 1
      rd(j) = 8 * (size - j)
      if (mod(j - 1, 2) == 0) then
        st(j) = MPI_INTEGER
        wsend(2 * j - 1) = rank * 10 + j
      else
        st(j) = MPI_DOUBLE_PRECISION
        dv = rank + j * 0.5d0
        wsend(2 * j - 1:2 * j) = transfer(dv, wsend(1:2))
      end if
      if (mod(rank, 2) == 0) then
        rt(j) = MPI_INTEGER
      else
        rt(j) = MPI_DOUBLE_PRECISION
      end if
    end do
    wrecv = 0
    wrecv2 = 0
    call MPI_Alltoallw(wsend, sc, sd, st, wrecv, rc, rd, rt, MPI_COMM_WORLD, ierr)
    call MPI_Ialltoallw(wsend, sc, sd, st, wrecv2, rc, rd, rt, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(wrecv == wrecv2), 'MPI_IALLTOALLW')
    do i = 1, size
      j = 2 * (size - i) + 1
      if (mod(rank, 2) == 0) then
        call check(wrecv(j) == (i - 1) * 10 + rank + 1, 'MPI_ALLTOALLW integer')
        checksum = checksum + wrecv(j)
      else
        dv = transfer(wrecv(j:j + 1), dv)
        call check(dv == (i - 1) + (rank + 1) * 0.5d0, 'MPI_ALLTOALLW double')
        checksum = checksum + dv
      end if
    end do

    ! Every kind outstanding at once, with a ring of point-to-point messages.
    q = 0
    g = 0
    if (rank == root) g(1:k, 1) = snd(1:k)
    q = q + 1
    call MPI_Ibcast(g(:, 1), k, MPI_INTEGER, root, MPI_COMM_WORLD, reqs(q), ierr)
    q = q + 1
    call MPI_Ireduce(snd, g(:, 2), k, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, reqs(q), ierr)
    q = q + 1
    call MPI_Iallreduce(snd, g(:, 3), k, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(q), ierr)
    q = q + 1
    call MPI_Igather(snd, k, MPI_INTEGER, g(:, 4), k, MPI_INTEGER, root, MPI_COMM_WORLD, &
                     reqs(q), ierr)
    q = q + 1
    call MPI_Iallgather(snd, k, MPI_INTEGER, g(:, 5), k, MPI_INTEGER, MPI_COMM_WORLD, &
                        reqs(q), ierr)
    q = q + 1
    call MPI_Ialltoall(snd, k, MPI_INTEGER, g(:, 6), k, MPI_INTEGER, MPI_COMM_WORLD, &
                       reqs(q), ierr)
    q = q + 1
    call MPI_Iscan(snd, g(:, 7), k, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(q), ierr)
    q = q + 1
    call MPI_Ibarrier(MPI_COMM_WORLD, reqs(q), ierr)
    ring_out = rank * 7 + round
    q = q + 1
    call MPI_Irecv(ring_in, 1, MPI_INTEGER, mod(rank + size - 1, size), 5, MPI_COMM_WORLD, &
                   reqs(q), ierr)
    q = q + 1
    call MPI_Isend(ring_out, 1, MPI_INTEGER, mod(rank + 1, size), 5, MPI_COMM_WORLD, &
                   reqs(q), ierr)
    call MPI_Waitall(q, reqs, MPI_STATUSES_IGNORE, ierr)
    call check(all(reqs(1:q) == MPI_REQUEST_NULL), 'requests freed by MPI_WAITALL')
    call check(ring_in == mod(rank + size - 1, size) * 7 + round, 'ring')
    call MPI_Allreduce(snd, a, k, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(all(a(1:k) == g(1:k, 3)), 'MPI_IALLREDUCE among others')
    call MPI_Alltoall(snd, k, MPI_INTEGER, a, k, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check(all(a(1:size * k) == g(1:size * k, 6)), 'MPI_IALLTOALL among others')
    checksum = checksum + sum(dble(g(1:k, 7)))

    ! A user operation on a derived type, not commutative.
    do i = 1, 3
      call mat_of(rank, i + round, mats(:, i))
    end do
    call MPI_Allreduce(mats, got, 3, m22, mop, MPI_COMM_WORLD, ierr)
    do i = 1, 3
      call mat_prod(size, i + round, want)
      call check(all(got(:, i) == want), 'MPI_ALLREDUCE with a user operation')
      checksum = checksum + got(1, i)
    end do
    got = 0
    call MPI_Iallreduce(mats, got, 3, m22, mop, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    do i = 1, 3
      call mat_prod(size, i + round, want)
      call check(all(got(:, i) == want), 'MPI_IALLREDUCE with a user operation')
    end do
    got = mats
    call mat_of(5, 7, want)
    call MPI_Reduce_local(want, got, 1, m22, mop, ierr)
    call matmul22(want, mats, 1, m22)
    call check(all(got(:, 1) == mats(:, 1)), 'MPI_REDUCE_LOCAL')
    if (usleep(int(work_ms * 1000, c_int)) /= 0) stop 1
  end do

  call MPI_Op_free(mop, ierr)
  call MPI_Type_free(m22, ierr)
  call MPI_Reduce(checksum, allsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a, f0.1)', 'coll_nonblocking: ok size ', size, ' checksum ', allsum
  call MPI_Finalize(ierr)
end program coll_nonblocking
