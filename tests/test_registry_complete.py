"""Every kernel and every framework states its facts in one place: the spec
or the backend class. A kernel or backend with a fact left undeclared fails here, and a
kernel added by a plugin gets its % of ceiling, its plausibility gate and its report
class from its own facts, with no other file edited."""

from __future__ import annotations

import dataclasses
import math
import pkgutil
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ROOT, _plugin

import gpubench.kernels
from gpubench.backends import BACKENDS, Backend, Facts, backend_classes
from gpubench.spec import (
    BOUNDS,
    CEILINGS,
    UNITS,
    KernelSpec,
    kernel_names,
    kernel_specs,
    report_classes,
)
from gpubench.workloads import WORKLOAD_CLASSES

#: the names of the facts, which a backend declares in its record (``facts``) only
FACT_NAMES = frozenset(f.name for f in dataclasses.fields(Facts))


def kernel_problems(spec: KernelSpec) -> list[str]:
    """What a kernel spec leaves undeclared or declares inconsistently."""
    out = []
    if spec.order is None:
        out.append("order")
    if spec.bound not in BOUNDS:
        out.append(f"bound {spec.bound!r}")
    if spec.ceiling not in CEILINGS:
        out.append(f"ceiling {spec.ceiling!r}")
    if spec.unit not in UNITS:
        out.append(f"unit {spec.unit!r}")
    if spec.report_class == "":
        out.append("report_class")
    if spec.target_pct is None or not spec.target_pct >= 0:
        out.append("target_pct")
    elif spec.target_pct > 0 and spec.ceiling == "none":
        out.append("a target without a ceiling")
    # the ceiling follows from the bound: a memory-bound kernel read against no ceiling
    # would silently lose its plausibility gate and its % of ceiling
    want = {"memory": ("copy",), "transfer": ("link",), "compute": ("gemm", "none"),
            "latency": ("none",)}.get(spec.bound, ())
    if spec.ceiling not in want:
        out.append(f"ceiling {spec.ceiling!r} for a {spec.bound}-bound kernel")
    if spec.unit == "GFLOP/s" and type(spec).flops is KernelSpec.flops:
        out.append("unit GFLOP/s without flops()")
    return out


def backend_problems(cls: type[Backend]) -> list[str]:
    """What a backend class leaves undeclared (the base class's defaults do not count),
    and any fact it sets beside its record, where nothing reads it."""
    own = [k for k in cls.__mro__ if k is not Backend and issubclass(k, Backend)]
    out = [] if any("facts" in vars(k) for k in own) else ["facts"]
    out += sorted(f"{n} outside facts" for k in own for n in vars(k) if n in FACT_NAMES)
    facts = cls.facts
    if not isinstance(facts, Facts):
        return [*out, f"facts is a {type(facts).__name__}"]
    if facts.order is None:
        out.append("order None")
    if not facts.display_name or not facts.version_keys:
        out.append("display_name or version_keys empty")
    if not facts.environment:
        out.append("environment empty")
    if not facts.key_packages:
        out.append("key_packages empty")
    if not facts.probe_packages:
        out.append("probe_packages empty")
    out += [f"multi_device {m!r}" for m in facts.multi_device if m not in cls.multi.steps()]
    return out


def test_every_kernel_package_is_found_by_the_scan() -> None:
    packages = {m.name for m in pkgutil.iter_modules(gpubench.kernels.__path__) if m.ispkg}
    assert packages <= set(kernel_names(suite_only=False))


def test_the_kernels_only_mpi_jobs_use_are_no_suite_cases() -> None:
    """The kernels only the MPI jobs compute with (the halo's stencil, the linear model's
    gradient and update) have implementations but no single-device case: the run, the
    config, the catalogue and the report, which read kernel_names, never list them."""
    from gpubench import catalog
    from gpubench.config import ConfigError, validate_config
    from gpubench.spec import get_kernel, implementations

    jobs_only = [n for n in kernel_names(suite_only=False) if not get_kernel(n).suite]
    assert {"stencil", "linear_grad", "axpy"} <= set(jobs_only)
    assert not set(jobs_only) & set(kernel_names())
    assert not set(jobs_only) & {s.name for s in kernel_specs()}
    assert not set(jobs_only) & set(report_classes())
    shipped = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    for name in jobs_only:
        assert implementations(name, "numpy", "cpu"), name  # what CPU ranks compute with
        assert not any(name in row[0] for row in catalog.rows()), name
        cfg = {**shipped, "kernels": {name: {"sizes": [8]}}}
        with pytest.raises(ConfigError, match=f"kernels.{name}: unknown kernel"):
            validate_config(cfg)


@pytest.mark.parametrize("name", kernel_names())
def test_every_kernel_declares_its_facts(name: str) -> None:
    spec = next(s for s in kernel_specs() if s.name == name)
    assert kernel_problems(spec) == []


def test_kernel_order_is_unique() -> None:
    orders = [s.order for s in kernel_specs()]
    assert len(orders) == len(set(orders))


def test_every_framework_package_is_found_by_the_scan() -> None:
    """Each package under ``gpubench.backends`` lists its classes in ``BACKENDS``, the
    scan registers them all, and the registry's module names no framework."""
    import importlib

    import gpubench.backends

    registered = set(backend_classes().values())
    for info in pkgutil.iter_modules(gpubench.backends.__path__):
        if info.ispkg:
            module = importlib.import_module(f"gpubench.backends.{info.name}")
            assert module.BACKENDS and set(module.BACKENDS) <= registered, info.name
    source = Path(gpubench.backends.__file__).read_text()
    frameworks = {c.framework for c in registered}
    assert not [f for f in frameworks if f'"{f}' in source or f"'{f}" in source]


@pytest.mark.parametrize("backend", list(backend_classes()))
def test_every_backend_declares_its_facts(backend: str) -> None:
    cls = backend_classes()[backend]
    assert backend_problems(cls) == []
    # its environment has a requirements file to build it from
    envs = ROOT / "workflow" / "envs" / "pip"
    name = cls.facts.environment + ("-cuda12" if cls.device == "gpu" else "")
    assert (envs / f"{name}.txt").is_file()


def test_the_standin_framework_declares_its_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/extending.md's "Adding a framework" dry run (tests/standin_plugin.py) is complete."""
    _plugin(monkeypatch, "standin_plugin")
    assert backend_problems(backend_classes()["standin-cpu"]) == []


def test_the_completeness_checks_bite() -> None:
    class Bare(KernelSpec):
        name = "bare"

    assert {"order", "report_class", "target_pct"} <= set(kernel_problems(Bare()))

    class Forgetful(KernelSpec):
        name, order, bound, ceiling, unit = "f", 1, "memory", "none", "GB/s"
        report_class, target_pct = None, 0

    assert kernel_problems(Forgetful()) == ["ceiling 'none' for a memory-bound kernel"]

    class BareBackend(Backend):
        framework, device = "bare", "cpu"

    assert {"facts", "order None", "environment empty"} <= set(backend_problems(BareBackend))

    class OldStyle(Backend):  # a fact set as a class attribute: nothing would read it
        framework, device = "old", "gpu"
        facts = Facts(environment="numpy", display_name="Old", order=1,
                      version_keys=("old",), key_packages=("numpy",),
                      probe_packages=("numpy",), multi_device=("old_devices",))
        timer = "old_events"

    assert backend_problems(OldStyle) == ["timer outside facts",
                                          "multi_device 'old_devices'"]


# -- a kernel from a plugin ---------------------------------------------------------------


@pytest.fixture
def standin_kernel(monkeypatch: pytest.MonkeyPatch) -> str:
    """The plugin loaded (here and in workers); its kernel registered for this test only."""
    import sys

    from gpubench import spec

    # copies first: importing the plugin registers its kernel into whatever registry is
    # current, and the copies are what the teardown throws away (registered into the
    # real one, the kernel leaked into every later test's configurations)
    monkeypatch.setattr(spec, "_registered", dict(spec._registered))
    monkeypatch.setattr(spec, "_loaded", dict(spec._loaded))
    name = _plugin(monkeypatch, "standin_kernel_plugin")
    spec._registered["standin_scale"] = sys.modules[name].SPEC  # imported before: again
    return name



def _gpu_row(**extra: object) -> dict[str, object]:
    return {"kernel": "standin_scale", "device": "gpu", "dtype": "float32", "status": "ok",
            "timer": "cuda_event", **extra}


def test_a_plugin_kernel_is_registered_with_its_facts(standin_kernel: str) -> None:
    from gpubench.spec import get_kernel, implementations

    names = kernel_names()
    assert names.index("vector_add") < names.index("standin_scale") < names.index(
        "elementwise")
    assert kernel_problems(get_kernel("standin_scale")) == []
    assert [i.name for i in implementations("standin_scale", "numpy")] == ["multiply"]


def test_a_plugin_kernel_gets_its_pct_of_ceiling(standin_kernel: str) -> None:
    from gpubench import devices
    from gpubench.ceilings import ceiling_for

    ceilings = {"d2d_copy_gbps": 2000.0, "l2_bytes": 50 * 2**20}
    label, pct = ceiling_for(_gpu_row(gbps=1000.0, bytes=2.0**30), ceilings)
    assert label.startswith("d2d_copy") and pct == pytest.approx(50.0)
    peak = devices.vendor_peak("NVIDIA H100 80GB HBM3")
    if peak is not None:
        v_label, v_pct = devices.pct_of_vendor(_gpu_row(gbps=1000.0), peak)
        assert v_label and math.isfinite(v_pct)


def test_a_plugin_kernel_gets_its_plausibility_gate(standin_kernel: str) -> None:
    from gpubench import plausibility

    ceilings = {"d2d_copy_gbps": 2000.0, "l2_bytes": 50 * 2**20}
    fast = _gpu_row(gbps=20_000.0, bytes=2.0**30)
    assert "faster than memory" in plausibility.reason(fast, ceilings)
    assert plausibility.reason(_gpu_row(gbps=1000.0, bytes=2.0**30), ceilings) == ""


def test_a_plugin_kernel_gets_its_report_class_unit_and_target(standin_kernel: str) -> None:
    from gpubench.report import verdicts
    from gpubench.report.base import throughput_unit
    from gpubench.report.sections import targets

    assert "standin_scale" in verdicts.classes()["elementwise work"]
    assert throughput_unit("standin_scale", pd.DataFrame({"flops": [0.0]})) == "GB/s"
    assert ("standin_scale", "copy bandwidth", 80.0) in targets()


def test_a_plugin_kernel_runs_on_the_single_device_path(standin_kernel: str,
                                                         tmp_path) -> None:
    from gpubench import results
    from gpubench.runner import run_backend

    cfg = {"threads": [1], "harness": {"warmup": 1, "min_samples": 3, "max_time_s": 0.05},
           "kernels": {"standin_scale": {"sizes": [1000], "dtypes": ["float64"]}}}
    csv, samples = tmp_path / "t.csv", tmp_path / "s.csv"
    run_backend("numpy-cpu", cfg, 1, str(csv), str(samples))
    df = results.read_timings(csv)
    assert list(df["status"]) == ["ok"], df[["status", "reason"]]
    assert (df["kernel"] == "standin_scale").all() and (df["gbps"] > 0).all()


def test_the_plugin_kernel_is_gone_after_its_tests() -> None:
    """Runs after the tests above (file order): no later test meets the stand-in."""
    assert "standin_scale" not in kernel_names()


# -- the MPI jobs' facts, and no list of names outside the kernels and backends -----------

def name_pattern(names: list[str]) -> re.Pattern[str]:
    """A string literal that is exactly one of ``names`` (longest first)."""
    alternatives = "|".join(map(re.escape, sorted(set(names), key=len, reverse=True)))
    return re.compile(rf'"({alternatives})"')


#: every registered kernel's name, every backend id and every workload class's key, written
#: as a string: what no module outside the kernels, the backends and the classes' records
#: (:mod:`gpubench.workloads`) may hold (read from the registries and the records, so a
#: kernel, framework or class added later is guarded too)
CLASS_KEYS = [c.key for c in WORKLOAD_CLASSES]
NAME_LITERAL = name_pattern([*kernel_names(suite_only=False), *BACKENDS, *CLASS_KEYS])
#: (module, literal) pairs where the word is another thing's name that happens to equal a
#: kernel's: a bound (:data:`gpubench.spec.BOUNDS`), a report section, a matrix aspect
OTHER_MEANINGS = {
    ("gpubench/spec.py", "transfer"): "the bound of BOUNDS",
    ("gpubench/ceilings.py", "transfer"): "kernel_bound's answer",
    ("gpubench/plausibility.py", "transfer"): "kernel_bound's answer",
    ("gpubench/report/outline.py", "allocation"): "the report section's name",
    ("gpubench/report/sections/__init__.py", "allocation"): "the report section's name",
    ("gpubench/report/matrix.py", "autodiff"): "the matrix aspect's name",
}


#: modules whose data name kernels, backends or classes by design: the workload classes'
#: records, and the comparison guide's claims (what the source documents say of each
#: backend, with the kernels and implementations its checks pair)
RECORDS = ("gpubench/workloads.py", "gpubench/report/claims.py")


def name_literals(root: Path, pattern: re.Pattern[str] = NAME_LITERAL) -> list[str]:
    """``path:line: text`` of every line under ``root`` (``*.py``, outside ``kernels/``,
    ``backends/`` and :data:`RECORDS`) that names a kernel, a backend id or a workload
    class in a string literal."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if "/kernels/" in f"/{rel}" or "/backends/" in f"/{rel}" or rel in RECORDS:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if any((rel, m.group(1)) not in OTHER_MEANINGS for m in pattern.finditer(line)):
                out.append(f"{rel}:{number}: {line.strip()}")
    return out


def test_no_kernel_backend_or_class_name_is_listed_outside_its_package() -> None:
    """Each kernel's, backend's and workload class's name stands in its own package or
    record only: everything else reads it from the spec, the backend class, the class's
    record or the MPI jobs' facts."""
    assert name_literals(ROOT / "src") == []


def test_the_guides_claims_name_registered_backends_and_known_kinds() -> None:
    """A renamed backend would silently lose its claims; an unknown kind is judged by
    nothing."""
    from gpubench.report.claims import CLAIM_KINDS, GUIDE

    assert set(GUIDE) <= set(BACKENDS)
    for backend, said in GUIDE.items():
        assert [k for k, _, _ in said.claims if k not in CLAIM_KINDS] == [], backend
        others = [*said.fast_against, *(said.drop_in[1:2] if said.drop_in else ())]
        others += [said.cuda_c_reference] if said.cuda_c_pairs else []
        assert set(others) <= set(BACKENDS), backend
    assert sum(g.plain_loops for g in GUIDE.values()) == 1


def test_every_kernels_class_has_a_record_and_no_key_is_a_kernels_name() -> None:
    """A kernel's class without a record would be bound by no ceiling and missing from
    every view; a key equal to a kernel's name would make a name in the code ambiguous."""
    assert set(report_classes()) <= set(CLASS_KEYS)
    assert not set(CLASS_KEYS) & set(kernel_names())
    assert len(CLASS_KEYS) == len(set(CLASS_KEYS))


def test_the_name_literal_check_bites(tmp_path: Path) -> None:
    (tmp_path / "gpubench" / "kernels" / "k").mkdir(parents=True)
    (tmp_path / "gpubench" / "kernels" / "k" / "m.py").write_text('K = "matmul"\n')
    (tmp_path / "gpubench" / "m.py").write_text('OK = "matmuls"\nJOBS = ("reduction",)\n'
                                                 'B = "cupy-gpu"\n')
    (tmp_path / "gpubench" / "c.py").write_text('C = "small arrays"\n')
    (tmp_path / "gpubench" / "workloads.py").write_text('C = "small arrays"\n')
    pattern = name_pattern(["matmul", "reduction", "cupy-gpu", "small arrays"])
    assert [h.split(":")[:2] for h in name_literals(tmp_path, pattern)] == [
        ["gpubench/c.py", "1"], ["gpubench/m.py", "2"], ["gpubench/m.py", "3"]]


def test_every_mpi_job_declares_its_facts() -> None:
    from gpubench.mpi import JOBS, catalog, catalog_of_jobs, jobs, schema

    facts = catalog_of_jobs()
    assert tuple(facts) == JOBS and len(JOBS) == len(set(JOBS))
    assert [j.order for j in facts.values()] == sorted({j.order for j in facts.values()})
    assert jobs.JOB_FUNCTIONS == {name: j.run for name, j in facts.items()}
    for name, job in facts.items():
        assert job.run.__name__ == f"job_{name}"
        assert job.run.__module__ == f"{jobs.__name__}.{name}"  # one module per job
        assert job.scaling in catalog.SCALING
        assert job.kernel is None or job.kernel.name == name
        assert job.size_meaning or job.scaling == "by_mode", name
        # what the report pairs and reads against the link names a job and a column
        assert not job.overlaps or job.overlaps in facts, name
        assert job.link_rate in schema.COLUMN_NAMES, name
        assert not job.link_reference or job.message, name


def test_every_mpi_job_module_is_found_by_the_scan() -> None:
    """Each module of ``gpubench.mpi.jobs`` but the shared one declares the job it is
    named after; the scan registers them all."""
    from gpubench.mpi import catalog_of_jobs, jobs

    modules = {m.name for m in pkgutil.iter_modules(jobs.__path__)} - {jobs.SHARED}
    assert modules == set(catalog_of_jobs())


def test_mpi_facts_drive_the_step_and_the_report() -> None:
    from gpubench.mpi import SINGLE_PROCESS_JOBS, catalog_of_jobs, schema, step
    from gpubench.report import mpi as report_mpi

    facts = catalog_of_jobs()
    assert set(step.JOB_DEFAULTS) == set(facts)
    assert step.BUFFER_JOBS == tuple(n for n, j in facts.items() if j.buffers)
    assert SINGLE_PROCESS_JOBS == tuple(n for n, j in facts.items() if j.single_process)
    assert set(schema.STRONG_JOBS) < set(report_mpi.SCALING_JOBS)
    # messages between ranks carry device buffers; the one-process peer copy is their link
    assert set(report_mpi.MESSAGE_JOBS) <= set(step.BUFFER_JOBS) | set(SINGLE_PROCESS_JOBS)
    # the one job whose dtype is fixed by its kernel runs in it, whatever the config says
    for name, job in facts.items():
        if job.dtype and not job.message:
            cfg = {"jobs": {name: {"sizes": [64], "dtype": "float32"}}}
            items = step.plan(name, "numpy-cpu", 2, cfg)
            assert {i["dtype"] for i in items} == {job.dtype}


def test_mpi_job_names_follow_their_kernel() -> None:
    from gpubench.mpi.catalog import mpi_job

    class Spec:
        name = "other"

    with pytest.raises(ValueError, match="name the function after the kernel"):
        mpi_job(order=99, size_meaning="x", kernel=Spec())(lambda ctx: None)
    with pytest.raises(ValueError, match="scaling"):
        mpi_job(order=99, size_meaning="x", scaling="sideways")(lambda ctx: None)


# -- the report's sections: one list, read by the analysis, the contents and the pages ------

def test_every_section_is_listed_once_and_its_templates_exist() -> None:
    """The table of contents links each section's anchor, which its page template must
    carry; its summary.md piece must exist; no key or anchor twice."""
    from gpubench.report import outline

    root = ROOT / "src" / "gpubench" / "report" / "templates"
    keys = [s.key for s in outline.SECTIONS]
    anchors = [s.anchor for s in outline.SECTIONS]
    assert len(keys) == len(set(keys)) and len(anchors) == len(set(anchors))
    for sec in outline.SECTIONS:
        if sec.html:
            assert f'id="{sec.anchor}"' in (root / sec.html).read_text(), sec.key
        if sec.md:
            assert (root / sec.md).exists(), sec.md
    # a piece no section names would never be rendered
    pieces = {p.name for p in root.glob("section_*.md.j2")}
    assert pieces == {s.md for s in outline.SECTIONS if s.md}
