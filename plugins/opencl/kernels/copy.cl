// Array copy at one vector width: each work-item copies one VEC (float, float2, ..., float16),
// the kernel of Shimada et al.'s vector-width sweep (docs/methods.md, section 1).
// Built with -DVEC=floatN.

__kernel void copy(__global const VEC *in, __global VEC *out)
{
    size_t i = get_global_id(0);
    out[i] = in[i];
}
