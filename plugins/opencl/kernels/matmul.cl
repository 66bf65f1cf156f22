// C = A B for n x n matrices (row major), one work-item per element of C.
// Built with -DTILE=<t>; n is a multiple of TILE, work-groups are TILE x TILE.

// Without local memory: every work-item reads its row of A and column of B from global memory.
__kernel void matmul_global(__global const float *a, __global const float *b,
                            __global float *c, int n)
{
    int col = get_global_id(0);
    int row = get_global_id(1);
    float sum = 0.0f;
    for (int k = 0; k < n; k++)
        sum += a[row * n + k] * b[k * n + col];
    c[row * n + col] = sum;
}

// With local memory: the work-group stages TILE x TILE tiles of A and B and each work-item reads
// them TILE times from local memory.
__kernel void matmul_local(__global const float *a, __global const float *b,
                           __global float *c, int n)
{
    __local float as[TILE][TILE];
    __local float bs[TILE][TILE];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_global_id(0);
    int row = get_global_id(1);
    float sum = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        as[ty][tx] = a[row * n + t + tx];
        bs[ty][tx] = b[(t + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; k++)
            sum += as[ty][k] * bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = sum;
}
