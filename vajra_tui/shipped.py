"""The session recordings that ship inside the package (``vajra_tui/recordings``).

They are package data, so a pipx install with no GPU still has real sessions to
play; ``vajra-tui replay --list`` names them and ``vajra-tui replay NAME``
finds one by name from any folder.
"""

from __future__ import annotations

from pathlib import Path

RECORDINGS_DIR = Path(__file__).resolve().parent / "recordings"


def shipped_recordings() -> list[Path]:
    return sorted(RECORDINGS_DIR.glob("*.jsonl"))


def find_shipped(name: str | Path) -> Path | None:
    """A shipped recording by file name, with or without ``.jsonl``; None if there is none."""
    stem = Path(name).name.removesuffix(".jsonl")
    if Path(name).name != str(name) and not str(name).startswith("recordings/"):
        return None  # a path with folders names the user's own file
    match = RECORDINGS_DIR / f"{stem}.jsonl"
    return match if match.is_file() else None
