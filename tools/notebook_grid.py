"""Run a notebook's code up to where its grid ends, without Jupyter: on a lent GPU machine that has torch
but neither papermill nor a kernel. The member records the grid writes (``<results_dir>/<nb>/members/``)
are what the notebook reads when it is run in full afterwards, so the committed tables still come from the
notebook itself. The parameters are applied after the notebook's ``parameters`` cell, as papermill does.

    python tools/notebook_grid.py 08_teran --stop-before "for name in (f" -p scale medium -p n_seeds 2 \\
        -p headline_seeds 5 -p device cuda -p results_dir results

Cells run in order; the first cell holding the ``--stop-before`` text runs up to that text, and nothing
after it runs."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebook", help="stem in notebooks/, e.g. 08_teran")
    ap.add_argument("--stop-before", required=True, help="text of the code cell where the run stops")
    ap.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    args = ap.parse_args(argv)
    path = ROOT / "notebooks" / f"{args.notebook}.ipynb"
    if not path.is_file():
        ap.error(f"no notebook {path}")
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    src = ["".join(c["source"]) for c in cells]
    stop = next((i for i, s in enumerate(src) if args.stop_before in s), None)
    if stop is None:
        ap.error(f"no code cell of {args.notebook} holds {args.stop_before!r}")
    params = next((i for i, c in enumerate(cells) if "parameters" in c.get("metadata", {}).get("tags", [])), None)
    if params is None:
        ap.error(f"{args.notebook} has no cell tagged 'parameters'")
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    from itmlib.course.params import cli_value

    os.environ.setdefault("MPLBACKEND", "Agg")
    ns: dict = {"__name__": "__main__", "display": lambda *a, **k: None}   # no rich output without a kernel
    t0 = time.time()
    for i, s in enumerate(src[: stop + 1]):
        if i == stop:
            s = s[: s.index(args.stop_before)]
        exec(compile(s, f"{args.notebook}[cell {i}]", "exec"), ns)
        if i == params:
            unknown = [n for n, _ in args.param if n not in ns]
            if unknown:
                ap.error(f"{args.notebook} has no parameter(s) {unknown}")
            ns.update({n: cli_value(v) for n, v in args.param})
        print(f"[notebook_grid] cell {i} done at {time.time() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
