! One call or more of each family of MPI calls the timer interposer wraps, from Fortran through
! `use mpi` (Open MPI's Fortran bindings call the C library's PMPI_ functions directly, so the
! interposer wraps the Fortran symbols too). On 2 ranks; the test (plugins/mpi_timer/tests/
! families.rs) checks the calls and their bytes in the logs.
! Build: mpifort -O1 -o families_f families.f90     Run: mpirun -np 2 ./families_f SCRATCH_DIR
program families
  use mpi
  implicit none
  integer, parameter :: n = 1000
  double precision :: a(4 * n), b(64 * n), result(n)
  integer :: rank, nranks, peer, ierr, i, request, requests(4), ring, win, fh
  integer :: status(MPI_STATUS_SIZE), counts(2), displs(2)
  integer(kind=MPI_ADDRESS_KIND) :: window_bytes, target
  integer(kind=MPI_OFFSET_KIND) :: offset
  character(len=4096) :: dir

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  if (nranks /= 2 .or. command_argument_count() /= 1) then
    if (rank == 0) then
      print *, 'usage: mpirun -np 2 families_f SCRATCH_DIR'
      ! Standard output is buffered: what is not flushed before MPI_Abort kills the rank is lost.
      flush(6)
    end if
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  call get_command_argument(1, dir)
  peer = 1 - rank
  do i = 1, 4 * n
    a(i) = mod(i - 1, n)
  end do
  b = 0

  ! point-to-point
  if (rank == 0) then
    call MPI_Send(a, n, MPI_DOUBLE_PRECISION, 1, 1, MPI_COMM_WORLD, ierr)
    call MPI_Ssend(a, n, MPI_DOUBLE_PRECISION, 1, 2, MPI_COMM_WORLD, ierr)
  else
    call MPI_Recv(b, n, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD, status, ierr)
    call MPI_Recv(b, n, MPI_DOUBLE_PRECISION, 0, 2, MPI_COMM_WORLD, status, ierr)
    if (b(n) /= n - 1) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  end if
  call MPI_Sendrecv(a, n, MPI_DOUBLE_PRECISION, peer, 3, b, n, MPI_DOUBLE_PRECISION, peer, 3, &
                    MPI_COMM_WORLD, status, ierr)
  call MPI_Irecv(b, n, MPI_DOUBLE_PRECISION, peer, 4, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_Isend(a, n, MPI_DOUBLE_PRECISION, peer, 4, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)

  ! persistent requests and probes
  call MPI_Recv_init(b, n, MPI_DOUBLE_PRECISION, peer, 5, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_Send_init(a, n, MPI_DOUBLE_PRECISION, peer, 5, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_Startall(2, requests, ierr)
  call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
  call MPI_Request_free(requests(1), ierr)
  call MPI_Request_free(requests(2), ierr)
  if (rank == 0) then
    call MPI_Send(a, n, MPI_DOUBLE_PRECISION, 1, 6, MPI_COMM_WORLD, ierr)
  else
    call MPI_Probe(0, 6, MPI_COMM_WORLD, status, ierr)
    call MPI_Recv(b, n, MPI_DOUBLE_PRECISION, 0, 6, MPI_COMM_WORLD, status, ierr)
  end if

  ! collectives, their v forms, scans, reduce-scatter, non-blocking
  counts = n
  displs = (/ 0, n /)
  call MPI_Bcast(a, n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (b(4) /= 6) call MPI_Abort(MPI_COMM_WORLD, 4, ierr)
  call MPI_Gatherv(a, n, MPI_DOUBLE_PRECISION, b, counts, displs, MPI_DOUBLE_PRECISION, 0, &
                   MPI_COMM_WORLD, ierr)
  call MPI_Scatterv(a, counts, displs, MPI_DOUBLE_PRECISION, b, n, MPI_DOUBLE_PRECISION, 0, &
                    MPI_COMM_WORLD, ierr)
  call MPI_Allgatherv(a, n, MPI_DOUBLE_PRECISION, b, counts, displs, MPI_DOUBLE_PRECISION, &
                      MPI_COMM_WORLD, ierr)
  call MPI_Alltoallv(a, counts, displs, MPI_DOUBLE_PRECISION, b, counts, displs, &
                     MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  call MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Scan(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Exscan(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Iallreduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, request, ierr)
  call MPI_Wait(request, status, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)

  ! neighbourhood collective on a periodic ring
  call MPI_Cart_create(MPI_COMM_WORLD, 1, (/ nranks /), (/ .true. /), .false., ring, ierr)
  call MPI_Neighbor_allgather(a, n, MPI_DOUBLE_PRECISION, b, n, MPI_DOUBLE_PRECISION, ring, ierr)
  call MPI_Comm_free(ring, ierr)

  ! one-sided
  window_bytes = 8 * n
  call MPI_Win_create(b, window_bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  target = 0
  call MPI_Put(a, n, MPI_DOUBLE_PRECISION, peer, target, n, MPI_DOUBLE_PRECISION, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call MPI_Get(result, n, MPI_DOUBLE_PRECISION, peer, target, n, MPI_DOUBLE_PRECISION, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  if (result(8) /= 7) call MPI_Abort(MPI_COMM_WORLD, 5, ierr)
  call MPI_Win_free(win, ierr)

  ! MPI-IO (the file name is a character argument: its length is passed after the error code)
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/families-f.bin', &
                     MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 6, ierr)
  offset = rank * 8 * n
  call MPI_File_write_at(fh, offset, a, n, MPI_DOUBLE_PRECISION, status, ierr)
  call MPI_File_read_at_all(fh, offset, b, n, MPI_DOUBLE_PRECISION, status, ierr)
  if (b(10) /= 9) call MPI_Abort(MPI_COMM_WORLD, 7, ierr)
  call MPI_File_close(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) call MPI_File_delete(trim(dir) // '/families-f.bin', MPI_INFO_NULL, ierr)

  call MPI_Finalize(ierr)
end program families
