// Reads its workgroup memory before writing it, through a type alias and a struct, then
// leaves junk there. WebGPU zeroes workgroup memory before every dispatch, so what it reads
// is always zero and its output (the naive product plus what it read) is always right.
// tile: 16x16
alias Scratch = array<u32, 256>;
struct Stash {
    runs: atomic<u32>,
    last: vec4<f32>,
    rows: array<f32, 16>,
}
var<workgroup> scratch: Scratch;
var<workgroup> stash: Stash;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let seen = scratch[li] + atomicLoad(&stash.runs) + u32(stash.last.w != 0.0) + u32(stash.rows[lid.x] != 0.0);
    workgroupBarrier();
    scratch[li] = 0xDEAD0000u + li;
    atomicAdd(&stash.runs, 1u);
    stash.last = vec4<f32>(1.0);
    stash.rows[lid.x] = 3.0;
    let t = vajra_tile(wid);
    let col = t.x * 16u + lid.x;
    let row = t.y * 16u + lid.y;
    if (row >= M || col >= N) {
        return;
    }
    var acc = 0.0;
    for (var k = 0u; k < K; k = k + 1u) {
        acc = fma(A[row * K + k], B[k * N + col], acc);
    }
    C[row * N + col] = acc + f32(seen) * 1000.0;
}
