! Communicators from Fortran (MPI-3.1 chapters 6, 8 and 9 through `use mpi`):
! the routines that take the program's procedures or strings. Attribute keys
! with Fortran copy and delete subroutines (MPI_COMM_CREATE_KEYVAL, values
! INTEGER(KIND=MPI_ADDRESS_KIND)), the predefined MPI_COMM_DUP_FN and
! MPI_COMM_NULL_DELETE_FN, MPI-1's MPI_KEYVAL_CREATE with MPI_DUP_FN (INTEGER
! values); names; the program's error class, code and string
! (MPI_ADD_ERROR_STRING, MPI_ERROR_STRING); a Fortran error handler called by
! MPI_COMM_CALL_ERRHANDLER; info keys and values (delete, nthkey, valuelen);
! MPI_COMM_CREATE_GROUP, MPI_COMM_SPLIT_TYPE, MPI_INTERCOMM_CREATE and
! MPI_INTERCOMM_MERGE; MPI_ALLOC_MEM and MPI_FREE_MEM. Arguments: [ROUNDS [WORK_MS]] (3, 0): WORK_MS of
! computing (a busy wait) per round. Rank 0 prints a checksum.
module callbacks
  use mpi
  implicit none
  integer :: copies = 0, deletes = 0, last_deleted = 0, handler_calls = 0
  integer :: handler_code = 0
contains
  subroutine copy_twice(oldcomm, keyval, extra, val_in, val_out, flag, ierr)
    integer :: oldcomm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra, val_in, val_out
    logical :: flag
    copies = copies + 1
    val_out = 2 * val_in + extra
    flag = .true.
    ierr = MPI_SUCCESS
  end subroutine

  subroutine count_delete(comm, keyval, val, extra, ierr)
    integer :: comm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    deletes = deletes + 1
    last_deleted = int(val)
    ierr = MPI_SUCCESS
  end subroutine

  subroutine on_error(comm, code)
    integer :: comm, code
    handler_calls = handler_calls + 1
    handler_code = code
  end subroutine
end module callbacks

program comm_fortran
  use mpi
  use callbacks
  use iso_c_binding
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: bytes, addr
  integer, pointer :: mem(:)
  integer :: ierr, rank, size, key, dupkey, oldkey, c, d, eh, cls, code, len
  integer :: round, rounds, half, ic, merged, mrank, s, world, g, n, i
  integer :: info, nkeys, vlen, sumv, shared
  integer :: members(64)
  integer(kind=MPI_ADDRESS_KIND) :: v, extra
  integer :: v1
  logical :: flag
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_ERROR_STRING) :: text
  character(len=MPI_MAX_INFO_KEY) :: k
  character(len=MPI_MAX_INFO_VAL) :: val
  character(len=16) :: arg
  integer :: checksum, all, work_ms
  double precision :: t0

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  rounds = 3
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) rounds
  end if
  work_ms = 0
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) work_ms
  end if
  checksum = 0

  ! Attribute keys with Fortran procedures.
  extra = 5
  call MPI_Comm_create_keyval(copy_twice, count_delete, key, extra, ierr)
  call check(ierr == MPI_SUCCESS, 'create_keyval')
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &
                              dupkey, extra, ierr)
  call MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, oldkey, 0, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, c, ierr)
  v = 100 + rank
  call MPI_Comm_set_attr(c, key, v, ierr)
  v = 7
  call MPI_Comm_set_attr(c, dupkey, v, ierr)
  call MPI_Attr_put(c, oldkey, 42, ierr)
  call MPI_Comm_dup(c, d, ierr)
  call check(copies == 1, 'copy called once')
  call MPI_Comm_get_attr(d, key, v, flag, ierr)
  call check(flag .and. v == 2 * (100 + rank) + 5, 'copied value')
  call MPI_Comm_get_attr(d, dupkey, v, flag, ierr)
  call check(flag .and. v == 7, 'MPI_COMM_DUP_FN')
  call MPI_Attr_get(d, oldkey, v1, flag, ierr)
  call check(flag .and. v1 == 42, 'MPI_DUP_FN')
  v = 9
  call MPI_Comm_set_attr(d, key, v, ierr)
  call check(deletes == 1 .and. last_deleted == 2 * (100 + rank) + 5, &
             'delete on replace')
  call MPI_Comm_free(d, ierr)
  call check(deletes == 2 .and. last_deleted == 9, 'delete on free')
  call MPI_Comm_delete_attr(c, key, ierr)
  call check(deletes == 3 .and. last_deleted == 100 + rank, 'delete_attr')
  call MPI_Comm_free_keyval(key, ierr)
  call check(key == MPI_KEYVAL_INVALID, 'free_keyval')
  call MPI_Keyval_free(oldkey, ierr)

  ! Names.
  call MPI_Comm_set_name(c, 'fortran copy', ierr)
  call MPI_Comm_get_name(c, name, len, ierr)
  call check(name == 'fortran copy' .and. len == 12, 'name')
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, len, ierr)
  call check(name == 'MPI_COMM_WORLD', 'world name')

  ! The program's error class, code and string, and its error handler.
  call MPI_Add_error_class(cls, ierr)
  call MPI_Add_error_code(cls, code, ierr)
  call MPI_Add_error_string(code, 'made in Fortran', ierr)
  call check(ierr == MPI_SUCCESS, 'add_error_string')
  call MPI_Error_string(code, text, len, ierr)
  call check(text == 'made in Fortran' .and. len == 15, 'error_string')
  call MPI_Error_class(code, s, ierr)
  call check(s == cls, 'error_class')
  call MPI_Comm_create_errhandler(on_error, eh, ierr)
  call MPI_Comm_set_errhandler(c, eh, ierr)
  call MPI_Comm_call_errhandler(c, code, ierr)
  call check(handler_calls == 1 .and. handler_code == code, 'handler')
  call MPI_Errhandler_free(eh, ierr)
  call MPI_Comm_free(c, ierr)

  ! Memory from the library, used through a Fortran pointer.
  bytes = 40
  call MPI_Alloc_mem(bytes, MPI_INFO_NULL, addr, ierr)
  call check(ierr == MPI_SUCCESS .and. addr /= 0, 'alloc_mem')
  call c_f_pointer(transfer(addr, c_null_ptr), mem, [10])
  mem = rank
  call check(sum(mem) == 10 * rank, 'allocated memory')
  call MPI_Free_mem(mem, ierr)
  call check(ierr == MPI_SUCCESS, 'free_mem')

  ! Info.
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'first', 'one', ierr)
  call MPI_Info_set(info, 'second', 'value two', ierr)
  call MPI_Info_get_nkeys(info, nkeys, ierr)
  call check(nkeys == 2, 'nkeys')
  call MPI_Info_get_nthkey(info, 1, k, ierr)
  call check(k == 'second', 'nthkey')
  call MPI_Info_get_valuelen(info, 'second', vlen, flag, ierr)
  call check(flag .and. vlen == 9, 'valuelen')
  call MPI_Info_delete(info, 'first', ierr)
  call MPI_Info_get(info, 'first', MPI_MAX_INFO_VAL, val, flag, ierr)
  call check(.not. flag, 'deleted')
  call MPI_Info_get(info, 'second', MPI_MAX_INFO_VAL, val, flag, ierr)
  call check(flag .and. val == 'value two', 'get')
  call MPI_Info_free(info, ierr)

  call MPI_Comm_group(MPI_COMM_WORLD, world, ierr)
  do round = 1, rounds
    ! Create over the ranks of my parity.
    n = 0
    do i = mod(rank, 2), size - 1, 2
      n = n + 1
      members(n) = i
    end do
    call MPI_Group_incl(world, n, members, g, ierr)
    call MPI_Comm_create_group(MPI_COMM_WORLD, g, mod(rank, 2), c, ierr)
    call MPI_Allreduce(rank, sumv, 1, MPI_INTEGER, MPI_SUM, c, ierr)
    checksum = checksum + sumv * round
    call MPI_Comm_free(c, ierr)
    call MPI_Group_free(g, ierr)

    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, &
                             MPI_INFO_NULL, c, ierr)
    call MPI_Comm_size(c, shared, ierr)
    call check(shared == size, 'split_type')
    call MPI_Comm_free(c, ierr)

    if (size >= 2) then
      call MPI_Comm_split(MPI_COMM_WORLD, rank / ((size + 1) / 2), rank, &
                          half, ierr)
      if (rank < (size + 1) / 2) then
        call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, (size + 1) / 2, &
                                  round, ic, ierr)
      else
        call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 0, round, ic, ierr)
      end if
      call check(ierr == MPI_SUCCESS, 'intercomm_create')
      call MPI_Comm_test_inter(ic, flag, ierr)
      call check(flag, 'test_inter')
      call MPI_Allreduce(rank, sumv, 1, MPI_INTEGER, MPI_SUM, ic, ierr)
      checksum = checksum + sumv
      call MPI_Intercomm_merge(ic, rank < (size + 1) / 2, merged, ierr)
      call MPI_Comm_rank(merged, mrank, ierr)
      if (rank < (size + 1) / 2) then
        call check(mrank == rank + size - (size + 1) / 2, 'merged rank')
      else
        call check(mrank == rank - (size + 1) / 2, 'merged rank')
      end if
      call MPI_Comm_free(merged, ierr)
      call MPI_Comm_free(ic, ierr)
      call MPI_Comm_free(half, ierr)
    end if
    t0 = MPI_Wtime()
    do while (MPI_Wtime() - t0 < work_ms / 1000d0)
    end do
  end do
  call MPI_Group_free(world, ierr)

  checksum = checksum + copies + deletes
  call MPI_Reduce(checksum, all, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, &
                  ierr)
  if (rank == 0) then
    write (*, '(a,i0,a,i0)') 'comm_fortran: ok size ', size, ' checksum ', all
  end if
  call MPI_Comm_free_keyval(dupkey, ierr)
  call MPI_Finalize(ierr)

contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write (*, '(a,i0,a,a)') 'rank ', rank, ': FAILED ', what
      stop 1
    end if
  end subroutine
end program comm_fortran
