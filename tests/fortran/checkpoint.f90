! The MPIX_ fault-tolerance extensions from Fortran: an iterative computation
! whose state (an iteration counter and an INTEGER(8) array) is checkpointed
! with MPIX_CHECKPOINT every iteration; a regenerated replica gets it back
! with MPIX_RESTORED and goes on from there; the starting values come from
! MPIX_SEED. Each iteration a rank mixes in its ring neighbours' first values
! and their sum over all ranks. Rank 0 prints a line every 10 iterations
! (each must appear once) and a result line equal to the failure-free run's.
! Arguments: [ITERS [PAUSE_MS]] (40, 20).
program checkpoint
  use mpi
  use iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function usleep(us) bind(c, name='usleep')
      import c_int
      integer(c_int), value :: us
    end function
  end interface
  integer, parameter :: n = 8
  ! The state: state(0) is the iteration, state(1:n) the values.
  integer(kind=8) :: state(0:n), seed, mine, from_left, from_right, total, result
  integer :: ierr, rank, size, left, right, iters, pause_ms, bytes, i
  logical :: restored, regenerated
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  iters = 40
  pause_ms = 20
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) iters
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) pause_ms
  end if
  call MPIX_Restored(state, 8 * (n + 1), bytes, restored, ierr)
  call MPIX_Regenerated(regenerated, ierr)
  if (restored) then
    if (bytes /= 8 * (n + 1) .or. .not. regenerated) call fail('restored state')
    write (0, '(a,i0,a,i0)') 'rank ', rank, ' restored at iteration ', state(0)
  else
    call MPIX_Seed(MPI_COMM_WORLD, 42_8, seed, ierr)
    state(0) = 0
    do i = 1, n
      state(i) = ieor(seed, int(i * 977, 8))
    end do
  end if
  left = mod(rank + size - 1, size)
  right = mod(rank + 1, size)
  do while (state(0) < iters)
    mine = state(1)
    call MPI_Sendrecv(mine, 1, MPI_INTEGER8, right, 1, from_left, 1, MPI_INTEGER8, left, &
                      1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Sendrecv(mine, 1, MPI_INTEGER8, left, 2, from_right, 1, MPI_INTEGER8, right, &
                      2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Allreduce(mine, total, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
    do i = 1, n
      ! Wrapping arithmetic on the low 48 bits keeps every value exact.
      state(i) = iand(state(i) * 31_8 + ieor(from_left, from_right * 2_8) + total + i &
                      + state(0), 281474976710655_8)
    end do
    state(0) = state(0) + 1
    if (rank == 0 .and. mod(state(0), 10_8) == 0) print '(a,i0)', 'iteration ', state(0)
    i = usleep(pause_ms * 1000)
    call MPIX_Checkpoint(state, 8 * (n + 1), MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) call fail('checkpoint')
  end do
  mine = 0
  do i = 1, n
    mine = ieor(mine * 3_8, state(i))
  end do
  call MPI_Reduce(mine, result, 1, MPI_INTEGER8, MPI_BXOR, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0)', 'checkpoint: ok size ', size, ' result ', result
  call MPI_Finalize(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED ', what
    flush (6)
    call exit(1)
  end subroutine

end program checkpoint
