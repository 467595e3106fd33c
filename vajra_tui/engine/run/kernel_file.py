"""Reading a user's kernel file: a regular file of UTF-8 text, at most 1 MB.

``-k /dev/zero`` would otherwise read without end, a FIFO would block, and a
directory gives a traceback. A UTF-8 byte order mark (editors on Windows write
one) is stripped: WGSL does not allow it and Naga reports it as an error at 1:1.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from vajra_tui.engine.errors import UsageError
from vajra_tui.safe_text import one_line

MAX_KERNEL_BYTES = 1 << 20  # far beyond any kernel; the largest shipped one is ~3 KB
BOM = "\ufeff"


class KernelFileError(UsageError):
    """A kernel file that cannot be used; the message is one line for the user."""


def read_kernel_file(path: Path | str, limit: int = MAX_KERNEL_BYTES) -> str:
    """The text of a kernel file, BOM stripped, or KernelFileError saying why not."""
    path = Path(path)
    shown = one_line(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise KernelFileError(f"kernel file not found: {shown}") from None
    except OSError as exc:
        raise KernelFileError(f"cannot read kernel file {shown}: {one_line(exc.strerror or exc)}") from None
    if stat.S_ISDIR(info.st_mode):
        raise KernelFileError(f"kernel file {shown} is a directory, not a WGSL file")
    if not stat.S_ISREG(info.st_mode):
        raise KernelFileError(f"kernel file {shown} is not a regular file (a device, FIFO or socket)")
    if info.st_size > limit:
        raise KernelFileError(f"kernel file {shown} is {info.st_size} bytes; kernels are limited to "
                              f"{limit} bytes")
    try:
        # O_NONBLOCK: if the path was swapped for a FIFO after the stat, the open does not hang
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise KernelFileError(f"kernel file {shown} is not a regular file")
            data = handle.read(limit + 1)  # a file that grew since the stat is still capped
    except OSError as exc:
        raise KernelFileError(f"cannot read kernel file {shown}: {one_line(exc.strerror or exc)}") from None
    if len(data) > limit:
        raise KernelFileError(f"kernel file {shown} is larger than {limit} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KernelFileError(f"kernel file {shown} is not UTF-8 text (byte {exc.start + 1} is "
                              f"{data[exc.start]:#04x})") from None
    text = text[1:] if text.startswith(BOM) else text
    if not text.strip():  # said as what it is, not as "no kernel in response"
        raise KernelFileError(f"kernel file {shown} is empty")
    return text
