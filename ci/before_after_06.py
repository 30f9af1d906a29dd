"""Notebook 06's committed numbers before and after the fidelity changes (Table 4's threshold protocol, the
order-aware phrase split, the paper's learning-rate schedule, Table 5 at fixed updates, 3-5 seeds), side by
side: ``results/06_phrase_labels/before_after.csv``, which the notebook shows in "What we changed".

    python ci/before_after_06.py --before 450dd20

``--before`` is the commit whose tables are the old ones (git must be able to show it); the new ones are read
from the working tree. Run once, after the rerun; the table says which commit it compared.
"""
from __future__ import annotations

import argparse
import io
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
NB = "06_phrase_labels"
#: (table, row filter, column) -> what the row says
ROWS = [("table3_ablation", {"method": m}, "rsum", f"Table 3 Rsum, {m}") for m in
        ("MT+GM (w/ phrases)", "+LM (w/ phrases)", "+PM (w/ phrases)", "+PM (w/o phrases)")]
ROWS += [("table4_mismatch", {"method": m}, c, f"Table 4 {c}, {m}") for m in ("+LM (w/ phrases)", "+PM (w/ phrases)")
         for c in ("acc_global_i2t", "acc_phrase_i2t", "thr_global_i2t", "thr_phrase_i2t")]
ROWS += [("table5_reduced_data", {"fraction": 0.25, "method": m}, "rsum", f"Table 5 Rsum at 25%, {m}")
         for m in ("+LM (w/ phrases)", "+PM (w/ phrases)")]


def _read(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), comment="#")


def _value(df: pd.DataFrame, where: dict, col: str) -> float:
    if col not in df:
        return float("nan")
    rows = df
    for k, v in where.items():
        rows = rows[rows[k] == v]
    return float(rows[col].iloc[0]) if len(rows) else float("nan")


def main(argv: list[str] | None = None) -> int:
    from itmlib.course.results import read_table, write_table

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the commit holding the old tables")
    args = ap.parse_args(argv)
    out = []
    for table, where, col, label in ROWS:
        old = _read(subprocess.run(["git", "show", f"{args.before}:results/{NB}/{table}.csv"], cwd=ROOT, check=True,
                                   capture_output=True, text=True).stdout)
        meta, new = read_table(ROOT / "results" / NB / f"{table}.csv")
        out.append({"what": label, "before": _value(old, where, col), "after": _value(new, where, col),
                    "seeds before": int(_value(old, where, "seeds")), "seeds after": int(_value(new, where, "seeds"))})
    df = pd.DataFrame(out).assign(paper="no paper number (our own tables, before and after)")
    write_table(df, ROOT / "results", NB, "before_after",
                {"data": f"{meta['data']}; before: the tables of commit {args.before} (ranking protocol only, "
                         "word-set split, constant learning rate, Table 5 at fixed epochs, 2 seeds, trained on cpu)",
                 "dataset": meta.get("dataset", "synthetic"), "scale": meta.get("scale", "medium"), "seed": meta.get("seed", 0),
                 "device": meta.get("device", "cpu"), "paper": "no paper number (our own tables, before and after)"})
    print(df.to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
