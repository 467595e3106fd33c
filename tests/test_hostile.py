"""Text from outside is data: no escape sequence and no markup from it reaches a terminal.

A corpus of hostile strings (tests/hostile.py: OSC 52, window titles, screen wipes,
cursor queries, C1 controls, BEL, ``[/oops]``, ``[link=...]``, ``[bold``) goes through
every path that shows outside text: the TUI's screens, tables, panels, toasts and
titles (replayed, and live with a model streaming it and a server failing with it),
the CLI's progress lines, tables and errors, and a replay in a real pseudo-terminal.
"""

from __future__ import annotations

import json
import os
import pty
import sys
import time
from pathlib import Path

import pytest

from conftest import read_pty
from hostile import NAME, ONE, attacks_in, controls_in, hostile_recording, kernel_path
from vajra_tui.tui.app import VajraApp
from vajra_tui.cli.main import main
from vajra_tui.engine.store.record import Recording
from vajra_tui.safe_text import clean, clean_event, one_line, plain
from vajra_tui.settings import LLMSettings, Settings, TimingSettings

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    for name in ("VAJRA_CONFIG_DIR", "VAJRA_DATA_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    for name in ("NEBIUS_API_KEY", "TAVILY_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_safe_text_keeps_the_words_and_drops_the_controls():
    assert clean("a\x1b]52;c;UFdORUQ=\x07b\r\nc\td\x9b") == "a]52;c;UFdORUQ=b\nc\td"
    assert clean("x\x1b[31my", replace="\ufffd") == "x\ufffd[31my"
    assert one_line("two\nlines\tand tab", 12) == "two lines a…"
    assert plain("[/oops][bold").plain == "[/oops][bold"  # shown, never parsed
    assert not controls_in(clean(ONE)) and "[link=https://evil.example/x]" in clean(ONE)


def test_display_copies_of_events_keep_the_kernel_source_raw(tmp_path):
    """What is shown is cleaned; what is exported and copied stays byte for byte as measured."""
    recording = Recording(hostile_recording(tmp_path / "h.jsonl"))
    for event in recording:
        shown = clean_event(event)
        dumped = shown.model_dump()
        if event.type == "candidate_finished":
            assert shown.result.source == event.result.source and shown.result.stitched_source == \
                event.result.stitched_source
            dumped["result"].pop("source"), dumped["result"].pop("stitched_source")
        if event.type == "candidate_source":
            dumped.pop("source"), dumped.pop("stitched_source")
        assert not [t for t in strings(dumped) if controls_in(t)], event.type


def strings(value) -> list[str]:
    """Every string (keys too) in nested data."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (*strings(k), *strings(v))]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in strings(v)]
    return []


# ---- the TUI --------------------------------------------------------------------
def screen_output(app) -> tuple[list[str], str, list[str]]:
    """Every text segment on screen, the string the compositor would write to the terminal,
    and the links (a ``[link=...]`` that was parsed would make one)."""
    compositor = app.screen._compositor
    texts, links = [], []
    for strip in compositor.render_strips():
        for segment in strip:
            texts.append(segment.text)
            if segment.style is not None and segment.style.link:
                links.append(segment.style.link)
    update = compositor.render_update(full=True)
    return texts, update.render_segments(app.console) if update is not None else "", links


def assert_clean_screen(app, where: str) -> str:
    texts, output, links = screen_output(app)
    joined = "".join(texts)
    assert not controls_in(joined), (where, controls_in(joined))
    assert not attacks_in(output.encode()), (where, attacks_in(output.encode()))
    assert not links, (where, links)
    return joined


async def wait_for(pilot, condition, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


async def test_a_hostile_recording_through_every_screen(tmp_path):
    """Replay: panels, tables, toasts, titles, the graveyard, the source view; the app stays alive."""
    path = hostile_recording(tmp_path / "hostile.jsonl")
    app = VajraApp(Settings(), replay_events=Recording(path).check(), replay_label=path.name + NAME,
                   speed=0)
    seen = ""
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: app.driver is not None and app.driver.done, "the replay")
        await pilot.pause(0.2)
        seen += assert_clean_screen(app, "baseline")
        for key, screen in (("v", "variants"), ("g", "graveyard"), ("j", "graveyard"), ("r", "report")):
            await pilot.press(key)
            await wait_for(pilot, lambda: app.current == screen, screen)
            await pilot.pause(0.1)
            seen += assert_clean_screen(app, screen)
        await pilot.press("g")
        await wait_for(pilot, lambda: app.current == "graveyard", "graveyard")
        app.selected_id = "bad"
        await pilot.press("s")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SourceScreen", "the source view")
        await pilot.pause(0.1)
        seen += assert_clean_screen(app, "source")
        await pilot.press("escape")
        app.notify(f"a toast {ONE}", severity="warning")  # any toast, whatever it quotes
        await pilot.pause(0.1)
        seen += assert_clean_screen(app, "toast")
        assert app.is_running
        await pilot.press("q")
    # the markup arrived as text, and so did the words around the escape sequences
    assert "[/oops]" in seen and "[bold" in seen and "OSC52-MARK" in seen and "PWNED-TITLE" in seen


async def test_live_model_output_server_errors_and_kernel_names(tmp_path):
    """Live: a model streams hostile text, its server fails with hostile errors, a user's kernel
    file has a hostile name and a hostile compile error; the panels and toasts stay clean."""
    import llm_server
    from llm_server import LLMServer, Scripted

    kernel = kernel_path(tmp_path)
    kernel.write_text(f"// {ONE}\n@compute @workgroup_size(64)\nfn main() {{ let x = ; }} // {ONE}\n")
    normal = llm_server._ERRORS["503"]
    llm_server._ERRORS["503"] = (503, {"error": {"message": f"upstream {ONE}", "type": "server_error"}})
    try:
        with LLMServer(chunk_size=64, chunk_delay=0.0) as server:
            server.script("primary", "503")
            server.script("fallback", Scripted(text=f"{ONE}\n```wgsl\n// {ONE}\n{llm_server.KERNEL}```\n",
                                               reasoning=f"think {ONE}"))
            os.environ["NEBIUS_API_KEY"] = "sk-test-hostile-0000"
            settings = Settings(timing=TimingSettings(warmup=1, reps=2),
                                llm=LLMSettings(base_url=server.url, model="primary", fallback_model="fallback",
                                                max_retries=0, timeout_s=20, first_token_timeout_s=20))
            app = VajraApp(settings, workload="softmax", size="16x64", source="nemotron", kernels=[kernel],
                           record=tmp_path / "live.jsonl")
            async with app.run_test(size=(160, 50)) as pilot:
                await wait_for(pilot, lambda: app.adapter_info is not None, "the adapter probe")
                await pilot.press("enter")
                await wait_for(pilot, lambda: app.driver is not None and app.driver.ready
                               and not app.driver.busy, "generation 1", 120)
                streamed = [v for v in app.state.candidates.values() if v.streamed]
                assert streamed and any("OSC52-MARK" in "".join(v.content) for v in streamed)
                assert any(v.failovers for v in streamed), "the server's error reached the panel"
                seen = ""
                for key, screen in (("v", "variants"), ("g", "graveyard"), ("r", "report")):
                    await pilot.press(key)
                    await wait_for(pilot, lambda: app.current == screen, screen)
                    await pilot.pause(0.2)
                    seen += assert_clean_screen(app, screen)
                assert app.is_running
                await pilot.press("q")
                await wait_for(pilot, lambda: (tmp_path / "live.jsonl").exists(), "the recording", 30)
    finally:
        llm_server._ERRORS["503"] = normal
        os.environ.pop("NEBIUS_API_KEY", None)
    assert "[/oops]" in seen


# ---- the CLI --------------------------------------------------------------------
def assert_clean_streams(captured) -> None:
    for name, text in (("stdout", captured.out), ("stderr", captured.err)):
        assert not controls_in(text), (name, controls_in(text))
        assert not attacks_in(text.encode()), name


def test_cli_bench_with_a_hostile_kernel_file(tmp_path, capsys):
    """The file name, its compile error (which quotes the line) and the table: no control codes."""
    kernel = kernel_path(tmp_path)
    kernel.write_text(f"// {ONE}\n@compute @workgroup_size(64)\nfn main() {{ let x = ; }} // {ONE}\n")
    assert main(["bench", "-w", "softmax", "--size", "16x64", "--reps", "2", "--warmup", "1",
                 "-k", str(kernel), "--show-source"]) == 0
    captured = capsys.readouterr()
    assert_clean_streams(captured)
    assert "compile_error" in captured.out.replace(" ", "_") or "compile error" in captured.out
    assert "oops]" in captured.out and "[bold" in captured.out  # the name, as text: the table survived
    assert main(["bench", "-w", "softmax", "--size", "16x64", "-k", str(tmp_path / f"gone{ONE}.wgsl")]) == 2
    captured = capsys.readouterr()
    assert_clean_streams(captured)
    assert captured.err.count("\n") == 1 and "not found" in captured.err


def test_cli_replay_and_export_of_a_hostile_recording(tmp_path, capsys):
    path = hostile_recording(tmp_path / "hostile.jsonl")
    assert main(["replay", str(path), "--headless"]) == 0
    captured = capsys.readouterr()
    assert_clean_streams(captured)
    assert "[/oops]" in captured.out and "MARKUP-MARK" in captured.out
    assert main(["replay", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    assert_clean_streams(captured)
    assert json.loads(captured.out)["device"]["name"].startswith("GPU OSC52-MARK\x1b]52")  # data kept, escaped
    assert main(["export", str(path), "--out", str(tmp_path / "out")]) == 0
    assert_clean_streams(capsys.readouterr())
    # a recording naming a workload that is a path: one line, nothing written anywhere
    lines = path.read_text().splitlines()
    start = json.loads(lines[1])
    start["workload"]["name"] = f"../../evil{ONE}"
    evil = tmp_path / "evil.jsonl"
    evil.write_text("\n".join([lines[0], json.dumps(start), *lines[2:]]) + "\n")
    before = set(tmp_path.rglob("*"))
    assert main(["export", str(evil), "--out", str(tmp_path / "out2")]) == 2
    captured = capsys.readouterr()
    assert_clean_streams(captured)
    errors = [line for line in captured.err.splitlines() if line.startswith("vajra-tui:")]
    assert len(errors) == 1 and "unknown workload" in errors[0] and "Traceback" not in captured.err
    assert set(tmp_path.rglob("*")) == before


def test_cli_tune_with_a_hostile_model_server(tmp_path, capsys, monkeypatch):
    """A server failing with hostile error text and a model replying with it: clean progress lines."""
    import llm_server
    from llm_server import LLMServer, Scripted

    monkeypatch.setitem(llm_server._ERRORS, "503", (503, {"error": {"message": f"upstream {ONE}"}}))
    with LLMServer(chunk_size=64, chunk_delay=0.0) as server:
        server.script("primary", "503")
        server.script("fallback", Scripted(text=f"{ONE}\n```wgsl\n// {ONE}\n{llm_server.KERNEL}```\n",
                                           reasoning=f"think {ONE}"))
        monkeypatch.setenv("NEBIUS_API_KEY", "sk-test-hostile-0000")
        monkeypatch.setenv("VAJRA_LLM_BASE_URL", server.url)
        monkeypatch.setenv("VAJRA_LLM_MODEL", "primary")
        monkeypatch.setenv("VAJRA_LLM_FALLBACK_MODEL", "fallback")
        monkeypatch.setenv("VAJRA_LLM__MAX_RETRIES", "0")
        assert main(["tune", "-w", "softmax", "--size", "16x64", "--source", "llm", "--generations", "0",
                     "--reps", "2", "--warmup", "1"]) == 0
    captured = capsys.readouterr()
    assert_clean_streams(captured)
    assert "using fallback" in captured.err and "compile" in captured.err  # the failover and the model's kernel


# ---- a real terminal --------------------------------------------------------------
def test_replay_in_a_pseudo_terminal_writes_no_attack(tmp_path):
    """The whole app in a pty, as a user runs it: the bytes it writes hold none of the attacks."""
    path = hostile_recording(tmp_path / "hostile.jsonl")
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "140", "LINES": "45",
           "VAJRA_CONFIG_DIR": str(tmp_path / "config"), "VAJRA_DATA_DIR": str(tmp_path / "data")}
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real entry point, in the pty
        os.execvpe(sys.executable, [sys.executable, "-m", "vajra_tui.cli.main", "replay", str(path),
                                    "--speed", "0"], env)
    output = bytearray()

    def read_for(seconds: float) -> None:
        read_pty(fd, seconds, output)

    def drawn_after(key: bytes, quiet: float = 0.3, most: float = 10.0) -> None:
        """Press ``key`` and read until the app has drawn its answer: new bytes, then ``quiet``
        seconds without more (a screen is written in one go). It was a fixed 0.8 s a key."""
        before = len(output)
        os.write(fd, key)
        end = time.monotonic() + most
        while len(output) == before and time.monotonic() < end:
            read_for(0.05)
        while time.monotonic() < end:
            seen = len(output)
            read_for(quiet)
            if len(output) == seen:
                return

    try:
        deadline = time.monotonic() + 60
        while b"RECORDING" not in output and time.monotonic() < deadline:
            read_for(0.5)
        assert b"RECORDING" in output, "the app never drew its banner"
        for key in (b"v", b"g", b"j", b"r", b"s", b"\x1b"):
            drawn_after(key)
        os.write(fd, b"q")
        status = None
        deadline = time.monotonic() + 30
        while status is None and time.monotonic() < deadline:
            read_for(0.5)
            done, code = os.waitpid(pid, os.WNOHANG)
            status = code if done else None
        assert status is not None, "the app did not quit on q"
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert not attacks_in(bytes(output)), attacks_in(bytes(output))
    assert b"OSC52-MARK" in output and b"[/oops]" in output
