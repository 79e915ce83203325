! Error handling from Fortran (MPI-3.1 section 8.3): under MPI_ERRORS_RETURN
! a bad rank, tag, datatype or communicator comes back in IERROR with its
! class; MPI_ERROR_CLASS and MPI_ERROR_STRING (a blank-padded string and its
! length); a handler of the program's own (MPI_COMM_CREATE_ERRHANDLER with a
! Fortran subroutine) is called with the communicator and the code;
! MPI_INITIALIZED and MPI_FINALIZED. With the argument "fatal", a send to a
! rank that does not exist under the default MPI_ERRORS_ARE_FATAL ends the
! program with a message naming the function.
module handler
  implicit none
  integer :: calls = 0, last_code = 0
contains
  subroutine on_error(comm, code)
    integer :: comm, code
    calls = calls + 1
    last_code = code
  end subroutine
end module handler

program errors
  use mpi
  use handler
  implicit none
  integer :: ierr, rank, size, cls, len, eh, x
  logical :: flag
  character(len=MPI_MAX_ERROR_STRING) :: text
  character(len=16) :: arg

  call MPI_Initialized(flag, ierr)
  call check(.not. flag, 'initialized before init')
  call MPI_Init(ierr)
  call MPI_Initialized(flag, ierr)
  call check(flag, 'initialized')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  x = rank

  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    if (arg == 'fatal') then
      call MPI_Send(x, 1, MPI_INTEGER, size + 5, 0, MPI_COMM_WORLD, ierr)
      print *, 'not reached'
    end if
  end if

  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Send(x, 1, MPI_INTEGER, size + 5, 0, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_ERR_RANK, 'bad rank')
  call MPI_Error_class(ierr, cls, ierr)
  call check(cls == MPI_ERR_RANK, 'error_class')
  call MPI_Error_string(MPI_ERR_RANK, text, len, ierr)
  call check(ierr == MPI_SUCCESS .and. len > 0 .and. text(1:12) == 'MPI_ERR_RANK', 'error_string')
  call check(text(len + 1:) == '', 'error_string blank-padded')
  call MPI_Send(x, 1, MPI_INTEGER, 0, -5, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_ERR_TAG, 'bad tag')
  call MPI_Send(x, 1, MPI_COMM_WORLD, 0, 0, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_ERR_TYPE, 'bad datatype')
  call MPI_Send(x, 1, MPI_INTEGER, 0, 0, MPI_INTEGER, ierr)
  call check(ierr == MPI_ERR_COMM, 'bad communicator')
  call MPI_Send(x, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_ERR_COUNT, 'bad count')

  ! A handler of our own: called, and the call returns the code.
  call MPI_Comm_create_errhandler(on_error, eh, ierr)
  call check(ierr == MPI_SUCCESS, 'create_errhandler')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh, ierr)
  call MPI_Send(x, 1, MPI_INTEGER, size + 5, 0, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_ERR_RANK .and. calls == 1 .and. last_code == MPI_ERR_RANK, &
             'own handler')
  call MPI_Errhandler_free(eh, ierr)
  call check(eh == MPI_ERRHANDLER_NULL, 'errhandler_free')

  ! A graph query on a communicator without a graph: a clear class.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, x, ierr)
  call check(ierr == MPI_ERR_TOPOLOGY, 'no graph topology')
  x = MPI_REQUEST_NULL
  call MPI_Cancel(x, ierr)
  call check(ierr == MPI_ERR_REQUEST, 'cancel of MPI_REQUEST_NULL')

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0)', 'errors: ok size ', size
  call MPI_Finalize(ierr)
  call MPI_Finalized(flag, ierr)
  call check(flag, 'finalized')

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(a,a)', 'FAILED ', what
      flush (6)
      call exit(1)
    end if
  end subroutine

end program errors
