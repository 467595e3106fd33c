// Two passes over a ROWS x COLS matrix, written as a host application would write them:
// a params struct in a uniform buffer, bindings in two groups with a gap, and one entry
// point per pass. Pass 1 sums each row into `sums`; pass 2 writes y = alpha * x / sum.
// tune: WG = 64, 128, 256
struct Params {
    rows: u32,
    cols: u32,
    alpha: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;
@group(1) @binding(0) var<storage, read_write> sums: array<f32>;

override WG: u32 = 64;
var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(WG)
fn row_sums(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.x;
    var acc = 0.0;
    for (var c = lid.x; c < params.cols; c += WG) {
        acc += x[row * params.cols + c];
    }
    partial[lid.x] = acc;
    workgroupBarrier();
    for (var step = WG / 2u; step > 0u; step /= 2u) {
        if (lid.x < step) {
            partial[lid.x] += partial[lid.x + step];
        }
        workgroupBarrier();
    }
    if (lid.x == 0u) {
        sums[row] = partial[0];
    }
}

@compute @workgroup_size(256)
fn normalize(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    if (col >= params.cols) {
        return;
    }
    let i = row * params.cols + col;
    y[i] = params.alpha * x[i] / sums[row];
}
