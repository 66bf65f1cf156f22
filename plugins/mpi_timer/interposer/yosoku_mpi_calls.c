/* The wrapped MPI calls: the C bindings (`MPI_Xxx`, MPI-3 prototypes as in Open MPI 4.1's mpi.h)
 * and the Fortran ones (`mpi_xxx_` for mpif.h and `use mpi`, `ompi_xxx_f` for `use mpi_f08`).
 * Included once, by yosoku_mpi_timer.c. `bytes`: what the call moves for this rank (sent, or
 * received where it only receives); `peer`: the destination, source, root or target rank. */

/* --- point-to-point --- */

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    TIMED(CALL_Send, type_bytes(count, datatype), dest,
          PMPI_Send(buf, count, datatype, dest, tag, comm));
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    TIMED(CALL_Bsend, type_bytes(count, datatype), dest,
          PMPI_Bsend(buf, count, datatype, dest, tag, comm));
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    TIMED(CALL_Ssend, type_bytes(count, datatype), dest,
          PMPI_Ssend(buf, count, datatype, dest, tag, comm));
}

int MPI_Rsend(const void *ibuf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm) {
    TIMED(CALL_Rsend, type_bytes(count, datatype), dest,
          PMPI_Rsend(ibuf, count, datatype, dest, tag, comm));
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    TIMED(CALL_Recv, type_bytes(count, datatype), source,
          PMPI_Recv(buf, count, datatype, source, tag, comm, status));
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status) {
    TIMED(CALL_Sendrecv, type_bytes(sendcount, sendtype) + type_bytes(recvcount, recvtype), dest,
          PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                        source, recvtag, comm, status));
}

int MPI_Sendrecv_replace(void * buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status) {
    TIMED(CALL_Sendrecv_replace, 2 * type_bytes(count, datatype), dest,
          PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                status));
}

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request) {
    TIMED(CALL_Isend, type_bytes(count, datatype), dest,
          PMPI_Isend(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
    TIMED(CALL_Ibsend, type_bytes(count, datatype), dest,
          PMPI_Ibsend(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
    TIMED(CALL_Issend, type_bytes(count, datatype), dest,
          PMPI_Issend(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
    TIMED(CALL_Irsend, type_bytes(count, datatype), dest,
          PMPI_Irsend(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request) {
    TIMED(CALL_Irecv, type_bytes(count, datatype), source,
          PMPI_Irecv(buf, count, datatype, source, tag, comm, request));
}

/* --- persistent --- */

int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Send_init, type_bytes(count, datatype), dest,
          PMPI_Send_init(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Bsend_init, type_bytes(count, datatype), dest,
          PMPI_Bsend_init(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Ssend_init, type_bytes(count, datatype), dest,
          PMPI_Ssend_init(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Rsend_init, type_bytes(count, datatype), dest,
          PMPI_Rsend_init(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request *request) {
    TIMED(CALL_Recv_init, type_bytes(count, datatype), source,
          PMPI_Recv_init(buf, count, datatype, source, tag, comm, request));
}

int MPI_Start(MPI_Request *request) {
    TIMED(CALL_Start, 0, -1, PMPI_Start(request));
}

int MPI_Startall(int count, MPI_Request array_of_requests[]) {
    TIMED(CALL_Startall, 0, -1, PMPI_Startall(count, array_of_requests));
}

/* --- probe --- */

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    TIMED(CALL_Probe, 0, source, PMPI_Probe(source, tag, comm, status));
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
    TIMED(CALL_Iprobe, 0, source, PMPI_Iprobe(source, tag, comm, flag, status));
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
    TIMED(CALL_Mprobe, 0, source, PMPI_Mprobe(source, tag, comm, message, status));
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status) {
    TIMED(CALL_Improbe, 0, source, PMPI_Improbe(source, tag, comm, flag, message, status));
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status) {
    TIMED(CALL_Mrecv, type_bytes(count, type), -1, PMPI_Mrecv(buf, count, type, message, status));
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
               MPI_Request *request) {
    TIMED(CALL_Imrecv, type_bytes(count, type), -1,
          PMPI_Imrecv(buf, count, type, message, request));
}

/* --- completion --- */

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
    TIMED(CALL_Wait, 0, -1, PMPI_Wait(request, status));
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses) {
    TIMED(CALL_Waitall, 0, -1, PMPI_Waitall(count, array_of_requests, array_of_statuses));
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status) {
    TIMED(CALL_Waitany, 0, -1, PMPI_Waitany(count, array_of_requests, index, status));
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]) {
    TIMED(CALL_Waitsome, 0, -1,
          PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses));
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    TIMED(CALL_Test, 0, -1, PMPI_Test(request, flag, status));
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status array_of_statuses[]) {
    TIMED(CALL_Testall, 0, -1, PMPI_Testall(count, array_of_requests, flag, array_of_statuses));
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                MPI_Status *status) {
    TIMED(CALL_Testany, 0, -1, PMPI_Testany(count, array_of_requests, index, flag, status));
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]) {
    TIMED(CALL_Testsome, 0, -1,
          PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses));
}

/* --- collective --- */

int MPI_Barrier(MPI_Comm comm) {
    TIMED(CALL_Barrier, 0, -1, PMPI_Barrier(comm));
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    TIMED(CALL_Bcast, type_bytes(count, datatype), root,
          PMPI_Bcast(buffer, count, datatype, root, comm));
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    TIMED(CALL_Gather, own_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype), root,
          PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
    TIMED(CALL_Gatherv, own_bytes(sendbuf, sendcount, sendtype, 0, MPI_DATATYPE_NULL), root,
          PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                       comm));
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    TIMED(CALL_Scatter, own_bytes(recvbuf, recvcount, recvtype, sendcount, sendtype), root,
          PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
    TIMED(CALL_Scatterv, own_bytes(recvbuf, recvcount, recvtype, 0, MPI_DATATYPE_NULL), root,
          PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                        comm));
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    TIMED(CALL_Allgather, own_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
          PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
    TIMED(CALL_Allgatherv, own_bytes(sendbuf, sendcount, sendtype, 0, MPI_DATATYPE_NULL), -1,
          PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          comm));
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    TIMED(CALL_Alltoall,
          own_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype) * comm_size(comm),
          -1,
          PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
    TIMED(CALL_Alltoallv,
          own_counts_bytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm_size(comm)),
          -1,
          PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                         recvtype, comm));
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
    TIMED(CALL_Alltoallw,
          own_typed_counts_bytes(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, comm_size(comm)),
          -1,
          PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                         recvtypes, comm));
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
    TIMED(CALL_Reduce, type_bytes(count, datatype), root,
          PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm));
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
    TIMED(CALL_Allreduce, type_bytes(count, datatype), -1,
          PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm));
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    TIMED(CALL_Reduce_scatter, counts_bytes(recvcounts, comm_size(comm), datatype), -1,
          PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm));
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    TIMED(CALL_Reduce_scatter_block, type_bytes(recvcount, datatype) * comm_size(comm), -1,
          PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm));
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm) {
    TIMED(CALL_Scan, type_bytes(count, datatype), -1,
          PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm));
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm) {
    TIMED(CALL_Exscan, type_bytes(count, datatype), -1,
          PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm));
}

/* --- non-blocking collective --- */

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Ibarrier, 0, -1, PMPI_Ibarrier(comm, request));
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request) {
    TIMED(CALL_Ibcast, type_bytes(count, datatype), root,
          PMPI_Ibcast(buffer, count, datatype, root, comm, request));
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request) {
    TIMED(CALL_Igather, own_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype), root,
          PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                       request));
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Igatherv, own_bytes(sendbuf, sendcount, sendtype, 0, MPI_DATATYPE_NULL), root,
          PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                        comm, request));
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request) {
    TIMED(CALL_Iscatter, own_bytes(recvbuf, recvcount, recvtype, sendcount, sendtype), root,
          PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                        request));
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Iscatterv, own_bytes(recvbuf, recvcount, recvtype, 0, MPI_DATATYPE_NULL), root,
          PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm, request));
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Iallgather, own_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
          PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                          request));
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Iallgatherv, own_bytes(sendbuf, sendcount, sendtype, 0, MPI_DATATYPE_NULL), -1,
          PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm, request));
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Ialltoall,
          own_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype) * comm_size(comm),
          -1,
          PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                         request));
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request) {
    TIMED(CALL_Ialltoallv,
          own_counts_bytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm_size(comm)),
          -1,
          PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm, request));
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request) {
    TIMED(CALL_Ialltoallw,
          own_typed_counts_bytes(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, comm_size(comm)),
          -1,
          PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                          recvtypes, comm, request));
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Ireduce, type_bytes(count, datatype), root,
          PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request));
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Iallreduce, type_bytes(count, datatype), -1,
          PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Ireduce_scatter, counts_bytes(recvcounts, comm_size(comm), datatype), -1,
          PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request));
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request) {
    TIMED(CALL_Ireduce_scatter_block, type_bytes(recvcount, datatype) * comm_size(comm), -1,
          PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request));
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Iscan, type_bytes(count, datatype), -1,
          PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Iexscan, type_bytes(count, datatype), -1,
          PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request));
}

/* --- neighbourhood collective --- */

int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    TIMED(CALL_Neighbor_allgather, own_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
          PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                  comm));
}

int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm) {
    TIMED(CALL_Neighbor_allgatherv,
          own_bytes(sendbuf, sendcount, sendtype, 0, MPI_DATATYPE_NULL),
          -1,
          PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                   recvtype, comm));
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    TIMED(CALL_Neighbor_alltoall,
          own_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype) * out_degree(comm),
          -1,
          PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    TIMED(CALL_Neighbor_alltoallv,
          own_counts_bytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, out_degree(comm)),
          -1,
          PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                  rdispls, recvtype, comm));
}

int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm) {
    TIMED(CALL_Neighbor_alltoallw,
          own_typed_counts_bytes(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, out_degree(comm)),
          -1,
          PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                  rdispls, recvtypes, comm));
}

int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request) {
    TIMED(CALL_Ineighbor_allgather,
          own_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype),
          -1,
          PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                   request));
}

int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    TIMED(CALL_Ineighbor_allgatherv,
          own_bytes(sendbuf, sendcount, sendtype, 0, MPI_DATATYPE_NULL),
          -1,
          PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                    recvtype, comm, request));
}

int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request) {
    TIMED(CALL_Ineighbor_alltoall,
          own_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype) * out_degree(comm),
          -1,
          PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                  request));
}

int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request) {
    TIMED(CALL_Ineighbor_alltoallv,
          own_counts_bytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, out_degree(comm)),
          -1,
          PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                   rdispls, recvtype, comm, request));
}

int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request *request) {
    TIMED(CALL_Ineighbor_alltoallw,
          own_typed_counts_bytes(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, out_degree(comm)),
          -1,
          PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                   rdispls, recvtypes, comm, request));
}

/* --- one-sided --- */

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
            MPI_Win win) {
    TIMED(CALL_Put, type_bytes(origin_count, origin_datatype), target_rank,
          PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win));
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    TIMED(CALL_Get, type_bytes(origin_count, origin_datatype), target_rank,
          PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win));
}

int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    TIMED(CALL_Accumulate, type_bytes(origin_count, origin_datatype), target_rank,
          PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                          target_count, target_datatype, op, win));
}

int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void *result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    TIMED(CALL_Get_accumulate,
          type_bytes(origin_count, origin_datatype) + type_bytes(result_count, result_datatype),
          target_rank,
          PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                              result_datatype, target_rank, target_disp, target_count,
                              target_datatype, op, win));
}

int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
    TIMED(CALL_Fetch_and_op, type_bytes(1, datatype), target_rank,
          PMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, win));
}

int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win) {
    TIMED(CALL_Compare_and_swap, type_bytes(1, datatype), target_rank,
          PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank,
                                target_disp, win));
}

int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_cout, MPI_Datatype target_datatype,
             MPI_Win win, MPI_Request *request) {
    TIMED(CALL_Rput, type_bytes(origin_count, origin_datatype), target_rank,
          PMPI_Rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_cout, target_datatype, win, request));
}

int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
             MPI_Request *request) {
    TIMED(CALL_Rget, type_bytes(origin_count, origin_datatype), target_rank,
          PMPI_Rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win, request));
}

int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request) {
    TIMED(CALL_Raccumulate, type_bytes(origin_count, origin_datatype), target_rank,
          PMPI_Raccumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                           target_count, target_datatype, op, win, request));
}

int MPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        MPI_Request *request) {
    TIMED(CALL_Rget_accumulate,
          type_bytes(origin_count, origin_datatype) + type_bytes(result_count, result_datatype),
          target_rank,
          PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                               result_count, result_datatype, target_rank, target_disp,
                               target_count, target_datatype, op, win, request));
}

int MPI_Win_fence(int assert, MPI_Win win) {
    TIMED(CALL_Win_fence, 0, -1, PMPI_Win_fence(assert, win));
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
    TIMED(CALL_Win_lock, 0, rank, PMPI_Win_lock(lock_type, rank, assert, win));
}

int MPI_Win_unlock(int rank, MPI_Win win) {
    TIMED(CALL_Win_unlock, 0, rank, PMPI_Win_unlock(rank, win));
}

int MPI_Win_lock_all(int assert, MPI_Win win) {
    TIMED(CALL_Win_lock_all, 0, -1, PMPI_Win_lock_all(assert, win));
}

int MPI_Win_unlock_all(MPI_Win win) {
    TIMED(CALL_Win_unlock_all, 0, -1, PMPI_Win_unlock_all(win));
}

int MPI_Win_flush(int rank, MPI_Win win) {
    TIMED(CALL_Win_flush, 0, rank, PMPI_Win_flush(rank, win));
}

int MPI_Win_flush_all(MPI_Win win) {
    TIMED(CALL_Win_flush_all, 0, -1, PMPI_Win_flush_all(win));
}

int MPI_Win_flush_local(int rank, MPI_Win win) {
    TIMED(CALL_Win_flush_local, 0, rank, PMPI_Win_flush_local(rank, win));
}

int MPI_Win_flush_local_all(MPI_Win win) {
    TIMED(CALL_Win_flush_local_all, 0, -1, PMPI_Win_flush_local_all(win));
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
    TIMED(CALL_Win_post, 0, -1, PMPI_Win_post(group, assert, win));
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
    TIMED(CALL_Win_start, 0, -1, PMPI_Win_start(group, assert, win));
}

int MPI_Win_complete(MPI_Win win) {
    TIMED(CALL_Win_complete, 0, -1, PMPI_Win_complete(win));
}

int MPI_Win_wait(MPI_Win win) {
    TIMED(CALL_Win_wait, 0, -1, PMPI_Win_wait(win));
}

int MPI_Win_sync(MPI_Win win) {
    TIMED(CALL_Win_sync, 0, -1, PMPI_Win_sync(win));
}

/* --- MPI-IO --- */

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh) {
    TIMED(CALL_File_open, 0, -1, PMPI_File_open(comm, filename, amode, info, fh));
}

int MPI_File_close(MPI_File *fh) {
    TIMED(CALL_File_close, 0, -1, PMPI_File_close(fh));
}

int MPI_File_sync(MPI_File fh) {
    TIMED(CALL_File_sync, 0, -1, PMPI_File_sync(fh));
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info) {
    TIMED(CALL_File_set_view, 0, -1, PMPI_File_set_view(fh, disp, etype, filetype, datarep, info));
}

int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    TIMED(CALL_File_read, type_bytes(count, datatype), -1,
          PMPI_File_read(fh, buf, count, datatype, status));
}

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status) {
    TIMED(CALL_File_read_all, type_bytes(count, datatype), -1,
          PMPI_File_read_all(fh, buf, count, datatype, status));
}

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                     MPI_Status *status) {
    TIMED(CALL_File_read_at, type_bytes(count, datatype), -1,
          PMPI_File_read_at(fh, offset, buf, count, datatype, status));
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                         MPI_Datatype datatype, MPI_Status *status) {
    TIMED(CALL_File_read_at_all, type_bytes(count, datatype), -1,
          PMPI_File_read_at_all(fh, offset, buf, count, datatype, status));
}

int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                   MPI_Status *status) {
    TIMED(CALL_File_write, type_bytes(count, datatype), -1,
          PMPI_File_write(fh, buf, count, datatype, status));
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status) {
    TIMED(CALL_File_write_all, type_bytes(count, datatype), -1,
          PMPI_File_write_all(fh, buf, count, datatype, status));
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                      MPI_Datatype datatype, MPI_Status *status) {
    TIMED(CALL_File_write_at, type_bytes(count, datatype), -1,
          PMPI_File_write_at(fh, offset, buf, count, datatype, status));
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status) {
    TIMED(CALL_File_write_at_all, type_bytes(count, datatype), -1,
          PMPI_File_write_at_all(fh, offset, buf, count, datatype, status));
}

int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    TIMED(CALL_File_iread, type_bytes(count, datatype), -1,
          PMPI_File_iread(fh, buf, count, datatype, request));
}

int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                    MPI_Request *request) {
    TIMED(CALL_File_iwrite, type_bytes(count, datatype), -1,
          PMPI_File_iwrite(fh, buf, count, datatype, request));
}

int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                      MPI_Request *request) {
    TIMED(CALL_File_iread_at, type_bytes(count, datatype), -1,
          PMPI_File_iread_at(fh, offset, buf, count, datatype, request));
}

int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                       MPI_Datatype datatype, MPI_Request *request) {
    TIMED(CALL_File_iwrite_at, type_bytes(count, datatype), -1,
          PMPI_File_iwrite_at(fh, offset, buf, count, datatype, request));
}

int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                         MPI_Status *status) {
    TIMED(CALL_File_read_shared, type_bytes(count, datatype), -1,
          PMPI_File_read_shared(fh, buf, count, datatype, status));
}

int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status) {
    TIMED(CALL_File_write_shared, type_bytes(count, datatype), -1,
          PMPI_File_write_shared(fh, buf, count, datatype, status));
}

int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status) {
    TIMED(CALL_File_read_ordered, type_bytes(count, datatype), -1,
          PMPI_File_read_ordered(fh, buf, count, datatype, status));
}

int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status) {
    TIMED(CALL_File_write_ordered, type_bytes(count, datatype), -1,
          PMPI_File_write_ordered(fh, buf, count, datatype, status));
}

/* --- Fortran: mpi_xxx_ (mpif.h, use mpi) and ompi_xxx_f (use mpi_f08), arguments by reference,
 * the error code last, then the lengths of character arguments --- */

FORTRAN(send, CALL_Send, 7, f_bytes(a1, a2), f_int(a3))
FORTRAN(bsend, CALL_Bsend, 7, f_bytes(a1, a2), f_int(a3))
FORTRAN(ssend, CALL_Ssend, 7, f_bytes(a1, a2), f_int(a3))
FORTRAN(rsend, CALL_Rsend, 7, f_bytes(a1, a2), f_int(a3))
FORTRAN(recv, CALL_Recv, 8, f_bytes(a1, a2), f_int(a3))
FORTRAN(sendrecv, CALL_Sendrecv, 13, f_bytes(a1, a2) + f_bytes(a6, a7), f_int(a3))
FORTRAN(sendrecv_replace, CALL_Sendrecv_replace, 10, f_bytes(a1, a2), f_int(a3))
FORTRAN(isend, CALL_Isend, 8, f_bytes(a1, a2), f_int(a3))
FORTRAN(ibsend, CALL_Ibsend, 8, f_bytes(a1, a2), f_int(a3))
FORTRAN(issend, CALL_Issend, 8, f_bytes(a1, a2), f_int(a3))
FORTRAN(irsend, CALL_Irsend, 8, f_bytes(a1, a2), f_int(a3))
FORTRAN(irecv, CALL_Irecv, 8, f_bytes(a1, a2), f_int(a3))
FORTRAN(send_init, CALL_Send_init, 8, f_bytes(a1, a2), f_int(a3))
FORTRAN(bsend_init, CALL_Bsend_init, 8, f_bytes(a1, a2), f_int(a3))
FORTRAN(ssend_init, CALL_Ssend_init, 8, f_bytes(a1, a2), f_int(a3))
FORTRAN(rsend_init, CALL_Rsend_init, 8, f_bytes(a1, a2), f_int(a3))
FORTRAN(recv_init, CALL_Recv_init, 8, f_bytes(a1, a2), f_int(a3))
FORTRAN(start, CALL_Start, 2, 0, -1)
FORTRAN(startall, CALL_Startall, 3, 0, -1)
FORTRAN(probe, CALL_Probe, 5, 0, f_int(a0))
FORTRAN(iprobe, CALL_Iprobe, 6, 0, f_int(a0))
FORTRAN(mprobe, CALL_Mprobe, 6, 0, f_int(a0))
FORTRAN(improbe, CALL_Improbe, 7, 0, f_int(a0))
FORTRAN(mrecv, CALL_Mrecv, 6, f_bytes(a1, a2), -1)
FORTRAN(imrecv, CALL_Imrecv, 6, f_bytes(a1, a2), -1)
FORTRAN(wait, CALL_Wait, 3, 0, -1)
FORTRAN(waitall, CALL_Waitall, 4, 0, -1)
FORTRAN(waitany, CALL_Waitany, 5, 0, -1)
FORTRAN(waitsome, CALL_Waitsome, 6, 0, -1)
FORTRAN(test, CALL_Test, 4, 0, -1)
FORTRAN(testall, CALL_Testall, 5, 0, -1)
FORTRAN(testany, CALL_Testany, 6, 0, -1)
FORTRAN(testsome, CALL_Testsome, 6, 0, -1)
FORTRAN(barrier, CALL_Barrier, 2, 0, -1)
FORTRAN(bcast, CALL_Bcast, 6, f_bytes(a1, a2), f_int(a3))
FORTRAN(gather, CALL_Gather, 9, 0, f_int(a6))
FORTRAN(gatherv, CALL_Gatherv, 10, 0, f_int(a7))
FORTRAN(scatter, CALL_Scatter, 9, 0, f_int(a6))
FORTRAN(scatterv, CALL_Scatterv, 10, 0, f_int(a7))
FORTRAN(allgather, CALL_Allgather, 8, 0, -1)
FORTRAN(allgatherv, CALL_Allgatherv, 9, 0, -1)
FORTRAN(alltoall, CALL_Alltoall, 8, 0, -1)
FORTRAN(alltoallv, CALL_Alltoallv, 10, 0, -1)
FORTRAN(alltoallw, CALL_Alltoallw, 10, 0, -1)
FORTRAN(reduce, CALL_Reduce, 8, f_bytes(a2, a3), f_int(a5))
FORTRAN(allreduce, CALL_Allreduce, 7, f_bytes(a2, a3), -1)
FORTRAN(reduce_scatter, CALL_Reduce_scatter, 7, 0, -1)
FORTRAN(reduce_scatter_block, CALL_Reduce_scatter_block, 7, 0, -1)
FORTRAN(scan, CALL_Scan, 7, f_bytes(a2, a3), -1)
FORTRAN(exscan, CALL_Exscan, 7, f_bytes(a2, a3), -1)
FORTRAN(ibarrier, CALL_Ibarrier, 3, 0, -1)
FORTRAN(ibcast, CALL_Ibcast, 7, f_bytes(a1, a2), f_int(a3))
FORTRAN(igather, CALL_Igather, 10, 0, f_int(a6))
FORTRAN(igatherv, CALL_Igatherv, 11, 0, f_int(a7))
FORTRAN(iscatter, CALL_Iscatter, 10, 0, f_int(a6))
FORTRAN(iscatterv, CALL_Iscatterv, 11, 0, f_int(a7))
FORTRAN(iallgather, CALL_Iallgather, 9, 0, -1)
FORTRAN(iallgatherv, CALL_Iallgatherv, 10, 0, -1)
FORTRAN(ialltoall, CALL_Ialltoall, 9, 0, -1)
FORTRAN(ialltoallv, CALL_Ialltoallv, 11, 0, -1)
FORTRAN(ialltoallw, CALL_Ialltoallw, 11, 0, -1)
FORTRAN(ireduce, CALL_Ireduce, 9, f_bytes(a2, a3), f_int(a5))
FORTRAN(iallreduce, CALL_Iallreduce, 8, f_bytes(a2, a3), -1)
FORTRAN(ireduce_scatter, CALL_Ireduce_scatter, 8, 0, -1)
FORTRAN(ireduce_scatter_block, CALL_Ireduce_scatter_block, 8, 0, -1)
FORTRAN(iscan, CALL_Iscan, 8, f_bytes(a2, a3), -1)
FORTRAN(iexscan, CALL_Iexscan, 8, f_bytes(a2, a3), -1)
FORTRAN(neighbor_allgather, CALL_Neighbor_allgather, 8, 0, -1)
FORTRAN(neighbor_allgatherv, CALL_Neighbor_allgatherv, 9, 0, -1)
FORTRAN(neighbor_alltoall, CALL_Neighbor_alltoall, 8, 0, -1)
FORTRAN(neighbor_alltoallv, CALL_Neighbor_alltoallv, 10, 0, -1)
FORTRAN(neighbor_alltoallw, CALL_Neighbor_alltoallw, 10, 0, -1)
FORTRAN(ineighbor_allgather, CALL_Ineighbor_allgather, 9, 0, -1)
FORTRAN(ineighbor_allgatherv, CALL_Ineighbor_allgatherv, 10, 0, -1)
FORTRAN(ineighbor_alltoall, CALL_Ineighbor_alltoall, 9, 0, -1)
FORTRAN(ineighbor_alltoallv, CALL_Ineighbor_alltoallv, 11, 0, -1)
FORTRAN(ineighbor_alltoallw, CALL_Ineighbor_alltoallw, 11, 0, -1)
FORTRAN(put, CALL_Put, 9, f_bytes(a1, a2), f_int(a3))
FORTRAN(get, CALL_Get, 9, f_bytes(a1, a2), f_int(a3))
FORTRAN(accumulate, CALL_Accumulate, 10, f_bytes(a1, a2), f_int(a3))
FORTRAN(get_accumulate, CALL_Get_accumulate, 13, f_bytes(a1, a2), f_int(a6))
FORTRAN(fetch_and_op, CALL_Fetch_and_op, 8, 0, f_int(a3))
FORTRAN(compare_and_swap, CALL_Compare_and_swap, 8, 0, f_int(a4))
FORTRAN(rput, CALL_Rput, 10, f_bytes(a1, a2), f_int(a3))
FORTRAN(rget, CALL_Rget, 10, f_bytes(a1, a2), f_int(a3))
FORTRAN(raccumulate, CALL_Raccumulate, 11, f_bytes(a1, a2), f_int(a3))
FORTRAN(rget_accumulate, CALL_Rget_accumulate, 14, f_bytes(a1, a2), f_int(a6))
FORTRAN(win_fence, CALL_Win_fence, 3, 0, -1)
FORTRAN(win_lock, CALL_Win_lock, 5, 0, f_int(a1))
FORTRAN(win_unlock, CALL_Win_unlock, 3, 0, f_int(a0))
FORTRAN(win_lock_all, CALL_Win_lock_all, 3, 0, -1)
FORTRAN(win_unlock_all, CALL_Win_unlock_all, 2, 0, -1)
FORTRAN(win_flush, CALL_Win_flush, 3, 0, f_int(a0))
FORTRAN(win_flush_all, CALL_Win_flush_all, 2, 0, -1)
FORTRAN(win_flush_local, CALL_Win_flush_local, 3, 0, f_int(a0))
FORTRAN(win_flush_local_all, CALL_Win_flush_local_all, 2, 0, -1)
FORTRAN(win_post, CALL_Win_post, 4, 0, -1)
FORTRAN(win_start, CALL_Win_start, 4, 0, -1)
FORTRAN(win_complete, CALL_Win_complete, 2, 0, -1)
FORTRAN(win_wait, CALL_Win_wait, 2, 0, -1)
FORTRAN(win_sync, CALL_Win_sync, 2, 0, -1)
FORTRAN_STRING(file_open, CALL_File_open, 6, 0, -1)
FORTRAN(file_close, CALL_File_close, 2, 0, -1)
FORTRAN(file_sync, CALL_File_sync, 2, 0, -1)
FORTRAN_STRING(file_set_view, CALL_File_set_view, 7, 0, -1)
FORTRAN(file_read, CALL_File_read, 6, f_bytes(a2, a3), -1)
FORTRAN(file_read_all, CALL_File_read_all, 6, f_bytes(a2, a3), -1)
FORTRAN(file_read_at, CALL_File_read_at, 7, f_bytes(a3, a4), -1)
FORTRAN(file_read_at_all, CALL_File_read_at_all, 7, f_bytes(a3, a4), -1)
FORTRAN(file_write, CALL_File_write, 6, f_bytes(a2, a3), -1)
FORTRAN(file_write_all, CALL_File_write_all, 6, f_bytes(a2, a3), -1)
FORTRAN(file_write_at, CALL_File_write_at, 7, f_bytes(a3, a4), -1)
FORTRAN(file_write_at_all, CALL_File_write_at_all, 7, f_bytes(a3, a4), -1)
FORTRAN(file_iread, CALL_File_iread, 6, f_bytes(a2, a3), -1)
FORTRAN(file_iwrite, CALL_File_iwrite, 6, f_bytes(a2, a3), -1)
FORTRAN(file_iread_at, CALL_File_iread_at, 7, f_bytes(a3, a4), -1)
FORTRAN(file_iwrite_at, CALL_File_iwrite_at, 7, f_bytes(a3, a4), -1)
FORTRAN(file_read_shared, CALL_File_read_shared, 6, f_bytes(a2, a3), -1)
FORTRAN(file_write_shared, CALL_File_write_shared, 6, f_bytes(a2, a3), -1)
FORTRAN(file_read_ordered, CALL_File_read_ordered, 6, f_bytes(a2, a3), -1)
FORTRAN(file_write_ordered, CALL_File_write_ordered, 6, f_bytes(a2, a3), -1)
