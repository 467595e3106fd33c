"""An export made from a hostile recording: no name from the recording runs as code.

A recording can come from anyone. ``vajra-tui export REC --out DIR`` turns its names
(bindings, kernel, device, backend, size dims, override constants) into a TypeScript
module that an application bundles and imports, so each of them is either refused
(exit 2, one line naming the field) or lands in the module as inert data: an escaped
string literal, or comment text with no line terminator to end the comment early.
The check is the real one: the exported ``.ts`` is imported under Node (``tsx``) and
``globalThis.PWNED`` must stay undefined.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

import vajra_tui
from vajra_tui.cli.main import main
from vajra_tui.engine.admission.contract import kernel_identity
from vajra_tui.engine.errors import UsageError
from vajra_tui.engine.events import CandidateResult, DeviceInfo, WorkloadInfo
from vajra_tui.engine.export.ts import typescript_module
from vajra_tui.engine.workloads import get_workload
from tests.test_export import _tsx

# exports run under Node + Dawn here; no crown asks for the browser judge (conftest.py)
pytestmark = pytest.mark.usefixtures("node_sidecar")

# A real recording: a library tune of sgemm on lavapipe.
RECORDING = Path(vajra_tui.__file__).parent / "recordings" / "lavapipe-sgemm.jsonl"
# Whatever JavaScript counts as a line end, and NEL, which editors and some tools treat as one.
RAW_LINE_ENDS = re.compile("[\r\u2028\u2029\x85]")

# A binding name that closes the TS object type it is pasted into and runs a statement
# (it ran on the code before this test), and the one from the issue.
STATEMENT_BINDING = "A: 0 }; globalThis.PWNED = 1; type Q = { x"
BRACKET_BINDING = "A]; globalThis.PWNED=1; [x"
# Names that reach `//` comments: a JS line terminator ends the comment, `//` eats the rest.
DEVICE = "llvmpipe\u2028globalThis.PWNED=2;//"
KERNEL = "E4 */ \u2029globalThis.PWNED=3;//"
BACKEND = "Vulkan\rglobalThis.PWNED=4;//"

CASES = {
    "binding-statement": {"binding": STATEMENT_BINDING},
    "binding-bracket": {"binding": BRACKET_BINDING},
    "device-u2028": {"device": DEVICE},
    "kernel-u2029-and-close": {"kernel": KERNEL},
    "backend-cr": {"backend": BACKEND},
    "all-three": {"binding": STATEMENT_BINDING, "device": DEVICE, "kernel": KERNEL},
}


# ---- building the hostile recording ---------------------------------------------
def _sgemm_bindings(size: dict[str, int], first_name: str) -> list[dict]:
    """sgemm's bindings as a session records them, the first one renamed."""
    wl = get_workload("sgemm")
    lengths = wl.buffer_len(size)
    rows = [{"index": b.index, "name": b.name, "access": b.access, "dtype": b.dtype,
             "elements": int(lengths[b.name])} for b in wl.bindings]
    rows[0]["name"] = first_name
    return rows


def hostile_recording(folder: Path, binding: str | None = None, device: str | None = None,
                      kernel: str | None = None, backend: str | None = None,
                      edit_winner=None) -> Path:
    """The shipped recording with the given names swapped in (the winner's for ``kernel``)."""
    events = [json.loads(line) for line in RECORDING.read_text(encoding="utf-8").splitlines()]
    winner = next(e["winner_id"] for e in reversed(events) if e.get("type") == "ranking")
    for event in events:
        if event.get("type") == "session_started":
            if device is not None:
                event["device"]["name"] = device
            if backend is not None:
                event["device"]["backend"] = backend
            if binding is not None:
                workload = event["workload"]
                workload["bindings"] = _sgemm_bindings(workload["size"], binding)
        if event.get("type") == "candidate_finished" and event["result"]["id"] == winner:
            if kernel is not None:
                event["result"]["name"] = kernel
            if edit_winner is not None:
                edit_winner(event["result"])
    path = folder / "hostile.jsonl"
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events), encoding="utf-8")
    return path


# ---- exporting it and importing the module -----------------------------------------
IMPORTER = """\
const m = await import(process.argv[2]);
const g = globalThis as any;
console.log(JSON.stringify({ pwned: g.PWNED ?? null, workload: m.WORKLOAD, wgsl: m.WGSL,
                             buffers: m.BUFFERS }));
"""


def import_module(module: Path) -> dict:
    """Import ``module`` under Node (types stripped by tsx): what it exports, and PWNED."""
    tsx = _tsx()  # skips without node / tsx
    importer = module.parent / "import_check.mts"
    importer.write_text(IMPORTER)
    proc = subprocess.run([*tsx, str(importer), str(module)], capture_output=True, text=True,
                          timeout=120, cwd=module.parent)
    lines = [ln for ln in proc.stdout.split("\n") if ln.startswith("{")]
    assert proc.returncode == 0 and lines, f"the exported module does not load: {proc.stderr[-1500:]}"
    return json.loads(lines[-1])


def export(rec: Path, out: Path, capsys) -> tuple[int, list[str]]:
    """``vajra-tui export REC --out OUT``: its exit status and its stderr lines."""
    rc = main(["export", str(rec), "--out", str(out)])
    return rc, capsys.readouterr().err.splitlines()


def assert_inert(rc: int, err: list[str], out: Path) -> dict | None:
    """Refused in one line, or exported as a module that loads and runs none of the names."""
    if rc == 2:
        message = err[-1]
        assert message.startswith("vajra-tui: ") and not RAW_LINE_ENDS.search(message), err
        assert not out.exists() or not any(out.iterdir()), "a refused export wrote files"
        return None
    assert rc == 0, err
    ts = out / "sgemm.ts"
    report = import_module(ts)
    assert report["pwned"] is None, f"code from the recording ran: PWNED={report['pwned']}"
    assert report["workload"] == "sgemm"
    assert not RAW_LINE_ENDS.search(ts.read_text(encoding="utf-8")), "a raw line terminator in the module"
    lock = (out / "vajra.lock.json").read_text(encoding="utf-8")
    assert not RAW_LINE_ENDS.search(lock), "a raw line terminator in the lockfile"
    return report


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_recording_exports_nothing_that_runs(case, tmp_path, capsys):
    rec = hostile_recording(tmp_path, **CASES[case])
    assert_inert(*export(rec, tmp_path / "o", capsys), tmp_path / "o")


@pytest.mark.parametrize("case", ["binding-statement", "binding-bracket", "all-three"])
def test_a_binding_name_that_is_no_identifier_is_refused_naming_the_field(case, tmp_path, capsys):
    rec = hostile_recording(tmp_path, **CASES[case])
    rc, err = export(rec, tmp_path / "o", capsys)
    assert rc == 2, err
    assert "workload.bindings[0].name" in err[-1] and "identifier" in err[-1], err[-1]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("case", ["device-u2028", "kernel-u2029-and-close", "backend-cr"])
def test_odd_device_and_kernel_names_are_kept_as_comment_text(case, tmp_path, capsys):
    """A device may really be called anything: the export goes on, the name is only text."""
    rec = hostile_recording(tmp_path, **CASES[case])
    rc, err = export(rec, tmp_path / "o", capsys)
    assert rc == 0, err
    text = (tmp_path / "o" / "sgemm.ts").read_text(encoding="utf-8")
    header = text.split("/* eslint-disable */", 1)[0]
    assert all(line.startswith("//") for line in header.splitlines()), header
    assert "globalThis.PWNED=" in header  # the text is there, as comment text
    assert "*/" not in header
    lock = json.loads((tmp_path / "o" / "vajra.lock.json").read_text(encoding="utf-8"))
    entry = lock["entries"][0]
    value = CASES[case].get("device") or CASES[case].get("kernel") or CASES[case].get("backend")
    assert value in (entry["device"]["name"], entry["kernel"]["name"], entry["device"]["backend"])


def test_wgsl_that_closes_a_script_tag_stays_exact(tmp_path, capsys):
    """The timed WGSL reaches the module as a template literal: byte for byte, and inert."""
    def edit(result: dict) -> None:
        source = result["stitched_source"] + "// </script><!-- ${globalThis.PWNED=6} `\u2028\x85\r\n"
        result["stitched_source"] = source
        result["source_sha256"] = kernel_identity(source, result.get("constants") or {})

    rec = hostile_recording(tmp_path, edit_winner=edit)
    report = assert_inert(*export(rec, tmp_path / "o", capsys), tmp_path / "o")
    assert report is not None
    wgsl = (tmp_path / "o" / "sgemm.wgsl").read_bytes().decode("utf-8")
    assert report["wgsl"] == wgsl and "</script>" in wgsl
    assert "</script" not in (tmp_path / "o" / "sgemm.ts").read_text(encoding="utf-8")


# ---- the other names, through the module's public function -------------------------
def _module_parts() -> tuple[CandidateResult, DeviceInfo, WorkloadInfo]:
    """sgemm's winner, device and workload from the shipped recording, bindings recorded."""
    from vajra_tui.engine.store.record import RecordedRun, Recording

    rec = RecordedRun(Recording(RECORDING))
    workload = rec.workload.model_copy(update={"bindings": _sgemm_bindings(dict(rec.workload.size), "A")})
    return rec.winner, rec.device, workload


def _binding_edit(**changes):
    def edit(result, device, workload):
        rows = [dict(b) for b in workload.bindings]
        rows[0].update(changes)
        return result, device, workload.model_copy(update={"bindings": rows})
    return edit


BAD_PARTS = {
    "bindings[0].dtype": _binding_edit(dtype="f32\u2028x"),
    "bindings[0].access": _binding_edit(access="read\u2028x"),
    "bindings[0].index": _binding_edit(index="0; globalThis.PWNED=1"),
    "bindings[0].elements": _binding_edit(elements=-1),
    "bindings[0].name": _binding_edit(name="1A"),
    "read_write": lambda r, d, w: (r, d, w.model_copy(update={"bindings": [
        {**b, "access": "read"} for b in w.bindings]})),
    "bindings[1].name": lambda r, d, w: (r, d, w.model_copy(update={"bindings": [
        w.bindings[0], {**w.bindings[1], "name": "A"}, w.bindings[2]]})),
    "size": lambda r, d, w: (r, d, w.model_copy(update={"size": {"M\u2028x": 512, "N": 512, "K": 512}})),
    "constants": lambda r, d, w: (r.model_copy(update={"constants": {"X\u2028globalThis.PWNED=1": 1}}), d, w),
    "workload.name": lambda r, d, w: (r, d, w.model_copy(update={"name": "sgemm\u2028x"})),
    # #23: a pass label becomes a file name, an entry point stands in code, uniforms are bytes
    "result.passes[1].label": lambda r, d, w: (r.model_copy(update={"passes": [
        {"label": "main", "entry": "main", "grid": list(r.grid), "own": True, "source": ""},
        {"label": "../../etc/x", "entry": "main", "grid": [1, 1, 1], "own": False, "source": "fn f() {}"}]}), d, w),
    "result.passes[0].entry": lambda r, d, w: (r.model_copy(update={"passes": [
        {"label": "a", "entry": "main\u2028globalThis.PWNED=1", "grid": list(r.grid), "own": True}]}), d, w),
    "result.uniforms": lambda r, d, w: (r.model_copy(update={"uniforms": {"A": "00"}}), d, w),
}


@pytest.mark.parametrize("field", list(BAD_PARTS))
def test_every_name_that_reaches_code_is_checked(field):
    result, device, workload = BAD_PARTS[field](*_module_parts())
    with pytest.raises(UsageError) as info:
        typescript_module(result, device, workload)
    message = str(info.value)
    assert field in message and "\n" not in message and not RAW_LINE_ENDS.search(message), message


def test_a_recording_with_no_output_binding_is_refused_in_one_line(tmp_path, capsys):
    """Every binding 'read': the module has no OUTPUT (an IndexError traceback before)."""
    def edit_all_read(folder: Path) -> Path:
        rec = hostile_recording(folder, binding="A")
        events = [json.loads(line) for line in rec.read_text(encoding="utf-8").splitlines()]
        for event in events:
            if event.get("type") == "session_started":
                for b in event["workload"]["bindings"]:
                    b["access"] = "read"
        rec.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
        return rec

    rc, err = export(edit_all_read(tmp_path), tmp_path / "o", capsys)
    assert rc == 2 and "read_write" in err[-1], err


def test_comment_text_ends_no_line_and_closes_no_comment():
    from vajra_tui.engine.export.names import MAX_COMMENT_TEXT, comment_text

    text = comment_text("a*/b\u2028c\r\nd\x85e\u2029f\u202eg**/" + "x" * 1000)
    assert not RAW_LINE_ENDS.search(text) and "\n" not in text and "*/" not in text
    assert text.startswith("a* /b c d e f g** /x") and len(text) == MAX_COMMENT_TEXT
