// Sobel with an 18x18 halo tile staged in workgroup memory (clamp-to-edge on load).
// tile: 16x16
var<workgroup> halo: array<f32, 324>;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let t = vajra_tile(wid);
    let ox = i32(t.x * 16u) - 1;
    let oy = i32(t.y * 16u) - 1;
    for (var j = li; j < 324u; j = j + 256u) {
        let px = u32(clamp(ox + i32(j % 18u), 0, i32(W) - 1));
        let py = u32(clamp(oy + i32(j / 18u), 0, i32(H) - 1));
        halo[j] = IMG[py * W + px];
    }
    workgroupBarrier();
    let x = t.x * 16u + lid.x;
    let y = t.y * 16u + lid.y;
    if (x < W && y < H) {
        let c = (lid.y + 1u) * 18u + lid.x + 1u;
        let gx = (halo[c - 17u] + 2.0 * halo[c + 1u] + halo[c + 19u])
               - (halo[c - 19u] + 2.0 * halo[c - 1u] + halo[c + 17u]);
        let gy = (halo[c + 17u] + 2.0 * halo[c + 18u] + halo[c + 19u])
               - (halo[c - 19u] + 2.0 * halo[c - 18u] + halo[c - 17u]);
        OUT[y * W + x] = sqrt(gx * gx + gy * gy);
    }
}
