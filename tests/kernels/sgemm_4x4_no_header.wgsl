// Each invocation computes a 4x4 block, so a 16x16 workgroup covers 64x64 outputs.
// The tile header that says so is missing: planned from @workgroup_size, the grid
// would be 16 times too large.
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let row0 = t.y * 64u + lid.y * 4u;
    let col0 = t.x * 64u + lid.x * 4u;
    for (var i = 0u; i < 4u; i = i + 1u) {
        for (var j = 0u; j < 4u; j = j + 1u) {
            let row = row0 + i;
            let col = col0 + j;
            if (row < M && col < N) {
                var acc = 0.0;
                for (var k = 0u; k < K; k = k + 1u) {
                    acc = fma(A[row * K + k], B[k * N + col], acc);
                }
                C[row * N + col] = acc;
            }
        }
    }
}
