"""Ray Core for a machine without network, in one archive small enough to carry.

    python benchmarks/pack_ray.py                 # -> .ray-whl/ray-cp312.tar.xz (ignored by git)

Ray's cp312 wheel is 79 MB, more than one device call may carry (64 MiB in all). Ray Core
needs none of ``ray/jars`` (Java workers, 32 MB), the dashboard's web client, RLlib, Data,
Serve or the LLM library, so they are left out; the rest of the wheel is rewritten
uncompressed (with a fresh RECORD, so pip installs it as any wheel) and packed with xz
together with Ray's dependencies, which compresses far better than deflate inside xz.

On the machine that gets it (no network; Python 3.12, x86-64 Linux)::

    mkdir -p /tmp/rw && tar -xJf .ray-whl/ray-cp312.tar.xz -C /tmp/rw && \
      python3 -m pip install -q --no-index --find-links /tmp/rw ray==VERSION
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STRIP = ("ray/jars/", "ray/dashboard/client/", "ray/rllib/", "ray/data/", "ray/serve/", "ray/llm/")


def download(version: str, folder: Path, python: str, platform: str) -> Path:
    """Ray and its dependencies as wheels for ``python``/``platform`` (pip, from the registry)."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = next(folder.glob(f"ray-{version}-cp{python.replace('.', '')}-*.whl"), None)
    if wheel is None:
        subprocess.run([sys.executable, "-m", "pip", "download", f"ray=={version}", "--python-version", python,
                        "--only-binary=:all:", "--platform", platform, "-d", str(folder), "-q"], check=True)
        wheel = next(folder.glob(f"ray-{version}-cp{python.replace('.', '')}-*.whl"))
    return wheel


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def strip(wheel: Path, out: Path) -> tuple[int, int]:
    """``wheel`` without the STRIP folders, stored uncompressed, RECORD rewritten; (kept, dropped)."""
    kept = dropped = 0
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        record_name = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
        lines = []
        for info in src.infolist():
            if info.filename == record_name:
                continue
            if info.filename.startswith(STRIP):
                dropped += 1
                continue
            data = src.read(info)
            info.compress_type = zipfile.ZIP_STORED
            dst.writestr(info, data)  # keeps the file modes (the raylet binaries stay executable)
            if not info.is_dir():
                lines.append(_record_line(info.filename, data))
            kept += 1
        lines.append(f"{record_name},,")
        dst.writestr(record_name, "\n".join(lines) + "\n")
    return kept, dropped


def pack(folder: Path, stripped: Path, archive: Path) -> None:
    """The stripped Ray wheel and every dependency wheel, in one tar.xz (flat)."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "w:xz", preset=9) as tar:
        tar.add(stripped, arcname=stripped.name)
        for dep in sorted(folder.glob("*.whl")):
            if not dep.name.startswith("ray-"):
                tar.add(dep, arcname=dep.name)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--version", default="2.60.0")
    p.add_argument("--python", default="3.12")
    p.add_argument("--platform", default="manylinux2014_x86_64")
    p.add_argument("--download", type=Path, default=Path("/tmp/vajra-ray-dl"), help="pip's download folder")
    p.add_argument("--out", type=Path, default=ROOT / ".ray-whl" / "ray-cp312.tar.xz")
    a = p.parse_args(argv)
    wheel = download(a.version, a.download, a.python, a.platform)
    stripped_dir = a.download / "stripped"
    stripped_dir.mkdir(exist_ok=True)
    stripped = stripped_dir / wheel.name
    kept, dropped = strip(wheel, stripped)
    pack(a.download, stripped, a.out)
    size = a.out.stat().st_size
    print(f"{wheel.name}: {wheel.stat().st_size / 2**20:.1f} MiB; kept {kept} files, dropped {dropped}; "
          f"{a.out} is {size / 2**20:.1f} MiB")
    print("on the device: mkdir -p /tmp/rw && tar -xJf .ray-whl/ray-cp312.tar.xz -C /tmp/rw && "
          f"python3 -m pip install -q --no-index --find-links /tmp/rw ray=={a.version}")
    return 0 if size < 60 * 2**20 else 1


if __name__ == "__main__":
    sys.exit(main())
