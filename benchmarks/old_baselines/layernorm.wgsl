// Naive LayerNorm: one invocation per row, three passes over it (mean, variance, write).
// tile: COLS x 64
@compute @workgroup_size(1, 64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = vajra_tile(wid).y * 64u + lid.y;
    if (row >= ROWS) {
        return;
    }
    let base = row * COLS;
    var sum = 0.0;
    for (var c = 0u; c < COLS; c = c + 1u) {
        sum = sum + X[base + c];
    }
    let mean = sum / f32(COLS);
    var sq = 0.0;
    for (var c = 0u; c < COLS; c = c + 1u) {
        let d = X[base + c] - mean;
        sq = sq + d * d;
    }
    let rstd = inverseSqrt(sq / f32(COLS) + 1e-5);
    for (var c = 0u; c < COLS; c = c + 1u) {
        Y[base + c] = (X[base + c] - mean) * rstd * GAMMA[c] + BETA[c];
    }
}
