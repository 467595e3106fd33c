// Vectorized conv1d: four outputs per invocation, written as one vec4 (needs N % 4 == 0).
// tile: 1024
@group(0) @binding(2) var<storage, read_write> Y: array<vec4<f32>>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let i = (t.x * 256u + lid.x) * 4u;
    if (t.y >= TILES_Y || i >= N) {
        return;
    }
    var acc = vec4<f32>(0.0);
    for (var k = 0u; k < K; k = k + 1u) {
        let x = vec4<f32>(X[i + k], X[i + k + 1u], X[i + k + 2u], X[i + k + 3u]);
        acc = fma(x, vec4<f32>(W[k]), acc);
    }
    Y[i / 4u] = acc;
}
