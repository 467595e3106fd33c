// softmax as its built-in baseline was written before 2026-12-07: three walks of one column a
// step. On llvmpipe a row of 30,000 columns takes 90,000 loop steps, past its 65,535
// (tests/test_loop_limit.py; benchmarks/old_baselines/run.sh times it beside the new one).
// Naive softmax: one invocation per row, three passes over it (max, sum, write).
// tile: COLS x 64
@compute @workgroup_size(1, 64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = vajra_tile(wid).y * 64u + lid.y;
    if (row >= ROWS) {
        return;
    }
    let base = row * COLS;
    var m = X[base];
    for (var c = 1u; c < COLS; c = c + 1u) {
        m = max(m, X[base + c]);
    }
    var sum = 0.0;
    for (var c = 0u; c < COLS; c = c + 1u) {
        sum = sum + exp(X[base + c] - m);
    }
    for (var c = 0u; c < COLS; c = c + 1u) {
        Y[base + c] = exp(X[base + c] - m) / sum;
    }
}
