// Writes a NaN built from its bits at run time. `z / z` with z = 0 is no good here:
// NVIDIA's compiler folds it to 1. A bit pattern from bitcast cannot be folded away,
// and it is not the pattern Vajra poisons outputs with, so it reads as computed.
@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x >= N || g.y >= M) {
        return;
    }
    let bits = 0x7fc00000u | (bitcast<u32>(A[g.x]) & 1u);
    C[g.y * N + g.x] = bitcast<f32>(bits);
}
