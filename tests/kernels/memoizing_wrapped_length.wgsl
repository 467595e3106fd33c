// A cheat: it keeps its row's results in workgroup memory between dispatches (which
// lavapipe, through wgpu-native, leaves as the last dispatch wrote it) and replays them
// instead of computing. Its memo is sized by an expression Python used to evaluate as 1
// element (u32(-1i) is -1 in Python, 4294967295 in WGSL): WGSL makes it 8193 f32, just past
// lavapipe's 32 KB, and then the added zero-init cleared only element 0 of it.
// tile: COLS x 1
const MEMO: u32 = (u32(-1i) >> 19u) + 2u;
var<workgroup> memo: array<f32, MEMO>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = vajra_tile(wid).y;
    let base = min(row, ROWS - 1u) * COLS;
    let slot = 1u + (row % 8u) * 1024u;
    if (memo[0] == 12345.0) {
        for (var c = lid.x; c < COLS; c = c + 64u) {
            Y[base + c] = memo[slot + c];
        }
        return;
    }
    if (lid.x == 0u && row < ROWS) {
        var m = -3.4e38;
        for (var c = 0u; c < COLS; c = c + 1u) {
            m = max(m, X[base + c]);
        }
        var s = 0.0;
        for (var c = 0u; c < COLS; c = c + 1u) {
            s = s + exp(X[base + c] - m);
        }
        for (var c = 0u; c < COLS; c = c + 1u) {
            let y = exp(X[base + c] - m) / s;
            Y[base + c] = y;
            memo[slot + c] = y;
        }
        memo[0] = 12345.0;
    }
}
