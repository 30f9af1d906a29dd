"""itmlib: the small, tested package behind the itm-course notebooks.

Modules, one job each:

- :mod:`itmlib.config`   seeds, devices, named scales and parameter checks
- :mod:`itmlib.paths`    repo-root-relative path resolution (cwd never matters)
- :mod:`itmlib.results`  the one table writer every notebook uses
- :mod:`itmlib.paper_numbers` the papers' reported numbers, transcribed once
- :mod:`itmlib.data`     synthetic world, real COCO text, SCAN/VSE precomp features
- :mod:`itmlib.notebooks` papermill runner used by ``make course`` and the tests
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
