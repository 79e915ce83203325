! Process topologies and neighbourhood collectives from Fortran (MPI-3.1
! chapter 7): MPI_GRAPH_CREATE and its queries (MPI_TOPO_TEST,
! MPI_GRAPHDIMS_GET, MPI_GRAPH_GET, MPI_GRAPH_NEIGHBORS(_COUNT)),
! MPI_DIST_GRAPH_CREATE_ADJACENT with weights and with MPI_UNWEIGHTED,
! MPI_DIST_GRAPH_CREATE from edges rank 0 names (MPI_WEIGHTS_EMPTY elsewhere),
! MPI_DIST_GRAPH_NEIGHBORS(_COUNT); MPI_NEIGHBOR_ALLGATHER, MPI_NEIGHBOR_ALLTOALL
! and their immediate forms on a periodic Cartesian ring (whose neighbour below
! and above are one rank on 1 or 2 ranks), a graph ring and a distributed
! graph. Each rank checks its results and stops with code 1 on a wrong one;
! rank 0 prints a checksum line. Arguments: [ROUNDS [WORK_MS]] (3, 0).
module coll_topo_check
  implicit none
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(a)', 'FAILED: ' // what
      stop 1
    end if
  end subroutine

  ! What rank s sends in its block j (1-based).
  integer function val(s, j, round)
    integer, intent(in) :: s, j, round
    val = 1000 * s + 10 * j + round + 1
  end function
end module coll_topo_check

program coll_topo
  use mpi
  use coll_topo_check
  use iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function usleep(us) bind(c, name='usleep')
      import c_int
      integer(c_int), value :: us
    end function
  end interface
  integer, parameter :: maxn = 8
  integer :: ierr, rank, size, round, rounds, work_ms, i, j, req, kind, comm
  integer :: below, above, left, right, nn, ne, cnt, indeg, outdeg, weighted
  integer :: idx(maxn), edges(2 * maxn), gi(maxn), ge(2 * maxn), nb(2)
  integer :: src(2), dst(2), sw(2), dw(2), s2(2), d2(2), sw2(2), dw2(2)
  integer :: nodes(maxn), degrees(maxn), targets(2 * maxn), weights(2 * maxn)
  integer :: one, sendv(2), recv(2), recv2(2), dims(1)
  logical :: periods(1)
  double precision :: checksum, allsum
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
  checksum = 0
  left = mod(rank + size - 1, size)
  right = mod(rank + 1, size)

  do round = 0, rounds - 1
    ! A periodic ring: receive block 1 from the rank below (what it sent up,
    ! its block 2), block 2 from the rank above (its block 1).
    dims(1) = size
    periods(1) = .true.
    call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., comm, ierr)
    call MPI_Cart_shift(comm, 0, 1, below, above, ierr)
    sendv = [val(rank, 1, round), val(rank, 2, round)]
    one = val(rank, 1, round)
    call MPI_Neighbor_allgather(one, 1, MPI_INTEGER, recv, 1, MPI_INTEGER, comm, ierr)
    call check(recv(1) == val(below, 1, round) .and. recv(2) == val(above, 1, round), &
               'MPI_NEIGHBOR_ALLGATHER on a ring')
    call MPI_Neighbor_alltoall(sendv, 1, MPI_INTEGER, recv, 1, MPI_INTEGER, comm, ierr)
    call check(recv(1) == val(below, 2, round) .and. recv(2) == val(above, 1, round), &
               'MPI_NEIGHBOR_ALLTOALL on a ring')
    call MPI_Ineighbor_alltoall(sendv, 1, MPI_INTEGER, recv2, 1, MPI_INTEGER, comm, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(recv == recv2), 'MPI_INEIGHBOR_ALLTOALL on a ring')
    checksum = checksum + sum(recv)
    call MPI_Comm_free(comm, ierr)

    ! A graph ring: rank i's neighbours are i + 1 and i - 1.
    do i = 1, size
      edges(2 * i - 1) = mod(i, size)
      edges(2 * i) = mod(i - 2 + size, size)
      idx(i) = 2 * i
    end do
    call MPI_Graph_create(MPI_COMM_WORLD, size, idx, edges, .false., comm, ierr)
    call MPI_Topo_test(comm, kind, ierr)
    call check(kind == MPI_GRAPH, 'MPI_TOPO_TEST of a graph')
    call MPI_Graphdims_get(comm, nn, ne, ierr)
    call check(nn == size .and. ne == 2 * size, 'MPI_GRAPHDIMS_GET')
    call MPI_Graph_get(comm, maxn, 2 * maxn, gi, ge, ierr)
    call check(all(gi(1:size) == idx(1:size)) .and. all(ge(1:2 * size) == edges(1:2 * size)), &
               'MPI_GRAPH_GET')
    call MPI_Graph_neighbors_count(comm, rank, cnt, ierr)
    call check(cnt == 2, 'MPI_GRAPH_NEIGHBORS_COUNT')
    call MPI_Graph_neighbors(comm, rank, 2, nb, ierr)
    call check(nb(1) == right .and. nb(2) == left, 'MPI_GRAPH_NEIGHBORS')
    ! Both ends list each edge: the k-th time r lists s pairs with s's k-th of r.
    call MPI_Ineighbor_allgather(one, 1, MPI_INTEGER, recv, 1, MPI_INTEGER, comm, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(recv(1) == val(right, 1, round) .and. recv(2) == val(left, 1, round), &
               'MPI_INEIGHBOR_ALLGATHER on a graph')
    call MPI_Neighbor_alltoall(sendv, 1, MPI_INTEGER, recv, 1, MPI_INTEGER, comm, ierr)
    if (size > 2) then
      ! right lists rank as its second neighbour, left as its first.
      call check(recv(1) == val(right, 2, round) .and. recv(2) == val(left, 1, round), &
                 'MPI_NEIGHBOR_ALLTOALL on a graph')
    end if
    checksum = checksum + sum(recv)
    call MPI_Comm_free(comm, ierr)

    ! A distributed graph: from i - 1 and i - 2, to i + 1 and i + 2, weighted.
    src = [mod(rank - 1 + size, size), mod(rank - 2 + 2 * size, size)]
    dst = [mod(rank + 1, size), mod(rank + 2, size)]
    sw = [10 * rank, 10 * rank + 1]
    dw = [10 * rank + 2, 10 * rank + 3]
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, &
                                        MPI_INFO_NULL, .false., comm, ierr)
    call MPI_Topo_test(comm, kind, ierr)
    call check(kind == MPI_DIST_GRAPH, 'MPI_TOPO_TEST of a distributed graph')
    call MPI_Dist_graph_neighbors_count(comm, indeg, outdeg, weighted, ierr)
    call check(indeg == 2 .and. outdeg == 2 .and. weighted /= 0, 'MPI_DIST_GRAPH_NEIGHBORS_COUNT')
    call MPI_Dist_graph_neighbors(comm, 2, s2, sw2, 2, d2, dw2, ierr)
    call check(all(s2 == src) .and. all(d2 == dst) .and. all(sw2 == sw) .and. all(dw2 == dw), &
               'MPI_DIST_GRAPH_NEIGHBORS')
    call MPI_Neighbor_alltoall(sendv, 1, MPI_INTEGER, recv, 1, MPI_INTEGER, comm, ierr)
    if (size > 2) then
      ! i - 1 sent its block 1 here, i - 2 its block 2.
      call check(recv(1) == val(src(1), 1, round) .and. recv(2) == val(src(2), 2, round), &
                 'MPI_NEIGHBOR_ALLTOALL on a distributed graph')
    end if
    checksum = checksum + sum(recv)
    call MPI_Comm_free(comm, ierr)
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, &
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, .true., comm, ierr)
    call MPI_Dist_graph_neighbors_count(comm, indeg, outdeg, weighted, ierr)
    call check(weighted == 0, 'an unweighted distributed graph')
    call MPI_Dist_graph_neighbors(comm, 2, s2, MPI_UNWEIGHTED, 2, d2, MPI_UNWEIGHTED, ierr)
    call check(all(s2 == src) .and. all(d2 == dst), 'MPI_DIST_GRAPH_NEIGHBORS unweighted')
    call MPI_Comm_free(comm, ierr)

    ! Rank 0 names every edge s -> s + 1 and s -> s + 2.
    do i = 1, size
      nodes(i) = i - 1
      degrees(i) = 2
      targets(2 * i - 1) = mod(i, size)
      targets(2 * i) = mod(i + 1, size)
      weights(2 * i - 1) = 7 * (i - 1)
      weights(2 * i) = 7 * (i - 1) + 1
    end do
    if (rank == 0) then
      call MPI_Dist_graph_create(MPI_COMM_WORLD, size, nodes, degrees, targets, weights, &
                                 MPI_INFO_NULL, .false., comm, ierr)
    else
      call MPI_Dist_graph_create(MPI_COMM_WORLD, 0, nodes, degrees, targets, &
                                 MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, .false., comm, ierr)
    end if
    call MPI_Dist_graph_neighbors_count(comm, indeg, outdeg, weighted, ierr)
    call check(indeg == 2 .and. outdeg == 2 .and. weighted /= 0, 'MPI_DIST_GRAPH_CREATE degrees')
    call MPI_Dist_graph_neighbors(comm, 2, s2, sw2, 2, d2, dw2, ierr)
    call check(all(d2 == dst) .and. dw2(1) == 7 * rank .and. dw2(2) == 7 * rank + 1, &
               'MPI_DIST_GRAPH_CREATE out-edges')
    j = 0
    do i = 1, 2 * size
      if (targets(i) == rank .and. j < 2) then
        j = j + 1
        call check(s2(j) == (i - 1) / 2 .and. sw2(j) == weights(i), 'MPI_DIST_GRAPH_CREATE in-edges')
      end if
    end do
    call MPI_Neighbor_allgather(one, 1, MPI_INTEGER, recv, 1, MPI_INTEGER, comm, ierr)
    call check(recv(1) == val(s2(1), 1, round) .and. recv(2) == val(s2(2), 1, round), &
               'MPI_NEIGHBOR_ALLGATHER on a created distributed graph')
    checksum = checksum + sum(recv)
    call MPI_Comm_free(comm, ierr)
    if (work_ms > 0) ierr = usleep(int(work_ms * 1000, c_int))
  end do

  call MPI_Reduce(checksum, allsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a, f0.1)', 'coll_topo: ok size ', size, ' checksum ', allsum
  call MPI_Finalize(ierr)
end program coll_topo
