// Naive attention: one invocation per query row. Two walks over the keys: the row's
// largest score, then exp(score - max) summed and V's rows accumulated by that weight.
// tile: 64*D x 1
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let i = t.x * 64u + lid.x;
    if (t.y >= TILES_Y || i >= S) {
        return;
    }
    let head = t.y * S * D;
    let qrow = head + i * D;
    let scale = 1.0 / sqrt(f32(D));
    var keys = S;
    if (MASK == 2u) {
        keys = i + 1u;
    }
    var m = -3.0e38;
    for (var j = 0u; j < keys; j = j + 1u) {
        var dot = 0.0;
        for (var c = 0u; c < D; c = c + 1u) {
            dot = dot + Q[qrow + c] * K[head + j * D + c];
        }
        m = max(m, dot * scale);
    }
    var acc: array<f32, D>;
    var sum = 0.0;
    for (var j = 0u; j < keys; j = j + 1u) {
        var dot = 0.0;
        for (var c = 0u; c < D; c = c + 1u) {
            dot = dot + Q[qrow + c] * K[head + j * D + c];
        }
        let p = exp(dot * scale - m);
        sum = sum + p;
        for (var c = 0u; c < D; c = c + 1u) {
            acc[c] = acc[c] + p * V[head + j * D + c];
        }
    }
    for (var c = 0u; c < D; c = c + 1u) {
        O[qrow + c] = acc[c] / sum;
    }
}
