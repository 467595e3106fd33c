// attention at its seed size: the library's library: attention/flash wx=8 wy=16 tq=1 bk=16 sg=0 (written by Vajra's generator)
// Attention, FlashAttention-2 style: 16 query rows per workgroup of 8x16, keys in
// blocks of 16 through workgroup memory, 1x2 scores and 1x8 outputs per lane; online softmax
// (running max and sum per row), block maxima reduced by workgroup memory.
// tile: 16*D x 1
var<workgroup> Qs: array<f32, 1040>;
var<workgroup> Ks: array<f32, 1040>;
var<workgroup> Vs: array<f32, 1024>;
var<workgroup> Ps: array<f32, 272>;
var<workgroup> red: array<f32, 128>;
@compute @workgroup_size(8, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let t = vajra_tile(wid);
    if (t.y >= TILES_Y) {
        return;
    }
    let q0 = t.x * 16u;
    let head = t.y * S * D;
    let qscale = 1.4426950408889634 / sqrt(f32(D));
    for (var qi = li; qi < 1024u; qi = qi + 128u) {
        let qr = qi / 64u;
        let qc = qi % 64u;
        Qs[qr * 65u + qc] = Q[head + min(q0 + qr, S - 1u) * D + qc] * qscale;
    }
    let r0 = lid.y + 0u;
    var m0 = -1.0e30;
    var l0 = 0.0;
    var o0_0 = 0.0;
    var o0_1 = 0.0;
    var o0_2 = 0.0;
    var o0_3 = 0.0;
    var o0_4 = 0.0;
    var o0_5 = 0.0;
    var o0_6 = 0.0;
    var o0_7 = 0.0;
    var kend = S;
    if (MASK == 2u) { kend = min(S, q0 + 16u); }
    for (var k0 = 0u; k0 < kend; k0 = k0 + 16u) {
        for (var si = li; si < 1024u; si = si + 128u) {
            let sj = si / 64u;
            let sc = si % 64u;
            let key = k0 + sj;
            let g = head + min(key, S - 1u) * D + sc;
            Ks[sj * 65u + sc] = select(0.0, K[g], key < S);
            Vs[si] = select(0.0, V[g], key < S);
        }
        workgroupBarrier();
        var s0_0 = 0.0;
        var s0_1 = 0.0;
        for (var c = 0u; c < 64u; c = c + 1u) {
            let qv0 = Qs[r0 * 65u + c];
            let kv0 = Ks[(lid.x + 0u) * 65u + c];
            let kv1 = Ks[(lid.x + 8u) * 65u + c];
            s0_0 = fma(qv0, kv0, s0_0);
            s0_1 = fma(qv0, kv1, s0_1);
        }
        let key0 = k0 + lid.x + 0u;
        s0_0 = select(-1.0e30, s0_0, key0 < S && (MASK != 2u || key0 <= q0 + r0));
        let key1 = k0 + lid.x + 8u;
        s0_1 = select(-1.0e30, s0_1, key1 < S && (MASK != 2u || key1 <= q0 + r0));
        var bm0 = max(s0_0, s0_1);
        red[r0 * 8u + lid.x] = bm0;
        workgroupBarrier();
        bm0 = red[r0 * 8u];
        for (var ri = 1u; ri < 8u; ri = ri + 1u) { bm0 = max(bm0, red[r0 * 8u + ri]); }
        workgroupBarrier();
        let mn0 = max(m0, bm0);
        let al0 = exp2(m0 - mn0);
        m0 = mn0;
        l0 = l0 * al0;
        let p0_0 = exp2(s0_0 - mn0);
        l0 = l0 + p0_0;
        Ps[r0 * 17u + lid.x + 0u] = p0_0;
        let p0_1 = exp2(s0_1 - mn0);
        l0 = l0 + p0_1;
        Ps[r0 * 17u + lid.x + 8u] = p0_1;
        o0_0 = o0_0 * al0;
        o0_1 = o0_1 * al0;
        o0_2 = o0_2 * al0;
        o0_3 = o0_3 * al0;
        o0_4 = o0_4 * al0;
        o0_5 = o0_5 * al0;
        o0_6 = o0_6 * al0;
        o0_7 = o0_7 * al0;
        workgroupBarrier();
        for (var c = 0u; c < 16u; c = c + 1u) {
            let w0 = Ps[r0 * 17u + c];
            let v0 = Vs[c * 64u + lid.x + 0u];
            let v1 = Vs[c * 64u + lid.x + 8u];
            let v2 = Vs[c * 64u + lid.x + 16u];
            let v3 = Vs[c * 64u + lid.x + 24u];
            let v4 = Vs[c * 64u + lid.x + 32u];
            let v5 = Vs[c * 64u + lid.x + 40u];
            let v6 = Vs[c * 64u + lid.x + 48u];
            let v7 = Vs[c * 64u + lid.x + 56u];
            o0_0 = fma((w0), v0, o0_0);
            o0_1 = fma((w0), v1, o0_1);
            o0_2 = fma((w0), v2, o0_2);
            o0_3 = fma((w0), v3, o0_3);
            o0_4 = fma((w0), v4, o0_4);
            o0_5 = fma((w0), v5, o0_5);
            o0_6 = fma((w0), v6, o0_6);
            o0_7 = fma((w0), v7, o0_7);
        }
        workgroupBarrier();
    }
    red[r0 * 8u + lid.x] = l0;
    workgroupBarrier();
    l0 = red[r0 * 8u];
    for (var ri = 1u; ri < 8u; ri = ri + 1u) { l0 = (l0 + red[r0 * 8u + ri]); }
    workgroupBarrier();
    if (q0 + r0 < S) {
        let inv0 = 1.0 / l0;
        O[head + (q0 + r0) * D + lid.x + 0u] = o0_0 * inv0;
        O[head + (q0 + r0) * D + lid.x + 8u] = o0_1 * inv0;
        O[head + (q0 + r0) * D + lid.x + 16u] = o0_2 * inv0;
        O[head + (q0 + r0) * D + lid.x + 24u] = o0_3 * inv0;
        O[head + (q0 + r0) * D + lid.x + 32u] = o0_4 * inv0;
        O[head + (q0 + r0) * D + lid.x + 40u] = o0_5 * inv0;
        O[head + (q0 + r0) * D + lid.x + 48u] = o0_6 * inv0;
        O[head + (q0 + r0) * D + lid.x + 56u] = o0_7 * inv0;
    }
}
