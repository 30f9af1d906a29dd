"""Do the committed tables still come out of the code? The check ``make replay`` runs after ``make tables``.

``make tables`` replays every notebook from the committed member and figure records (nothing trains) and writes
its tables over ``results/``. A table that then differs from the committed one was written by older code: a
reader would meet a number no code in the repository produces. :func:`table_drift` lists each such table
(a changed, deleted or new ``.csv`` / ``.md`` under ``results/``, and the README's generated conclusions) with its
first differing line, read from git; ``python -m itmlib.course.drift`` prints them and exits 1 when there is any.

    make tables && python -m itmlib.course.drift      # what `make replay` (and CI) runs
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..paths import repo_root

__all__ = ["TABLE_SUFFIXES", "Drift", "table_drift", "first_difference", "main"]

#: the files that are tables (executed copies and member records are not compared here)
TABLE_SUFFIXES = (".csv", ".md")


@dataclass(frozen=True)
class Drift:
    """One table that differs from its committed version: ``path`` (from the repo root), ``line`` (1-based, the first
    that differs; 0 for a table that is new or gone) and what the committed and the written line say."""

    path: str
    line: int
    committed: str | None   # None: not committed
    written: str | None     # None: no longer written

    def __str__(self) -> str:
        if self.committed is None or self.written is None:
            return f"{self.path}: {'not committed' if self.committed is None else 'no longer written'}"
        return f"{self.path}:{self.line}: committed {self.committed!r}, written {self.written!r}"


def first_difference(committed: str, written: str) -> tuple[int, str, str]:
    """(line number, committed line, written line) of the first line where two texts differ ("" past an end);
    (0, "", "") when they are the same."""
    a, b = committed.splitlines(), written.splitlines()
    for i in range(max(len(a), len(b))):
        x, y = (a[i] if i < len(a) else ""), (b[i] if i < len(b) else "")
        if x != y or (i >= len(a)) != (i >= len(b)):
            return i + 1, x, y
    return 0, "", ""


def _git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {root}: {out.stderr.strip()}")
    return out.stdout


def _is_table(path: str) -> bool:
    return path == "README.md" or (path.startswith("results/") and path.endswith(TABLE_SUFFIXES))


def table_drift(root: str | Path | None = None) -> list[Drift]:
    """Every table under ``results/`` (and ``README.md``) whose working-tree text differs from ``HEAD``'s, in path order."""
    root = Path(root) if root is not None else repo_root()
    status = _git(root, "status", "--porcelain", "--untracked-files=all", "--", "results", "README.md")
    out = []
    for line in status.splitlines():
        code, path = line[:2], line[3:].strip().strip('"')
        if " -> " in path:   # a rename: the new name is the file written
            path = path.split(" -> ", 1)[1]
        if not _is_table(path):
            continue
        if code == "??":
            out.append(Drift(path, 0, None, ""))
        elif "D" in code:
            out.append(Drift(path, 0, "", None))
        else:
            n, a, b = first_difference(_git(root, "show", f"HEAD:{path}"), (root / path).read_text(encoding="utf-8"))
            if n:
                out.append(Drift(path, n, a, b))
    return sorted(out, key=lambda d: d.path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m itmlib.course.drift", description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=None, help="the repository (default: this one)")
    args = ap.parse_args(argv)
    drift = table_drift(args.root)
    for d in drift:
        print(f"[drift] {d}")
    if drift:
        print(f"[drift] {len(drift)} committed table(s) differ from what the code writes from the records: regenerate "
              "them (make tables) and commit them, or fix the code", flush=True)
        return 1
    print("[drift] every committed table is what the code writes from the records", flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
