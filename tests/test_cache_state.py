"""``cache_state``: whether a row's build and first call met a cold or
warm persistent compilation cache, from each backend's declared cache folders."""

from __future__ import annotations

import ast
import inspect
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, _plugin

from gpubench import results
from gpubench.backends.facts import Facts
from gpubench.backends.numpy.adapter import NumpyCPU
from gpubench.harness import Settings, cache_snapshot, cache_state, measure
from gpubench.spec import Case, Implementation, get_kernel, implementations

SPEC = get_kernel("vector_add")
CASE = Case("vector_add", "default", 1024, "float64", {})
QUICK = Settings(warmup=1, min_samples=3, max_time_s=0.005)


class _Cached(NumpyCPU):
    """Host NumPy with a declared compilation cache folder."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def compile_cache_dirs(self) -> list[Path]:
        return [] if self.folder is None else [self.folder]


def _builder(write: Path | None = None, fail: bool = False):
    def build(ctx):
        if write is not None:
            write.parent.mkdir(parents=True, exist_ok=True)
            write.write_bytes(b"compiled")
        if fail:
            raise RuntimeError("NVRTC compile failed")
        a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
        return lambda: np.add(a, b, out=c)
    return build


def _measure(backend, build):
    host = SPEC.make_inputs(CASE, np.random.default_rng(0))
    impl = Implementation("vector_add", "numpy", "t", build)
    return measure(SPEC, impl, CASE, backend, QUICK, host, SPEC.reference(CASE, host))


def test_a_build_that_stores_a_kernel_is_cold_one_that_finds_the_folder_unchanged_warm(
        tmp_path):
    cache = tmp_path / "kernel_cache"
    cache.mkdir()
    cold = _measure(_Cached(cache), _builder(write=cache / "ab12_2.cubin"))
    assert cold.fields["status"] == "ok" and cold.fields["cache_state"] == "cold"
    warm = _measure(_Cached(cache), _builder())
    assert warm.fields["status"] == "ok" and warm.fields["cache_state"] == "warm"
    # in a subfolder (Inductor's and Triton's caches are trees)
    deep = _measure(_Cached(cache), _builder(write=cache / "triton" / "0" / "x" / "k.cubin"))
    assert deep.fields["cache_state"] == "cold"


def test_no_declared_folder_or_one_never_made_is_none(tmp_path):
    assert _measure(_Cached(None), _builder()).fields["cache_state"] == "none"
    absent = _measure(_Cached(tmp_path / "never"), _builder())
    assert absent.fields["cache_state"] == "none"
    assert _measure(NumpyCPU(), _builder()).fields["cache_state"] == "none"


def test_the_first_compile_creates_the_folder_cold(tmp_path):
    cache = tmp_path / "new" / "cache"
    m = _measure(_Cached(cache), _builder(write=cache / "k.cubin"))
    assert m.fields["cache_state"] == "cold"


def test_a_failed_build_still_says_what_it_left_in_the_cache(tmp_path):
    cache = tmp_path / "c"
    cache.mkdir()
    m = _measure(_Cached(cache), _builder(write=cache / "half.tmp", fail=True))
    assert m.fields["status"] == "error" and "building" in m.fields["reason"]
    assert m.fields["cache_state"] == "cold"


def test_a_skipped_row_was_never_built_and_says_nothing(tmp_path):
    impl = Implementation("vector_add", "numpy", "t", _builder(), max_size=10)
    m = measure(SPEC, impl, CASE, _Cached(tmp_path), QUICK, {}, None)
    assert m.fields["status"] == "skipped" and "cache_state" not in m.fields


def test_a_backend_that_cannot_say_has_no_cache_to_watch():
    class Broken(NumpyCPU):
        def compile_cache_dirs(self):
            raise RuntimeError("no config")

    assert _measure(Broken(), _builder()).fields["cache_state"] == "none"


def test_snapshot_counts_files_in_the_tree_and_sees_a_replaced_file(tmp_path):
    assert cache_snapshot([tmp_path / "absent"]) is None
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b").mkdir()
    (tmp_path / "a" / "b" / "f1").write_bytes(b"1")
    (tmp_path / "a" / "f2").write_bytes(b"2")
    before = cache_snapshot([tmp_path / "a", tmp_path / "absent"])
    assert before is not None and before[0] == 2
    assert cache_state(before, cache_snapshot([tmp_path / "a"])) == "warm"
    # a temporary file renamed over an entry (CuPy's way of storing one): the count
    # stays, the folder changes
    os.utime(tmp_path / "a" / "b", ns=(0, 0))  # the folder last changed long ago
    before = cache_snapshot([tmp_path / "a"])
    tmp = tmp_path / "a" / "b" / "tmp123"
    tmp.write_bytes(b"new")
    os.replace(tmp, tmp_path / "a" / "b" / "f1")
    after = cache_snapshot([tmp_path / "a"])
    assert after[0] == before[0] == 2 and cache_state(before, after) == "cold"


@pytest.mark.parametrize(("before", "after", "state"), [
    (None, None, "none"),
    (None, (0, 5), "none"),      # an empty folder appeared: nothing stored
    (None, (1, 5), "cold"),
    ((3, 5), (3, 5), "warm"),
    ((3, 5), (4, 5), "cold"),
    ((3, 5), (3, 6), "cold"),
    ((3, 5), (2, 5), "warm"),    # an entry evicted, nothing stored
    ((0, 5), (0, 5), "warm"),    # an empty cache that stayed so: it was there to use
])
def test_cache_state_rule(before, after, state):
    assert cache_state(before, after) == state


# -- the frameworks' declarations ---------------------------------------------------------


def test_cupy_declares_its_kernel_cache_unless_kept_in_memory(monkeypatch, tmp_path):
    from gpubench.backends.cupy.adapter import CupyGPU

    monkeypatch.delenv("CUPY_CACHE_IN_MEMORY", raising=False)
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "k"))
    assert CupyGPU().compile_cache_dirs() == [tmp_path / "k"]  # before start: its default
    monkeypatch.delenv("CUPY_CACHE_DIR")
    assert CupyGPU().compile_cache_dirs() == [Path.home() / ".cupy" / "kernel_cache"]
    monkeypatch.setenv("CUPY_CACHE_IN_MEMORY", "1")
    assert CupyGPU().compile_cache_dirs() == []
    monkeypatch.setenv("CUPY_CACHE_IN_MEMORY", "0")
    assert CupyGPU().compile_cache_dirs() != []


def test_jax_declares_a_cache_only_where_one_is_configured(tmp_path):
    jax = pytest.importorskip("jax")
    from gpubench.backends.jax.adapter import JaxCPU

    backend = JaxCPU()
    backend.start(1)
    before = jax.config.jax_compilation_cache_dir
    try:
        jax.config.update("jax_compilation_cache_dir", None)
        assert backend.compile_cache_dirs() == []
        jax.config.update("jax_compilation_cache_dir", str(tmp_path / "jc"))
        assert backend.compile_cache_dirs() == [tmp_path / "jc"]
        jax.config.update("jax_compilation_cache_dir", "gs://bucket/cache")
        assert backend.compile_cache_dirs() == []
    finally:
        jax.config.update("jax_compilation_cache_dir", before)
    assert not (tmp_path / "jc").exists()  # declared, never created by us


def test_torch_declares_inductors_cache_as_torch_would_choose_it(monkeypatch, tmp_path):
    from gpubench.backends.torch.adapter import TorchCPU, TorchGPU

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "ind"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "tri"))
    assert TorchCPU().compile_cache_dirs() == [tmp_path / "ind"]
    assert TorchGPU().compile_cache_dirs() == [tmp_path / "ind", tmp_path / "tri"]
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR")
    monkeypatch.delenv("TRITON_CACHE_DIR")
    assert TorchGPU().compile_cache_dirs()[1] == Path.home() / ".triton" / "cache"
    pytest.importorskip("torch")
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    assert TorchCPU().compile_cache_dirs() == [Path(default_cache_dir())]


def test_an_implementation_that_never_touches_the_cache_is_none_and_not_scanned(tmp_path):
    """PyTorch's eager rows run precompiled kernels: their rows say none (and keep their
    first calls in the first-call figures), even where the folder changes meanwhile."""
    cache = tmp_path / "ind"
    cache.mkdir()

    class Eager(_Cached):
        facts = _Cached.facts.but(compiling=frozenset())  # none of its rows compiles

    m = _measure(Eager(cache), _builder(write=cache / "k.cubin"))
    assert m.fields["status"] == "ok" and m.fields["cache_state"] == "none"

    class Unknown(Facts):
        def uses_compile_cache(self, implementation: str) -> bool:
            raise RuntimeError("unknown")

    class CannotSay(_Cached):
        facts = Unknown()

    m = _measure(CannotSay(cache), _builder(write=cache / "k2.cubin"))
    assert m.fields["cache_state"] == "cold"  # watched, as before


@pytest.mark.parametrize("backend_id, words", [
    # the words a builder that compiles through the framework's cache must use
    ("torch-gpu", ("torch.compile", "compile_static", "triton")),
    ("torch-cpu", ("torch.compile", "compile_static", "triton")),
    ("cuda_python-gpu", ("compile_module", "cuda_sources", "nvrtc")),
])
def test_a_backend_watches_its_caches_only_for_the_rows_that_compile(backend_id, words):
    """PyTorch (Inductor, Triton) and CUDA Python (NVRTC) name the implementations that
    compile through their caches: the set names registered implementations, and any
    other implementation's module never compiles (so its rows rightly say none)."""
    from gpubench.backends import load_backend
    from gpubench.plugins import load_plugins
    from gpubench.spec import kernel_names

    load_plugins()
    backend = load_backend(backend_id)
    framework, device = backend_id.split("-")
    impls = [i for k in kernel_names() for i in implementations(k, framework, device)]
    assert backend.facts.compiling and backend.facts.compiling <= {i.name for i in
                                                       implementations_all(framework)}
    mixed = {i.source_file for i in implementations_all(framework)
             if i.name in backend.facts.compiling}
    for impl in impls:
        if impl.name in backend.facts.compiling:
            assert backend.facts.uses_compile_cache(impl.name)
            continue
        assert not backend.facts.uses_compile_cache(impl.name)
        # its builder, or its whole module where no implementation there compiles
        text = (inspect.getsource(impl.builder) if impl.source_file in mixed else
                inspect.getsource(sys.modules[impl.source_file]))
        assert not any(w in text for w in words), (impl.kernel, impl.name)


def implementations_all(framework: str) -> list:
    from gpubench.spec import kernel_names

    return [i for k in kernel_names() for i in implementations(k, framework)]


def test_frameworks_without_a_persistent_cache_declare_none():
    from gpubench.backends.cuda_python.adapter import CudaPythonGPU
    from gpubench.backends.numba.adapter import NumbaCPU
    from gpubench.backends.numba.gpu import NumbaGPU

    for backend in (NumpyCPU(), NumbaCPU(), NumbaGPU(), CudaPythonGPU()):
        assert backend.compile_cache_dirs() == []


def test_no_numba_function_is_cached_on_disk():
    """Numba's ``none`` rests on this: a ``cache=True`` here would store compiled
    functions in NUMBA_CACHE_DIR, and Numba's declaration must then name that folder."""
    found = []
    for path in (ROOT / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and any(
                    k.arg == "cache" and not (isinstance(k.value, ast.Constant)
                                              and k.value.value is False)
                    for k in node.keywords):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


# -- through the runner ------------------------------------------------------------------


@pytest.fixture
def rounds_plugin(monkeypatch: pytest.MonkeyPatch) -> str:
    return _plugin(monkeypatch, "rounds_plugin")


def test_the_column_through_the_runner_cold_then_warm_in_a_second_process(
        rounds_plugin, tmp_path, monkeypatch):
    from gpubench.runner import run_backend

    monkeypatch.setenv("GPUBENCH_TEST_CACHE_DIR", str(tmp_path / "cache"))
    cfg = {"threads": [1], "gpu_modes": ["hot"],
           "harness": {"warmup": 1, "min_samples": 3, "max_time_s": 0.005,
                       "caller_max_time_s": 0.003, "caller_round_gap_s": 0.001},
           "kernels": {"vector_add": {"sizes": [1024, 4096], "dtypes": ["float32"]}}}
    states = []
    for run in ("first", "second"):
        csv = tmp_path / f"{run}.csv"
        run_backend("rounds-gpu", cfg, 1, str(csv), str(tmp_path / f"{run}.samples.csv"))
        df = results.read_timings(csv)
        assert set(df["status"]) == {"ok"}
        states.append({(r.implementation, r.size): r.cache_state for r in df.itertuples()})
    first, second = states
    assert first == {("compiles", 1024): "cold", ("compiles", 4096): "cold",
                     ("plain", 1024): "warm", ("plain", 4096): "warm"}
    assert set(second.values()) == {"warm"}
