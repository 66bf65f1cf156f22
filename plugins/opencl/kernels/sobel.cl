// Sobel edge magnitude of an n x n image: out = sqrt(gx^2 + gy^2) over the 3 x 3 neighbourhood,
// coordinates clamped at the border. Built with -DTILE=<t>; n is a multiple of TILE, work-groups
// are TILE x TILE.

#define AT(img, x, y, n) img[clamp((y), 0, (n) - 1) * (n) + clamp((x), 0, (n) - 1)]

float sobel3(float p00, float p10, float p20,
             float p01,            float p21,
             float p02, float p12, float p22)
{
    float gx = (p20 + 2.0f * p21 + p22) - (p00 + 2.0f * p01 + p02);
    float gy = (p02 + 2.0f * p12 + p22) - (p00 + 2.0f * p10 + p20);
    return sqrt(gx * gx + gy * gy);
}

// Without local memory: each work-item reads its eight neighbours from global memory.
__kernel void sobel_global(__global const float *in, __global float *out, int n)
{
    int x = get_global_id(0), y = get_global_id(1);
    out[y * n + x] = sobel3(AT(in, x - 1, y - 1, n), AT(in, x, y - 1, n), AT(in, x + 1, y - 1, n),
                            AT(in, x - 1, y, n),                          AT(in, x + 1, y, n),
                            AT(in, x - 1, y + 1, n), AT(in, x, y + 1, n), AT(in, x + 1, y + 1, n));
}

// With local memory: the work-group stages its tile and a one-pixel halo, (TILE + 2)^2 pixels,
// then each work-item reads its neighbours from local memory.
__kernel void sobel_local(__global const float *in, __global float *out, int n)
{
    __local float tile[TILE + 2][TILE + 2];
    int tx = get_local_id(0), ty = get_local_id(1);
    int x0 = get_group_id(0) * TILE - 1, y0 = get_group_id(1) * TILE - 1;
    for (int j = ty; j < TILE + 2; j += TILE)
        for (int i = tx; i < TILE + 2; i += TILE)
            tile[j][i] = AT(in, x0 + i, y0 + j, n);
    barrier(CLK_LOCAL_MEM_FENCE);
    int i = tx + 1, j = ty + 1;
    out[get_global_id(1) * n + get_global_id(0)] =
        sobel3(tile[j - 1][i - 1], tile[j - 1][i], tile[j - 1][i + 1],
               tile[j][i - 1],                     tile[j][i + 1],
               tile[j + 1][i - 1], tile[j + 1][i], tile[j + 1][i + 1]);
}
