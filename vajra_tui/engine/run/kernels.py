"""The user's own kernels as candidates: the one reader and the one id scheme of every entry point.

The CLI's ``--kernel FILE``, the API's ``kernels=`` (paths, WGSL strings or a
``{name: source}`` mapping) and the TUI's ``--kernel`` all come through
:func:`user_kernels`. Ids are ``user0``, ``user1``, ... in the order given; names are
the file stems (or the mapping's keys), made unique with primes (``tiled``, ``tiled'``)
and never ``baseline``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Mapping, Union

from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.errors import UsageError
from vajra_tui.engine.run.kernel_file import KernelFileError, read_kernel_file
from vajra_tui.safe_text import one_line

KernelSpec = Union[str, Path]
Kernels = Union[Iterable[KernelSpec], Mapping[str, str], KernelSpec, None]


def _is_source(spec: KernelSpec) -> bool:
    """A string that is WGSL rather than a path: it spans lines or declares a function."""
    return isinstance(spec, str) and ("\n" in spec or "fn " in spec)


WANT = "kernels take file paths, WGSL strings or a {name: source} dict"


def _refuse(what: str) -> UsageError:
    return UsageError(f"{what}: {WANT}")


def _shown(value: object) -> str:
    return f"{one_line(repr(value), 40)} (type {type(value).__name__})"


def _items(kernels: Kernels, strict: bool) -> list[tuple[str, str, str, str]]:
    """(name, source, origin, why unreadable) for each kernel given."""
    if kernels is None:
        return []
    if isinstance(kernels, Mapping):
        for k, v in kernels.items():
            if not isinstance(v, str):
                raise _refuse(f"kernel {one_line(repr(k), 40)} is {_shown(v)}, not WGSL source")
        return [(str(k), str(v), "python", "") for k, v in kernels.items()]
    if isinstance(kernels, (str, os.PathLike)):
        kernels = [kernels]
    elif isinstance(kernels, (bytes, bytearray)) or not isinstance(kernels, Iterable):
        raise _refuse(f"kernels= is {_shown(kernels)}")
    items = []
    for number, spec in enumerate(kernels, 1):
        if not isinstance(spec, (str, os.PathLike)):  # 5, b"...": a bare TypeError before
            raise _refuse(f"kernel {number} is {_shown(spec)}")
        if isinstance(spec, str) and not spec.strip():  # "" is Path("."): not "a directory"
            why = f"kernel {number} is an empty string, not a kernel"
            if strict:
                raise KernelFileError(f"{why}: {WANT}")
            items.append((f"kernel{number}", "", "python", why))
            continue
        if _is_source(spec):
            items.append((f"kernel{number}", str(spec), "python", ""))
            continue
        path = Path(spec)
        try:  # a regular UTF-8 file of at most 1 MB, BOM stripped
            items.append((path.stem, read_kernel_file(path), f"file: {path}", ""))
        except KernelFileError as exc:
            if strict:
                raise
            items.append((path.stem, "", f"file: {path}", str(exc)))
    return items


def user_kernels(kernels: Kernels, strict: bool = True) -> list[Candidate]:
    """The kernels as candidates with unique names.

    ``strict``: a file that cannot be read raises :class:`KernelFileError` (a usage error,
    before anything starts). Without it (the TUI, which must keep running) the file becomes
    a candidate with no kernel whose reason says why, and lands in the graveyard; there each
    candidate also carries its text as the "reply" the graveyard shows.
    """
    out, seen = [], {"baseline"}
    for index, (name, source, origin, why) in enumerate(_items(kernels, strict)):
        while name in seen:
            name += "'"
        seen.add(name)
        out.append(Candidate(id=f"user{index}", name=name, strategy="user", origin=origin, source=source,
                             raw_reply="" if strict else source, no_kernel_reason=why))
    return out


__all__ = ["KernelSpec", "Kernels", "user_kernels"]
