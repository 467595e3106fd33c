"""Batched 1-D FFT of complex f32 (re, im interleaved), length a power of two, in two passes.

A built-in, declared exactly as a user's workload file is (see the README). X holds BATCH
rows of N complex values; Y gets their forward DFTs (numpy's sign: e^(-2*pi*i*k*n/N),
unnormalised). The baseline is a "four-step" FFT: N = N1 * N2 (both powers of two, at
most 4096, N2 the larger), a row seen as an N2 x N1 matrix. Pass ``cols`` does an
N2-point FFT down each of the N1 columns and multiplies by the twiddle W_N^(n1*k2) into
the scratch buffer T; pass ``rows`` does an N1-point FFT along each of T's N2 rows and
writes it transposed into Y. Each sub-FFT is done by one workgroup, in registers, with
radix-2 Stockham stages exchanged through workgroup memory one component at a time (at
most 4096 f32 = 16 KB, WebGPU's portable limit). ``fft2`` (fft2.py) is the 2-D sibling.

Sizes are refused in one line unless N is a power of two from 4 to 2^24. The tolerance
grows with log2(N) (the rounding of each radix-2 stage) and with sqrt(N) (the size of an
output: the inputs are uniform in [-1, 1]).
"""

from __future__ import annotations

import math
import string

import numpy as np

from vajra_tui import Binding, Pass, Workload
from vajra_tui.engine.workloads.base import SizeError

MAX_LOG = 24  # N1, N2 <= 4096: 4096 f32 fill the portable 16 KB of workgroup memory
PER_WG = 256  # invocations per sub-FFT in the baseline (fewer for short ones)


def log2_of(name: str, value: int, low: int, high: int, workload: str = "fft") -> int:
    """log2(value) when it is a power of two in [2^low, 2^high]; else the size is refused."""
    if value < 1 or value & (value - 1) or not low <= value.bit_length() - 1 <= high:
        raise SizeError(f"{workload}: {name}={value} is not supported: want a power of two from "
                        f"{1 << low} to 2^{high} (the two-pass FFT's sub-lengths are at most 4096)")
    return value.bit_length() - 1


def split(n: int) -> tuple[int, int]:
    """(N1, N2) with N1 * N2 = n, N1 <= N2, both powers of two: the four-step factors."""
    k = log2_of("N", n, 2, MAX_LOG)
    return 1 << (k // 2), 1 << (k - k // 2)


def defines(s: dict[str, int]) -> dict[str, int]:
    """The baseline's template values: the factors and each pass's workgroup size."""
    n1, n2 = split(s["N"])
    return {"FFT_N1": n1, "FFT_N2": n2, "FFT_WA": min(PER_WG, n2 // 2), "FFT_WB": min(PER_WG, n1 // 2)}


def buffer_len(s: dict[str, int]) -> dict[str, int]:
    split(s["N"])  # refuses a length the passes cannot do
    if s["BATCH"] > 65535:
        raise SizeError(f"fft: BATCH={s['BATCH']} is over 65535 (one workgroup row per batch)")
    n = 2 * s["BATCH"] * s["N"]
    return {"X": n, "Y": n, "T": n}


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"X": rng.uniform(-1.0, 1.0, 2 * s["BATCH"] * s["N"]).astype(np.float32)}


def as_complex(flat: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Interleaved (re, im) float values as complex128 of ``shape``."""
    v = flat.astype(np.float64).reshape(*shape, 2)
    return v[..., 0] + 1j * v[..., 1]


def interleaved(z: np.ndarray) -> np.ndarray:
    """complex128 back to the buffers' (re, im) layout, as float64."""
    return np.stack([z.real, z.imag], axis=-1).ravel()


def reference(s: dict[str, int], x: dict[str, np.ndarray]) -> np.ndarray:
    return interleaved(np.fft.fft(as_complex(x["X"], (s["BATCH"], s["N"])), axis=-1))


def tolerance(points: int) -> float:
    """atol for an FFT over ``points`` values: f32 rounding per stage (log2) times the
    outputs' size (sqrt). A twiddle of the wrong sign is off by about sqrt(points)."""
    return 1e-6 * math.log2(points) * math.sqrt(points)


# exp(-2*pi*i * k / m), the forward transform's sign, for any k and 0 < m <= 2^24. WGSL
# promises sin and cos only to 2^-11 absolute (a browser's software adapter is about that
# coarse), far outside an FFT's tolerance, so the twiddle uses neither: k/m is reduced in
# integers to a quarter turn and an angle x in [0, pi/4] (exact), whose sine and cosine
# come from their Taylor series to x^11 (truncation under 2e-10): f32 rounding on any
# adapter. Shared by the library's FFT passes (sources/library/fft_gen.py).
TWIDDLE = """\
fn twiddle(k: u32, m: u32) -> vec2<f32> {
    let t = 4u * (k % m);
    let quad = t / m;
    let rem = t - quad * m;
    let flip = 2u * rem > m;
    let x = 1.5707963267948966 * (f32(select(rem, m - rem, flip)) / f32(m));
    let x2 = x * x;
    let s = x * (1.0 - x2 * (1.0 / 6.0) * (1.0 - x2 * (1.0 / 20.0) * (1.0 - x2 * (1.0 / 42.0)
        * (1.0 - x2 * (1.0 / 72.0) * (1.0 - x2 * (1.0 / 110.0))))));
    let c = 1.0 - x2 * 0.5 * (1.0 - x2 * (1.0 / 12.0) * (1.0 - x2 * (1.0 / 30.0)
        * (1.0 - x2 * (1.0 / 56.0) * (1.0 - x2 * (1.0 / 90.0)))));
    let swap = flip != ((quad & 1u) == 1u);
    let a = select(c, s, swap);
    let b = select(s, c, swap);
    return vec2<f32>(select(a, -a, quad == 1u || quad == 2u), select(-b, b, quad >= 2u));
}
"""

# Between two stages of fft_wg, one component ($c: x the real parts, then y the imaginary)
# of every pair goes through workgroup memory from this stage's outputs to the next
# stage's owners: 4096 f32 (16 KB) hold one component of the longest FFT, not both.
EXCHANGE = string.Template("""\
            for (var m = 0u; m * wg < half; m = m + 1u) {
                let j = t + m * wg;
                let idx = (j / ns) * 2u * ns + j % ns;
                sh[idx] = (*v)[2u * m].$c;
                sh[idx + ns] = (*v)[2u * m + 1u].$c;
            }
            workgroupBarrier();
            for (var m = 0u; m * wg < half; m = m + 1u) {
                let j = t + m * wg;
                (*v)[2u * m].$c = sh[j];
                (*v)[2u * m + 1u].$c = sh[j + half];
            }
            workgroupBarrier();
""")

# Shared by fft2.py: twiddles, the complex product and the workgroup FFT of length l.
CORE = """\
var<workgroup> sh: array<f32, 4096>;

""" + TWIDDLE + """

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// Radix-2 Stockham FFT of length l (2..4096) held by wg invocations: invocation t holds
// the pair (x[j], x[j + l/2]) for j = t + m*wg in v[2m], v[2m + 1]. Each stage
// combines the pairs; between stages the outputs (y[idx], y[idx + ns]),
// idx = (j / ns) * 2ns + j % ns, go through workgroup memory (re, then im) to the next
// stage's owners. After the last stage v holds (y[j], y[j + l/2]): natural order.
fn fft_wg(v: ptr<function, array<vec2<f32>, 16>>, t: u32, wg: u32, l: u32) {
    let half = l / 2u;
    for (var ns = 1u; ns < l; ns = ns * 2u) {
        for (var m = 0u; m * wg < half; m = m + 1u) {
            let j = t + m * wg;
            let a = (*v)[2u * m];
            let b = cmul((*v)[2u * m + 1u], twiddle(j % ns, 2u * ns));
            (*v)[2u * m] = a + b;
            (*v)[2u * m + 1u] = a - b;
        }
        if (2u * ns < l) {
""" + EXCHANGE.substitute(c="x") + EXCHANGE.substitute(c="y") + """\
        }
    }
}
"""

BASELINE = """\
// Four-step FFT (two passes), one sub-FFT per workgroup, radix-2 Stockham in registers.
// N1 x N2 = N and the workgroup sizes WA, WB come from the workload's defines.
@group(0) @binding(0) var<storage, read> X: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> Y: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> T: array<vec2<f32>>;
const N1: u32 = {{FFT_N1}}u;
const N2: u32 = {{FFT_N2}}u;
const WA: u32 = {{FFT_WA}}u;
const WB: u32 = {{FFT_WB}}u;

""" + CORE + """
// Pass 1: column n1 of a row (elements n1 + N1 * n2), an N2-point FFT, times W_N^(n1 * k2).
@compute @workgroup_size(WA)
fn cols(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let n1 = wid.x;
    let base = wid.y * N + n1;
    let half = N2 / 2u;
    var v: array<vec2<f32>, 16>;
    for (var m = 0u; m * WA < half; m = m + 1u) {
        let j = lid.x + m * WA;
        v[2u * m] = X[base + j * N1];
        v[2u * m + 1u] = X[base + (j + half) * N1];
    }
    fft_wg(&v, lid.x, WA, N2);
    for (var m = 0u; m * WA < half; m = m + 1u) {
        let k = lid.x + m * WA;
        T[base + k * N1] = cmul(v[2u * m], twiddle(n1 * k, N));
        T[base + (k + half) * N1] = cmul(v[2u * m + 1u], twiddle(n1 * (k + half), N));
    }
}

// Pass 2: row k2 of T (contiguous), an N1-point FFT; output k1 goes to Y[k2 + N2 * k1].
@compute @workgroup_size(WB)
fn rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let k2 = wid.x;
    let src = wid.y * N + k2 * N1;
    let dst = wid.y * N + k2;
    let half = N1 / 2u;
    var v: array<vec2<f32>, 16>;
    for (var m = 0u; m * WB < half; m = m + 1u) {
        let j = lid.x + m * WB;
        v[2u * m] = T[src + j];
        v[2u * m + 1u] = T[src + j + half];
    }
    fft_wg(&v, lid.x, WB, N1);
    for (var m = 0u; m * WB < half; m = m + 1u) {
        let k = lid.x + m * WB;
        Y[dst + k * N2] = v[2u * m];
        Y[dst + (k + half) * N2] = v[2u * m + 1u];
    }
}
"""


def grid_cols(s: dict[str, int], p: dict) -> tuple[int, int, int]:
    """N1 columns per row, ``CA`` of them per workgroup (a kernel's template value; 1 here)."""
    return split(s["N"])[0] // int(p.get("CA", 1)), s["BATCH"], 1


def grid_rows(s: dict[str, int], p: dict) -> tuple[int, int, int]:
    """N2 rows of T per row, ``CB`` of them per workgroup."""
    return split(s["N"])[1] // int(p.get("CB", 1)), s["BATCH"], 1


WORKLOAD = Workload(
    name="fft",
    summary="batched 1-D forward FFT, complex f32 interleaved (re, im), N a power of two",
    dims=("BATCH", "N"),
    presets={"seed": {"BATCH": 4, "N": 4096}, "large": {"BATCH": 16, "N": 1 << 20}},
    broadcast=("N",),  # `--size 65536` is the transform's length (the batch stays the seed's)
    bindings=(Binding(0, "X", "read"), Binding(1, "Y", "read_write"), Binding(2, "T", "scratch")),
    buffer_len=buffer_len,
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 5.0 * s["BATCH"] * s["N"] * math.log2(s["N"]),  # the usual FFT count
    atol=lambda s: tolerance(s["N"]),
    rtol=0.0,
    passes=(Pass("cols", grid=grid_cols), Pass("rows", grid=grid_rows)),
    defines=defines,
    baseline=BASELINE,
)
