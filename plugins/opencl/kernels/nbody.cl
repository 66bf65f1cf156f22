// Gravitational accelerations of n bodies (one step of all pairs): pos[i] = (x, y, z, mass),
// acc[i] = sum_j m_j d / (|d|^2 + EPS2)^(3/2) with d = pos[j] - pos[i]. Built with -DTILE=<t>
// -DEPS2=<softening^2>; n is a multiple of TILE, work-groups have TILE work-items.

float3 interact(float4 pi, float4 pj, float3 acc)
{
    float3 d = pj.xyz - pi.xyz;
    float r2 = d.x * d.x + d.y * d.y + d.z * d.z + EPS2;
    float inv = rsqrt(r2);
    float s = pj.w * inv * inv * inv;
    return acc + s * d;
}

// Without local memory: every work-item reads every body from global memory.
__kernel void nbody_global(__global const float4 *pos, __global float4 *acc, int n)
{
    int i = get_global_id(0);
    float4 pi = pos[i];
    float3 a = (float3)(0.0f);
    for (int j = 0; j < n; j++)
        a = interact(pi, pos[j], a);
    acc[i] = (float4)(a, 0.0f);
}

// With local memory: the work-group stages TILE bodies at a time in local memory.
__kernel void nbody_local(__global const float4 *pos, __global float4 *acc, int n)
{
    __local float4 tile[TILE];
    int i = get_global_id(0);
    int lid = get_local_id(0);
    float4 pi = pos[i];
    float3 a = (float3)(0.0f);
    for (int t = 0; t < n; t += TILE) {
        tile[lid] = pos[t + lid];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < TILE; j++)
            a = interact(pi, tile[j], a);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc[i] = (float4)(a, 0.0f);
}
