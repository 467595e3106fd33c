
@group(0) @binding(0) var<storage, read_write> inp : array<{{precision}}>;
@group(0) @binding(1) var<storage, read_write> preatt : array<{{precision}}>;
@group(0) @binding(2) var<storage, read_write> att : array<{{precision}}>;
@group(0) @binding(3) var<storage, read_write> out : array<{{precision}}>;
@group(0) @binding(4) var<uniform> params : Params;
struct Params {
    B: u32,
    T: u32,
    C: u32,
    NH: u32,
};
const NEG_INFINITY: f32 = -3.0e38; // WGSL has problem representing -3.4028235e+38
@compute @workgroup_size({{workgroupSize}})
fn main(@builtin(global_invocation_id) global_id : vec3<u32>) {
    let B : u32 = params.B;
    let T : u32 = params.T;
    let C : u32 = params.C;
    let NH : u32 = params.NH;
    let C3 : u32 = C * 3u;
    let hs : u32 = C / NH;
    let scale : {{precision}} = 1.0 / sqrt({{precision}}(hs));

    let b : u32 = global_id.x / T;
    let t : u32 = global_id.x % T;

    if (b < B && t < T) {
        for (var h : u32 = 0u; h < NH; h++) {
            let query_t : u32 = b * T * C3 + t * C3 + h * hs;
            let preatt_bth : u32 = b * NH * T * T + h * T * T + t * T;
            let att_bth : u32 = b * NH * T * T + h * T * T + t * T;

            // pass 1: calculate query dot key and maxval
            var maxval : {{precision}} = NEG_INFINITY;
            for (var t2 : u32 = 0u; t2 <= t; t2++) {
                let key_t2 : u32 = b * T * C3 + t2 * C3 + h * hs + C; // +C because it's key

                // (query_t) dot (key_t2)
                var val : {{precision}} = 0.0;
                for (var i : u32 = 0u; i < hs; i++) {
                    val += inp[query_t + i] * inp[key_t2 + i];
                }
                val *= scale;
                if (val > maxval) {
                    maxval = val;
                }

                preatt[preatt_bth + t2] = val;
            }

            // pass 2: calculate the exp and keep track of sum
            // maxval is being calculated and subtracted only for numerical stability
            var expsum : {{precision}} = 0.0;
            for (var t2 : u32 = 0u; t2 <= t; t2++) {
                let expv : {{precision}} = exp(preatt[preatt_bth + t2] - maxval);
                expsum += expv;
                att[att_bth + t2] = expv;
            }
            let expsum_inv : {{precision}} = select(0.0, 1.0 / expsum, expsum != 0.0);

            // pass 3: normalize to get the softmax
            for (var t2 : u32 = 0u; t2 < T; t2++) {
                if (t2 <= t) {
                    att[att_bth + t2] *= expsum_inv;
                } else {
                    // causal attention mask. not strictly necessary to set to zero here
                    // only doing this explicitly for debugging and checking to PyTorch
                    att[att_bth + t2] = 0.0;
                }
            }

            // pass 4: accumulate weighted values into the output of attention
            let out_bth : u32 = b * T * C + t * C + h * hs;
            for (var i : u32 = 0u; i < hs; i++) { out[out_bth + i] = 0.0; }
            for (var t2 : u32 = 0u; t2 <= t; t2++) {
                let value_t2 : u32 = b * T * C3 + t2 * C3 + h * hs + C * 2u; // +C*2 because it's value
                let att_btht2 : {{precision}} = att[att_bth + t2];
                for (var i : u32 = 0u; i < hs; i++) {
                    out[out_bth + i] += att_btht2 * inp[value_t2 + i];
                }
            }
        }
    }
}
