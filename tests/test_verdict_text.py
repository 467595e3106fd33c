"""The one-line reason of a failed verification shows got and want so that they differ on
the page: a counter off by one at 16 million, or two floats apart in their 7th digit."""

from __future__ import annotations

import numpy as np

from vajra_tui.engine.gpu.verify import compare


def test_whole_numbers_are_written_in_full():
    v = compare(np.array([16291901.0], np.float32), np.array([16291900.0]), atol=0.0, rtol=0.0)
    assert not v.passed and "got 16291901, want 16291900" in v.reason, v.reason


def test_integer_outputs_off_by_one_read_as_such():
    v = compare(np.array([7, 100001], np.uint32), np.array([7, 100000]), atol=0.0, rtol=0.0, dtype="u32")
    assert "got 100001, want 100000" in v.reason, v.reason


def test_floats_get_the_digits_that_tell_them_apart():
    v = compare(np.array([1.2345678], np.float32), np.array([1.2345671]), atol=1e-8, rtol=0.0)
    got, want = v.reason.split("(got ")[1].rstrip(")").split(", want ")
    assert got != want and len(got) <= 12, v.reason


def test_the_nearest_half_to_a_subnormal_reference_verifies():
    """f16 subnormals are 2^-24 apart: the correctly rounded half of a tiny reference can miss
    it by half a step, a relative error no rtol covers, and still be the best answer there is;
    four steps off is a wrong answer."""
    rng = np.random.default_rng(7)
    ref = rng.uniform(-4, 4, 4099) * 2.0**-17
    nearest = ref.astype(np.float16)
    assert compare(nearest, ref, atol=0.0, rtol=1e-3, dtype="f16").passed
    off = nearest.copy()
    off[11] = np.float16(float(off[11]) + 2.0**-22)
    verdict = compare(off, ref, atol=0.0, rtol=1e-3, dtype="f16")
    assert not verdict.passed and verdict.worst_index == 11, verdict.reason
