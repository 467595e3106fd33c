"""The WGSL of the GPU judge (gpu_verify.py): two passes per output, a few hundred bytes out.

Every element is classified against the float64 reference, held on the GPU as two
f32 words (``hi = f32(ref)``, ``lo = f32(ref - hi)``, together ``ref`` to ~2^-48
relative) or, for integer outputs, as the exact integer. The arithmetic is f32, so
an element is only *decided* on the GPU when it is clear of the tolerance limit by
far more than the f32 error of the test (``EPS`` relative, ``TINY`` absolute, and
``HI_ERR`` of |ref| for what ``hi + lo`` leaves out): sure pass or sure fail. An
element inside that band is *borderline* and goes to the host, which decides it in
float64 with the CPU judge's own formula (verify.measures). So the GPU path passes
and fails exactly the elements the CPU path does, never more leniently.

``scan`` counts sure failures, never-written (poison) and non-finite elements with
the first index of each, lists borderline elements, and takes the largest key of
the two error measures (error over the limit, relative error): order-preserving u32
keys of the f32 value, 0 only for an element equal to its reference. ``collect``
then lists every element whose key is within ``WINDOW`` units of the largest, so
the host can pick the worst one in float64 (ties to the lowest index, as numpy's
argmax does), and the lowest index at the largest key (exact for integer outputs
with rtol = 0, whose key is the error itself).
"""

from __future__ import annotations

CAP = 16  # entries per list (borderline, worst candidates, largest relative error)
WINDOW = 64  # key units (f32 ulps) below the largest key still listed; > 2x the keys' error
HEADER = 16
WORDS = HEADER + 6 * CAP  # 112 words: the whole read-back per output is 448 bytes
REGION = 512  # bytes between outputs' regions (bind offsets must be 256-aligned)
# header words
SURE_BAD, UNWRITTEN, FIRST_UNWRITTEN, NONFINITE, FIRST_NONFINITE = 0, 1, 2, 3, 4
BORDER_N, MAX_R, MAX_M, R_N, M_N, R_FIRST, POISON = 5, 6, 7, 8, 9, 10, 11
BORDER_LIST, R_LIST, M_LIST = HEADER, HEADER + 2 * CAP, HEADER + 4 * CAP
# The CPU's error-over-limit for a zero limit is d / 1e-300: inf from this integer on.
SATURATES = 179769314

HEAD = """
@group(0) @binding(0) var<storage, read> out: array<u32>;
@group(0) @binding(1) var<storage, read> hi: array<u32>;
@group(0) @binding(2) var<storage, read> lo: array<f32>;
@group(0) @binding(3) var<storage, read_write> st: array<atomic<u32>, {words}>;
const COUNT: u32 = {count}u;
const ATOL: f32 = {atol};
const RTOL: f32 = {rtol};
const FLOOR: f32 = {floor};
const CAP: u32 = {cap}u;
const WINDOW: u32 = {window}u;
const EPS: f32 = 3.814697265625e-06;      // 2^-18: ~8x the f32 error of the test
const TINY: f32 = 7.52316384526264e-37;   // 2^-120: flushed subnormals
const HI_ERR: f32 = 5.684341886080802e-14; // 2^-44 of |ref|: what hi + lo leaves out, and more
const BIG: f32 = 3.0e38;
const SAT_F: f32 = 179769296.0;
const SAT_I: u32 = {sat}u;
struct E {{ bits: u32, verdict: u32, unwritten: bool, nonfinite: bool, rkey: u32, mkey: u32 }}

fn classify(e: ptr<function, E>, d: f32, lim: f32, slack: f32) {{
    if (d > lim + slack) {{ (*e).verdict = 1u; }} else if (!(d <= lim - slack)) {{ (*e).verdict = 2u; }}
}}

fn fkey(x: f32) -> u32 {{ return max(bitcast<u32>(min(x, BIG)), 1u); }}
"""

FLOAT_ELEMENT = """
fn element(i: u32, poison: u32) -> E {{
    var e: E;
{load}
    e.bits = bits;
    if (!finite) {{
        e.verdict = 1u;
        e.unwritten = bits == poison;
        e.nonfinite = bits != poison;
        return e;
    }}
    let hb = hi[i];
    let h = bitcast<f32>(hb);
    let l = lo[i];
    let ob = bitcast<u32>(o);
    if ((ob == hb || ((ob | hb) & 0x7fffffffu) == 0u) && (bitcast<u32>(l) & 0x7fffffffu) == 0u) {{
        return e;  // equal to the float64 reference: error 0, keys 0
    }}
    let d = abs((o - h) - l);
    let ah = abs(h);
    let lim = ATOL + RTOL * ah;
    classify(&e, d, lim, lim * EPS + ah * HI_ERR + TINY);
    let zero = ATOL == 0.0 && (RTOL == 0.0 || (hb & 0x7fffffffu) == 0u);
    if (zero) {{ e.rkey = 0x80000000u | (bitcast<u32>(min(d, SAT_F)) >> 1u); }} else {{ e.rkey = fkey(d / lim); }}
    e.mkey = fkey(d / max(ah, FLOOR));
    return e;
}}
"""

LOAD = {
    "f32": """    let bits = out[i];
    let o = bitcast<f32>(bits);
    let finite = (bits & 0x7f800000u) != 0x7f800000u;""",
    "f16": """    let word = out[i / 2u];
    let bits = (word >> (16u * (i % 2u))) & 0xffffu;
    let o = unpack2x16float(word)[i % 2u];
    let finite = (bits & 0x7c00u) != 0x7c00u;""",
}

INT_ELEMENT = """
fn element(i: u32, poison: u32) -> E {{
    var e: E;
    let a = out[i];
    let b = hi[i];
    e.bits = a;
    let d = select(a - b, b - a, {less});
    e.unwritten = a == poison && d != 0u;
    if (d == 0u) {{ return e; }}
    let df = f32(d);
    let ab = {absb};
    let lim = ATOL + RTOL * ab;
    classify(&e, df, lim, lim * EPS + TINY);
    if (RTOL == 0.0) {{
        e.rkey = select(d, min(d, SAT_I), ATOL == 0.0);  // the limit is one constant: d orders exactly
    }} else if (ATOL == 0.0 && b == 0u) {{
        e.rkey = 0x80000000u | (bitcast<u32>(min(df, SAT_F)) >> 1u);
    }} else {{
        e.rkey = fkey(df / lim);
    }}
    e.mkey = fkey(df / max(ab, FLOOR));
    return e;
}}
"""

INT = {
    "u32": {"less": "a < b", "absb": "f32(b)"},
    "i32": {"less": "bitcast<i32>(a) < bitcast<i32>(b)", "absb": "abs(f32(bitcast<i32>(b)))"},
}

PASSES = """
var<workgroup> w: array<atomic<u32>, 7>;  // bad, unwritten, first, non-finite, first, max r, max m

fn push(list: u32, k: u32, i: u32, bits: u32) {{
    if (k < CAP) {{
        atomicStore(&st[list + 2u * k], i);
        atomicStore(&st[list + 2u * k + 1u], bits);
    }}
}}

@compute @workgroup_size(256)
fn scan(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) li: u32,
        @builtin(num_workgroups) n: vec3<u32>) {{
    if (li < 7u) {{ atomicStore(&w[li], select(0u, 0xffffffffu, li == 2u || li == 4u)); }}
    workgroupBarrier();
    let poison = atomicLoad(&st[{poison}u]);
    var bad = 0u; var unw = 0u; var fu = 0xffffffffu; var nonf = 0u; var fnf = 0xffffffffu;
    var mr = 0u; var mm = 0u;
    for (var i = g.x; i < COUNT; i = i + n.x * 256u) {{
        let e = element(i, poison);
        if (e.verdict == 1u) {{ bad = bad + 1u; }}
        if (e.verdict == 2u) {{ push({border_list}u, atomicAdd(&st[{border_n}u], 1u), i, e.bits); }}
        if (e.unwritten) {{ unw = unw + 1u; fu = min(fu, i); }}
        if (e.nonfinite) {{ nonf = nonf + 1u; fnf = min(fnf, i); }}
        mr = max(mr, e.rkey);
        mm = max(mm, e.mkey);
    }}
    if (bad > 0u) {{ atomicAdd(&w[0], bad); }}
    if (unw > 0u) {{ atomicAdd(&w[1], unw); atomicMin(&w[2], fu); }}
    if (nonf > 0u) {{ atomicAdd(&w[3], nonf); atomicMin(&w[4], fnf); }}
    if (mr > 0u) {{ atomicMax(&w[5], mr); }}
    if (mm > 0u) {{ atomicMax(&w[6], mm); }}
    workgroupBarrier();
    if (li == 0u) {{
        let b = atomicLoad(&w[0]); if (b > 0u) {{ atomicAdd(&st[{sure_bad}u], b); }}
        let u = atomicLoad(&w[1]); if (u > 0u) {{ atomicAdd(&st[{unwritten}u], u); atomicMin(&st[{first_unwritten}u], atomicLoad(&w[2])); }}
        let f = atomicLoad(&w[3]); if (f > 0u) {{ atomicAdd(&st[{nonfinite}u], f); atomicMin(&st[{first_nonfinite}u], atomicLoad(&w[4])); }}
        let r = atomicLoad(&w[5]); if (r > 0u) {{ atomicMax(&st[{max_r}u], r); }}
        let m = atomicLoad(&w[6]); if (m > 0u) {{ atomicMax(&st[{max_m}u], m); }}
    }}
}}

@compute @workgroup_size(256)
fn collect(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {{
    let mr = atomicLoad(&st[{max_r}u]);
    let mm = atomicLoad(&st[{max_m}u]);
    // the worst element is not reported when never-written or non-finite ones failed it
    let moot = atomicLoad(&st[{sure_bad}u]) > 0u
        && atomicLoad(&st[{unwritten}u]) + atomicLoad(&st[{nonfinite}u]) > 0u;
    if (moot || (mr == 0u && mm == 0u)) {{ return; }}
    let tr = select(mr - WINDOW, 1u, mr <= WINDOW);
    let tm = select(mm - WINDOW, 1u, mm <= WINDOW);
    let poison = atomicLoad(&st[{poison}u]);
    for (var i = g.x; i < COUNT; i = i + n.x * 256u) {{
        let e = element(i, poison);
        if (mr > 0u && e.rkey >= tr) {{
            push({r_list}u, atomicAdd(&st[{r_n}u], 1u), i, e.bits);
            if (e.rkey == mr) {{ atomicMin(&st[{r_first}u], i); }}
        }}
        if (mm > 0u && e.mkey >= tm) {{ push({m_list}u, atomicAdd(&st[{m_n}u], 1u), i, e.bits); }}
    }}
}}
"""


def judge_source(dtype: str, count: int, atol: float, rtol: float, floor: float) -> str:
    """The judge module for one output of ``dtype`` with ``count`` elements."""
    head = HEAD.format(words=WORDS, count=count, atol=f"{atol:.9e}", rtol=f"{rtol:.9e}",
                       floor=f"{min(floor, 3.0e38):.9e}", cap=CAP, window=WINDOW, sat=SATURATES)
    if dtype in INT:
        element = INT_ELEMENT.format(**INT[dtype])
    else:
        element = FLOAT_ELEMENT.format(load=LOAD[dtype])
    passes = PASSES.format(
        poison=POISON, border_list=BORDER_LIST, border_n=BORDER_N, sure_bad=SURE_BAD,
        unwritten=UNWRITTEN, first_unwritten=FIRST_UNWRITTEN, nonfinite=NONFINITE,
        first_nonfinite=FIRST_NONFINITE, max_r=MAX_R, max_m=MAX_M, r_list=R_LIST, r_n=R_N,
        r_first=R_FIRST, m_list=M_LIST, m_n=M_N)
    return head + element + passes
