"""Kernels: one package each, with its spec in __init__ and one with_<framework>.py per framework."""
