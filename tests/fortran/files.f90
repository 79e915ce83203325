! Files a Fortran program writes with its own OPEN, WRITE and CLOSE, under
! replication: each must come out as the failure-free run writes it, and every
! replica must read back what it wrote. In DIR each rank writes, one step at a time
! (an all-reduce per step keeps the ranks in step):
!   log-R.txt     formatted sequential (STATUS='REPLACE'), one line per step, FLUSH
!   recs-R.bin    unformatted direct access (RECL=64): a record per step, record 1
!                 rewritten every step, both read back
!   append-R.txt  an existing file (the test makes it), POSITION='APPEND', opened and
!                 closed every step
!   and a SCRATCH file, written and read back at the end.
! It prints a checksum of all it read. Arguments: DIR STEPS WORK_MS.
program files
  use mpi
  use iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function usleep(us) bind(c, name='usleep')
      import c_int
      integer(c_int), value :: us
    end function
  end interface
  integer :: ierr, rank, steps, work_ms, step, i, ulog, urec, uapp, uscr, lines, ios
  integer(kind=8) :: mine, total, chk
  integer :: rec(16), back(16)
  character(len=1024) :: dir, arg, logp, recp, appp
  character(len=200) :: line

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, dir)
  call get_command_argument(2, arg)
  read (arg, *) steps
  call get_command_argument(3, arg)
  read (arg, *) work_ms
  write (logp, '(A,"/log-",I0,".txt")') trim(dir), rank
  write (recp, '(A,"/recs-",I0,".bin")') trim(dir), rank
  write (appp, '(A,"/append-",I0,".txt")') trim(dir), rank

  open (newunit=ulog, file=trim(logp), status='replace', action='write', form='formatted')
  open (newunit=urec, file=trim(recp), status='replace', access='direct', &
        form='unformatted', recl=64, action='readwrite')
  open (newunit=uscr, status='scratch', form='unformatted', access='sequential')
  chk = 0
  do step = 1, steps
    mine = rank + step
    call MPI_Allreduce(mine, total, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
    write (ulog, '(A,I0,A,I0,A,I0)') 'rank ', rank, ' step ', step, ' all ', total
    flush (ulog)
    do i = 1, 16
      rec(i) = rank * 31 + step * 7 + i
    end do
    write (urec, rec=step + 1) rec
    back = 0
    back(1) = step
    back(2) = rank
    write (urec, rec=1) back
    read (urec, rec=1) back
    call check(back(1) == step .and. back(2) == rank, 'record 1 read back')
    read (urec, rec=step + 1) back
    call check(all(back == rec), 'a record read back')
    chk = chk + int(sum(back), 8) * step
    open (newunit=uapp, file=trim(appp), status='old', position='append', action='write')
    write (uapp, '(A,I0,A,I0)') 'step ', step, ' all ', total
    close (uapp)
    write (uscr) rec
    if (work_ms > 0) ierr = usleep(int(work_ms * 1000, c_int))
  end do
  close (ulog)
  ! Everything written, read back through new units.
  open (newunit=ulog, file=trim(logp), status='old', action='read', form='formatted')
  lines = 0
  do
    read (ulog, '(A)', iostat=ios) line
    if (ios /= 0) exit
    lines = lines + 1
    chk = chk + len_trim(line) * lines
  end do
  close (ulog)
  call check(lines == steps, 'the log read back')
  rewind (uscr)
  do step = 1, steps
    read (uscr) back
    do i = 1, 16
      rec(i) = rank * 31 + step * 7 + i
    end do
    call check(all(back == rec), 'the scratch file read back')
  end do
  close (uscr)
  close (urec)
  print '(A,I0,A,I0,A,I0)', 'files: rank ', rank, ' steps ', steps, ' sum ', chk
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(A,I0,A,A)', 'rank ', rank, ': FAILED ', what
      stop 1
    end if
  end subroutine
end program files
