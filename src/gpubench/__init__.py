"""gpubench: fair, checked, reproducible timings of Python's CPU and GPU frameworks."""

__version__ = "0.1.0"
