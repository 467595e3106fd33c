"""Uniform params structs: WGSL's uniform-address-space layout, the refusals, and a real kernel
reading the packed bytes back (the layout is only right if a WGSL compiler agrees)."""

from __future__ import annotations

import math
import re
import struct

import numpy as np
import pytest

from vajra_tui.engine.workloads.uniforms import (
    UniformError, check_fields, layout, pack, read_struct, struct_size, struct_wgsl,
)


def offsets(fields):
    return [offset for _, _, offset, _ in layout(fields)]


@pytest.mark.parametrize("fields, want, size", [
    ([("M", "u32"), ("N", "u32"), ("K", "u32"), ("alpha", "f32")], [0, 4, 8, 12], 16),
    ([("a", "vec3<f32>"), ("b", "f32")], [0, 12], 16),
    ([("a", "f32"), ("b", "vec4<f32>")], [0, 16], 32),
    ([("a", "vec2<f32>"), ("b", "vec3<f32>")], [0, 16], 32),
    ([("a", "f32"), ("b", "vec2f"), ("c", "vec3u")], [0, 8, 16], 32),
    ([("a", "f16"), ("b", "f16"), ("c", "vec2h"), ("d", "vec3h")], [0, 2, 4, 8], 16),
    ([("a", "u32"), ("m", "mat3x3<f32>"), ("b", "f32")], [0, 16, 64], 80),
    ([("a", "u32"), ("m", "mat2x2f"), ("b", "f32")], [0, 8, 24], 32),
    ([("m", "mat4x3f"), ("b", "f32")], [0, 64], 80),
    ([("a", "f32"), ("v", "array<vec4<f32>, 3>"), ("b", "f32")], [0, 16, 64], 80),
    ([("a", "f32"), ("v", "array<vec3<i32>, 2>"), ("b", "u32")], [0, 16, 48], 64),
    ([("v", "array<array<vec4f, 2>, 3>"), ("b", "u32")], [0, 96], 112),
])
def test_offsets_and_sizes_follow_the_wgsl_alignment_table(fields, want, size) -> None:
    assert offsets(fields) == want
    assert struct_size(fields) == size
    assert len(pack("params", fields, _values(fields))) == size


def test_layout_reports_each_members_size() -> None:
    fields = [("a", "vec3<f32>"), ("m", "mat2x3f"), ("v", "array<vec2<f32>, 2>")]
    with pytest.raises(UniformError, match="'v'.*8-byte element stride.*multiple of 16"):
        layout(fields)
    assert layout(fields[:2]) == [("a", "vec3<f32>", 0, 12), ("m", "mat2x3f", 16, 32)]


def test_pack_puts_values_at_their_offsets_and_zeroes_padding() -> None:
    fields = [("n", "u32"), ("v", "vec3<f32>"), ("i", "i32"), ("m", "mat2x2f")]
    data = pack("params", fields, {"n": np.uint32(7), "v": np.array([1.5, 2.5, 3.5]), "i": -2,
                                   "m": [[1, 2], [3, 4]]})
    assert len(data) == 48
    assert struct.unpack_from("<I", data, 0) == (7,)
    assert data[4:16] == bytes(12)
    assert struct.unpack_from("<3f", data, 16) == (1.5, 2.5, 3.5)
    assert struct.unpack_from("<i", data, 28) == (-2,)
    assert struct.unpack_from("<4f", data, 32) == (1, 2, 3, 4)
    flat = pack("params", fields, {"n": True, "v": (0, 0, 0), "i": 0, "m": [1, 2, 3, 4]})
    assert flat[32:] == data[32:] and struct.unpack_from("<I", flat, 0) == (1,)


def test_floats_may_be_inf_or_nan_and_f16_packs_as_half() -> None:
    data = pack("p", [("a", "f32"), ("b", "f32"), ("h", "f16")],
                {"a": math.inf, "b": np.float32("nan"), "h": 0.5})
    a, b = struct.unpack_from("<2f", data, 0)
    assert a == math.inf and math.isnan(b)
    assert struct.unpack_from("<e", data, 8) == (0.5,)


@pytest.mark.parametrize("fields, values, match", [
    ([("M", "u32")], {}, r"^uniform params: field 'M': no value given$"),
    ([("M", "u32")], {"M": 1, "N": 2}, r"values gives 'N', which is not one of its fields \(M\)"),
    ([("M", "u32")], {"M": -1}, r"field 'M': -1 is out of u32 range"),
    ([("M", "u32")], {"M": 2**32}, r"field 'M': 4294967296 is out of u32 range"),
    ([("k", "i32")], {"k": 2**31}, r"field 'k': 2147483648 is out of i32 range"),
    ([("M", "u32")], {"M": 4.0}, r"field 'M': want an integer for a u32, got 4.0 \(float\)"),
    ([("a", "f32")], {"a": "1"}, r"field 'a': want a number for a f32"),
    ([("a", "f32")], {"a": 1e39}, r"field 'a': 1e\+39 is out of f32 range"),
    ([("h", "f16")], {"h": 70000.0}, r"field 'h': 70000.0 is out of f16 range"),
    ([("v", "vec3f")], {"v": [1, 2]}, r"field 'v': want 3 values, got 2"),
    ([("v", "vec3f")], {"v": 1.0}, r"field 'v': want a sequence of 3 values"),
    ([("v", "vec2u")], {"v": [1, -1]}, r"field 'v'\[1\]: -1 is out of u32 range"),
    ([("m", "mat2x2f")], {"m": [1, 2, 3]}, r"field 'm': want 2 columns of 2 values, or 4 values"),
    ([("m", "mat2x2f")], {"m": [[1, 2], [3]]}, r"field 'm'\[1\]: want 2 values, got 1"),
    ([("w", "array<vec4f, 2>")], {"w": [[1, 2, 3, 4]]}, r"field 'w': want 2 values, got 1"),
])
def test_bad_values_are_refused_in_one_line_naming_the_member(fields, values, match) -> None:
    with pytest.raises(UniformError, match=match) as info:
        pack("params", fields, values)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("fields, match", [
    ([("alpha", "float")], r"^uniform params: field 'alpha': type 'float' is not a WGSL type \(want f32"),
    ([], r"non-empty list"),
    ("M", r"non-empty list"),
    ([("M",)], r"field 0 is \('M',\), not a \(name, WGSL type\) pair"),
    ([("1M", "u32")], r"field '1M': not a WGSL identifier"),
    ([("fn", "u32")], r"field 'fn': not a WGSL identifier"),
    ([("__x", "u32")], r"field '__x': not a WGSL identifier"),
    ([("a", "u32"), ("a", "f32")], r"field 'a': declared twice"),
    ([("a", "vec5<f32>")], r"not a WGSL type"),
    ([("a", "vec4<bool>")], r"not a WGSL type"),
    ([("a", "mat2x2<i32>")], r"not a WGSL type"),
    ([("a", "array<f32>")], r"not a WGSL type"),
    ([("a", "array<f32, 4>")], r"field 'a'.*4-byte element stride.*multiple of 16.*array<vec4<f32>, n>"),
    ([("a", "array<vec2f, 4>")], r"8-byte element stride"),
    ([("a", "array<vec4f, 0>")], r"integer literal from 1 to 65536"),
    ([("a", "array<vec4f, 65537>")], r"integer literal from 1 to 65536"),
    ([("a", "array<vec4f, N>")], r"integer literal"),
    ([("a", "array<vec4f, 4097>")], r"65552 bytes, over the 65536"),
    ([("a", "@align(16) f32")], r"field 'a': type '@align\(16\) f32' carries an attribute"),
])
def test_unsupported_structs_are_refused_in_one_line(fields, match) -> None:
    with pytest.raises(UniformError, match=match) as info:
        check_fields("params", fields)
    assert "\n" not in str(info.value)


def test_array_counts_may_carry_a_suffix_and_the_max_count_fits() -> None:
    check_fields("params", [("a", "array<vec4<f32>, 4u>"), ("b", "array<vec4f,4092>")])
    assert struct_size([("a", "array<vec4f, 4096>")]) == 65536


def test_struct_wgsl_declares_the_struct_and_reads_back() -> None:
    fields = [("M", "u32"), ("w", "array<vec4<f32>, 2>"), ("alpha", "f32")]
    text = struct_wgsl("Params", fields)
    assert text == "struct Params {\n    M: u32,\n    w: array<vec4<f32>, 2>,\n    alpha: f32,\n}"
    assert read_struct(text, "Params") == fields
    with pytest.raises(UniformError, match="not a WGSL identifier"):
        struct_wgsl("struct", fields)


def test_read_struct_ignores_comments_and_keeps_attributes_for_check_fields() -> None:
    src = """
    // struct P { fake: f32 }
    /* struct P { fake2: f32 } */
    struct Other { x: f32 }
    struct P {
        @align(16) a: vec4<f32>,   // first
        b: array<array<vec4<f32>, 2>, 4u>,
        c : mat4x4f, d: u32,
    }
    @group(0) @binding(0) var<uniform> p: P;
    """
    got = read_struct(src, "P")
    assert got == [("a", "@align(16) vec4<f32>"), ("b", "array<array<vec4<f32>, 2>, 4u>"),
                   ("c", "mat4x4f"), ("d", "u32")]
    with pytest.raises(UniformError, match="field 'a'.*attribute"):
        check_fields("params", got)
    check_fields("params", got[1:])
    assert read_struct(src, "Other") == [("x", "f32")]
    assert read_struct(src, "Missing") is None
    assert read_struct("struct Q { x: array<vec4<f32>>, y: f32 }", "Q") == [
        ("x", "array<vec4<f32>>"), ("y", "f32")]


# --- a real WGSL compiler and GPU read the packed bytes -------------------------------------

GPU_STRUCTS = [
    [("M", "u32"), ("N", "u32"), ("K", "u32"), ("alpha", "f32")],
    [("a", "vec3<f32>"), ("b", "f32"), ("c", "vec2<i32>"), ("m", "mat3x3<f32>"), ("e", "u32"),
     ("f", "vec2f")],
    [("x", "f32"), ("w", "array<vec4<f32>, 3>"), ("m", "mat2x2f"), ("v", "vec3u"), ("h", "i32"),
     ("t", "array<vec3<i32>, 2>"), ("q", "mat4x3f")],
]


def _components(t: str, expr: str) -> list[str]:
    """WGSL expressions for every scalar component of ``expr`` of type ``t``, in pack order."""
    t = t.replace(" ", "")
    if t.startswith("array<"):
        inner, _, n = t[6:-1].rpartition(",")
        return [c for i in range(int(n.rstrip("u"))) for c in _components(inner, f"{expr}[{i}]")]
    if t.startswith("mat"):
        cols, rows = int(t[3]), int(t[5])
        return [f"{expr}[{c}][{r}]" for c in range(cols) for r in range(rows)]
    if t.startswith("vec"):
        return [f"{expr}[{i}]" for i in range(int(t[3]))]
    return [expr]


def _shape(t: str) -> tuple[int, ...]:
    t = t.replace(" ", "")
    if t.startswith("array<"):
        inner, _, n = t[6:-1].rpartition(",")
        return (int(n),) + _shape(inner)
    if t.startswith("mat"):
        return (int(t[3]), int(t[5]))
    return (int(t[3]),) if t.startswith("vec") else ()


def _scalar(t: str) -> str:
    """The scalar type of a member type's components."""
    for scalar, short in (("i32", "i"), ("u32", "u"), ("f16", "h")):
        if scalar in t or re.search(rf"vec\d{short}\b", t):
            return scalar
    return "f32"


def _values(fields) -> dict:
    """Distinct values for every component: negative for i32, quarters for floats."""
    out, k = {}, 1
    for name, t in fields:
        shape = _shape(t)
        count = int(np.prod(shape)) if shape else 1
        ints = np.arange(k, k + count)
        vals = {"i32": -ints, "u32": ints}.get(_scalar(t), ints * 0.25 + 0.5)
        k += count
        out[name] = vals.reshape(shape).tolist() if shape else vals[0].item()
    return out


def _kernel(fields) -> tuple[str, list[str]]:
    comps = [c for name, t in fields for c in _components(t, f"p.{name}")]
    body = "\n".join(f"    out[{i}] = f32({c});" for i, c in enumerate(comps))
    src = (f"{struct_wgsl('P', fields)}\n@group(0) @binding(0) var<uniform> p: P;\n"
           "@group(0) @binding(1) var<storage, read_write> out: array<f32>;\n"
           f"@compute @workgroup_size(1) fn main() {{\n{body}\n}}\n")
    return src, comps


@pytest.fixture(scope="module")
def device():
    wgpu = pytest.importorskip("wgpu")
    try:
        adapter = wgpu.gpu.request_adapter_sync()
    except Exception as exc:  # no driver at all
        pytest.skip(f"no WebGPU adapter: {exc}")
    if adapter is None:
        pytest.skip("no WebGPU adapter")
    return adapter.request_device_sync()


def _run(device, src: str, data: bytes, count: int) -> np.ndarray:
    import wgpu

    usage = wgpu.BufferUsage
    uni = device.create_buffer_with_data(data=data, usage=usage.UNIFORM | usage.COPY_DST)
    out = device.create_buffer(size=4 * count, usage=usage.STORAGE | usage.COPY_SRC)
    bgl = device.create_bind_group_layout(entries=[
        {"binding": 0, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": "uniform"}},
        {"binding": 1, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": "storage"}},
    ])
    pipeline = device.create_compute_pipeline(
        layout=device.create_pipeline_layout(bind_group_layouts=[bgl]),
        compute={"module": device.create_shader_module(code=src), "entry_point": "main"})
    group = device.create_bind_group(layout=bgl, entries=[
        {"binding": 0, "resource": {"buffer": uni, "offset": 0, "size": len(data)}},
        {"binding": 1, "resource": {"buffer": out, "offset": 0, "size": 4 * count}},
    ])
    encoder = device.create_command_encoder()
    compute = encoder.begin_compute_pass()
    compute.set_pipeline(pipeline)
    compute.set_bind_group(0, group)
    compute.dispatch_workgroups(1)
    compute.end()
    device.queue.submit([encoder.finish()])
    return np.frombuffer(device.queue.read_buffer(out), dtype=np.float32)


@pytest.mark.parametrize("fields", GPU_STRUCTS, ids=["gemm", "vec-mat", "arrays"])
def test_a_real_kernel_reads_every_member_as_packed(device, fields) -> None:
    values = _values(fields)
    src, comps = _kernel(fields)
    got = _run(device, src, pack("params", fields, values), len(comps))
    want = np.concatenate([np.ravel(np.asarray(values[name], dtype=np.float64)) for name, _ in fields])
    assert got.tolist() == want.astype(np.float32).tolist(), src


def test_f16_members_read_back_where_the_adapter_has_shader_f16() -> None:
    wgpu = pytest.importorskip("wgpu")
    adapter = wgpu.gpu.request_adapter_sync()
    if adapter is None or "shader-f16" not in adapter.features:
        pytest.skip("no WebGPU adapter with shader-f16")
    device = adapter.request_device_sync(required_features=["shader-f16"])
    fields = [("a", "f16"), ("b", "vec3<f16>"), ("c", "f32"), ("m", "mat2x3h"), ("d", "vec2h"),
              ("e", "u32"), ("w", "array<mat2x4h, 2>")]
    assert offsets(fields) == [0, 8, 16, 24, 40, 44, 48]
    values = _values(fields)
    src, comps = _kernel(fields)
    got = _run(device, "enable f16;\n" + src, pack("params", fields, values), len(comps))
    want = np.concatenate([np.ravel(np.asarray(values[name], dtype=np.float64)) for name, _ in fields])
    assert got.tolist() == want.astype(np.float32).tolist(), src
