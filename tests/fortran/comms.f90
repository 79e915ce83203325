! Communicators, groups and Cartesian topologies from Fortran (MPI-3.1
! chapters 6 and 7): MPI_COMM_DUP, MPI_COMM_SPLIT, MPI_COMM_CREATE from a
! group, group set operations and MPI_GROUP_TRANSLATE_RANKS, MPI_COMM_COMPARE,
! MPI_COMM_FREE, names, MPI_COMM_GET_ATTR(MPI_TAG_UB),
! MPI_GET_PROCESSOR_NAME, info objects; MPI_DIMS_CREATE, MPI_CART_CREATE (LOGICAL periods),
! MPI_CART_SHIFT, MPI_CART_COORDS, MPI_CART_RANK, MPI_CART_GET, MPI_CART_SUB.
! Each rank checks every result and stops with code 1 on a wrong one.
program comms
  use mpi
  implicit none
  integer :: ierr, rank, size, dup, half, hrank, hsize, res, sum, world_group
  integer :: evens, odds, both, none, even_comm, n, i, r, k, len
  integer :: dims(2), coords(2), cart, src, dst, row, rsize, trans(1), one(1)
  logical :: periods(2), remain(2), pget(2), flag
  integer(kind=MPI_ADDRESS_KIND) :: tag_ub
  character(len=MPI_MAX_PROCESSOR_NAME) :: host
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=16) :: value
  integer :: info
  integer, allocatable :: ranks(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)

  ! Dup: congruent, its own context.
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_compare(MPI_COMM_WORLD, dup, res, ierr)
  call check(res == MPI_CONGRUENT, 'dup congruent')
  call MPI_Allreduce(1, sum, 1, MPI_INTEGER, MPI_SUM, dup, ierr)
  call check(sum == size, 'allreduce on dup')
  call MPI_Comm_set_name(dup, 'my dup', ierr)
  call MPI_Comm_get_name(dup, name, len, ierr)
  call check(name == 'my dup' .and. len == 6, 'comm name')
  call MPI_Comm_free(dup, ierr)
  call check(dup == MPI_COMM_NULL, 'comm_free')

  ! Split by parity, ordered by descending rank.
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half, ierr)
  call MPI_Comm_rank(half, hrank, ierr)
  call MPI_Comm_size(half, hsize, ierr)
  call check(hsize == (size + 1 - mod(rank, 2)) / 2, 'split size')
  call MPI_Allreduce(rank, sum, 1, MPI_INTEGER, MPI_MAX, half, ierr)
  call check(hrank == (sum - rank) / 2, 'split order')
  call MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, n, ierr)
  call check(n == MPI_COMM_NULL, 'split undefined')

  ! Groups: evens and odds of the world.
  call MPI_Comm_group(MPI_COMM_WORLD, world_group, ierr)
  n = (size + 1) / 2
  allocate (ranks(n))
  ranks = (/ (2 * i, i = 0, n - 1) /)
  call MPI_Group_incl(world_group, n, ranks, evens, ierr)
  call MPI_Group_excl(world_group, n, ranks, odds, ierr)
  call MPI_Group_size(evens, k, ierr)
  call check(k == n, 'group_incl size')
  call MPI_Group_union(evens, odds, both, ierr)
  call MPI_Group_compare(both, world_group, res, ierr)
  call check(res == MPI_SIMILAR .or. res == MPI_IDENT, 'union')
  call MPI_Group_intersection(evens, odds, none, ierr)
  call MPI_Group_size(none, k, ierr)
  call check(k == 0, 'intersection')
  call MPI_Group_difference(world_group, odds, r, ierr)
  call MPI_Group_compare(r, evens, res, ierr)
  call check(res == MPI_IDENT, 'difference')
  call MPI_Group_free(r, ierr)
  one(1) = 0
  call MPI_Group_translate_ranks(evens, 1, one, world_group, trans, ierr)
  call check(trans(1) == 0, 'translate_ranks')
  call MPI_Comm_create(MPI_COMM_WORLD, evens, even_comm, ierr)
  if (mod(rank, 2) == 0) then
    call MPI_Comm_rank(even_comm, k, ierr)
    call check(k == rank / 2, 'comm_create rank')
    call MPI_Comm_free(even_comm, ierr)
  else
    call check(even_comm == MPI_COMM_NULL, 'comm_create outside')
  end if
  call MPI_Group_free(evens, ierr)
  call MPI_Group_free(odds, ierr)
  call MPI_Group_free(both, ierr)
  call MPI_Group_free(none, ierr)
  call MPI_Group_free(world_group, ierr)
  call check(world_group == MPI_GROUP_NULL, 'group_free')

  ! Attributes and the processor name.
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tag_ub, flag, ierr)
  call check(flag .and. tag_ub >= 32767, 'tag_ub')
  call MPI_Get_processor_name(host, len, ierr)
  call check(len > 0 .and. len <= MPI_MAX_PROCESSOR_NAME .and. host(len + 1:) == '', &
             'processor name')

  ! Info objects: Fortran strings in and out.
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'striping_unit  ', 'big', ierr)
  value = 'untouched'
  call MPI_Info_get(info, 'nokey', 16, value, flag, ierr)
  call check(.not. flag .and. value == 'untouched', 'info_get of a missing key')
  call MPI_Info_get(info, 'striping_unit', 16, value, flag, ierr)
  call check(flag .and. value == 'big', 'info_get')
  call MPI_Info_free(info, ierr)
  call check(info == MPI_INFO_NULL, 'info_free')

  ! A periodic 2-D grid over every rank.
  dims = 0
  call MPI_Dims_create(size, 2, dims, ierr)
  call check(dims(1) * dims(2) == size .and. dims(1) >= dims(2), 'dims_create')
  periods = (/ .true., .false. /)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call MPI_Cart_coords(cart, rank, 2, coords, ierr)
  call MPI_Cart_rank(cart, coords, k, ierr)
  call check(k == rank, 'cart_rank of cart_coords')
  call MPI_Cart_get(cart, 2, dims, pget, coords, ierr)
  call check(pget(1) .and. .not. pget(2), 'cart_get periods')
  call MPI_Cart_shift(cart, 0, 1, src, dst, ierr)
  call check(src /= MPI_PROC_NULL .and. dst /= MPI_PROC_NULL, 'periodic shift')
  ! Send my rank along dimension 0; the one before me in it sent its own.
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, dst, 1, k, 1, MPI_INTEGER, src, 1, cart, &
                    MPI_STATUS_IGNORE, ierr)
  call check(k == src, 'shift exchange')
  call MPI_Cart_shift(cart, 1, 1, src, dst, ierr)
  if (coords(2) == 0) call check(src == MPI_PROC_NULL, 'open edge')
  remain = (/ .false., .true. /)
  call MPI_Cart_sub(cart, remain, row, ierr)
  call MPI_Comm_size(row, rsize, ierr)
  call check(rsize == dims(2), 'cart_sub size')
  call MPI_Allreduce(1, k, 1, MPI_INTEGER, MPI_SUM, row, ierr)
  call check(k == dims(2), 'cart_sub allreduce')
  call MPI_Comm_free(row, ierr)
  call MPI_Comm_free(cart, ierr)
  call MPI_Comm_free(half, ierr)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0)', 'comms: ok size ', size
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

end program comms
