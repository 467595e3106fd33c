"""The fft and fft2 built-ins (issue #27): the two-pass baselines verify at seed size, every
library template verifies (both passes replaced), the register design at scaled-down large shapes, a kernel with the twiddle's sign flipped is
rejected, the reference is numpy's DFT, and a length that is not a power of two is refused
in one line."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from vajra_tui.engine.sources.library import LibrarySource, templates
from vajra_tui.engine.workloads import SizeError, get_workload

os.environ.setdefault("VAJRA_CACHE_DIR", "/tmp/vcache-fft-tests")

FFT = "vajra_tui.engine.workloads.fft:WORKLOAD"
FFT2 = "vajra_tui.engine.workloads.fft2:WORKLOAD"


async def _session(client, spec: str, size: str | None, seeds: tuple[int, ...] = (1, 2)):
    from vajra_tui.engine.session import Session
    from vajra_tui.settings import TimingSettings

    w = get_workload(spec)
    s = Session(w, w.size(size), client, lambda e: None, TimingSettings(warmup=0, reps=1), seeds=seeds)
    await s.start(calibrate=False)
    return s


async def _admit(s, cand) -> tuple[bool, str]:
    ok = await s.admit(cand)
    r = s.results[cand.id]
    return ok, f"{r.status} {r.reason}"


def _candidate(source: str, cid: str):
    from vajra_tui.engine.candidate import Candidate

    return Candidate(id=cid, name=cid, strategy="A", generation=1, params={}, origin="test", source=source)


@pytest.mark.parametrize("spec,size", [(FFT, None), (FFT, "BATCH=3,N=32"), (FFT2, None), (FFT2, "H=8,W=64")])
async def test_baseline_verifies(gpu, spec, size):
    s = await _session(gpu, spec, size)
    base = await s.run_baseline(time=True)
    assert base.status == "verified", base.reason
    assert len(base.pass_ms or []) == 2
    if base.timing == "timestamp":  # the program's time spans both passes and the gap between them
        assert base.median_ms >= 0.99 * sum(base.pass_ms), (base.median_ms, base.pass_ms)


def test_a_programs_time_runs_from_its_first_pass_to_its_last():
    from vajra_tui.engine.gpu.runtime import program_ms

    assert program_ms([(0.0, 1.0), (1.5, 3.0)]) == 3.0  # the 0.5 ms between the dispatches counts
    assert program_ms([(0.0, 2.0)]) == 2.0
    assert program_ms([(2.0, 3.0), (0.0, 1.0)]) == 2.0  # stamped out of order: never under the sum


# fft2's columns folded (the first radix-2 in the rows pass): row-major and blocked T, 2 columns
FOLDED = ({"regs": 16, "cols": 4, "ex": 1, "fold": 2}, {"regs": 16, "cols": 4, "ex": 1, "blk": 1, "fold": 2},
          {"regs": 8, "cols": 2, "fold": 2}, {"regs": 32, "cols": 4, "ex": 1, "fold": 4},
          {"regs": 32, "cols": 8, "ex": 1, "blk": 1, "fold": 4}, {"regs": 16, "cols": 4, "ex": 1, "blk": 2, "fold": 2})


def _points(t) -> tuple[dict, ...]:
    """Two or three corners of a template's space (regs's axes differ from the radices'); regs
    also with the scratch blocked by columns (``blk=1``, and blocks twice as wide, ``blk=2``),
    at 4 columns and at 1, fft2's folded columns (FOLDED), and with the
    last pass's own count of sub-FFTs (``last``) above and below the first's."""
    if "regs" in t.axes:
        return ({"regs": 16, "cols": 4}, {"regs": 64, "cols": 1}, {"regs": 32, "cols": 2},
                {"regs": 32, "cols": 8, "ex": 1}, {"regs": 32, "cols": 4, "ex": 1, "blk": 1},
                {"regs": 16, "cols": 1, "blk": 1}, {"regs": 32, "cols": 4, "ex": 1, "blk": 2},
                {"regs": 32, "cols": 2, "ex": 1, "blk": 1, "last": 4},
                {"regs": 16, "cols": 4, "ex": 1, "blk": 1, "last": 2}, {"regs": 32, "cols": 1, "ex": 1, "last": 4},
                *(FOLDED if "fold" in t.axes else ()))
    return ({"threads": 64, "cols": 4}, {"threads": 256, "cols": 1})


async def _verify_all(s, picks) -> None:
    lib = LibrarySource(s.device)
    seen: set[str] = set()
    for i, (t, params) in enumerate(picks):
        if s.size.get("H", 0) < 2 * params.get("fold", 0):  # refused in one line (the test below)
            continue
        cand = lib.instantiate({**params, "template": t.full_name}, s.size, cid=f"v{i}")
        # (``last`` gives each pass a buffer of its own; a pipeline holds only its pass's)
        assert cand is not None, f"{t.full_name} {params} unusable at {s.size}"
        if cand.source in seen:  # two points cut down to one kernel at a small size: checked once
            continue
        seen.add(cand.source)
        ok, why = await _admit(s, cand)
        assert ok, f"{cand.origin} at {s.size}: {why}\n{cand.source}"


@pytest.mark.parametrize("spec,size", [(FFT, None), (FFT, "BATCH=2,N=128"), (FFT2, "H=32,W=128")])
async def test_library_radices_verify(gpu, spec, size):
    s = await _session(gpu, spec, size)
    await _verify_all(s, [(t, p) for t in templates(s.workload.name) for p in _points(t)])


@pytest.mark.parametrize("spec,size", [(FFT, "BATCH=2,N=65536"), (FFT, "BATCH=1,N=2097152"),
                                       (FFT, "BATCH=5,N=8"), (FFT2, "H=2,W=2048"), (FFT2, "H=4096,W=4"),
                                       (FFT2, "H=4,W=2"), (FFT2, "H=8,W=4")])
async def test_register_design_verifies_at_scaled_shapes(gpu, spec, size):
    """fft/regs at the large preset's shape scaled down (L=256 x 256, 1024 x 2048), three-stage
    lengths (2048 = 8*16*16 at regs=16), one-stage ones (no exchange), a 4096-point column.

    One seed each: the shape is what is under test, and a kernel wrong at it is wrong on any
    random input (its outputs are poisoned before the dispatch, so one it leaves unwritten fails
    too). The engine's second seed is proven in test_engine.py; here it cost a quarter of the
    2^21-point case, the suite's slowest verification (9 kernels of 2M points)."""
    s = await _session(gpu, spec, size, seeds=(1,))
    t = next(t for t in templates(s.workload.name) if t.name == "regs")
    await _verify_all(s, [(t, p) for p in _points(t)])


async def test_a_last_pass_of_its_own_runs_where_both_buffers_would_not_fit(gpu):
    """``last`` gives each pass a workgroup array of its own; a pipeline holds only its pass's,
    so 8 columns of 1024 points (32 KB) then 2 (8 KB) run on a 32 KB adapter, where the
    module's 40 KB counted whole were refused."""
    s = await _session(gpu, FFT, "BATCH=1,N=1048576")
    limit = s.device.limits.get("max-compute-workgroup-storage-size")
    if limit != 32768:
        pytest.skip(f"sized for a 32 KB adapter; this one has {limit}")
    t = next(t for t in templates(s.workload.name) if t.name == "regs")
    params = {"regs": 32, "cols": 8, "ex": 1, "last": 2}
    assert t.check(t.point(params), s.size, s.device) is None
    await _verify_all(s, [(t, params)])


def test_register_design_is_first_on_a_big_gpu():
    """On a discrete GPU strategy A's first prior is the register design that won on the H200:
    32-point stages (1024 = 32 x 32, one exchange), re and im exchanged apart, four columns
    (16 KB a workgroup; a 4096-point column pass gets two)."""
    from vajra_tui.engine.events import DeviceInfo

    big = DeviceInfo(name="H200", limits={"max-compute-workgroup-storage-size": 49152,
                                          "max-compute-invocations-per-workgroup": 1024,
                                          "max-compute-workgroup-size-x": 1024}, subgroups=True)
    lib = LibrarySource(big)
    first = lib.priors("fft", {"BATCH": 16, "N": 1 << 20}, big)["A"][0]
    assert first["template"] == "fft/regs"
    assert (first["regs"], first["cols"], first["ex"], first["blk"]) == (32, 4, 1, 1)
    # fft2: the columns folded first (2048-point columns, four a workgroup), then fft's order
    folded, *rest = lib.priors("fft2", {"H": 4096, "W": 4096}, big)["A"]
    assert (folded["template"], folded["regs"], folded["cols"], folded["fold"]) == ("fft2/regs", 16, 4, 2)
    assert any((p["regs"], p["cols"], p["blk"], p["fold"]) == (32, 4, 1, 1) for p in rest)
    assert all(p.get("fold", 1) == 1 for p in lib.priors("fft2", {"H": 4096, "W": 4096},
                                                         big.model_copy(update={"subgroups": False}))["A"])
    src = lib.instantiate({"regs": 32, "cols": 4, "ex": 1, "template": "fft/regs"}, {"BATCH": 16, "N": 1 << 20},
                          big).source
    assert "radix 32-32" in src and "4 x 1024-point FFTs" in src and "exchange re/im" in src
    assert src.count("workgroupBarrier();") == 2 * 3  # per pass: re, then im (none after the last read)
    src2 = lib.instantiate({"regs": 32, "cols": 4, "ex": 1, "template": "fft2/regs"}, {"H": 4096, "W": 4096},
                           big).source
    assert "2 x 4096-point FFTs" in src2 and "radix 16-16-16" in src2  # 4 columns of 4096 exceed 48 KB


async def test_wrong_twiddle_sign_is_rejected(gpu):
    """The inverse transform's sign (e^(+2*pi*i*k/m)) is a different answer, not a rounding."""
    s = await _session(gpu, FFT, None)
    wrong = s.workload.baseline.replace("select(-b, b, quad >= 2u)", "select(b, -b, quad >= 2u)")
    assert wrong != s.workload.baseline
    ok, why = await _admit(s, _candidate(wrong, "wrong"))
    assert not ok and s.results["wrong"].status == "rejected", why


def test_reference_is_the_dft():
    w = get_workload(FFT)
    size = {"BATCH": 2, "N": 8}
    x = w.make_inputs(size, np.random.default_rng(0))
    z = x["X"].astype(np.float64).reshape(2, 8, 2)
    z = z[..., 0] + 1j * z[..., 1]
    n = np.arange(8)
    dft = z @ np.exp(-2j * np.pi * np.outer(n, n) / 8)
    got = w.reference(size, x).reshape(2, 8, 2)
    assert np.allclose(got[..., 0] + 1j * got[..., 1], dft, atol=1e-12)
    w2 = get_workload(FFT2)
    x2 = w2.make_inputs({"H": 4, "W": 8}, np.random.default_rng(1))
    img = x2["X"].astype(np.float64).reshape(4, 8, 2)
    img = img[..., 0] + 1j * img[..., 1]
    got2 = w2.reference({"H": 4, "W": 8}, x2).reshape(4, 8, 2)
    assert np.allclose(got2[..., 0] + 1j * got2[..., 1], np.fft.fft(np.fft.fft(img, axis=1), axis=0))


def test_one_bare_number_is_the_transform_length():
    """`--size 65536` for fft meant a batch of 65,536 transforms of 4096 points (1 GiB), which
    nobody asks for; it is the length now, as a bare number is attention's S and fft2's sides."""
    w, w2 = get_workload(FFT), get_workload(FFT2)
    assert w.size("65536") == {"BATCH": 4, "N": 65536}
    assert w.size("8x1024") == {"BATCH": 8, "N": 1024}  # every dim given, in order
    assert w2.size("512") == {"H": 512, "W": 512}


@pytest.mark.parametrize("spec,size,word", [(FFT, "BATCH=2,N=1000", "N=1000"), (FFT, "N=2", "N=2"),
                                            (FFT, "N=33554432", "N=33554432"), (FFT2, "100x64", "H=100")])
def test_other_lengths_are_refused_in_one_line(spec, size, word):
    w = get_workload(spec)
    with pytest.raises(SizeError) as exc:
        w.buffer_len(w.size(size))
    assert word in str(exc.value) and "\n" not in str(exc.value) and "power of two" in str(exc.value)


def test_cli_refuses_a_length_in_one_line():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "vajra_tui", "bench", "-w", FFT, "--size", "BATCH=2,N=1000"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert any("N=1000" in line and "power of two" in line for line in lines), out.stderr
    assert not any("Traceback" in line for line in lines), out.stderr


def test_tolerance_grows_with_log_n():
    w = get_workload(FFT)
    small, large = w.tolerance({"BATCH": 1, "N": 1024}), w.tolerance({"BATCH": 1, "N": 1 << 20})
    assert large / small == pytest.approx(2 * 32)  # log2: 20/10, sqrt: 1024/32



TWIDDLES = Path(__file__).resolve().parent / "data" / "twiddles.py"


@pytest.mark.parametrize("m", [8, 1 << 12, 1 << 20, 3 * 5 * 7 * 11])
async def test_twiddles_are_exact_to_f32_rounding(gpu, m):
    """The twiddle uses no WGSL sin/cos (promised only to 2^-11, and about that coarse in a
    browser's SwiftShader): each of 2m values, a wrapped k and a length that is no power of
    two among them, is within 2.5e-7 of float64 (a 2^-11 sin/cos is 2000x that).

    The workload file runs on the module's worker, verified on both seeds and timed once, as
    ``bench`` did: bench spawned a worker and checked the calibration for each length, about
    6 s of a case that verifies in well under one."""
    s = await _session(gpu, f"{TWIDDLES}:WORKLOAD", f"M={m}")
    base = await s.run_baseline(time=True)
    assert base.status == "verified", base.reason


def test_folded_columns_are_refused_in_one_line_where_they_cannot_run():
    """fft2's ``fold`` combines its rows by subgroup shuffles and needs H >= 2 x fold: without
    subgroups, at H=2 (H=4 for fold=4), or where two rows' exchange exceeds workgroup memory, the template
    says why in one line instead of generating a kernel that would fail on the GPU."""
    from vajra_tui.engine.events import DeviceInfo

    t = next(t for t in templates("fft2") if t.name == "regs")
    fold = t.point({"regs": 16, "cols": 4, "ex": 1, "fold": 2})
    limits = {"max-compute-workgroup-storage-size": 49152, "max-compute-invocations-per-workgroup": 1024,
              "max-compute-workgroup-size-x": 1024}
    plain = DeviceInfo(name="no subgroups", limits=limits, subgroups=False)
    small = DeviceInfo(name="16 KiB", limits={**limits, "max-compute-workgroup-storage-size": 16384},
                       subgroups=True)
    for why in (t.check(fold, {"H": 64, "W": 64}, plain), t.check(fold, {"H": 2, "W": 64}, None),
                t.check(fold, {"H": 64, "W": 4096}, small)):
        assert why and "\n" not in why
    assert "subgroups" in t.check(fold, {"H": 64, "W": 64}, plain)
    assert "H >= 4" in t.check(fold, {"H": 2, "W": 64}, None)
    assert "H >= 8" in t.check(t.point({"regs": 32, "cols": 4, "fold": 4}), {"H": 4, "W": 64}, None)
    assert "two rows" in t.check(fold, {"H": 64, "W": 4096}, small)


COLS_FIRST = Path(__file__).resolve().parent.parent / "benchmarks" / "experiments" / "fft2_cols_first.py"


def _cols_first():
    """The experiment's module, loaded from its file as a user's workload file is."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fft2_cols_first", COLS_FIRST)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("size", ["H=256,W=256", "H=512,W=128", "H=8,W=2048", "H=4,W=4"])
async def test_columns_first_folded_by_decimation_in_time_verifies(gpu, size):
    """The experiment's ``fold=2`` (fft_fold.py's ``fold_dit``): the even and the odd rows'
    columns first, then row pairs combined as E + W_H^k O and E - W_H^k O into rows k and
    k + H/2. Row-major and blocked T (blocks of 4 and of 8, cut to W), at square, tall, short
    and 4 x 4 images; a wrong combination (the twiddle's row, the half each lane writes) fails."""
    module = _cols_first()
    s = await _session(gpu, f"{COLS_FIRST}:WORKLOAD", size, seeds=(1,))
    seen: set[str] = set()
    for blk in (0, 1, 2):
        source = module.kernel({"regs": 16, "cols": 4, "ex": 1, "fold": 2, "blk": blk}, s.size, s.device)
        assert "subgroupShuffleXor" in source
        if source not in seen:
            seen.add(source)
            ok, why = await _admit(s, _candidate(source, f"cf{blk}"))
            assert ok, f"blk={blk} at {s.size}: {why}"


def test_columns_first_refuses_a_fold_its_workgroup_memory_cannot_hold():
    """Two 4096-point rows need 32 KB: under WebGPU's default 16 KB the experiment refuses in one
    line. (Rendered anyway, the folding pass was cut to one row a workgroup and never wrote rows
    k + H/2: the first H100 run of round 19 found it.)"""
    module = _cols_first()
    with pytest.raises(SizeError, match="two rows"):
        module.kernel({"regs": 16, "cols": 4, "ex": 1, "fold": 2, "blk": 1}, {"H": 4096, "W": 4096})
