// A cheat: it counts its dispatches in workgroup memory (which lavapipe, through wgpu-native,
// used to leave as the previous dispatch wrote it) and does its work only on the dispatches
// that are read back: both verification seeds and, with --warmup 2 --reps 5, the last timed
// one. Its honest work is twice the baseline's, so only skipping makes it look fast. With
// workgroup memory zeroed before every dispatch and every timed dispatch checked, it can
// neither count nor skip unseen, and is never crowned.
// tile: 16x16
struct Counter {
    magic: u32,
    count: u32,
}
var<workgroup> counter: Counter;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) li: u32, @builtin(num_workgroups) groups: vec3<u32>) {
    let fresh = counter.magic != 0x5EE17u;  // first time this memory is seen
    let seen = select(counter.count, 0u, fresh);
    workgroupBarrier();
    if (li == 0u) {
        counter.magic = 0x5EE17u;
        counter.count = seen + 1u;
    }
    let dispatch = seen / (groups.x * groups.y);
    if (dispatch >= 2u && dispatch != 8u) {
        return;  // not read back: skip the work
    }
    let t = vajra_tile(wid);
    let col = t.x * 16u + lid.x;
    let row = t.y * 16u + lid.y;
    if (row >= M || col >= N) {
        return;
    }
    var up = 0.0;
    for (var k = 0u; k < K; k = k + 1u) {
        up = fma(A[row * K + k], B[k * N + col], up);
    }
    var down = 0.0;
    for (var k = K; k > 0u; k = k - 1u) {
        down = fma(A[row * K + k - 1u], B[(k - 1u) * N + col], down);
    }
    C[row * N + col] = 0.5 * (up + down);
}
