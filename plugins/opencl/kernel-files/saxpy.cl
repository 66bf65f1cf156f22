// y = a * x + y, four elements per work-item (saxpy_vec4), and a plain one-element-per-work-item
// version the runner checks it against (saxpy_ref). The example of README.md, "Your own kernel".

__kernel void saxpy_vec4(const float a, __global const float4 *x, __global float4 *y)
{
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}

__kernel void saxpy_ref(const float a, __global const float *x, __global float *y)
{
    size_t i = get_global_id(0);
    for (int k = 0; k < 4; k++) {
        y[4 * i + k] = a * x[4 * i + k] + y[4 * i + k];
    }
}
