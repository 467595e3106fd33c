// One workgroup per row: its elements are counted into a histogram in workgroup memory
// (atomics, which Vajra zeroes before every dispatch as WebGPU does), then the row's
// bins are written once. WG invocations stride along the row.
// tune: WG = 32, 64, 128, 256
// tile: BINS x 1
override WG: u32 = 128;

var<workgroup> bins: array<atomic<u32>, BINS>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    if (t.y >= TILES_Y) {
        return;
    }
    let base = t.y * COLS;
    for (var c = lid.x; c < COLS; c = c + WG) {
        atomicAdd(&bins[min(X[base + c], BINS - 1u)], 1u);
    }
    workgroupBarrier();
    for (var b = lid.x; b < BINS; b = b + WG) {
        H[t.y * BINS + b] = atomicLoad(&bins[b]);
    }
}
