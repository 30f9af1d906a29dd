"""The "What we found" section every notebook ends with: this run's claims beside the committed ones.

The committed tables in ``results/<notebook>/`` were made by ``make tables`` at the scale
their header states (``medium`` on the CPU, ``full`` on a GPU); a run at ``smoke`` trains
tiny models on a few hundred images, so its verdicts show that the code runs, not what
holds. :func:`show_findings` prints both, labelled, and says which to believe.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .paths import repo_root
from .results import Run, read_table

__all__ = ["committed_table", "committed_claims", "show_findings"]


def committed_table(notebook: str, table: str = "claims") -> tuple[dict[str, str], pd.DataFrame] | None:
    """(header, table) of ``results/<notebook>/<table>.csv`` as committed, or None if there is none."""
    path = repo_root() / "results" / notebook / f"{table}.csv"
    return read_table(path) if path.is_file() else None


def committed_claims(notebook: str, tables: tuple[str, ...] = ("claims",)) -> pd.DataFrame | None:
    """The committed claims of a notebook, one row per claim, with the scale and seeds they were made at.

    Older committed claims tables (before claims became data) are read too: their
    ``paper claim``/``metric`` and ``verdict`` columns become ``claim`` and ``verdict``."""
    frames = []
    for t in tables:
        got = committed_table(notebook, t)
        if got is None:
            continue
        meta, df = got
        if "claim" not in df.columns and "paper claim" in df.columns:
            df = df.rename(columns={"paper claim": "claim"})
        frames.append(df.assign(scale=meta.get("scale", "?"), table=t))
    return pd.concat(frames, ignore_index=True) if frames else None


def show_findings(run: Run, claims: pd.DataFrame | None = None, *, committed: tuple[str, ...] = ("claims",),
                  columns: tuple[str, ...] = ("claim", "paper (model vs baseline)", "ours (model vs baseline)",
                                              "seeds", "verdict")) -> dict[str, Any]:
    """Display this run's claims (or any findings table) and the committed ones (``results/<notebook>/``
    tables ``committed``), labelled by scale.

    Returns ``{"this_run": ..., "committed": ...}`` (DataFrames or None) for further use."""
    from IPython.display import Markdown, display

    old = committed_claims(run.notebook, committed)
    if claims is not None:
        cols = [c for c in columns if c in claims.columns] or list(claims.columns)
        display(Markdown(f"**This run** (scale `{run.scale}`, seed {run.seed}):"))
        display(claims[cols])
    if old is None:
        display(Markdown("No committed claims table for this notebook yet (`make tables` writes it)."))
    else:
        scales = ", ".join(sorted(set(old.scale)))
        cols = [c for c in columns if c in old.columns] or [c for c in old.columns if c not in ("scale", "table")]
        display(Markdown(f"**Committed** (`results/{run.notebook}/`, scale `{scales}`):"))
        display(old[cols])
    if run.scale == "smoke":
        display(Markdown("*This run is at `smoke` scale: a few hundred images and a few epochs, too small to "
                         "decide any claim. Believe the committed table; the prose below discusses it.*"))
    return {"this_run": claims, "committed": old}
