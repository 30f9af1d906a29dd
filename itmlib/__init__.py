"""itmlib: the small, tested package behind the itm-course notebooks.

Layers, bottom up (a module imports only from layers below it):

- :mod:`itmlib.config`, :mod:`itmlib.paths`, :mod:`itmlib.training.timing` - seeds, devices, named
  scales and checks; repo-root-relative paths and atomic writes; GPU-synchronised timing
- :mod:`itmlib.data` - one dataset interface: the synthetic world (``data.synthetic``),
  real COCO text (``data.coco``), SCAN/VSE features (``data.precomp``), model inputs
  (``data.inputs``), many-to-many statistics (``data.stats``)
- :mod:`itmlib.relevance` - CIDEr-D, ROUGE-L, scene-graph F1 relevance matrices (cached)
- :mod:`itmlib.metrics` - Recall, Semantic Recall, NCS, NDCG, mAP@R, the COCO 1k protocol
- :mod:`itmlib.relevance.agreement`, :mod:`itmlib.course.retrievers`, :mod:`itmlib.text_encoders` -
  relevance vs human judgements, training-free retrievers, the offline MiniLM encoder
- :mod:`itmlib.models` - the model interface (``ITMModel``), typed configs, VSE++, TERAN,
  SSAMT, the neighbourhood model, alignment pooling; :mod:`itmlib.losses` - triplet (eq. 6), SAM
  (eq. 7), SSAMT's phrase losses, the angular N-pair losses
- :mod:`itmlib.training.train` - the one training loop and batch step; :mod:`itmlib.training.progress` - a long
  grid's progress lines; :mod:`itmlib.training.grid` - grids over configs x fractions x seeds, on local or Dask
  workers, with member records; :mod:`itmlib.metrics.grounding` - measured word grounding
- :mod:`itmlib.paper_numbers` - the papers' numbers (CSV) and claims (YAML), transcribed
  once; :mod:`itmlib.claims` reads the claims; :mod:`itmlib.claims.verdicts` - seed statistics
  and the one rule that judges a claim
- :mod:`itmlib.papers` - one module per paper (``ncs_sam``, ``ssamt``, ``neighborhoods``,
  ``teran``): its configs, analyses and joins to the paper's tables
- :mod:`itmlib.course` - the course machinery above every paper: a notebook's parameters, its
  tables and their headers, its findings drawn from the claims tables, the claims summary and
  conclusions, the explorer, the papermill runner and the HTML site
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
