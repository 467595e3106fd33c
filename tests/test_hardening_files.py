"""Hardening, round 2 (files, terminal, secrets): what a lockfile, a config file, a recording,
a Tavily cache or a server may hold is data, and every mistake in it is one line, exit 2.

Each test reproduces a defect through a public entry point: the CLI (``main([...])``), the
grounding's public methods against the loopback Tavily server, or a real recorded run
against the loopback OpenAI server with a key in a variable of the user's own naming.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest

from vajra_tui.cli.main import main
from vajra_tui.engine.events import CandidateResult, DeviceInfo
from vajra_tui.engine.export.lockfile import build_lock, dump_lock, lock_entry
from vajra_tui.engine.workloads import WORKLOADS

from conftest import kernel
from hostile import OSC52, TITLE, WIPE, hostile_recording

ESC = "\x1b"


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The captured stderr, asserted to be one line with no escape byte (stdout has none either)."""
    out = capsys.readouterr()
    assert ESC not in out.out and ESC not in out.err
    lines = out.err.strip().splitlines()
    assert len(lines) == 1, out.err[-2000:]
    assert "Traceback" not in out.err
    return lines[0]


# ---- lockfiles ---------------------------------------------------------------------
def lock_document(tmp_path: Path, name: str = "a.lock.json", size_key: str = "M") -> dict[str, Any]:
    """A real lockfile's data: one sgemm entry (its size keys renamed when asked)."""
    sgemm = WORKLOADS["sgemm"]
    info = sgemm.info(sgemm.size("64"))
    if size_key != "M":
        info = info.model_copy(update={"size": {size_key: 64, **{k: v for k, v in info.size.items() if k != "M"}}})
    dev = DeviceInfo(name="GPU one", backend="Vulkan", adapter_type="DiscreteGPU", driver="1.0")
    source = "// tiled\n@compute @workgroup_size(1) fn main() {}\n"
    result = CandidateResult(id="tiled", name="tiled", status="verified", stitched_source=source,
                             source_sha256=hashlib.sha256(source.encode()).hexdigest(),
                             grid=[1, 1, 1], workgroup_size=[1, 1, 1], median_ms=1.0, timing="timestamp")
    return build_lock([lock_entry(result, dev, info)])


def write_lock(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else dump_lock(data))
    return path


def test_lock_diff_escapes_size_keys_at_full_width(tmp_path, capsys, monkeypatch):
    hostile = f"M{TITLE}{WIPE}{OSC52}"
    a = write_lock(tmp_path, "a.lock.json", lock_document(tmp_path, size_key=hostile))
    b = write_lock(tmp_path, "b.lock.json", lock_document(tmp_path))
    monkeypatch.setenv("COLUMNS", "140")  # the size column only shows at 100 columns or more
    assert main(["lock", "diff", str(a), str(b)]) == 0
    out = capsys.readouterr()
    assert "size" in out.out and "PWNED-TITLE" in out.out  # the key arrived, as text
    assert ESC not in out.out and "\x07" not in out.out and ESC not in out.err


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _bad_locks(tmp_path: Path) -> dict[str, Path]:
    """Lockfiles that used to end in a traceback (RecursionError, TypeError, ValueError)."""
    good = lock_document(tmp_path)
    text = dump_lock(good)
    listed = json.loads(text)
    listed["entries"][0]["workload"]["name"] = ["sgemm"]
    numbered = json.loads(text)
    numbered["entries"][0]["workload"]["name"] = 7
    second = json.loads(json.dumps(good["entries"][0]))
    second["kernel"]["sha256"] = "f" * 64
    numbered["entries"].append(second)  # an int beside a string: sorted() raised TypeError
    assert '"strategy": "user"' in text
    digits = text.replace('"schema_version": 1', '"schema_version": ' + "1" * 5000)
    return {
        "deep": write_lock(tmp_path, "deep.json", text[:-2] + ', "x": ' + _deep(100_000) + "}\n"),
        "deep-entry": write_lock(tmp_path, "deep-entry.json", text.replace(
            '"strategy": "user"', '"strategy": ' + _deep(600), 1)),
        "list-name": write_lock(tmp_path, "list.json", listed),
        "int-name": write_lock(tmp_path, "int.json", numbered),
        "digits": write_lock(tmp_path, "digits.json", digits),
    }


@pytest.mark.parametrize("case", ["deep", "deep-entry", "list-name", "int-name", "digits"])
def test_a_broken_lockfile_is_one_line_for_diff_and_merge(tmp_path, capsys, case):
    bad = _bad_locks(tmp_path)[case]
    good = write_lock(tmp_path, "good.json", lock_document(tmp_path))
    start = time.monotonic()
    assert main(["lock", "diff", str(good), str(bad)]) == 2
    line = one_error_line(capsys)
    assert "deep.json" in line or bad.name in line, line
    assert len(line) < 400, line
    assert main(["lock", "merge", str(good), str(bad), "-o", str(tmp_path / "merged.json")]) == 2
    assert bad.name in one_error_line(capsys)
    assert not (tmp_path / "merged.json").exists()
    assert time.monotonic() - start < 5


# ---- config.toml -----------------------------------------------------------------
@pytest.mark.parametrize("body,words", [
    ("theme = " + _deep(100_000) + "\n", "nested"),
    ("theme = " + _deep(200) + "\n", "nested"),
    ("[keys]\nquit = " + "{ a = " * 300 + "1" + " }" * 300 + "\n", "nested"),
    ("[timing]\nreps = " + "1" * 5000 + "\n", "digits"),
], ids=["deep-array", "deeper-than-the-limit", "deep-tables", "5000-digits"])
@pytest.mark.parametrize("argv", [["config", "show"], ["bench", "-w", "sgemm"], ["lock", "merge", "x.json"]],
                         ids=["config-show", "bench", "lock-merge"])
def test_a_hostile_config_file_is_one_line(tmp_path, capsys, monkeypatch, body, words, argv):
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "config.toml").write_text(body)
    monkeypatch.setenv("VAJRA_CONFIG_DIR", str(folder))
    assert main(argv) == 2
    line = one_error_line(capsys)
    assert "config.toml" in line and words in line and len(line) < 400, line


@pytest.mark.parametrize("value,words", [
    ('{"quit": ' + _deep(5000) + "}", "nested too deeply"),
    ('{"quit": 1' + "1" * 5000 + "}", "too many digits"),
    ("{nope", "not valid JSON"),
    ("notjson", "not valid JSON"),  # no brace: pydantic-settings decodes it as JSON all the same
], ids=["deep", "5000-digits", "bad-json", "bare-word"])
def test_a_hostile_json_environment_value_is_one_line(capsys, monkeypatch, value, words):
    monkeypatch.setenv("VAJRA_KEYS", value)
    assert main(["config", "show"]) == 2
    line = one_error_line(capsys)
    assert line.startswith("vajra-tui: VAJRA_KEYS: ") and words in line and len(line) < 200, line


# ---- CSV -------------------------------------------------------------------------
def test_csv_escapes_control_characters_as_json_does(tmp_path, capsys):
    recording = hostile_recording(tmp_path / "hostile.jsonl")
    target = tmp_path / "results.csv"
    assert main(["replay", str(recording), "--headless", "--csv", str(target)]) == 0
    capsys.readouterr()
    text = target.read_text(encoding="utf-8")
    assert ESC not in text and "\x07" not in text and "\x9b" not in text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows and all(r["device"].startswith("GPU OSC52-MARK\\u001b]52;") for r in rows), rows[0]["device"]
    assert any("\\u001b" in r["name"] for r in rows)


# ---- Tavily grounding -------------------------------------------------------------
@pytest.mark.asyncio
async def test_a_cache_entry_without_url_is_skipped(tmp_path, monkeypatch):
    from tavily_server import TavilyServer

    from vajra_tui.engine.sources.llm.grounding import CACHE_FILE, Grounding
    from vajra_tui.settings import TavilySettings

    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-s3cr3t")
    message = "expected expression"
    (tmp_path / CACHE_FILE).write_text(json.dumps({
        f"WGSL {message}": [{"title": "no url", "content": "kept?"}, {"url": ["x"], "title": 3},
                            {"url": "https://www.w3.org/TR/WGSL/#ok", "title": "ok", "content": "fine"}]}))
    events: list[Any] = []
    with TavilyServer() as server:
        grounding = Grounding(TavilySettings(base_url=server.url, timeout_s=3.0), events.append,
                              cache_dir=tmp_path)
        merged = await grounding.for_errors([message])
        await grounding.aclose()
    assert [r["url"] for r in merged] == ["https://www.w3.org/TR/WGSL/#ok"]
    assert all(set(r) == {"title", "url", "content"} and all(isinstance(v, str) for v in r.values())
               for r in merged)


@pytest.mark.asyncio
async def test_a_huge_tavily_result_is_trimmed_before_prompts_and_cache(tmp_path, monkeypatch):
    import tavily_server

    from vajra_tui.engine.sources.llm.grounding import CACHE_FILE, Grounding
    from vajra_tui.engine.sources.llm.prompts import build_messages
    from vajra_tui.settings import TavilySettings
    from test_llm import make_ctx

    huge = "https://evil.example/" + "a" * (5 << 20)
    monkeypatch.setattr(tavily_server, "result_url", lambda query, n: f"{huge}{n}")
    monkeypatch.setattr(tavily_server, "LONG_CONTENT", "c" * (1 << 20))
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-s3cr3t")
    with tavily_server.TavilyServer() as server:
        grounding = Grounding(TavilySettings(base_url=server.url, timeout_s=20.0, max_results=3),
                              lambda e: None, cache_dir=tmp_path)
        found = await grounding.for_strategy("sgemm", "B")
        await grounding.aclose()
    assert found, "results still come through, trimmed"
    assert all(len(r["url"]) <= 2048 and len(r["title"]) <= 200 and len(r["content"]) <= 1000 for r in found)
    assert sum(len(v) for r in found for v in r.values()) <= 8_000
    assert (tmp_path / CACHE_FILE).stat().st_size < 64_000
    prompt = json.dumps(build_messages(make_ctx(), "B", found))
    assert len(prompt) < 100_000, len(prompt)


# ---- secrets ---------------------------------------------------------------------
def test_a_key_in_a_custom_variable_never_reaches_the_recording(tmp_path, capsys, monkeypatch):
    """``[llm] api_key_env = "MY_LLM_SECRET"``: a server that echoes the Authorization header."""
    import llm_server
    from llm_server import LLMServer

    secret = "sk-custom-" + hashlib.sha256(str(tmp_path).encode()).hexdigest()[:24]
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "config.toml").write_text('[llm]\napi_key_env = "MY_LLM_SECRET"\n')
    monkeypatch.setenv("VAJRA_CONFIG_DIR", str(folder))
    monkeypatch.setenv("MY_LLM_SECRET", secret)
    monkeypatch.setenv("VAJRA_LLM_MODEL", "echo-model")
    reply = f"Authorization: Bearer {secret}\n```wgsl\n{kernel('softmax_row.wgsl')}```\nkey {secret}\n"
    monkeypatch.setattr(llm_server, "KERNEL_REPLY", reply)
    rec = tmp_path / "llm.jsonl"
    with LLMServer(chunk_size=6, chunk_delay=0.0) as server:
        monkeypatch.setenv("VAJRA_LLM_BASE_URL", server.url)
        code = main(["tune", "-w", "softmax", "--size", "32x256", "--generations", "1", "--reps", "3",
                     "--warmup", "1", "--json", "-q", "--record", str(rec)])
        assert server.auth_headers and server.auth_headers[0] == f"Bearer {secret}", capsys.readouterr().err[-3000:]
    out = capsys.readouterr()
    assert code == 0, out.err[-2000:]
    text = rec.read_text(encoding="utf-8")
    assert "nemotron: echo-model" in text, out.err[-3000:]  # the model's reply was recorded
    assert secret not in text, f"the key is in the recording {text.count(secret)} times"
    assert "Bearer [redacted]" in text
    # The server streams 6 characters a chunk: no delta holds the key whole, their text joined
    # (what a replay shows) must not hold it either, and it is the reply, redacted.
    streams: dict[tuple[str, str], str] = {}
    for line in text.splitlines()[1:]:
        event = json.loads(line)
        if event["type"] == "stream_delta":
            streams[event["id"], event["kind"]] = streams.get((event["id"], event["kind"]), "") + event["text"]
    assert streams and all(secret not in joined for joined in streams.values())
    assert any(joined.startswith("Authorization: Bearer [redacted]\n```wgsl") for joined in streams.values())


def test_a_tavily_key_in_a_custom_variable_is_redacted(tmp_path, monkeypatch):
    from vajra_tui.engine.events import Notice
    from vajra_tui.engine.store.record import Recorder
    from vajra_tui.settings import TavilySettings

    secret = "tv-custom-" + "9" * 20
    monkeypatch.setenv("MY_SEARCH_SECRET", secret)
    TavilySettings(api_key_env="MY_SEARCH_SECRET")
    recorder = Recorder(tmp_path / "r.jsonl")
    recorder(Notice(level="error", message=f"search said {secret}; quoted \"{secret}\""))
    text = recorder.close().read_text()
    assert secret not in text and "[redacted]" in text


def test_lock_diff_pairs_repeated_entries_in_linear_time(tmp_path, capsys):
    """A lockfile holding one entry 2000 times (same kernel, same device): the runs on one
    device were paired each with each, 4 million rows and 10 GB for --json. Paired in order
    now: one row per entry, at once."""
    doc = lock_document(tmp_path)
    doc["entries"] = doc["entries"] * 2000
    path = write_lock(tmp_path, "big.lock.json", doc)
    started = time.monotonic()
    assert main(["lock", "diff", str(path), str(path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert len(rows) == 2000 and time.monotonic() - started < 30
