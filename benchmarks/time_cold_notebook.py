"""Time one notebook as a reader's first run would meet it: cold, from ``notebooks/``.

Cold means a fresh checkout of the working tree (tracked files, uncommitted edits included, via
``git stash create``) with no ``runs/`` (no checkpoints or member records) and no ``data/cache`` (no parsed
captions, relevance matrices or Doc2Vec models); the installed packages and the offline assets are the
machine's. Prints the wall time and each code cell's duration (papermill's)::

    python benchmarks/time_cold_notebook.py 09_real_language            # at its default scale (smoke)
    python benchmarks/time_cold_notebook.py 09_real_language -p epochs 1

Run it on a quiet machine: a grid beside it doubles or triples the time. Results go to
benchmarks/README.md by question, not to a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebook", help="a notebook's stem, e.g. 09_real_language")
    ap.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="a papermill parameter (VALUE parsed as YAML by papermill)")
    args = ap.parse_args(argv)
    if not (ROOT / "notebooks" / f"{args.notebook}.ipynb").is_file():
        ap.error(f"no notebook notebooks/{args.notebook}.ipynb")
    git = lambda *a, **k: subprocess.run(["git", "-C", str(ROOT), *a], check=True, text=True,  # noqa: E731
                                         capture_output=True, **k).stdout.strip()
    commit = git("stash", "create") or git("rev-parse", "HEAD")
    with tempfile.TemporaryDirectory(prefix="cold-") as tmp:
        tree, out = Path(tmp) / "tree", Path(tmp) / "out.ipynb"
        git("worktree", "add", "--detach", str(tree), commit)
        try:
            env = dict(os.environ, ITM_COURSE_ROOT=str(tree), PYTHONPATH=str(tree))
            env.pop("ITM_CACHE_DIR", None)
            cmd = [sys.executable, "-m", "papermill", f"{args.notebook}.ipynb", str(out),
                   "-p", "results_dir", str(Path(tmp) / "results")]
            for name, value in args.param:
                cmd += ["-y", f"{name}: {value}"]
            t0 = time.time()
            run = subprocess.run(cmd, cwd=tree / "notebooks", env=env, capture_output=True, text=True)
            if run.returncode:
                raise SystemExit(f"{args.notebook} failed cold:\n{run.stderr[-3000:]}")
            wall = time.time() - t0
            cells = [c for c in json.loads(out.read_text())["cells"] if c["cell_type"] == "code"]
        finally:
            git("worktree", "remove", "--force", str(tree))
    print(f"{args.notebook} cold at {commit[:10]}: {wall:.1f} s wall (kernel start and papermill included)")
    for c in cells:
        d = c.get("metadata", {}).get("papermill", {}).get("duration")
        if d is not None and d >= 0.5:
            print(f"  {d:7.1f} s  {''.join(c['source']).splitlines()[0][:70]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
