// Never finishes on a GPU: inputs lie in [-1, 1], so the exit test is never met.
// lavapipe caps each loop at 65535 trips and then stops the invocation, so on a
// software adapter the kernel is made long instead: one workgroup per output element
// (tile 1x1) and dependent fma chains, far past any test deadline.
// tile: 1x1
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let i = min(t.y * N + t.x, M * N - 1u);
    var acc = A[lid.x % K];
    var k = 0u;
    loop {
        if (A[k % K] > 2.0) {
            break;
        }
        for (var r = 0u; r < 64u; r = r + 1u) {
            acc = fma(acc, 0.999, 1e-3);
        }
        C[i] = acc;
        k = k + 1u;
    }
}
