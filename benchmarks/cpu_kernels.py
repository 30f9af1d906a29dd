"""Does a retrained VSE++ depend on the CPU's instruction set? (notebook 09's gate member, one epoch)

    python benchmarks/cpu_kernels.py                                   # this CPU's own kernels
    MKL_CBWR=AVX2 ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell \
        python benchmarks/cpu_kernels.py                               # AVX2 kernels everywhere

Trains notebook 09's VSE++ on every training image of its world (medium, seed 0, one thread) for one epoch,
as its member records were trained, and prints the epoch's mean training loss and dev Rsum at full precision
beside the first epoch of the two committed records of that training: the size probe's (trained on an AMD
EPYC machine) and the gate's seed 0 (an Intel Sapphire Rapids machine). A run whose loss equals one of them
digit for digit reproduces that machine's training; one that equals neither says the kernels chosen here are not
what made the two differ. Nothing is kept: checkpoints go to a temporary folder, no record is written (~10 min).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from itmlib.course import real_language  # noqa: E402
from itmlib.course.params import run_parameters  # noqa: E402
from itmlib.training.grid import run_grid  # noqa: E402
from itmlib.training.context import RunContext  # noqa: E402

#: the first epoch of the committed records of this training (09's folder): the size probe's 58,000-image run
#: and the gate's seed 0
RECORDS = {"size probe (AMD EPYC)": "probes/VSEpp-809caabd95be7e58-e6f143050ffbd69d.json",
           "gate seed 0 (Intel Sapphire Rapids)": "members/VSEpp-0cf3438326f4ebbf-70bdffdf674667fe.json"}
PINS = ("MKL_CBWR", "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "OPENBLAS_CORETYPE")


def main() -> None:
    torch.set_num_threads(1)
    p = run_parameters("09_real_language", "medium")
    member = next(m for m in real_language.members(p) if m.name == "VSE++" and m.fraction == 1.0 and m.seed == 0)
    w = real_language.world(member.world, p, "cpu")
    cfg = dataclasses.replace(member.config, epochs=1)
    with tempfile.TemporaryDirectory() as ckpt:
        _, hist = run_grid({member.name: cfg}, w.train, w.dev, w.test, w.relevance, fractions=[1.0], seeds=[0],
                           evaluate_fn=w.evaluate, context=RunContext(device="cpu", ckpt_dir=ckpt, record_dir=None),
                           **w.options)
    first = hist[hist.epoch == hist.epoch.min()].iloc[0]
    loss, rsum = float(first.loss), float(first.dev_rsum)
    print("pins:", {v: os.environ.get(v, "(unset)") for v in PINS}, "| torch", torch.__version__,
          "| ATen capability", torch.backends.cpu.get_cpu_capability())
    print(f"here: loss {loss!r}, dev rsum {rsum!r}")
    for name, rel in RECORDS.items():
        h = json.loads((ROOT / "results" / "09_real_language" / rel).read_text())["history"]
        same = h["loss"][0] == loss
        print(f"{name}: loss {h['loss'][0]!r}, dev rsum {h['dev_rsum'][0]!r} -> {'the same' if same else 'differs'}")


if __name__ == "__main__":
    main()
