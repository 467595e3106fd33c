// Shared-memory tiled SGEMM: 16x16 tiles of A and B staged in workgroup memory.
// tile: 16x16
var<workgroup> As: array<array<f32, 16>, 16>;
var<workgroup> Bs: array<array<f32, 16>, 16>;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let row = t.y * 16u + lid.y;
    let col = t.x * 16u + lid.x;
    var acc = 0.0;
    for (var k0 = 0u; k0 < K; k0 = k0 + 16u) {
        let ak = k0 + lid.x;
        let bk = k0 + lid.y;
        As[lid.y][lid.x] = select(0.0, A[min(row, M - 1u) * K + min(ak, K - 1u)], row < M && ak < K);
        Bs[lid.y][lid.x] = select(0.0, B[min(bk, K - 1u) * N + min(col, N - 1u)], bk < K && col < N);
        workgroupBarrier();
        for (var k = 0u; k < 16u; k = k + 1u) {
            acc = fma(As[lid.y][k], Bs[k][lid.x], acc);
        }
        workgroupBarrier();
    }
    if (row < M && col < N) {
        C[row * N + col] = acc;
    }
}
