// Declares input A writable and writes it: refused at the write (line 9), before it runs.
@group(0) @binding(0) var<storage, read_write> A: array<f32>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x >= N || g.y >= M) {
        return;
    }
    A[0] = 1.0;
    C[g.y * N + g.x] = 0.0;
}
