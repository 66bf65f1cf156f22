! The `use mpi_f08` bindings reach the library through other symbols than `use mpi`'s
! (`ompi_xxx_f`); the interposer wraps those too. On 2 ranks (plugins/mpi_timer/tests/families.rs).
! Build: mpifort -O1 -o families_f08 families_f08.f90      Run: mpirun -np 2 ./families_f08
program families_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 1000
  double precision :: a(n), b(n)
  integer :: rank, peer
  type(MPI_Status) :: status

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  peer = 1 - rank
  a = 1
  call MPI_Sendrecv(a, n, MPI_DOUBLE_PRECISION, peer, 1, b, n, MPI_DOUBLE_PRECISION, peer, 1, &
                    MPI_COMM_WORLD, status)
  call MPI_Allreduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (b(1) /= 2) call MPI_Abort(MPI_COMM_WORLD, 3)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Finalize()
end program families_f08
