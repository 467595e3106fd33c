// layernorm_row.wgsl with the last three steps of each tree sum (strides 4, 2, 1) left without
// a barrier: "the eight lanes of a SIMD chunk run in lockstep". Undefined behaviour in WGSL,
// and it verifies on lavapipe and SwiftShader, which do run them so. Written for Vajra's tests.
// tile: COLS x 1
var<workgroup> red: array<f32, 128>;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = vajra_tile(wid).y;
    let base = min(row, ROWS - 1u) * COLS;
    var sum = 0.0;
    for (var c = lid.x; c < COLS; c = c + 128u) {
        sum = sum + X[base + c];
    }
    red[lid.x] = sum;
    workgroupBarrier();
    for (var s = 64u; s > 4u; s = s >> 1u) {
        if (lid.x < s) {
            red[lid.x] = red[lid.x] + red[lid.x + s];
        }
        workgroupBarrier();
    }
    for (var s = 4u; s > 0u; s = s >> 1u) {
        if (lid.x < s) {
            red[lid.x] = red[lid.x] + red[lid.x + s];
        }
    }
    workgroupBarrier();
    let mean = red[0] / f32(COLS);
    workgroupBarrier();
    var sq = 0.0;
    for (var c = lid.x; c < COLS; c = c + 128u) {
        let d = X[base + c] - mean;
        sq = sq + d * d;
    }
    red[lid.x] = sq;
    workgroupBarrier();
    for (var s = 64u; s > 4u; s = s >> 1u) {
        if (lid.x < s) {
            red[lid.x] = red[lid.x] + red[lid.x + s];
        }
        workgroupBarrier();
    }
    for (var s = 4u; s > 0u; s = s >> 1u) {
        if (lid.x < s) {
            red[lid.x] = red[lid.x] + red[lid.x + s];
        }
    }
    workgroupBarrier();
    let rstd = inverseSqrt(red[0] / f32(COLS) + 1e-5);
    if (row < ROWS) {
        for (var c = lid.x; c < COLS; c = c + 128u) {
            Y[base + c] = (X[base + c] - mean) * rstd * GAMMA[c] + BETA[c];
        }
    }
}
