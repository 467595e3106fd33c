
@group(0) @binding(0) var<storage, read> A: array<{{precision}}>;
@group(0) @binding(1) var<storage, read_write> B: array<{{precision}}>;
@compute @workgroup_size({{workgroupSize}})
fn main(
    @builtin(global_invocation_id) globalID : vec3<u32>) {
    let bRow: u32 = globalID.x;
    let bCol: u32 = globalID.y;
    B[bRow * {{M}} + bCol] = A[bCol * {{N}} + bRow];
}
