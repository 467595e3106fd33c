
@group(0) @binding(0) var<storage, read_write> inp : array<{{precision}}>;
@group(0) @binding(1) var<storage, read_write> weight : array<{{precision}}>;
@group(0) @binding(2) var<storage, read_write> bias : array<{{precision}}>;
@group(0) @binding(3) var<storage, read_write> out : array<{{precision}}>;
@group(0) @binding(4) var<uniform> params : Params;
struct Params {
    B: u32,
    T: u32,
    C: u32,
    OC: u32,
};
@compute @workgroup_size({{workgroupSize}})
fn main(@builtin(global_invocation_id) global_id : vec3<u32>) {
    let B : u32 = params.B;
    let T : u32 = params.T;
    let C : u32 = params.C;
    let OC : u32 = params.OC;
    // N == B*T == global_id.x
    let b : u32 = global_id.x / T;
    let t : u32 = global_id.x % T;
    if (arrayLength(&bias) == 1) {
      if (b < B && t < T) {
          let bt : u32 = global_id.x;
          for (var o : u32 = 0u; o < OC; o++) {
              var val : {{precision}} = 0;
              for (var i : u32 = 0u; i < C; i++) {
                  val += inp[bt * C + i] * weight[o * C + i];
              }
              out[bt * OC + o] = val;
          }
      }
    } else {
      if (b < B && t < T) {
          let bt : u32 = global_id.x;
          for (var o : u32 = 0u; o < OC; o++) {
              var val : {{precision}} = bias[o];
              for (var i : u32 = 0u; i < C; i++) {
                  val += inp[bt * C + i] * weight[o * C + i];
              }
              out[bt * OC + o] = val;
          }
      }
    }
}

