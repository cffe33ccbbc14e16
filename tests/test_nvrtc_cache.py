"""CUDA Python's NVRTC cubins in a persistent cache (the step's
``compile_cache_dir``/nvrtc, ``$GPUBENCH_NVRTC_CACHE_DIR``), so a re-run of its step
loads them instead of compiling again, and its rows' ``cache_state`` tells the two
apart. NVRTC compiles without a GPU, so all of it runs here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

cuda_python_gpu = pytest.importorskip("gpubench.backends.cuda_python.adapter")
from gpubench.backends.cuda_python.adapter import (  # noqa: E402
    NVRTC_CACHE_ENV,
    CudaPythonGPU,
    compile_module,
)
from gpubench.harness import cache_snapshot, cache_state  # noqa: E402
from gpubench.runner import compile_cache_vars, step_environment  # noqa: E402

SOURCE = ("// nvrtc_cache_test: a template kernel\n"
          "template <typename T> __global__ void scale(T* x, T a, int n) {\n"
          "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }\n")
NAMES = ("scale<float>", "scale<double>")


@pytest.fixture(autouse=True)
def _nvrtc_and_a_fresh_process(monkeypatch):
    """NVRTC loadable (else skip), and this process's in-memory modules forgotten, as a
    new worker process starts without them."""
    nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings not installed")
    try:
        nvrtc.nvrtcVersion()
    except Exception as exc:  # noqa: BLE001 - the bindings are there, libnvrtc is not
        pytest.skip(f"NVRTC library not loadable: {type(exc).__name__}: {exc}")
    monkeypatch.setattr(cuda_python_gpu, "_MODULES", {})


def _forbid_compiling(monkeypatch) -> None:
    core = cuda_python_gpu.import_core()

    def refuse(*args, **kwargs):
        raise AssertionError("NVRTC ran although the cache held the cubin")

    monkeypatch.setattr(core, "Program", refuse)


def _new_process(monkeypatch) -> None:
    monkeypatch.setattr(cuda_python_gpu, "_MODULES", {})


def test_a_second_process_loads_the_cubin_and_its_template_names(tmp_path, monkeypatch):
    monkeypatch.setenv(NVRTC_CACHE_ENV, str(tmp_path / "nvrtc"))
    first = compile_module(SOURCE, NAMES, arch="90")
    stored = sorted(p.suffix for p in (tmp_path / "nvrtc").iterdir())
    assert stored == [".cubin", ".json"]  # no temporary left behind
    _new_process(monkeypatch)
    _forbid_compiling(monkeypatch)
    again = compile_module(SOURCE, NAMES, arch="90")
    assert bytes(again.code) == bytes(first.code)
    # get_kernel("scale<double>") needs the mangled name NVRTC gave the instantiation
    assert dict(again.symbol_mapping) == dict(first.symbol_mapping)
    assert set(again.symbol_mapping) == set(NAMES)


@pytest.mark.parametrize("change", ["source", "arch", "names"])
def test_a_different_source_target_or_instantiation_compiles_anew(tmp_path, monkeypatch,
                                                                   change):
    monkeypatch.setenv(NVRTC_CACHE_ENV, str(tmp_path))
    compile_module(SOURCE, NAMES, arch="90")
    _new_process(monkeypatch)
    source, names, arch = SOURCE, NAMES, "90"
    if change == "source":
        source = SOURCE.replace("*= a", "+= a")
    elif change == "arch":
        arch = "80"
    else:
        names = ("scale<float>",)
    other = compile_module(source, names, arch=arch)
    assert len(list(tmp_path.glob("*.cubin"))) == 2
    assert set(other.symbol_mapping) == set(names)


def test_a_damaged_entry_is_a_miss_not_a_failure(tmp_path, monkeypatch):
    monkeypatch.setenv(NVRTC_CACHE_ENV, str(tmp_path))
    first = compile_module(SOURCE, NAMES, arch="90")
    (json_file,) = tmp_path.glob("*.json")
    json_file.write_text("{not json")
    _new_process(monkeypatch)
    again = compile_module(SOURCE, NAMES, arch="90")  # compiled, and stored again
    assert bytes(again.code) == bytes(first.code)
    assert '"symbol_mapping"' in json_file.read_text()


def test_without_the_folder_nothing_is_stored_and_each_process_compiles(tmp_path,
                                                                        monkeypatch):
    monkeypatch.delenv(NVRTC_CACHE_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    compile_module(SOURCE, NAMES, arch="90")
    assert list(tmp_path.iterdir()) == []
    assert CudaPythonGPU().compile_cache_dirs() == []
    _new_process(monkeypatch)
    _forbid_compiling(monkeypatch)
    with pytest.raises(AssertionError, match="NVRTC ran"):
        compile_module(SOURCE, NAMES, arch="90")


def test_an_unwritable_cache_still_compiles(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(NVRTC_CACHE_ENV, str(blocker / "nvrtc"))  # under a file
    assert compile_module(SOURCE, NAMES, arch="90").code


def test_the_step_puts_the_cubins_under_its_compile_cache_and_rows_read_cold_then_warm(
        tmp_path, monkeypatch):
    """The step's variable, the backend's watched folder, and the cache_state the
    harness derives from it: cold on the build that stores, warm on a re-run's."""
    assert compile_cache_vars()[NVRTC_CACHE_ENV] == "nvrtc"
    env = step_environment(tmp_path / "cuda_python-cuda13", {})
    folder = Path(env[NVRTC_CACHE_ENV])
    assert folder == (tmp_path / "cuda_python-cuda13" / "nvrtc").resolve()
    monkeypatch.setenv(NVRTC_CACHE_ENV, os.fspath(folder))
    dirs = CudaPythonGPU().compile_cache_dirs()
    assert dirs == [folder]
    before = cache_snapshot(dirs)
    compile_module(SOURCE, NAMES, arch="90")
    assert cache_state(before, cache_snapshot(dirs)) == "cold"
    _new_process(monkeypatch)
    before = cache_snapshot(dirs)
    compile_module(SOURCE, NAMES, arch="90")
    assert cache_state(before, cache_snapshot(dirs)) == "warm"
