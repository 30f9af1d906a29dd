"""The course machinery, above every paper layer: what turns the papers' code into a readable course.

- :mod:`~itmlib.course.params` - a notebook's parameters, checked in one place
- :mod:`~itmlib.course.results` - a notebook's run: its tables written with their headers, read back
- :mod:`~itmlib.course.findings` - a notebook's "What we found", drawn from its committed claims table
- :mod:`~itmlib.course.summary`, :mod:`~itmlib.course.conclusions` - every claims table counted and
  listed (``results/README.md``, 11, the README's conclusions), the interval plot
- :mod:`~itmlib.course.viz` - compact tables and the figures the notebooks share
- :mod:`~itmlib.course.explore` - the ablation explorer over member records
- :mod:`~itmlib.course.notebooks` - the papermill runner (``make course``, ``make tables``)
- :mod:`~itmlib.course.site` - the HTML course from the executed copies (``make site``)
"""
