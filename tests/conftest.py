"""Shared test setup: no test may touch the network, and caches go to a temp folder."""

from __future__ import annotations

import ipaddress
import os
import socket

import pytest

from itmlib.models import VSEConfig

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # one worker per core (`make test` runs pytest -n auto): each worker, and every notebook kernel it starts
    # (they inherit the environment), keeps to one thread - two workers of two threads on two cores spin
    # against each other (benchmarks/README.md, "Run nothing multi-threaded beside a grid")
    os.environ.update({v: "1" for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")})
    import torch

    torch.set_num_threads(1)

_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address):  # type: ignore[no-untyped-def]
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and self.family in (socket.AF_INET, socket.AF_INET6):
        try:
            local = ipaddress.ip_address(host).is_loopback
        except ValueError:
            local = host == "localhost"
        if not local:
            raise RuntimeError(f"test tried to reach the network ({address!r}); tests must stay offline")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)


@pytest.fixture(scope="session")
def cache_tmp(tmp_path_factory: pytest.TempPathFactory):
    return tmp_path_factory.mktemp("itm-cache")


@pytest.fixture(scope="session")
def smoke_split(cache_tmp):
    """``smoke_split(split, n)``: the first n images of a smoke-scale synthetic split (world seed 0), cached once."""
    import numpy as np

    from itmlib.data import load_dataset

    def make(split: str, n: int):
        return load_dataset("synthetic", split, scale="smoke", seed=0, data_dir=cache_tmp, progress=False).take(np.arange(n))
    return make


#: the smallest VSE++ recipe a grid test trains (one epoch, 16-d)
TINY = dict(epochs=1, batch_size=32, model=VSEConfig(embed_dim=16, word_dim=16, hidden_dim=32))


@pytest.fixture(scope="module")
def tiny(smoke_split):
    """80 training and 30 dev images of the smoke world."""
    return smoke_split("train", 80), smoke_split("dev", 30)


#: seconds each notebook's smoke run took in a fresh clone's `make test` on the 2-core machine (benchmarks/README.md,
#: "How long does each README command take?"): what spreads the notebook runs over the workers, longest first, each to the
#: least loaded. 02's figure reuses the checkpoints of 03 and 08 and is counted without training them.
NOTEBOOK_SECONDS = {"08_teran": 199, "06_phrase_labels": 133, "09_real_language": 125, "02_semantic_metrics": 79,
                    "04_sam": 77, "07_semantic_neighborhoods": 61, "05_sam_reduced_data": 56, "03_vse_baseline": 31,
                    "00_data_tour": 17, "01_recall_metrics": 10, "10_results": 8}

#: a notebook that reads other notebooks' smoke checkpoints (``runs/checkpoints``, keyed by config) runs after them,
#: on their worker: 02's Figure 3 loads 08's TERAN MrSw and 03's VSE++ rather than training both again
AFTER = {"02_semantic_metrics": ("08_teran", "03_vse_baseline")}


def _stem(item: pytest.Item) -> str:
    return next((k for k in NOTEBOOK_SECONDS if k in item.nodeid), item.nodeid)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With several workers (``make test``: ``-n auto --dist loadgroup``) the notebook runs (minutes each) are
    dealt to the workers as groups of about equal length, longest first to the least loaded worker, and go
    first; the short tests fill in around them. Without groups xdist hands out contiguous chunks, and one
    worker ended with every notebook run while the other sat idle. A notebook of :data:`AFTER` joins the
    group of the notebooks it reads, after them (a worker runs its group in the order collected)."""
    items.sort(key=lambda item: item.get_closest_marker("notebook") is None)
    notebooks = [it for it in items if it.get_closest_marker("notebook")]
    by_stem = {_stem(it): it for it in notebooks}
    units: list[list[pytest.Item]] = []
    for it in notebooks:
        stem = _stem(it)
        if any(stem in before and reader in by_stem for reader, before in AFTER.items()):
            continue                                      # runs inside the unit of the notebook that reads it
        units.append([by_stem[b] for b in AFTER.get(stem, ()) if b in by_stem] + [it])
    cost = lambda unit: sum(NOTEBOOK_SECONDS.get(_stem(it), 20) for it in unit)   # noqa: E731
    units.sort(key=cost, reverse=True)
    items[:len(notebooks)] = [it for unit in units for it in unit]
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers < 2:
        return
    load = [0.0] * workers
    for unit in units:
        k = load.index(min(load))
        load[k] += cost(unit)
        for it in unit:
            it.add_marker(pytest.mark.xdist_group(name=f"notebooks-{k}"))
