
@group(0) @binding(0) var<storage, read_write> inp : array<i32>;
@group(0) @binding(1) var<storage, read_write> wte : array<{{precision}}>;
@group(0) @binding(2) var<storage, read_write> wpe : array<{{precision}}>;
@group(0) @binding(3) var<storage, read_write> out : array<{{precision}}>;
@group(0) @binding(4) var<uniform> params : Params;
struct Params {
    B: u32,
    T: u32,
    C: u32,
};
@compute @workgroup_size({{workgroupSize}})
fn main(@builtin(global_invocation_id) global_id : vec3<u32>) {
    let B : u32 = params.B;
    let T : u32 = params.T;
    let C : u32 = params.C;
    let b : u32 = global_id.x / T;
    let t : u32 = global_id.x % T;
    if (b < B && t < T) {
        let ix : u32 = u32(inp[b * T + t]);
        let out_bt : u32 = b * T * C + t * C;
        for (var i : u32 = 0u; i < C; i++) {
            out[out_bt + i] = wte[ix * C + i] + wpe[t * C + i];
        }
    }
}
