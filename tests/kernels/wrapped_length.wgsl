// softmax_row with a workgroup array sized by `(u32(-1i) >> 19u) + 2u`: 8193 vec4<f32> in WGSL
// (131 KB, four times lavapipe's 32 KB limit), 1 element in Python's arithmetic.
// tile: COLS x 1
const LEN: u32 = (u32(-1i) >> 19u) + 2u;
var<workgroup> big: array<vec4<f32>, LEN>;
var<workgroup> red: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = vajra_tile(wid).y;
    let base = min(row, ROWS - 1u) * COLS;
    var m = -3.4e38;
    for (var c = lid.x; c < COLS; c = c + 256u) {
        m = max(m, X[base + c]);
    }
    red[lid.x] = m;
    workgroupBarrier();
    for (var s = 128u; s > 0u; s = s >> 1u) {
        if (lid.x < s) {
            red[lid.x] = max(red[lid.x], red[lid.x + s]);
        }
        workgroupBarrier();
    }
    let rowmax = red[0];
    workgroupBarrier();
    var sum = 0.0;
    for (var c = lid.x; c < COLS; c = c + 256u) {
        sum = sum + exp(X[base + c] - rowmax);
    }
    red[lid.x] = sum;
    workgroupBarrier();
    for (var s = 128u; s > 0u; s = s >> 1u) {
        if (lid.x < s) {
            red[lid.x] = red[lid.x] + red[lid.x + s];
        }
        workgroupBarrier();
    }
    big[lid.x] = vec4<f32>(red[0]);
    let total = big[0].x;
    if (row < ROWS) {
        for (var c = lid.x; c < COLS; c = c + 256u) {
            Y[base + c] = exp(X[base + c] - rowmax) / total;
        }
    }
}
