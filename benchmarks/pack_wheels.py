"""Every wheel a device call needs, in one archive that fits the 64 MiB carry.

    python benchmarks/pack_wheels.py      # -> .wheels/all.tar.xz (ignored by git)

Takes the wheels ``../shared/gpu/prepare.sh`` put in ``.whl/``, those in ``.whlx/`` (numpy
and setuptools for the test command's own virtual environment) and Ray's stripped wheel
with its dependencies (``.ray-whl/ray-cp312.tar.xz``, from ``pack_ray.py``). Each wheel
is rewritten uncompressed (the files and RECORD are unchanged, so pip installs it as
before) and the lot packed with xz, which compresses far better than deflate inside it:
the 64 MB of wheels become 47 MB, so the suite with Ray and a benchmark fit one call
(``run_h200_suite.sh``), where two calls lost the unpacked Ray to the machine's idle
release in between. On the device::

    mkdir -p /tmp/wheels && tar -xJf .wheels/all.tar.xz -C /tmp/wheels   # wheels in /tmp/wheels/w
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def stored(wheel: Path, out: Path) -> None:
    """``wheel`` rewritten without compression, entry for entry."""
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            info.compress_type = zipfile.ZIP_STORED
            dst.writestr(info, data)


def main() -> int:
    archive = ROOT / ".wheels" / "all.tar.xz"
    archive.parent.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "w"
        folder.mkdir()
        for wheel in sorted([*(ROOT / ".whl").glob("*.whl"), *(ROOT / ".whlx").glob("*.whl")]):
            stored(wheel, folder / wheel.name)
        ray = ROOT / ".ray-whl" / "ray-cp312.tar.xz"
        if ray.exists():
            with tarfile.open(ray) as tar:
                tar.extractall(folder, filter="data")
        else:
            print(f"no {ray.relative_to(ROOT)}: packing without Ray (run pack_ray.py first)")
        if shutil.which("xz") is None:
            print("xz is missing: install it (apt install xz-utils)")
            return 1
        with open(archive, "wb") as out:
            tar_proc = subprocess.Popen(["tar", "-cf", "-", "-C", tmp, "w"], stdout=subprocess.PIPE)
            subprocess.run(["xz", "-9e", "-T0"], stdin=tar_proc.stdout, stdout=out, check=True)
            tar_proc.wait()
    print(f"{archive.relative_to(ROOT)}: {archive.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
