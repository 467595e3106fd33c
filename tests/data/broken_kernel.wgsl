// A deliberately broken candidate (tests inject it with --kernel / RunConfig.extra_kernels).
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let col = t.x * 16u + lid.x;
    let row = t.y * 16u + lid.y;
    C[row * N + col] = A[row * K] * ;
}
