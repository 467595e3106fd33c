"""``vajra-tui lock merge A B ... -o OUT``: lockfiles from several machines, as one.

The output is checked before any lockfile is read, as ``--csv`` is: a path under a
file, in /proc or /sys, on a read-only file system, or a directory (even with
``--force``) is one line and exit status 2, and a folder that does not exist is
refused rather than created. Two files that time the same slot (device, workload,
size and kernel) differently are never resolved in silence: the one kept is said on
stderr, or, with ``--on-conflict refuse``, nothing is written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vajra_tui.engine.errors import UsageError
from vajra_tui.safe_text import one_line

MERGE_HELP = "merge lockfiles from several machines into one"
MERGE_DESCRIPTION = (
    "Merge lockfiles from several machines into one (-o, default ./vajra.lock.json). Entries "
    "for the same device, workload, size and kernel are one slot; when two files time a slot "
    "differently, --on-conflict says which is kept: newest (the default; the most recently "
    "exported, a later file on a tie), fastest (the lower median), or refuse (exit status 2, "
    "nothing written). Each such choice is told in one line on stderr. The output's folder "
    "must exist (it is not created); an existing file is replaced only with --force.")
# Past this many conflicts, one line says how many more (a whole second machine's lockfile
# re-measured should not scroll the first away).
SHOWN_CONFLICTS = 20


def add_merge_parser(lock_sub: argparse._SubParsersAction) -> None:
    from vajra_tui.engine.export.lock_merge import MERGE_RULES

    merge = lock_sub.add_parser("merge", help=MERGE_HELP, description=MERGE_DESCRIPTION)
    merge.add_argument("files", nargs="+", type=Path, help="the lockfiles to merge")
    merge.add_argument("--out", "-o", type=Path, default=Path("vajra.lock.json"),
                       help="the merged lockfile (default: ./vajra.lock.json); its folder must exist")
    merge.add_argument("--force", action="store_true", help="replace OUT if it exists (a file only)")
    merge.add_argument("--on-conflict", dest="on_conflict", choices=list(MERGE_RULES), default="newest",
                       help="when two files time the same device, workload, size and kernel "
                            "differently: keep the newest export (default) or the fastest median, "
                            "each said on stderr; or refuse, writing nothing")


def check_out(out: Path, force: bool) -> None:
    """Before anything is read: OUT can be written, and replaces a file only with ``force``."""
    from vajra_tui.engine.run.output_paths import OutputPathError, check_new_file, check_writable_folder

    shown = one_line(out)
    if out.is_dir():
        raise UsageError(f"-o {shown} is a directory; give a file name")
    if out.exists() or out.is_symlink():
        if not force:
            raise UsageError(f"{shown} exists; pass --force to overwrite")
        if not out.is_file():  # a device, FIFO or socket, or a dangling link: never replaced
            raise UsageError(f"-o {shown} is not a regular file; give a file name")
        check_writable_folder(out.parent, "the merged lockfile")  # an OutputPathError: exit 2
        return
    try:  # under a file, in /proc or /sys, read-only, or a folder that is not there: OutputPathError
        check_new_file(out, "the merged lockfile", "-o", folder_must_exist=True)
    except OutputPathError:
        raise
    except OSError as exc:  # a stat that failed in a way the checks do not name (EACCES on the way)
        raise UsageError(f"-o {shown}: {one_line(exc.strerror or exc)}") from None


def lock_merge(args: argparse.Namespace) -> int:
    import json

    from vajra_tui.engine.export.lock_merge import MergeConflict, merge_locks
    from vajra_tui.engine.store.atomic import atomic_write

    out = Path(args.out)
    check_out(out, args.force)
    conflicts: list[MergeConflict] = []
    rule = getattr(args, "on_conflict", "newest")
    try:
        merged = merge_locks(args.files, rule, conflicts)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from None
    for conflict in conflicts[:SHOWN_CONFLICTS]:
        print(f"vajra-tui: notice: lock merge: {conflict.message()}", file=sys.stderr)
    if len(conflicts) > SHOWN_CONFLICTS:
        print(f"vajra-tui: notice: lock merge: {len(conflicts) - SHOWN_CONFLICTS} more slots measured "
              f"differently, resolved the same way ({rule})", file=sys.stderr)
    try:
        atomic_write(out, json.dumps(merged, indent=2) + "\n")
    except OSError as exc:  # a full disk, or the folder changed since the check: one line
        raise UsageError(f"lock merge: {one_line(out)} not written: {one_line(exc.strerror or exc)}") from None
    print(f"wrote {one_line(out)}", file=sys.stderr)
    return 0
