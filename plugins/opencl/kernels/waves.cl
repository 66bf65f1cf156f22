// A fixed amount of arithmetic per work-group: each work-item runs ITERATIONS fused
// multiply-adds on a value of its own and stores it. Launched with more and more work-groups,
// the time steps up each time the groups fill the device once more (a wave): the calibration's
// wave sweep (`yosoku calibrate`). Built with -DITERATIONS=n.

__kernel void waves(__global float *out)
{
    size_t i = get_global_id(0);
    float x = (float)(i % 1024) * 0.0009765625f;
    for (int k = 0; k < ITERATIONS; k++) {
        x = fma(x, 0.999f, 0.001f);
    }
    out[i] = x;
}
