// Compiles, but zeroes every odd row: verification must reject it.
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let col = t.x * 16u + lid.x;
    let row = t.y * 16u + lid.y;
    if (row >= M || col >= N) {
        return;
    }
    var acc = 0.0;
    for (var k = 0u; k < K; k = k + 1u) {
        acc = acc + A[row * K + k] * B[k * N + col];
    }
    C[row * N + col] = acc * f32(row % 2u);
}
