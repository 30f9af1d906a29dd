"""Wall time of one notebook of ``make tables`` that is longer than a session: time it in sittings.

    .venv/bin/python benchmarks/time_notebook_sittings.py run [--notebook 04_sam] [--scale medium]
        [--executor inline|processes:2] [--dir runs/timings/04_sam-medium-inline] [--stop-at 18:50]
    .venv/bin/python benchmarks/time_notebook_sittings.py report [--dir ...]

``run`` starts (or resumes) ``python -m itmlib.course.notebooks run --only NOTEBOOK`` into its own folder
(checkpoints, member records, tables and executed notebook under ``--dir``, so nothing of
``runs/checkpoints`` or the committed ``results/`` is reused or touched) and keeps a record of this
sitting in ``<dir>/sittings.jsonl``: start, last heartbeat (every 20 s, so a sitting killed with its
session still counts up to then), end, members recorded before and after. ``--stop-at HH:MM`` (local
time) ends the sitting then; the next ``run`` resumes from the member records (and from the epoch
checkpoints where they survived).

Sessions here start from a fresh clone, so the default ``--dir`` is tracked: commit it after each
sitting (``git add <dir>``). Its ``.gitignore`` (written on the first ``run``) leaves out the
checkpoints and the executed notebook; the member records (a few KB each), the sittings and their logs
are what a later session needs to resume - a member cut off mid-training starts again from epoch 0.

``report`` sums the sittings (an upper bound of the uninterrupted wall time: each sitting pays the
notebook's start and loses the member it was in) and the members' own seconds (a lower bound: a member
that was resumed counts only its last sitting), sets the members' rsum beside the committed records of
the same members and their seed spread, and, once the notebook has finished, compares its tables byte for
byte with the committed ``results/<notebook>/`` - identical only at the same threads per process: the
committed 04 ran on one-thread workers, and inline on two threads sums floats in another order.

Run it on an otherwise idle machine; the README's 1-worker figure for 04 at medium comes from it.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIR = "runs/timings/04_sam-medium-inline"


def _records(d: Path, notebook: str) -> list[Path]:
    return sorted((d / "results" / notebook / "members").glob("*.json"))


def _write(log: Path, entry: dict, lines: list[str]) -> None:
    log.write_text("".join(lines + [json.dumps(entry) + "\n"]), encoding="utf-8")


def run(a: argparse.Namespace) -> int:
    d = (ROOT / a.dir).resolve()
    d.mkdir(parents=True, exist_ok=True)
    if not (d / ".gitignore").is_file():
        (d / ".gitignore").write_text("checkpoints/\ntables/\n", encoding="utf-8")
    log = d / "sittings.jsonl"
    earlier = log.read_text(encoding="utf-8").splitlines(keepends=True) if log.is_file() else []
    for s in map(json.loads, earlier):
        if (s["notebook"], s["executor"]) != (a.notebook, a.executor):
            sys.exit(f"{log} times {s['notebook']} with executor {s['executor']}, "
                     f"not {a.notebook} with {a.executor}: use another --dir")
    cmd = [sys.executable, "-m", "itmlib.course.notebooks", "run", "--scale", a.scale, "--only", a.notebook,
           "--output-dir", str(d / "tables"), "--results-dir", str(d / "results"),
           "-p", "ckpt_dir", str(d / "checkpoints")]
    if a.executor != "inline":
        cmd += ["-p", "executor", a.executor, "--threads", "1"]
    entry = {"notebook": a.notebook, "scale": a.scale, "executor": a.executor, "host_cores": _cores(), "host_cpu": _cpu(),
             "start": dt.datetime.now().isoformat(timespec="seconds"), "members_before": len(_records(d, a.notebook))}
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=open(d / f"sitting-{len(earlier) + 1}.log", "w"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    done = threading.Event()

    def beat(final: dict | None = None) -> None:
        e = dict(entry, seconds=round(time.monotonic() - t0, 1), members_after=len(_records(d, a.notebook)),
                 last_seen=dt.datetime.now().isoformat(timespec="seconds"), **(final or {}))
        _write(log, e, earlier)

    def heartbeat() -> None:
        while not done.wait(20):
            beat()

    threading.Thread(target=heartbeat, daemon=True).start()
    deadline = None
    if a.stop_at:
        h, m = (int(x) for x in a.stop_at.split(":"))
        now = dt.datetime.now()
        deadline = now.replace(hour=h, minute=m, second=0, microsecond=0)
        if deadline <= now:
            deadline += dt.timedelta(days=1)
    stopped = False
    while proc.poll() is None:
        if deadline is not None and dt.datetime.now() >= deadline:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                pass
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)   # the notebook's kernel too
            stopped = True
            break
        time.sleep(5)
    done.set()
    beat({"rc": proc.wait(), "stopped_at_deadline": stopped, "finished": not stopped and proc.returncode == 0})
    print(log.read_text(encoding="utf-8").splitlines()[-1])
    return 0


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0


def _cpu() -> str:
    """The CPU's model name (sessions land on different machines: a sitting's speed is of its machine)."""
    from itmlib.training.records import cpu_model

    return cpu_model() or "unknown"


def _epoch_speed(log: Path) -> str:
    """Median seconds an epoch of the members a sitting trained, from its grid progress lines (the
    "done in" line of ``itmlib.training.progress.GridProgress``) - the sittings may land on machines of different
    speed, and this shows it."""
    text = log.read_text(encoding="utf-8") if log.is_file() else ""
    per_epoch = sorted(float(x) for x in re.findall(r"done in [\d.]+ min \(([\d.]+) s per epoch\)", text))
    return f"median {per_epoch[len(per_epoch) // 2]:.1f} s an epoch" if per_epoch else "no member finished"


def report(a: argparse.Namespace) -> int:
    d = (ROOT / a.dir).resolve()
    log = d / "sittings.jsonl"
    if not log.is_file():
        sys.exit(f"no sittings recorded in {log}: start with `run`")
    sittings = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    nb = sittings[0]["notebook"]
    recs = [json.loads(p.read_text(encoding="utf-8")) for p in _records(d, nb)]
    wall = sum(s["seconds"] for s in sittings)
    member_s = sum(r["seconds"] for r in recs)
    committed = [json.loads(p.read_text(encoding="utf-8")) for p in _records(ROOT, nb)]
    print(f"{nb} at {sittings[0]['scale']}, executor {sittings[0]['executor']}, {len(sittings)} sitting(s)")
    for i, s in enumerate(sittings, 1):
        print(f"  {i}: {s['start']} .. {s.get('last_seen')}  {s['seconds'] / 3600:.2f} h, members "
              f"{s['members_before']} -> {s['members_after']}, finished={s.get('finished', False)}, "
              f"{_epoch_speed(d / f'sitting-{i}.log')}, cpu {s.get('host_cpu', 'not recorded')}")
    print(f"members recorded: {len(recs)} of {len(committed)} (committed results/{nb}/members)")
    print(f"sittings' wall time: {wall / 3600:.2f} h (upper bound); members' own seconds: {member_s / 3600:.2f} h "
          f"(lower bound), median {sorted(r['seconds'] for r in recs)[len(recs) // 2] / 60:.1f} min a member"
          if recs else f"sittings' wall time: {wall / 3600:.2f} h; no member recorded yet")
    _compare_rsum(recs, committed)
    if sittings[-1].get("finished"):
        ours, theirs = d / "results" / nb, ROOT / "results" / nb
        tables = sorted(p.name for p in theirs.iterdir() if p.suffix in (".csv", ".md"))
        diff = [t for t in tables if not (ours / t).is_file() or (ours / t).read_bytes() != (theirs / t).read_bytes()]
        print(f"tables byte-identical to results/{nb}/: {len(tables) - len(diff)} of {len(tables)}"
              + (f"; differ: {', '.join(diff)}" if diff else "")
              + " (expected identical only where each process ran as many threads as the committed run's workers)")
    return 0


def _compare_rsum(ours: list[dict], committed: list[dict]) -> None:
    """The timed run's members against the committed records of the same members. Inline on two threads
    sums floats in another order than the committed run's one-thread workers, so its models differ; this
    says by how much, beside the committed seed spread (std of rsum over seeds, mean over settings)."""
    def key(r: dict) -> tuple:
        return r["member"], r["fraction"], r["seed"]

    theirs = {key(r): r["rows"][0]["rsum"] for r in committed}
    delta = [r["rows"][0]["rsum"] - theirs[key(r)] for r in ours if key(r) in theirs]
    if not delta:
        return
    groups: dict[tuple, list[float]] = {}
    for r in committed:
        groups.setdefault(key(r)[:2], []).append(r["rows"][0]["rsum"])
    spread = statistics.mean(statistics.stdev(v) for v in groups.values() if len(v) > 1)
    print(f"rsum against the committed records of the same {len(delta)} members: mean difference "
          f"{statistics.mean(delta):+.2f}, mean |difference| {statistics.mean(map(abs, delta)):.2f} "
          f"(committed seed std of rsum: {spread:.2f})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--notebook", default="04_sam")
    r.add_argument("--scale", default="medium")
    r.add_argument("--executor", default="inline", help="inline (one process, every core) or processes:N")
    r.add_argument("--dir", default=DEFAULT_DIR)
    r.add_argument("--stop-at", default=None, help="HH:MM local time to end this sitting")
    p = sub.add_parser("report")
    p.add_argument("--dir", default=DEFAULT_DIR)
    a = ap.parse_args()
    return run(a) if a.cmd == "run" else report(a)


if __name__ == "__main__":
    raise SystemExit(main())
