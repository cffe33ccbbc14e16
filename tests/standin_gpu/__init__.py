"""A stand-in GPU framework, ``standin_gpu-gpu``, laid out as a framework package of
``gpubench/backends/`` is and added from outside (``GPUBENCH_PLUGINS=standin_gpu``): the
dry run of docs/extending.md's "Adding a framework" for a GPU framework.

Its "device" is host memory behind an allocator that counts its bytes, so every hook a
real GPU framework has runs without a GPU: the adapter and its event timer
(``adapter.py``), its memory probe (``memory.py``), its persistent compilation cache
(a declared variable and a folder its implementation writes), one process driving
several devices (``mpi.py``), the probe's ceilings and energy copy, and a kernel
implementation (``vector_add.py``). Nothing outside this folder was edited to add it.
"""

from standin_gpu import vector_add  # noqa: F401 - registers its implementation
from standin_gpu.adapter import StandinGPU

BACKENDS = (StandinGPU,)
