"""Models: the VSE-style two-tower baseline (``vse``)."""
