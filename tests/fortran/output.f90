! MPIX_OUTPUT_OPEN / MPIX_OUTPUT_COMMIT from Fortran: each rank writes
! DIR/out-RANK.txt with its own OPEN and WRITE, one line every WORK_MS
! milliseconds (an all-reduce between lines keeps the ranks in step), CLOSEs it
! and commits it. Under replication exactly one complete copy must appear at each
! path, whatever replicas die mid-write, and no temporary may stay behind.
! Arguments: DIR [LINES [WORK_MS]] (DIR, 20, 0).
program output
  use mpi
  use iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function usleep(us) bind(c, name='usleep')
      import c_int
      integer(c_int), value :: us
    end function
  end interface
  integer :: ierr, rank, size, lines, work_ms, i, u, mine, all, total
  character(len=1024) :: dir, path, arg
  character(len=MPIX_MAX_OUTPUT_PATH) :: tmp
  character(len=4) :: tiny

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call get_command_argument(1, dir)
  lines = 20
  work_ms = 0
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) lines
  end if
  if (command_argument_count() >= 3) then
    call get_command_argument(3, arg)
    read (arg, *) work_ms
  end if
  write (path, '(a,a,i0,a)') trim(dir), '/out-', rank, '.txt'

  ! A TMPPATH too short is refused (MPI_ERR_ARG) and nothing is begun.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPIX_Output_open(path, tiny, ierr)
  call check(ierr == MPI_ERR_ARG, 'short TMPPATH refused')
  call MPIX_Output_commit(path, ierr)
  call check(ierr == MPI_ERR_ARG, 'nothing begun')

  call MPIX_Output_open(path, tmp, ierr)
  call check(ierr == MPI_SUCCESS, 'MPIX_OUTPUT_OPEN')
  open (newunit=u, file=trim(tmp), status='unknown', action='write', iostat=ierr)
  call check(ierr == 0, 'OPEN of TMPPATH')
  total = 0
  do i = 0, lines - 1
    mine = rank + i
    call MPI_Allreduce(mine, all, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    write (u, '(a,i0,a,i0,a,i0)') 'rank ', rank, ' line ', i, ' sum ', all
    flush (u)
    total = total + all
    if (work_ms > 0) ierr = usleep(work_ms * 1000)
  end do
  close (u)
  call MPIX_Output_commit(path, ierr)
  call check(ierr == MPI_SUCCESS, 'MPIX_OUTPUT_COMMIT')
  if (rank == 0) print '(a,i0,a,i0)', 'output: ok size ', size, ' sum ', total
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

end program output
