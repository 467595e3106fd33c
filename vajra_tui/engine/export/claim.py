"""A run's hold on its ``--export`` folder, from before the tune to its end.

Two tunes given the same ``--export`` both passed the check at their start, tuned for as
long as they took, and the second then failed on the first one's files. The folder is now
claimed when the run is built: a lock file made exclusively, naming the process; a second
run is refused at once, in one line that names the lock file. A lock whose process is gone
(kill -9) is taken over. The lock names the process by its id and (on Linux) its start time:
a process id is soon reused (in a container, the next run may well get the same one), and a
lock whose id is alive with another start time is as stale as one whose process is gone. A
lock that names an id only (an older Vajra's, or one written where start times are unknown)
is judged by the id alone. The lock goes when the run ends, and so does a folder the claim
created and nothing used.
"""

from __future__ import annotations

import os
from pathlib import Path

from vajra_tui.engine.run.output_paths import OutputPathError
from vajra_tui.engine.store.damage import open_regular
from vajra_tui.safe_text import one_line

LOCK_NAME = ".vajra-export.lock"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _start_time(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (field 22 of /proc/<pid>/stat);
    None where it cannot be read (not Linux, no /proc, the process gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        # the command name (field 2) may hold spaces and parentheses: fields 3 on follow its last ')'
        return int(stat[stat.rindex(b")") + 1:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _holder(lock: Path) -> int | None:
    """The process that holds ``lock``; None when it is unreadable or its process is gone,
    or when its id now names another process (a start time other than the one recorded)."""
    try:
        with open(open_regular(lock, os.O_RDONLY), encoding="utf-8") as handle:  # a named pipe never waits
            words = handle.read(200).split()
        pid = int(words[0])
        started = int(words[1]) if len(words) > 1 else None  # an older lock: the id only
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return None
    if pid == os.getpid() or not _alive(pid):
        return None
    if started is not None:
        now = _start_time(pid)
        if now is not None and now != started:  # the id was reused: its run is gone
            return None
    return pid


class ExportClaim:
    """Held from :meth:`take` to :meth:`release`; the folder is the run's alone meanwhile."""

    def __init__(self, folder: Path, created: bool) -> None:
        self.folder, self.created = folder, created
        self.lock = folder / LOCK_NAME

    @classmethod
    def take(cls, folder: Path) -> "ExportClaim":
        folder = Path(folder)
        created = not folder.exists()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputPathError(f"cannot create --export {one_line(folder)}: "
                                  f"{one_line(exc.strerror or exc)}") from None
        claim = cls(folder, created)
        claim._lock()
        return claim

    def _lock(self) -> None:
        for _ in range(2):  # once more after taking over a stale lock
            try:
                fd = os.open(self.lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = _holder(self.lock)
                if holder is not None:
                    raise OutputPathError(f"another run (process {holder}) is exporting into "
                                          f"{one_line(self.folder)}; choose another --export folder "
                                          f"(or, if no run is, remove {one_line(self.lock)})") from None
                self.lock.unlink(missing_ok=True)  # its process is gone: a stale claim
                continue
            except OSError as exc:
                raise OutputPathError(f"cannot claim --export {one_line(self.folder)}: "
                                      f"{one_line(exc.strerror or exc)}") from None
            with os.fdopen(fd, "w") as handle:
                started = _start_time(os.getpid())
                handle.write(f"{os.getpid()}\n" if started is None else f"{os.getpid()} {started}\n")
            return
        raise OutputPathError(f"cannot claim --export {one_line(self.folder)}: its lock keeps coming back")

    def release(self) -> None:
        """The lock goes; a folder this claim made and nothing was written into goes too."""
        try:
            self.lock.unlink(missing_ok=True)
            if self.created and not any(self.folder.iterdir()):
                self.folder.rmdir()
        except OSError:  # the folder is the user's now; a leftover lock is taken over next time
            pass


__all__ = ["ExportClaim", "LOCK_NAME"]
