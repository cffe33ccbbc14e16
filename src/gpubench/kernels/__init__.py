"""Kernels: one package each; its spec in ``__init__`` and one ``with_<framework>.py`` each."""
