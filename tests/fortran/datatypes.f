! Derived datatypes from fixed-form Fortran 77 with include 'mpif.h'
! (MPI-3.1 chapter 4), built by volpexf77: MPI_TYPE_CONTIGUOUS,
! MPI_TYPE_VECTOR (a matrix row, strided in column-major order),
! MPI_TYPE_INDEXED, MPI_TYPE_CREATE_HVECTOR, MPI_TYPE_CREATE_STRUCT
! with MPI_GET_ADDRESS and MPI_BOTTOM, MPI_TYPE_CREATE_RESIZED,
! MPI_TYPE_SIZE, MPI_TYPE_GET_EXTENT and the MPI-1 MPI_TYPE_EXTENT,
! MPI_TYPE_STRUCT, MPI_PACK / MPI_UNPACK. Every rank sends to the next
! and checks what the previous one sent; stops with code 1 on a wrong
! value.
      program datatypes
      implicit none
      include 'mpif.h'
      integer ierr, rank, size, next, prev, i, j, k
      integer rowt, contt, idxt, hvt, st, rst, old, sz, ext1
      integer status(MPI_STATUS_SIZE)
      integer lens(3), disps(3), types(2), blens(2), odisp(2)
      integer(kind=MPI_ADDRESS_KIND) lb, ext, addrs(2), stride
      double precision a(4,5), b(4,5), x(10), y(10), d, e
      integer n, m, pos
      character*64 packed
      common /chk/ rank

      call mpi_init(ierr)
      call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
      call mpi_comm_size(MPI_COMM_WORLD, size, ierr)
      next = mod(rank + 1, size)
      prev = mod(rank + size - 1, size)

! Row 2 of a 4x5 matrix: 5 elements 4 apart.
      call mpi_type_vector(5, 1, 4, MPI_DOUBLE_PRECISION, rowt, ierr)
      call mpi_type_commit(rowt, ierr)
      call mpi_type_size(rowt, sz, ierr)
      call check(sz .eq. 40, 'vector size')
      call mpi_type_get_extent(rowt, lb, ext, ierr)
      call check(lb .eq. 0 .and. ext .eq. 17 * 8, 'vector extent')
      do j = 1, 5
         do i = 1, 4
            a(i, j) = rank * 100 + i * 10 + j
            b(i, j) = -1
         end do
      end do
      call mpi_sendrecv(a(2, 1), 1, rowt, next, 1, b(3, 1), 1, rowt,
     &                  prev, 1, MPI_COMM_WORLD, status, ierr)
      do j = 1, 5
         call check(b(3, j) .eq. prev * 100 + 20 + j, 'row')
         call check(b(2, j) .eq. -1, 'row untouched')
      end do

! Contiguous and indexed.
      call mpi_type_contiguous(3, MPI_DOUBLE_PRECISION, contt, ierr)
      call mpi_type_commit(contt, ierr)
      call mpi_type_extent(contt, ext1, ierr)
      call check(ext1 .eq. 24, 'type_extent')
      lens(1) = 2
      lens(2) = 1
      lens(3) = 3
      disps(1) = 0
      disps(2) = 4
      disps(3) = 7
      call mpi_type_indexed(3, lens, disps, MPI_DOUBLE_PRECISION, idxt,
     &                      ierr)
      call mpi_type_commit(idxt, ierr)
      do i = 1, 10
         x(i) = rank + i * 0.25d0
         y(i) = -1
      end do
      call mpi_sendrecv(x, 1, idxt, next, 2, y, 1, idxt, prev, 2,
     &                  MPI_COMM_WORLD, status, ierr)
      call mpi_get_count(status, idxt, n, ierr)
      call check(n .eq. 1, 'get_count of indexed')
      call mpi_get_elements(status, idxt, n, ierr)
      call check(n .eq. 6, 'get_elements of indexed')
      do i = 1, 10
         if (i .eq. 3 .or. i .eq. 4 .or. i .eq. 6 .or. i .eq. 7) then
            call check(y(i) .eq. -1, 'indexed gap')
         else
            call check(y(i) .eq. prev + i * 0.25d0, 'indexed value')
         end if
      end do
      call mpi_sendrecv(x, 2, contt, next, 3, y, 6,
     &     MPI_DOUBLE_PRECISION, prev, 3, MPI_COMM_WORLD, status, ierr)
      call check(y(6) .eq. prev + 1.5d0, 'contiguous')

! Hvector: column 1 and column 3 of the matrix (2 blocks of 4, 64 bytes
! apart).
      stride = 64
      call mpi_type_create_hvector(2, 4, stride, MPI_DOUBLE_PRECISION,
     &                             hvt, ierr)
      call mpi_type_commit(hvt, ierr)
      call mpi_sendrecv(a, 1, hvt, next, 4, b, 1, hvt, prev, 4,
     &                  MPI_COMM_WORLD, status, ierr)
      call check(b(4, 3) .eq. prev * 100 + 43, 'hvector')

! A struct of two separate variables, addressed from MPI_BOTTOM.
      d = rank * 2.5d0
      k = rank + 7
      call mpi_get_address(d, addrs(1), ierr)
      call mpi_get_address(k, addrs(2), ierr)
      blens(1) = 1
      blens(2) = 1
      types(1) = MPI_DOUBLE_PRECISION
      types(2) = MPI_INTEGER
      call mpi_type_create_struct(2, blens, addrs, types, st, ierr)
      call mpi_type_commit(st, ierr)
      call mpi_send(MPI_BOTTOM, 1, st, next, 5, MPI_COMM_WORLD, ierr)
      call check(ierr .eq. MPI_SUCCESS, 'send from MPI_BOTTOM')
      call mpi_recv(MPI_BOTTOM, 1, st, prev, 5, MPI_COMM_WORLD, status,
     &              ierr)
      call check(d .eq. prev * 2.5d0 .and. k .eq. prev + 7,
     &           'struct from MPI_BOTTOM')

! The MPI-1 struct with INTEGER displacements, resized to 16 bytes.
      odisp(1) = 0
      odisp(2) = 8
      call mpi_type_struct(2, blens, odisp, types, old, ierr)
      lb = 0
      ext = 16
      call mpi_type_create_resized(old, lb, ext, rst, ierr)
      call mpi_type_commit(rst, ierr)
      call mpi_type_get_extent(rst, lb, ext, ierr)
      call check(ext .eq. 16, 'resized extent')
      call mpi_type_size(rst, sz, ierr)
      call check(sz .eq. 12, 'struct size')

! Pack an integer and a double, unpack them on the next rank.
      pos = 0
      m = rank * 3
      e = rank + 0.5d0
      call mpi_pack(m, 1, MPI_INTEGER, packed, 64, pos, MPI_COMM_WORLD,
     &              ierr)
      call mpi_pack(e, 1, MPI_DOUBLE_PRECISION, packed, 64, pos,
     &              MPI_COMM_WORLD, ierr)
      call mpi_sendrecv_replace(packed, 64, MPI_PACKED, next, 6, prev,
     &     6, MPI_COMM_WORLD, status, ierr)
      pos = 0
      call mpi_unpack(packed, 64, pos, m, 1, MPI_INTEGER,
     &                MPI_COMM_WORLD, ierr)
      call mpi_unpack(packed, 64, pos, e, 1, MPI_DOUBLE_PRECISION,
     &                MPI_COMM_WORLD, ierr)
      call check(m .eq. prev * 3 .and. e .eq. prev + 0.5d0, 'pack')

      call mpi_type_free(rowt, ierr)
      call mpi_type_free(contt, ierr)
      call mpi_type_free(idxt, ierr)
      call mpi_type_free(hvt, ierr)
      call mpi_type_free(st, ierr)
      call mpi_type_free(old, ierr)
      call mpi_type_free(rst, ierr)
      call check(rst .eq. MPI_DATATYPE_NULL, 'type_free')
      call mpi_barrier(MPI_COMM_WORLD, ierr)
      if (rank .eq. 0) write (*, '(a,i0)') 'datatypes: ok size ', size
      call mpi_finalize(ierr)
      end

      subroutine check(ok, what)
      implicit none
      logical ok
      character*(*) what
      integer rank
      common /chk/ rank
      if (.not. ok) then
         write (*, '(a,i0,a,a)') 'rank ', rank, ': FAILED ', what
         call flush(6)
         call exit(1)
      end if
      end
