"""The one table writer every notebook uses.

``start_run`` is the first call of each notebook after its ``parameters``
cell: it validates and records the run's settings, seeds everything, resolves
the device, and opens ``<results_dir>/<notebook>/`` with a log file.
``Run.write_table`` then writes ``<results_dir>/<notebook>/<table>.csv`` and
``.md`` atomically (temp file + rename), each starting with a header block::

    # table: 00_data_tour/synthetic_stats
    # data: synthetic world (itmlib generator v1); no real images
    # dataset: synthetic
    # scale: smoke
    # seed: 0
    # device: cpu
    # itmlib: 0.1.0
    # paper: Biten et al. ..., Table 1

The header holds nothing that changes between identical runs (no clock, no
host), so the same seed gives byte-identical tables.
"""

from __future__ import annotations

import io
import logging
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .. import __version__
from ..config import check_choice, get_scale, resolve_device, set_seed
from ..console import quiet_if_headless
from ..paths import atomic_write_text, repo_root, resolve_path
from ..training.context import RunContext

__all__ = ["Run", "start_run", "shown_float", "column_format", "shown_column", "styled", "SETTING_COLUMNS", "ROW_QUANTITY_HEADERS",
           "text_columns", "aligned", "frame_html", "show_frames_styled", "write_table", "table_number", "read_table",
           "atomic_write_text"]

logger = logging.getLogger("itmlib")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _header(meta: dict[str, Any]) -> list[str]:
    return [f"{k}: {' '.join(str(v).split())}" for k, v in meta.items() if v is not None]   # one line per key


def write_table(df: pd.DataFrame, results_dir: str | os.PathLike[str], notebook: str, table: str, meta: dict[str, Any], *,
                float_format: str = "%.4g", decimals: int | None = None) -> pd.DataFrame:
    """Write ``df`` as ``<results_dir>/<notebook>/<table>.csv`` and ``.md`` with a header block.

    ``meta`` must hold at least ``data`` (which data the numbers came from),
    ``dataset``, ``scale``, ``seed`` and ``device``; ``paper`` names the
    transcribed paper table shown beside ours (or says why there is none).
    Floats are written at ``float_format`` (4 significant figures), and with ``decimals`` at no more than that
    many decimals either, each rounded once from the value given (:func:`table_number`): pass the unrounded
    table, not ``df.round(2)``, whose 194.2533 -> 194.25 would then print 194.2 beside a notebook's 194.3.

    Returns the table as written: each float the number its CSV holds, ``attrs["table"]`` naming it. A notebook
    shows that frame (:func:`styled`, :func:`~itmlib.course.viz.compact`), so it states a table's places once and
    shows no digit the CSV does not hold.
    """
    for name, val in (("notebook", notebook), ("table", table)):
        if not _NAME.match(val):
            raise ValueError(f"{name} must be a plain file name (letters, digits, '_', '-', '.'), got {val!r}")
    missing = [k for k in ("data", "dataset", "scale", "seed", "device") if k not in meta]
    if missing:
        raise ValueError(f"table header is missing {missing}")
    if not isinstance(df, pd.DataFrame) or df.empty:
        raise ValueError(f"table {table!r} must be a non-empty DataFrame")
    if decimals is not None and (isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0):
        raise ValueError(f"decimals must be a whole number of places >= 0, got {decimals!r}")
    df = df.assign(**{c: df[c].map(lambda v: table_number(v, decimals, float_format))
                      for c in df.columns if pd.api.types.is_float_dtype(df[c])})
    full_meta = {"table": f"{notebook}/{table}", **meta, "itmlib": __version__}
    head = _header(full_meta)
    out = resolve_path(results_dir) / notebook
    csv_buf = io.StringIO()
    df.to_csv(csv_buf, index=False, float_format=lambda v: _plain(float_format, v), lineterminator="\n")
    csv_text = "".join(f"# {h}\n" for h in head) + csv_buf.getvalue()
    md_body = _markdown(df, float_format)
    md_text = "".join(f"> {h}  \n" for h in head) + "\n" + md_body + "\n"
    csv_path, md_path = out / f"{table}.csv", out / f"{table}.md"
    atomic_write_text(csv_path, csv_text)
    atomic_write_text(md_path, md_text)
    logger.info("wrote %s and %s", csv_path, md_path)
    df.attrs["table"] = full_meta["table"]
    df.attrs["decimals"] = decimals   # the table's places (None: 4 significant figures alone), for styled()
    return df


def table_number(v: float, decimals: int | None, float_format: str = "%.4g") -> float:
    """``v`` as a table with ``decimals`` writes it, rounded once: at ``float_format``'s significant figures, or at
    ``decimals`` places where those are fewer (194.2533 -> 194.3, 0.12345 -> 0.12, 24000.4 -> 24000; None: the
    significant figures alone). The float returned prints, at ``float_format``, as exactly that rounding."""
    if not math.isfinite(v):
        return v
    s = _plain(float_format, v)
    if decimals is not None and ("e" in s or len(s.partition(".")[2]) > decimals):   # more places than kept: round v there
        s = f"{v:.{decimals}f}"
    return float(s)


def _plain(float_format: str, v: float) -> str:
    """``v`` at ``float_format``, but a number that format writes with an exponent in full (24000, not 2.4e+04)."""
    s = float_format % v
    return f"{v:.0f}" if "e+" in s else s


def _markdown(df: pd.DataFrame, float_format: str) -> str:
    """``df`` as a Markdown table, floats at ``float_format`` and a gap (NaN, None) as "-", as :func:`styled` shows
    it; a float column holding a value that format would write with an exponent is written by :func:`_plain`
    instead, right-aligned and not re-parsed by tabulate, as is a float column of gaps alone."""
    floats = [pd.api.types.is_float_dtype(df[c]) for c in df.columns]
    big = [i for i, c in enumerate(df.columns) if floats[i] and df[c].dropna().map(lambda v: "e+" in float_format % v).any()]
    shown = df.astype(object).where(df.notna(), None)    # tabulate writes None as missingval, a NaN as "nan"
    for i in big:
        shown.iloc[:, i] = [None if pd.isna(v) else _plain(float_format, v) for v in df.iloc[:, i]]
    return shown.to_markdown(index=False, floatfmt=float_format.replace("%", ""), missingval="-", disable_numparse=big,
                             colalign=[_align(df[c], i in big, floats[i], bool(big)) for i, c in enumerate(df.columns)])


def _align(col: pd.Series, big: bool, is_float: bool, any_big: bool) -> str:
    """A column's alignment in :func:`_markdown`: right for one written by :func:`_plain` or of gaps alone;
    otherwise tabulate's own (``global``), unless some column is big: then decimal for numbers, left for words."""
    if big or (is_float and col.isna().all()):
        return "right"
    if not any_big:
        return "global"
    return "decimal" if pd.api.types.is_numeric_dtype(col) else "left"


def read_table(path: str | os.PathLike[str]) -> tuple[dict[str, str], pd.DataFrame]:
    """Read a table written by :func:`write_table`: ``(header dict, DataFrame)``."""
    path = resolve_path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no results table at {path}")
    meta: dict[str, str] = {}
    n = 0
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.startswith("# "):
                break
            key, _, val = line[2:].rstrip("\n").partition(": ")
            meta[key] = val
            n += 1
    df = pd.read_csv(path, skiprows=n)
    df.attrs["table"] = meta.get("table", path.stem)   # as written: what styled() and compact() show
    return meta, df


@dataclass
class Run:
    """One notebook execution: its validated settings and where its tables go."""

    notebook: str
    dataset: str
    scale: str
    seed: int
    device: str
    results_dir: Path
    params: dict[str, Any] = field(default_factory=dict)
    #: every validated parameter, typed (:class:`~itmlib.course.params.Parameters`): what the paper's home plans
    #: the notebook's grids and builds its worlds from, as ``tools/member_pool.py`` does
    settings: Any = None

    @property
    def table_dir(self) -> Path:
        return self.results_dir / self.notebook

    @property
    def members_dir(self) -> Path:
        """Where this notebook's grids keep their member records (:meth:`grid_context`'s ``record_dir``):
        the rows behind its tables, one small JSON per trained model, committed with ``results/``."""
        return self.table_dir / "members"

    def describe(self) -> str:
        """One line for a reader: the notebook, its scale, seed and device, and where its tables go (relative to
        the repository when they go inside it, so the line reads the same on every machine)."""
        root = repo_root()
        where = self.table_dir.relative_to(root) if self.table_dir.is_relative_to(root) else self.table_dir
        return f"{self.notebook}: scale {self.scale}, seed {self.seed}, device {self.device}; tables go to {where}/"

    def grid_context(self, *, progress: bool = True) -> RunContext:
        """The :class:`~itmlib.training.context.RunContext` every grid of this run takes: the run's device, its
        ``executor`` and ``ckpt_dir`` parameters where the notebook has them (else inline and
        ``runs/checkpoints``), and its member records (:attr:`members_dir`)."""
        return RunContext(device=self.device, ckpt_dir=self.params.get("ckpt_dir", "runs/checkpoints"),
                          record_dir=self.members_dir, executor=self.params.get("executor", "inline"), progress=progress)

    def meta(self, data: str, paper: str | None, dataset: str | None = None) -> dict[str, Any]:
        return {"data": data, "dataset": dataset or self.dataset, "scale": self.scale, "seed": self.seed,
                "device": self.device, "paper": paper}

    def write_table(self, table: str, df: pd.DataFrame, *, data: str, paper: str | None,
                    dataset: str | None = None, **kwargs: Any) -> pd.DataFrame:
        """Write one table of this run and return it as written (:func:`write_table`).

        ``data`` says which data the numbers came from, ``paper`` which paper
        table (or statement) is beside ours, ``dataset`` overrides the run's
        dataset name for a table built on another dataset (e.g. real COCO text).
        """
        return write_table(df, self.results_dir, self.notebook, table, self.meta(data, paper, dataset), **kwargs)


def shown_float(v: float) -> str:
    """A float as a notebook shows it: the 4 significant figures :func:`write_table` writes to the CSV (0.04035,
    18.87, 230.3, 5000), a count past 10,000 in full (46228, not 4.623e+04); pandas' default shows six decimals."""
    return f"{v:.4g}" if abs(v) < 1e4 else f"{v:.0f}"


def column_format(values: Any, written_at: int | None | str = "inferred") -> Callable[[float], str]:
    """How one column of a table shows its floats: each as :func:`shown_float` writes it, and a value whose trailing
    zeros the 4 significant figures dropped given them back up to the column's places, never past its own 4
    figures (a std column 1.79, 2, 0.4 reads 1.79, 2.00, 0.40: a reader cannot tell a 2 rounded at two places from
    one at none; 152 beside 140.8 reads 152.0). The column's places are ``written_at``, the ``decimals``
    :func:`write_table` wrote it at, where it had some; else the most any value shows. A column of whole numbers
    is a count and stays whole. A zero reads at the column's places, but ``0`` where the table was written at 4
    significant figures alone (``written_at=None``: 0.002605 beside 0.5924 gives a zero no places to claim).
    NaN reads ""."""
    finite = [v for v in values if math.isfinite(v)]
    inferred = max((len(t.partition(".")[2]) for t in map(shown_float, finite) if "e" not in t), default=0)
    counts = all(float(v).is_integer() for v in finite)
    places = written_at if isinstance(written_at, int) and not counts else inferred

    def show(v: float) -> str:
        if not math.isfinite(v):
            return ""
        t = shown_float(v)
        if not v:
            return t if written_at is None else f"{v:.{places}f}"
        allow = min(places, 3 - math.floor(math.log10(abs(v))))   # never past v's own 4 significant figures
        return t if "e" in t or abs(v) >= 1e4 or len(t.partition(".")[2]) >= allow else f"{v:.{allow}f}"

    return show


def shown_column(values: Any, written_at: int | None | str = "inferred") -> list[str]:
    """A column of one table's floats (a metric's means, or its stds) as a notebook shows them
    (:func:`column_format`)."""
    show = column_format(values, written_at)
    return [show(v) for v in values]


#: columns that hold settings, not measurements: each value shows as written (a fraction 0.02, never 0.020)
SETTING_COLUMNS = frozenset({"fraction", "reference fraction", "lr", "learning rate", "noise", "tau", "margin"})
#: a first column so headed names a quantity per row (a transposed table): each value keeps its own figures
ROW_QUANTITY_HEADERS = frozenset({"statistic", "quantity", "property"})


#: what a cell of numbers holds besides its digits: "70.08 ± 2.00", "151 vs 139", "123 vs 129 (0.96x)", "<0.001",
#: "35%", "1,024", "7 7 6 7 7" (each seed's best epoch); a cell with anything left over is words ("F30K", "VSE++")
_NUMERIC_PARTS = re.compile(r"[<>]?[-+]?\d[\d,]*(\.\d+)?(e[-+]?\d+)?[%x]?|±|\bvs\b|[()\s]")


def text_columns(df: pd.DataFrame) -> list[int]:
    """The positions of ``df``'s columns of words (a claim, a method, a verdict): those where most filled cells
    (not empty, not NaN, not a "-" gap) hold text that is more than numbers (:data:`_NUMERIC_PARTS`). Notebook
    stylesheets right-align every cell, for numbers; a column of sentences reads left-aligned."""
    def words(v: Any) -> bool:
        return isinstance(v, str) and bool(_NUMERIC_PARTS.sub("", v))

    def gap(v: Any) -> bool:   # never v == "": an array or pd.NA compares elementwise, or not at all
        return (v is None or v is pd.NA or (isinstance(v, str) and v in ("", "-"))
                or (isinstance(v, float) and math.isnan(v)))

    out = []
    for i in range(df.shape[1]):
        filled = [v for v in df.iloc[:, i] if not gap(v)]
        if filled and 2 * sum(map(words, filled)) > len(filled):
            out.append(i)
    return out


def aligned(df: pd.DataFrame) -> Any:
    """``df`` as a Styler without its index, its columns of words (:func:`text_columns`) aligned left, heading and
    cells; its values as given (:func:`styled` formats them too)."""
    left = [{"selector": f".col{i}", "props": "text-align: left"} for i in text_columns(df)]
    return df.style.hide(axis="index").set_table_styles(left, overwrite=False)


def styled(df: pd.DataFrame, na_rep: str = "-", *, by_row: bool | None = None) -> Any:
    """``df`` as a styled table without its index, each float column of measurements at one precision
    (:func:`column_format`: an R@1 column 43.00 beside 40.20, not 43; at the places :func:`write_table` wrote it
    at, which it keeps in ``attrs``), every other float as :func:`shown_float` writes it (a Styler ignores pandas'
    ``display.float_format``): a setting (:data:`SETTING_COLUMNS`) as given, and every value of a table whose rows
    are its quantities (``by_row``; by default, a table whose first column is headed "statistic", "quantity" or
    "property"), so a count of 1 beside a share of 0.5126 stays 1. A column headed "paper..." holds a paper's
    numbers: it shows the places they were printed at (65.0 beside 57.5), never the table's. Given what
    :func:`write_table` returned, it shows each number as the committed CSV holds it. Columns of words
    (:func:`text_columns`) are aligned left, heading and cells."""
    def as_written(v: Any) -> Any:
        return shown_float(v) if isinstance(v, float) else v

    if by_row is None:
        by_row = len(df.columns) > 0 and str(df.columns[0]) in ROW_QUANTITY_HEADERS
    written_at = df.attrs.get("decimals", "inferred")
    columns = {}
    for c in df.columns.unique():
        floats = [v for v in df[c] if isinstance(v, float)]
        if by_row or not floats or str(c) in SETTING_COLUMNS:
            columns[c] = as_written
        else:
            show = column_format(floats, "inferred" if str(c).startswith("paper") else written_at)
            columns[c] = lambda v, show=show: show(v) if isinstance(v, float) else v
    return aligned(df).format(columns, na_rep=na_rep)   # one dict: a second call would reset the rest


def frame_html(df: pd.DataFrame) -> str:
    """The HTML a notebook shows for a plain ``df``: as :func:`styled` draws it where its index is only row numbers
    (an unnamed integer index, hidden: it says nothing), so a frame shown bare reads like a styled one (one precision
    per column, words aligned left, no index column); any other frame (a pivot, a transposed table, one longer than
    ``display.max_rows``) as pandas draws it."""
    plain = (df.index.name is None and df.index.nlevels == 1 and pd.api.types.is_integer_dtype(df.index)
             and df.columns.nlevels == 1 and df.columns.is_unique and len(df) <= (pd.get_option("display.max_rows") or 0))
    return styled(df).to_html() if plain else df._repr_html_()


def show_frames_styled() -> None:
    """In an IPython kernel, draw every DataFrame a cell shows with :func:`frame_html` (a notebook's bare frames and
    its styled tables then look alike); elsewhere nothing."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return
    ip = get_ipython()
    if ip is not None:
        ip.display_formatter.formatters["text/html"].for_type(pd.DataFrame, frame_html)


def start_run(
    notebook: str,
    namespace: dict[str, Any] | None = None,
    *,
    dataset: str = "synthetic",
    scale: str = "smoke",
    seed: int = 0,
    device: str = "auto",
    results_dir: str | os.PathLike[str] = "runs/results",
    datasets: tuple[str, ...] = ("synthetic", "coco", "precomp"),
    log_level: int = logging.INFO,
    **params: Any,
) -> Run:
    """Validate a notebook's parameters, seed everything, set up logging.

    In a notebook: ``run = start_run("04_sam", globals(), datasets=("synthetic",))``. With
    ``namespace`` every parameter declared in the notebook's ``parameters`` cell is read from
    it, coerced to its declared type and checked (:func:`itmlib.course.params.validate_parameters`),
    and written back (so ``-p fractions "[0.05]"`` arrives as a list). Relative
    ``results_dir`` is resolved against the repository root, so the notebook behaves the
    same whether papermill runs from the root or from ``notebooks/``.
    """
    if namespace is not None:
        from .params import validate_parameters

        values = validate_parameters(notebook, namespace)
        namespace.update(values)
        common = ("dataset", "scale", "seed", "device", "results_dir")
        dataset, scale, seed, device, results_dir = (values[k] for k in common)
        params = {k: v for k, v in values.items() if k not in common} | params
    check_choice("dataset", dataset, datasets)
    get_scale(scale)  # validates the name
    quiet_if_headless()   # papermill's kernel: no library's progress bar is saved in the executed notebook
    pd.set_option("display.float_format", shown_float)   # every frame the notebook shows, at its CSV's precision
    show_frames_styled()   # and a bare frame as a styled one: no row numbers, words aligned left
    set_seed(seed)
    device_name = resolve_device(device)
    out = resolve_path(results_dir)
    run = Run(notebook, dataset, scale, int(seed), device_name, out, dict(params))
    if namespace is not None:
        from .params import parameters_type

        run.settings = parameters_type(notebook)(**values)
    run.table_dir.mkdir(parents=True, exist_ok=True)
    log_path = run.table_dir / "run.log"
    itm_logger = logging.getLogger("itmlib")
    itm_logger.setLevel(log_level)
    for h in list(itm_logger.handlers):
        if getattr(h, "_itm_run", False):
            itm_logger.removeHandler(h)
            h.close()
    fh = logging.FileHandler(log_path, mode="w", encoding="utf-8")
    fh._itm_run = True  # type: ignore[attr-defined]
    fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    itm_logger.addHandler(fh)
    itm_logger.info("run %s: dataset=%s scale=%s seed=%s device=%s results_dir=%s params=%s",
                    notebook, dataset, scale, seed, device_name, out, params)
    return run
