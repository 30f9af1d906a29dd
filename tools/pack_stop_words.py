"""Pack spaCy's English stop-word list for a lent GPU machine that has no spaCy: the real-language world
(:mod:`itmlib.data.coco_scenes`) reads only ``spacy.lang.en.stop_words.STOP_WORDS`` once its captions are
parsed and cached, so a stand-in package holding that one module, copied verbatim, is all it needs there.

    python tools/pack_stop_words.py --out .gpu/site      # then PYTHONPATH=.gpu/site on the GPU machine

Carry ``data/cache/coco_scenes`` and ``data/cache/parses`` beside it (the split texts and their parses)."""
from __future__ import annotations

import argparse
import shutil
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=".gpu/site")
    args = ap.parse_args()
    import spacy.lang.en.stop_words as sw

    pkg = Path(args.out) / "spacy"
    (pkg / "lang" / "en").mkdir(parents=True, exist_ok=True)
    for init in (pkg, pkg / "lang", pkg / "lang" / "en"):
        (init / "__init__.py").write_text('"""Stand-in for spaCy on a GPU machine: its English stop words only '
                                          '(tools/pack_stop_words.py)."""\n')
    shutil.copyfile(sw.__file__, pkg / "lang" / "en" / "stop_words.py")
    print(f"{len(sw.STOP_WORDS)} stop words -> {pkg}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
