// A typo on line 5: an operator with no right-hand side.
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    let v = A[i] * B[i] +;
    C[i] = v;
}
