"""The attention workload (#27): its float64 reference against the textbook formula, its
baseline verified full and causal, every library template verified (an awkward size too:
S off every block, D=128, causal), and a kernel that skips the max subtraction rejected,
since the hot rows' scores reach 100 and exp overflows f32."""

from __future__ import annotations

import os

import numpy as np
import pytest

from vajra_tui.engine.candidate import Candidate, GenerationContext
from vajra_tui.engine.admission.contract import prelude
from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.gpu.protocol import Drop
from vajra_tui.engine.sources.library import LibrarySource, attention_gen, template, templates
from vajra_tui.engine.wgsl.uniformity import Analysis
from vajra_tui.engine.workloads import get_workload

os.environ.setdefault("VAJRA_CACHE_DIR", "/tmp/vcache-attention-tests")

SPEC = "vajra_tui.engine.workloads.attention:WORKLOAD"
W = get_workload(SPEC)
CPU = DeviceInfo(name="cpu", software=True, subgroups=False)

# The baseline with the max subtraction left out: exp(100) is +inf in f32.
NO_MAX = W.baseline.replace("let p = exp(dot * scale - m);", "let p = exp(dot * scale);")


def test_size_parsing_keeps_mask_full_unless_given():
    assert W.size("1x16x4096x64") == {"B": 1, "H": 16, "S": 4096, "D": 64, "MASK": 1}
    assert W.size("1x16x4096x64x2")["MASK"] == 2
    assert W.size("512")["S"] == 512


@pytest.mark.parametrize("mask", [1, 2])
def test_reference_matches_the_direct_formula(mask):
    s = W.size(f"B=2,H=3,S=7,D=4,MASK={mask}")
    x = W.checked_inputs(s, np.random.default_rng(3))
    got = W.checked_references(s, x)["O"].reshape(2, 3, 7, 4)
    q, k, v = (x[n].astype(np.float64).reshape(2, 3, 7, 4) for n in "QKV")
    for b in range(2):
        for h in range(3):
            for i in range(7):
                keys = range(7) if mask == 1 else range(i + 1)
                sc = np.array([q[b, h, i] @ k[b, h, j] / 2.0 for j in keys])
                w = np.exp(sc - sc.max())
                want = sum(w[n] * v[b, h, j] for n, j in enumerate(keys)) / w.sum()
                np.testing.assert_allclose(got[b, h, i], want, rtol=1e-12, atol=1e-12)


def test_inputs_overflow_a_naive_exp():
    s = W.size("seed")
    x = W.checked_inputs(s, np.random.default_rng(1))
    q, k = (x[n].astype(np.float64).reshape(2, 256, 64) for n in "QK")
    top = (np.einsum("hid,hjd->hij", q, k) / 8.0).max(axis=2)
    assert (top > 88.8).mean() > 0.2  # about a third of the rows are hot


def test_subgroup_reductions_only_where_the_adapter_has_subgroups():
    priors = LibrarySource().priors("attention", W.size("seed"), CPU)
    assert priors["A"] and priors["B"] and priors["C"]
    assert all(p["sg"] == 0 for p in priors["A"] + priors["C"])
    flash = template("attention/flash")
    assert not flash.usable({**priors["A"][0], "sg": 1}, W.size("seed"), CPU)


def test_tiled_comes_first_on_a_discrete_gpu():
    """B's first prior on a big GPU: 64-key blocks, enough workgroups for 2 x 132 SMs."""
    h200 = DeviceInfo(name="h200", software=False, subgroups=True,
                      limits={"max-compute-workgroup-storage-size": 49152})
    size = W.size("large")
    first = LibrarySource().priors("attention", size, h200)["B"][0]
    assert first["template"] == "attention/tiled"
    bq, bk = first["wy"] * first["tm"], first["wx"] * first["tn"]
    assert bk == 64 and size["H"] * size["S"] // bq >= 2 * 132
    assert attention_gen.smem_bytes(first, size) <= 36 * 1024


async def _session(client, spec: str):
    from vajra_tui.engine.session import Session
    from vajra_tui.settings import TimingSettings

    s = Session(W, W.size(spec), client, lambda e: None, TimingSettings(warmup=0, reps=1))
    await s.start(calibrate=False)
    return s


async def _admit(s, cand: Candidate) -> None:
    ok = await s.admit(cand)
    r = s.results[cand.id]
    assert ok, f"{cand.origin} at {s.size}: {r.status} {r.reason}\n{cand.source}"
    assert not Analysis(cand.source, prelude(W, s.size, (1, 1), 1, set())).findings
    await s.client.request(Drop(cid=cand.id), 30.0)


@pytest.mark.parametrize("spec", ["seed", "B=1,H=2,S=256,D=64,MASK=2"])
async def test_baseline_verifies(gpu, spec):
    s = await _session(gpu, spec)
    await _admit(s, s.baseline_candidate())


async def test_skipping_the_max_is_rejected_as_non_finite(gpu):
    s = await _session(gpu, "seed")
    cand = Candidate(id="nomax", name="nomax", source=NO_MAX)
    assert not await s.admit(cand)
    r = s.results["nomax"]
    assert r.status == "rejected" and "non-finite" in r.reason, r.reason


@pytest.mark.parametrize("spec", ["seed", "B=1,H=2,S=77,D=128,MASK=2", "B=1,H=2,S=301,D=64,MASK=1",
                                  "B=2,H=1,S=301,D=64,MASK=2", "B=1,H=1,S=77,D=128,MASK=1"])
async def test_each_template_proposed_verifies(gpu, spec):
    s = await _session(gpu, spec)
    ctx = GenerationContext(workload=s.info, device=s.device,
                            prelude=prelude(W, s.size, (1, 1), 1, set()), generation=1)
    cands = await LibrarySource(s.device).propose(ctx)
    names = {c.params["template"] for c in cands}
    want = {t.full_name for t in templates("attention")}
    assert names == want
    for c in cands:
        await _admit(s, c)


async def test_larger_blocks_verify(gpu):
    """Configurations a discrete GPU gets first (more rows per lane, 32-key blocks), at a
    size that is no multiple of them."""
    s = await _session(gpu, "B=1,H=1,S=100,D=64,MASK=2")
    src = LibrarySource(s.device)
    for params in ({"template": "attention/flash", "wx": 8, "wy": 16, "tq": 2, "bk": 32, "sg": 0},
                   {"template": "attention/tiled", "wx": 8, "wy": 16, "tm": 1, "tn": 4},
                   {"template": "attention/tiled", "wx": 8, "wy": 8, "tm": 2, "tn": 4},
                   {"template": "attention/tiled", "wx": 16, "wy": 16, "tm": 1, "tn": 2}):
        cand = src.instantiate(params, s.size, cid="big", name="big")
        assert cand is not None, params
        await _admit(s, cand)


@pytest.mark.parametrize("spec", ["B=1,H=2,S=100,D=32,MASK=2", "B=1,H=1,S=301,D=16,MASK=1"])
async def test_tiled_64_key_blocks_verify(gpu, spec):
    """The shapes B gives a discrete GPU first (64-key blocks: 34 KB of workgroup memory at
    D=64, past lavapipe's 32 KiB), at a D small enough for lavapipe: the same code paths."""
    s = await _session(gpu, spec)
    src = LibrarySource(s.device)
    for params in ({"wx": 8, "wy": 16, "tm": 1, "tn": 8}, {"wx": 8, "wy": 8, "tm": 2, "tn": 8},
                   {"wx": 16, "wy": 16, "tm": 1, "tn": 4}, {"wx": 8, "wy": 32, "tm": 1, "tn": 8}):
        cand = src.instantiate({"template": "attention/tiled", **params}, s.size, cid="b64", name="b64")
        assert cand is not None, params
        await _admit(s, cand)


@pytest.mark.parametrize("spec", ["B=1,H=2,S=100,D=32,MASK=2", "B=1,H=1,S=301,D=16,MASK=1",
                                  "B=1,H=1,S=77,D=64,MASK=1"])
async def test_outer_shapes_verify(gpu, spec):
    """C's discrete-GPU shapes (8x8 and 8x4 tiles, 64-key blocks, V sharing K's memory or
    not, reductions by shuffles where the adapter has them) at sizes off every block, with D
    small enough for lavapipe's 32 KiB: the code paths the H200 runs at D=64."""
    s = await _session(gpu, spec)
    src = LibrarySource(s.device)
    sgs, verified = ((0, 1) if s.device.subgroups else (0,)), 0
    for wx, wy, tm, tn, kv in ((8, 8, 8, 4, 2), (4, 16, 4, 4, 2), (4, 8, 8, 8, 1), (2, 8, 4, 8, 1),
                               (8, 4, 8, 4, 2), (8, 8, 4, 4, 1)):
        for sg in sgs:
            params = {"template": "attention/outer", "wx": wx, "wy": wy, "tm": tm, "tn": tn, "kv": kv, "sg": sg,
                      "un": (1, 4, 128)[verified % 3]}
            cand = src.instantiate(params, s.size, cid="outer", name="outer")
            if cand is None:  # D=16 has no room for 8 lanes of vec4 columns; small subgroups
                why = template("attention/outer").check(params, s.size, s.device)
                assert any(w in why for w in ("multiple of", "subgroup", "workgroup memory", "register")), (params, why)
                continue
            await _admit(s, cand)
            verified += 1
    assert verified >= 2


@pytest.mark.parametrize("spec", ["B=1,H=2,S=100,D=32,MASK=2", "B=1,H=1,S=77,D=64,MASK=1"])
async def test_operands_read_from_the_storage_buffer_verify(gpu, spec):
    """C with Q (gl=1), Q and V (gl=2), or Q, V and K (gl=3) left in the storage buffer instead
    of workgroup memory (the H200's 1.5x, #27), causal and not, at sizes off every block:
    clamped rows past S, keys past S masked in the scores and weighted 0 in P·V; Q read a row
    at a time (qo=1) as well as all rows per four dimensions."""
    s = await _session(gpu, spec)
    src = LibrarySource(s.device)
    sg = int(bool(s.device.subgroups) and src_fits_shuffles(s.device))
    for gl, kv, un, qo in ((1, 2, 4, 0), (1, 1, 128, 1), (2, 2, 16, 1), (2, 2, 4, 0), (3, 2, 4, 0), (3, 2, 128, 0)):
        params = {"template": "attention/outer", "wx": 4, "wy": 16, "tm": 4, "tn": 4, "kv": kv, "sg": sg,
                  "un": un, "gl": gl, "qo": qo}
        cand = src.instantiate(params, s.size, cid=f"gl{gl}", name=f"gl{gl}")
        assert cand is not None, template("attention/outer").check(params, s.size, s.device)
        assert ("var<workgroup> Qt" in cand.source) is False
        assert ("var<workgroup> Kt" in cand.source) is (gl < 3)
        await _admit(s, cand)


@pytest.mark.parametrize("spec", ["B=1,H=2,S=100,D=32,MASK=2", "B=1,H=1,S=77,D=64,MASK=1"])
async def test_the_next_block_prefetched_into_registers_verifies(gpu, spec):
    """C with ``pf=1``: each block's K and V come from registers loaded during the previous
    block (the first on the first trip), at sizes off every block, causal and not: with Q
    staged and global, V global (gl=2), V staged late (kv=1), a block that does not divide over
    the lanes (256 lanes, 16 keys of 8 vec4 at D=32), and split over key ranges (the first trip at klo)."""
    s = await _session(gpu, spec)
    src = LibrarySource(s.device)
    sg = int(bool(s.device.subgroups) and src_fits_shuffles(s.device))
    for wy, gl, kv, ks in ((16, 0, 2, 1), (16, 1, 2, 1), (16, 2, 2, 1), (16, 1, 1, 1), (64, 1, 2, 1), (4, 1, 2, 4)):
        params = {"template": "attention/outer", "wx": 4, "wy": wy, "tm": 4, "tn": 4, "kv": kv, "sg": sg,
                  "un": 4, "gl": gl, "ks": ks, "pf": 1}
        cand = src.instantiate(params, s.size, cid=f"pf{wy}_{gl}_{kv}_{ks}", name="pf")
        assert cand is not None, template("attention/outer").check(params, s.size, s.device)
        assert "pk0 = select(" in cand.source and ("pv0" in cand.source) is (gl < 2 and kv == 2)
        await _admit(s, cand)


def src_fits_shuffles(device) -> bool:
    from vajra_tui.engine.sources.library.base import shuffles_fit

    return shuffles_fit(device, 4) is None


def test_an_nvidia_gpu_shuffles_eight_lane_rows():
    """wgpu says 4..128 for the H200's subgroups; its warps are 32 wide, so 8-lane rows reduce by
    shuffles there, while an adapter that reports 4 (or has no subgroups) keeps them in memory."""
    from vajra_tui.engine.sources.library.base import least_subgroup

    h200 = DeviceInfo(name="NVIDIA H200", vendor_id=0x10DE, software=False, subgroups=True, subgroup_min_size=4,
                      limits={"max-compute-workgroup-storage-size": 49152})
    other = h200.model_copy(update={"vendor_id": 0x1002, "name": "other"})
    assert (least_subgroup(h200), least_subgroup(other), least_subgroup(CPU)) == (32, 4, 0)
    size = W.size("large")
    assert LibrarySource().priors("attention", size, h200)["C"][0]["sg"] == 1
    assert LibrarySource().priors("attention", size, other)["C"][0]["sg"] == 0
    assert template("attention/outer").usable({**LibrarySource().priors("attention", size, h200)["C"][0]}, size, h200)


# ---- split-K: the keys of a query block over KS workgroups, merged by the optional combine ----
SPLIT = {"template": "attention/outer", "wx": 4, "wy": 4, "tm": 4, "tn": 4, "kv": 2, "sg": 0, "un": 4}


@pytest.mark.parametrize("spec", ["B=1,H=2,S=301,D=64,MASK=2", "B=1,H=1,S=77,D=64,MASK=1",
                                  "B=2,H=1,S=100,D=32,MASK=2"])
async def test_split_k_verifies_with_its_combine_pass(gpu, spec):
    """C split over 2, 4 and 16 workgroups per query block (16: more splits than a 16-row
    block of 77 keys has key blocks, so some splits are empty), at sizes off every block,
    causal and not, Q staged and read from the storage buffer: two passes."""
    s = await _session(gpu, spec)
    src = LibrarySource(s.device)
    for ks, gl in ((2, 0), (4, 1), (16, 0)):
        cand = src.instantiate({**SPLIT, "ks": ks, "gl": gl}, s.size, cid=f"ks{ks}", name=f"ks{ks}")
        assert cand is not None, template("attention/outer").check({**SPLIT, "ks": ks, "gl": gl}, s.size, s.device)
        assert "fn combine(" in cand.source and "override KS: u32" in cand.source
        await _admit(s, cand)
        r = s.results[cand.id]
        assert [p["label"] for p in r.passes] == ["main", "combine"]


async def test_a_single_pass_kernel_runs_without_the_combine(gpu):
    """The baseline and C unsplit define only their main pass (whatever its name): one dispatch."""
    s = await _session(gpu, "B=1,H=1,S=77,D=64,MASK=2")
    renamed = W.baseline.replace("fn main(", "fn attend(")
    for cand in (s.baseline_candidate(), Candidate(id="attend", name="attend", source=renamed)):
        assert await s.admit(cand), s.results[cand.id].reason
        assert s.results[cand.id].passes == []  # (admitted, not yet timed)


async def test_a_combine_that_forgets_the_maxima_is_rejected(gpu):
    """Weighting each split by its sum alone (no exp2(max - M)) is wrong wherever the splits'
    maxima differ, which the hot rows make certain."""
    s = await _session(gpu, "B=1,H=2,S=301,D=64,MASK=1")
    good = LibrarySource(s.device).instantiate({**SPLIT, "ks": 4, "gl": 0}, s.size, cid="x", name="x")
    assert good is not None and "let w = ml.y * exp2(ml.x - mx);" in good.source
    bad = Candidate(id="nomax", name="nomax", source=good.source.replace(
        "let w = ml.y * exp2(ml.x - mx);", "let w = ml.y;"))
    assert not await s.admit(bad)
    assert s.results["nomax"].status == "rejected", s.results["nomax"].reason


def test_split_priors_only_where_the_blocks_are_too_few():
    """On a big GPU C's first prior is split, and proposed first, where its 256-row blocks
    cannot fill the GPU (two heads of 8192 or one of 16384: 64 blocks, split 8; 16 heads of
    4096, 256 blocks, are not split), within what Partial holds at the size."""
    from vajra_tui.engine.workloads.attention import splits_max

    h200 = DeviceInfo(name="NVIDIA H200", vendor_id=0x10DE, software=False, subgroups=True, subgroup_min_size=4,
                      limits={"max-compute-workgroup-storage-size": 49152})
    for spec, ks in (("large", 1), ("1x2x8192x64", 8), ("1x1x16384x64", 8), ("1x2x256x64", 16)):
        size = W.size(spec)
        priors = LibrarySource(limits="adapter").priors("attention", size, h200)["C"]
        split = [p for p in priors if p.get("ks", 1) > 1]
        assert [p["ks"] for p in split] == ([ks] if ks > 1 else []), spec
        assert all(p["ks"] <= splits_max(size) for p in split) and (not split or priors[0] is split[0])
    assert splits_max(W.size("large")) == 7 and W.buffer_len(W.size("seed"))["Partial"] == 2 * 256 * 68 * 16
    assert not any(p.get("ks", 1) > 1 for p in LibrarySource().priors("attention", W.size("seed"), CPU)["C"])


def test_the_prompt_names_the_optional_pass():
    from vajra_tui.engine.sources.llm.prompt_parts import contract_text

    size = W.size("seed")
    ctx = GenerationContext(workload=W.info(size), device=CPU, prelude=prelude(W, size, (1, 1), 1, set()))
    text = contract_text(ctx, W)
    assert "Optional passes:" in text and "`@compute fn combine`" in text and "(2, 2, 1) workgroups" not in text
    assert "// tile:" in text  # main is still planned from the tile header
    from dataclasses import replace

    from vajra_tui import Pass

    explicit = replace(W, passes=(Pass("main", grid=lambda s, p: (s["S"], s["B"] * s["H"], 1)), W.passes[1]))
    text = contract_text(ctx, explicit)
    assert "runs 1 dispatch in this order" in text and "(256, 2, 1) workgroups" in text
    assert text.count("`@compute fn combine`") == 1  # listed once, as optional


def test_an_export_allocates_partial_only_for_a_kernel_that_uses_it(tmp_path, capsys):
    """The TS module of a single-pass winner (or the baseline) binds no Partial, which at the
    large preset would be 125 MB of scratch that nothing reads; a split-K winner's has it."""
    import json

    from vajra_tui.cli.main import main

    split = LibrarySource(CPU).instantiate({**SPLIT, "ks": 2, "gl": 0}, W.size("1x1x64x64x2"), cid="s", name="s")
    assert split is not None
    for kernel, out in ((W.baseline, "plain"), (split.source, "split")):
        (tmp_path / f"{out}.wgsl").write_text(kernel)
        code = main(["tune", "-w", "attention", "--size", "1x1x64x64x2", "-k", str(tmp_path / f"{out}.wgsl"),
                     "--source", "params", "--budget", "1", "--generations", "1", "--reps", "3", "--warmup", "1",
                     "--no-cache", "--json", "-q", "--export", str(tmp_path / out), "--export-baseline",
                     ])
        assert code == 0
        doc = json.loads(capsys.readouterr().out)
        ts = (tmp_path / out / "attention.ts").read_text()
        buffers = ts[ts.index('"name": "Q"'):ts.index("export type Buffers")]
        assert ('"name": "Partial"' in buffers) is (out == "split" and doc["winner"] is not None), doc["headline"]
