// 4x4 outputs per invocation in registers; 32x16 invocations (512) cover 128x64 outputs.
// tile: 128 x 64
@compute @workgroup_size(32, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let row0 = t.y * 64u + lid.y * 4u;
    let col0 = t.x * 128u + lid.x * 4u;
    var acc: array<vec4<f32>, 4>;
    for (var k = 0u; k < K; k = k + 1u) {
        var b = vec4<f32>(0.0);
        for (var j = 0u; j < 4u; j = j + 1u) {
            b[j] = B[k * N + min(col0 + j, N - 1u)];
        }
        for (var i = 0u; i < 4u; i = i + 1u) {
            let a = A[min(row0 + i, M - 1u) * K + k];
            acc[i] = fma(vec4<f32>(a), b, acc[i]);
        }
    }
    for (var i = 0u; i < 4u; i = i + 1u) {
        for (var j = 0u; j < 4u; j = j + 1u) {
            if (row0 + i < M && col0 + j < N) {
                C[(row0 + i) * N + col0 + j] = acc[i][j];
            }
        }
    }
}
