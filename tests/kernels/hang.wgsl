// Hangs on every adapter: it spins until the output holds a value that nothing ever
// writes (the output is poisoned before every dispatch, and adding 0 leaves it so).
// On a GPU the loop never ends. lavapipe ends any loop after 65535 trips, so there the
// spin is made long instead: every invocation (256 per workgroup, one workgroup per output
// element) makes 65535 x 16 atomic read-modify-writes, which cannot be merged or skipped:
// an hour and more for even a small problem, far past any deadline.
// tile: 1x1
@group(0) @binding(2) var<storage, read_write> C: array<atomic<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    loop {
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
        if (atomicAdd(&C[lid.x], 0u) == 0x600DF00Du) { return; }
    }
}
