"""Published WGSL kernels, run as written (issue #23): each kernel in tests/published/ is a
byte-for-byte copy of a public project's code (tests/published/SOURCES.md says whose, at
which commit, under which licence), and its workload was written from the README alone.
The baseline of each workload is that published text, so a verified baseline means Vajra
ran the kernel unmodified (template values filled by its own mechanism) and the result
matched a float64 reference; the texture kernels must be refused in one line instead."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import vajra_tui

PUBLISHED = Path(__file__).parent / "published"

# id -> a size small enough for a few seconds on lavapipe (each is also the workload's seed preset)
RUNS = {
    "webgpu_samples_boids": {"NP": 128},
    "webgpu_samples_game_of_life": {"W": 64, "H": 32},
    "wgpu_hello_compute_collatz": {"N": 256},
    "wgpu_boids": {"NP": 100},
    "wgpu_hello_workgroups": {"N": 64},
    "wgpu_hello_synchronization": {"N": 32},
    "gpucpp_gelu": {"N": 1000},
    "gpucpp_matmul_naive": {"M": 40, "K": 24, "N": 56},
    "gpucpp_matmul_tiled": {"M": 32, "K": 48, "N": 64},
    "gpucpp_transpose": {"M": 48, "N": 32},
    "radix_sort_prefix_sum": {"ELEMENT_COUNT": 1000},
    "webgpu_blas_sgemm_generic": {"M": 40, "N": 24, "K": 16},
    "webgpu_blas_sgemm_block": {"M": 64, "N": 64, "K": 32},
    "web_rwkv_softmax": {"C": 1000, "T": 4},
    "web_rwkv_layer_norm": {"C": 1024, "T": 4},
    "gpucpp_llmc_layernorm": {"B": 2, "T": 100, "C": 96},
    "gpucpp_llmc_attention": {"B": 2, "T": 48, "C": 64, "NH": 4},
    "gpucpp_llmc_matmul": {"B": 2, "T": 40, "C": 48, "OC": 72},
    "gpucpp_llmc_encoder": {"B": 3, "T": 37, "C": 40},
    "burn_matmul_naive": {"M": 40, "K": 24, "N": 56},
    "burn_matmul_vec4": {"M": 128, "K": 64, "N": 192},
    "burn_reduce_sum": {"R": 37, "C": 1000},
    "burn_prng_uniform": {"N": 8192, "NV": 4},
    "webgpu_samples_bitonic_flip": {"N": 4096, "BH": 8},
}
# id -> (size, names of which the refusal must mention one)
REFUSED = {
    "webgpu_samples_image_blur": ({"W": 64, "H": 16}, ("inputTex", "outputTex", "samp")),
    "wgpu_storage_texture": ({"W": 16, "H": 16}, ("texture",)),
}


def _sha256s() -> dict[str, str]:
    """path (kid/file) -> the sha256 it was copied with."""
    lines = (PUBLISHED / "SOURCES.sha256").read_text().splitlines()
    return {path: digest for digest, path in (line.split("  ", 1) for line in lines)}


def test_the_corpus_is_as_published():
    """Every kernel (and fragment kept beside one) still has the bytes it was copied with, and
    every one has a row in SOURCES.md."""
    digests, sources = _sha256s(), (PUBLISHED / "SOURCES.md").read_text()
    kids = {path.split("/")[0] for path in digests}
    assert kids == set(RUNS) | set(REFUSED)
    assert all(f"{kid}/kernel.wgsl" in digests for kid in kids)
    for path, digest in digests.items():
        assert hashlib.sha256((PUBLISHED / path).read_bytes()).hexdigest() == digest, path
    for kid in kids:
        assert f"| {kid} |" in sources, kid
    assert len({row.split(" | ")[1] for row in sources.splitlines() if row.startswith("| ") and " | " in row
                and not row.startswith("| id") and not row.startswith("|---")}) >= 7


@pytest.mark.parametrize("kid", sorted(RUNS))
def test_published_kernel_runs_unmodified_and_verifies(kid):
    report = vajra_tui.bench(str(PUBLISHED / kid / "workload.py"), [], size=RUNS[kid], warmup=1, reps=3)
    base = report.baseline
    assert base.status == "verified", f"{kid}: {base.status}: {base.reason}"


@pytest.mark.parametrize("kid", sorted(REFUSED))
def test_texture_kernel_is_refused_in_one_line(kid):
    size, names = REFUSED[kid]
    try:
        report = vajra_tui.bench(str(PUBLISHED / kid / "workload.py"), [], size=size, warmup=1, reps=3)
    except Exception as exc:  # a refusal before anything runs
        message = str(exc)
    else:
        assert report.baseline.status != "verified", f"{kid}: a texture kernel verified"
        message = report.baseline.reason or ""
    assert message and "\n" not in message.strip(), message
    assert "texture" in message.lower() and any(n in message for n in names), message


LLMC_MATMUL = PUBLISHED / "gpucpp_llmc_matmul"
# gpu.cpp's llm.c matmul declares its inputs read_write and only reads them; each of these
# writes one, which would hand the next candidate other inputs than its reference saw
WRITES_AN_INPUT = {
    "stores into it": ("for (var o : u32 = 0u; o < OC; o++) {\n              var val : {{precision}} = bias[o];",
                       "inp[0] = 0.0;\n          for (var o : u32 = 0u; o < OC; o++) {\n              "
                       "var val : {{precision}} = bias[o];"),
    "a compound assignment": ("out[bt * OC + o] = val;\n          }\n      }\n    }\n}",
                              "out[bt * OC + o] = val;\n          }\n      }\n    }\n"
                              "    weight[global_id.x] *= 1.0;\n}"),
    "a parenthesised store": ("if (arrayLength(&bias) == 1) {", "(inp)[0] = 0.0;\n    if (arrayLength(&bias) == 1) {"),
    "a store through a pointer": ("if (arrayLength(&bias) == 1) {",
                                  "let p = &inp[0];\n    *p = 0.0;\n    if (arrayLength(&bias) == 1) {"),
}


# ... and each of these only names a local after an input: the kernel still runs as written
ANCHOR = "if (arrayLength(&bias) == 1) {"
SHADOWS_AN_INPUT = {
    "a local var in a block": "{\n        var weight = 1.0;\n        weight += 1.0;\n    }\n    " + ANCHOR,
    "a for loop's variable": "for (var inp = 0u; inp < 2u; inp++) {\n    }\n    " + ANCHOR,
    "a parameter written through": None,  # a helper function, below
}
HELPER = "fn zero(inp: ptr<function, f32>) {\n    *inp = 0.0;\n}\n\n"


@pytest.mark.parametrize("how", sorted(SHADOWS_AN_INPUT))
def test_a_local_named_after_an_input_is_not_the_input(how):
    """A local (a block's var, a loop's variable, a parameter) hides the module-scope name
    until its block closes; writes to it were refused as writes to the input."""
    published = (LLMC_MATMUL / "kernel.wgsl").read_text(encoding="utf-8")
    kernel = published.replace(ANCHOR, SHADOWS_AN_INPUT[how], 1) if SHADOWS_AN_INPUT[how] else \
        published.replace("@compute", HELPER + "@compute", 1)
    assert kernel != published
    report = vajra_tui.bench(str(LLMC_MATMUL / "workload.py"), {"shadows": kernel}, size=RUNS["gpucpp_llmc_matmul"],
                             warmup=1, reps=3)
    assert report["shadows"].status == "verified", (how, report["shadows"].status, report["shadows"].reason)


@pytest.mark.parametrize("how", sorted(WRITES_AN_INPUT))
def test_an_input_declared_read_write_that_the_kernel_writes_is_refused_at_that_line(how):
    old, new = WRITES_AN_INPUT[how]
    published = (LLMC_MATMUL / "kernel.wgsl").read_text(encoding="utf-8")
    assert old in published
    kernel = published.replace(old, new, 1)
    report = vajra_tui.bench(str(LLMC_MATMUL / "workload.py"), {"writes": kernel}, size=RUNS["gpucpp_llmc_matmul"],
                             warmup=1, reps=3)
    assert report.baseline.status == "verified"
    result = report["writes"]
    assert result.status == "compile_error", (how, result.status)
    reason = result.reason or ""
    assert "\n" not in reason.strip() and "is declared read_write and the kernel writes it" in reason
    assert "'inout'" in reason and ("`inp`" in reason or "`weight`" in reason), reason
    line = next(n for n, text in enumerate(kernel.splitlines(), 1) if text not in published.splitlines())
    assert f"at line {line})" in reason, (line, reason)
