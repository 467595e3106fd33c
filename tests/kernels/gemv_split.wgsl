// Four rows per workgroup of 64x4: 64 lanes stride along K (neighbours read neighbours),
// then a tree sum per row in workgroup memory.
// tile: 4
var<workgroup> red: array<f32, 256>;

@compute @workgroup_size(64, 4)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    if (t.y >= TILES_Y) {
        return;
    }
    let row = min(t.x * 4u + lid.y, M - 1u);
    var acc = 0.0;
    for (var k = lid.x; k < K; k = k + 64u) {
        acc = fma(A[row * K + k], X[k], acc);
    }
    let me = lid.y * 64u + lid.x;
    red[me] = acc;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s = s >> 1u) {
        if (lid.x < s) {
            red[me] = red[me] + red[me + s];
        }
        workgroupBarrier();
    }
    if (lid.x == 0u && t.x * 4u + lid.y < M) {
        Y[row] = red[me];
    }
}
