// out = transpose(in) for an n x n matrix (row major). Built with -DTILE=<t>; n is a multiple of
// TILE, work-groups are TILE x TILE.

// Without local memory: reads along rows, writes along columns (strided, uncoalesced on GPUs).
__kernel void transpose_global(__global const float *in, __global float *out, int n)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    out[x * n + y] = in[y * n + x];
}

// With local memory: a tile is read along rows into local memory (padded by one column against
// bank conflicts) and written along rows of the transposed tile.
__kernel void transpose_local(__global const float *in, __global float *out, int n)
{
    __local float tile[TILE][TILE + 1];
    int tx = get_local_id(0), ty = get_local_id(1);
    int bx = get_group_id(0) * TILE, by = get_group_id(1) * TILE;
    tile[ty][tx] = in[(by + ty) * n + bx + tx];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[(bx + ty) * n + by + tx] = tile[tx][ty];
}
