// Sum of n floats: each work-group of GROUP work-items reduces its GROUP elements by a tree and
// writes one partial sum; the host adds the partial sums. Built with -DGROUP=<g> (a power of 2).

// Without local memory: the tree runs in a global scratch array.
__kernel void reduce_global(__global const float *in, __global float *scratch,
                            __global float *partial)
{
    size_t gid = get_global_id(0);
    size_t lid = get_local_id(0);
    scratch[gid] = in[gid];
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (size_t s = GROUP / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[gid] += scratch[gid + s];
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = scratch[gid];
}

// With local memory: the tree runs in local memory.
__kernel void reduce_local(__global const float *in, __global float *scratch,
                           __global float *partial)
{
    __local float buf[GROUP];
    size_t lid = get_local_id(0);
    buf[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = GROUP / 2; s > 0; s >>= 1) {
        if (lid < s)
            buf[lid] += buf[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = buf[0];
}
