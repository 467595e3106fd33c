
@group(0) @binding(0) var<storage, read_write> inp: array<{{precision}}>;
@group(0) @binding(1) var<storage, read_write> weight: array<{{precision}}>;
@group(0) @binding(2) var<storage, read_write> bias: array<{{precision}}>;
@group(0) @binding(3) var<storage, read_write> out: array<{{precision}}>;
@group(0) @binding(4) var<storage, read_write> mean: array<{{precision}}>;
@group(0) @binding(5) var<storage, read_write> rstd: array<{{precision}}>;
@group(0) @binding(6) var<uniform> params: Params;

struct Params {
    B: u32,
    T: u32,
    C: u32,
};

@compute @workgroup_size({{workgroupSize}})
fn main(@builtin(global_invocation_id) GlobalInvocationID: vec3<u32>) {
    let idx: u32 = GlobalInvocationID.x;

    let B : u32 = params.B;
    let T : u32 = params.T;
    let C : u32 = params.C;

    if (idx >= B * T) { return; }

    let b : u32 = idx / T;
    let t : u32 = idx % T;

    // Calculate mean
    var sum: f32 = 0.0;
    for (var i: u32 = 0; i < C; i = i + 1) {
        sum += inp[b * T * C + t * C + i];
    }
    let mean_val: f32 = sum / f32(C);
    mean[b * T + t] = mean_val;

    // Calculate rstd
    sum = 0.0;
    for (var i: u32 = 0; i < C; i = i + 1) {
        let diff: f32 = inp[b * T * C + t * C + i] - mean_val;
        sum += diff * diff;
    }
    let rstd_val: f32 = 1.0 / sqrt(sum / f32(C) + 1e-5);
    rstd[b * T + t] = rstd_val;

    for (var i: u32 = 0; i < C; i = i + 1) {
        let n: f32 = rstd_val * (inp[b * T * C + t * C + i] - mean_val);
        out[b * T * C + t * C + i] = n * weight[i] + bias[i];
    }
}
