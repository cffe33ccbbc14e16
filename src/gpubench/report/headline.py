"""The report's first screen: which machine, which framework, from which size.

* :func:`machine` names the hardware and software in one line: GPU model and count, CPU
  model and cores, each framework's version, when it was measured and at which commit
  (from the probe's environment record and the timings' provenance columns).
* :func:`short_lines` says each class verdict of :mod:`.matrix` in one line (the full
  sentences, with the cases and sizes compared, fold below them).
* :func:`overview` picks the figure: speedup over NumPy against problem size for one
  memory-bound case of the first recommendation's class, every GPU framework's fastest
  implementation per size on the caller's clock, solid with the data on the device and
  dashed with host transfers included, each framework's crossover marked.
  :func:`overview_figure` draws it as PNG (summary.md); :func:`gpubench.report.plots.
  overview_figure` is its interactive twin.
* :func:`compact` is the matrix in at most eight columns, units in the headers.
* :func:`name_rows` names the measurements a banner warns about.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from gpubench.backends import backend_classes, reader_name, split_backend_id
from gpubench.report import figures, verdicts
from gpubench.report.base import BASELINE_FRAMEWORK, UNKNOWN, Environment, fmt_bytes
from gpubench.report.plots import overview_series
from gpubench.report.render import Figure, text_table
from gpubench.report.sections.common import TRANSFERS_SUFFIX, best_per, primary_mode
from gpubench.report.sections.crossover import (
    cpu_reference,
    numpy_only,
    reference_name,
    speedup_curve,
)
from gpubench.report.verdicts import NOT_MEASURED
from gpubench.workloads import WORKLOAD_CLASSES, class_title, crossover_class


def framework_names() -> dict[str, tuple[str, tuple[str, ...], float]]:
    """Framework -> (how the header calls it, the version keys that stand for it, its
    place), from each backend's :attr:`~gpubench.backends.facts.Facts.display_name`,
    ``version_keys`` and ``order`` (the first backend of a framework speaks for it)."""
    out: dict[str, tuple[str, tuple[str, ...], float]] = {}
    for cls in backend_classes().values():
        if cls.framework not in out:
            facts = cls.facts
            order = float(facts.order) if facts.order is not None else math.inf
            out[cls.framework] = (facts.display_name or cls.framework,
                                  facts.version_keys or (cls.framework,), order)
    return out


# -- the machine ------------------------------------------------------------------------------


@dataclass
class Machine:
    """The header line's parts; ``gpu`` is what the first screen must show."""

    gpu: str
    cpu: str
    versions: str
    measured: str
    commits: str
    host: str
    #: the GPU models and counts alone, for the title
    gpu_name: str = ""
    #: the suite the rows were measured in (gpubench.suites), '' where not recorded
    suite: str = ""
    #: "a virtual machine (kvm)" where the probe recorded that the host is one
    #: (:func:`gpubench.probe.virtual_machine`), '' where it is not or was not recorded
    virtual: str = ""

    @property
    def title(self) -> str:
        """What the page is about: the GPUs, or the CPU where no GPU is known."""
        if self.gpu_name and self.gpu_name not in (UNKNOWN, "no GPU"):
            return self.gpu_name
        return f"{self.cpu} (no GPU)" if self.gpu_name == "no GPU" else "an unknown machine"

    def parts(self) -> list[tuple[str, str]]:
        return [("GPU", self.gpu), ("CPU", self.cpu), ("frameworks", self.versions),
                ("measured", self.measured), ("commit", self.commits),
                ("host", f"{self.host}, {self.virtual}" if self.virtual else self.host),
                *([("suite", self.suite)] if self.suite else [])]


def heading(m: Machine, cpu_only: bool = False) -> str:
    """The page's question and machine. A run where no GPU step ran asks which framework
    on the CPU, and names the CPU: it has no GPU framework and no crossover to offer."""
    if not cpu_only:
        return f"Which Python GPU framework, from which size: gpubench on {m.title}"
    where = m.title if m.gpu_name == "no GPU" or m.cpu == UNKNOWN else m.cpu
    return f"Which Python framework on this CPU: gpubench on {where}"


def _versions(text: str) -> dict[str, str]:
    out = {}
    for part in str(text).split(";"):
        key, sep, value = part.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def framework_versions(df: pd.DataFrame) -> str:
    """"NumPy 2.5.2, CuPy 14.2.0, ...": each framework's own package version, from the
    rows it wrote (several versions are all named)."""
    names = framework_names()
    found: dict[str, set[str]] = {}
    for fw, text in zip(df["framework"].astype(str), df["framework_version"].astype(str),
                        strict=True):
        if not text or text == "nan":
            continue
        _name, keys, _ = names.get(fw, (fw, (fw,), math.inf))
        v = _versions(text)
        present = [k for k in keys if k in v]
        if not present:
            found.setdefault(fw, set()).add(text)
            continue
        main = v[present[0]] if present[0] == keys[0] else f"{present[0]} {v[present[0]]}"
        extras = [f"{k} {v[k]}" for k in present[1:]]
        found.setdefault(fw, set()).add(main + (f" ({', '.join(extras)})" if extras else ""))
    order = sorted(found, key=lambda f: (names[f][2] if f in names else math.inf, f))
    return ", ".join(f"{names[f][0] if f in names else f} {' / '.join(_distinct(found[f]))}"
                     for f in order) or UNKNOWN


def _distinct(versions: set[str]) -> list[str]:
    """The versions of one framework, each named once: "0.68.0" from its CPU backend and
    "0.68.0 (numba-cuda 0.30.4)" from its GPU one are the same version, said once."""
    return sorted(v for v in versions
                  if not any(o != v and o.startswith(f"{v} (") for o in versions))


def _cuda(env: Environment, df: pd.DataFrame) -> str:
    for text in df.get("framework_version", pd.Series(dtype=str)).astype(str):
        v = _versions(text)
        if "cuda_driver" in v and "." in v["cuda_driver"]:
            return v["cuda_driver"]
    gpus = env.data.get("gpus") or []
    for g in gpus:
        if isinstance(g, Mapping) and isinstance(g.get("cuda_driver_version"), int):
            n = g["cuda_driver_version"]
            return f"{n // 1000}.{n % 1000 // 10}"
    return ""


def machine(env: Environment, df: pd.DataFrame) -> Machine:
    """The machine in one line, from the probe's record, else the rows' columns."""
    gpus = [g for g in env.data.get("gpus") or [] if isinstance(g, Mapping)]
    if gpus:
        names: dict[str, int] = {}
        for g in gpus:
            names[str(g.get("name") or UNKNOWN)] = names.get(str(g.get("name") or UNKNOWN),
                                                             0) + 1
        mem = fmt_bytes(gpus[0].get("memory_bytes"))
        cuda = _cuda(env, df)
        extra = ", ".join(x for x in (mem if mem != UNKNOWN else "",
                                      f"driver {gpus[0]['driver_version']}"
                                      if gpus[0].get("driver_version") else "",
                                      f"CUDA {cuda}" if cuda else "") if x)
        gpu = gpu_name = "; ".join(f"{n} × {name}" for name, n in names.items())
        gpu += f" ({extra})" if extra else ""
    else:
        seen = sorted({str(x) for x in df.loc[df["device"] == "gpu", "device_name"]
                       if str(x) and str(x) != "nan"}) if len(df) else []
        gpu = " / ".join(seen) if seen else (
            f"none ({env.data['gpu_reason']})" if env.data.get("gpu_reason") else UNKNOWN)
        gpu_name = " / ".join(seen) if seen else "no GPU" if env.data.get(
            "gpu_reason") else UNKNOWN
    cpu_model = env.data.get("cpu_model") or next(
        (str(x) for x in df.get("cpu_model", []) if str(x) and str(x) != "nan"), UNKNOWN)
    cores = env.data.get("cpu_cores") or next(
        (x for x in df.get("cpu_cores", []) if pd.notna(x) and str(x)), None)
    mem = fmt_bytes(env.data.get("memory_bytes"))
    cpu = ", ".join(x for x in (str(cpu_model),
                                f"{int(float(cores))} cores" if cores else "",
                                f"{mem} RAM" if mem != UNKNOWN else "") if x)
    stamps = sorted(str(t) for t in df.get("timestamp", []) if str(t) and str(t) != "nan")
    days = sorted({s[:10] for s in stamps})
    measured = ("–".join([days[0], days[-1]]) if len(days) > 1 else days[0]) if days else str(
        env.get("timestamp"))[:10]
    commits: dict[str, set[str]] = {}
    for c, b in zip(df.get("git_commit", []), df.get("backend", []), strict=True):
        if str(c) and str(c) != "nan":
            commits.setdefault(str(c), set()).add(str(b))
    if len(commits) > 1:
        commit = ", ".join(f"{c} ({', '.join(sorted(map(reader_name, bs)))})" for c, bs in sorted(
            commits.items(), key=lambda kv: (-len(kv[1]), kv[0])))
    else:
        commit = next(iter(commits), str(env.get("git_commit")))
    return Machine(gpu, cpu, framework_versions(df) if len(df) else UNKNOWN, measured,
                   commit, str(env.get("host")), gpu_name, virtual=virtual_words(env.data))


def virtual_words(data: Mapping[str, Any]) -> str:
    """"a virtual machine (kvm)" where the probe's record says the host is one; '' where
    it says not, cannot tell, or (an older record) does not say: never a guess."""
    vm = data.get("virtual_machine")
    if not isinstance(vm, Mapping) or vm.get("virtual") is not True:
        return ""
    kind = vm.get("kind")
    return f"a virtual machine ({kind})" if isinstance(kind, str) and kind else (
        "a virtual machine")


# -- the recommendations, one line each ---------------------------------------------------------


def _x(v: float) -> str:
    if not math.isfinite(v):
        return "—"
    return f"{v:,.0f}×" if v >= 100 else f"{v:.3g}×"


def span(lo: float, hi: float) -> str:
    """"928–1,002×": a range of factors, the sign said once."""
    a, b = _x(lo), _x(hi)
    return a if a == b else f"{a.removesuffix('×')}–{b}"


def versus(median: float, lo: float, hi: float, than: str = "NumPy") -> str:
    """"990× faster than NumPy (928–1,002×)", or below 1 "1.7× slower than NumPy
    (1.61–1.92×)": a median speedup and its range as a researcher says them, a
    slow-down as the factor it costs (``than`` empty: "975× faster (905–991×)")."""
    if _x(median) == "1×":  # "1× faster" says nothing: as fast, within its range
        return f"as fast as {than or 'NumPy'} ({span(lo, hi)})"
    than = f" than {than}" if than else ""
    if math.isfinite(median) and 0 < median < 1:
        def inv(v: float) -> float:
            return 1 / v if v > 0 else math.inf
        return f"{_x(inv(median))} slower{than} ({span(inv(hi), inv(lo))})"
    return f"{_x(median)} faster{than} ({span(lo, hi)})"


def said_against_numpy(st: verdicts.Standing, than: str = "NumPy") -> str:
    """:func:`versus` for one framework's standing: its median and range over NumPy."""
    return versus(st.median, st.range_lo, st.range_hi, than)


def listed(names: list[str]) -> str:
    """"a", "a or b", "a, b or c"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _against(v: verdicts.ClassVerdict, shown: Sequence[verdicts.Standing],
             against: Mapping[tuple[str, str], tuple[float, list[str]]]) -> str:
    """" (110× and 108× faster than the CPU reference, numba-cpu, 16 threads)": the
    figures over the crossovers' CPU reference beside those over NumPy, where that
    reference is not NumPy (:func:`~.sections.crossover.reference_speedups`)."""
    have = [against[(v.cls, s.backend)] for s in shown if (v.cls, s.backend) in against]
    if len(have) != len(shown) or not have:
        return ""
    names = sorted({n for _, ns in have for n in ns})
    figures_ = listed([_x(m) for m, _ in have]).replace(" or ", " and ")
    if all(m >= 1 for m, _ in have):
        return f" ({figures_} faster than the CPU reference, {' / '.join(names)})"
    return f" ({figures_} the speed of the CPU reference, {' / '.join(names)})"


def short_line(v: verdicts.ClassVerdict,
               cross: Mapping[tuple[str, str], verdicts.CrossSummary],
               against: Mapping[tuple[str, str], tuple[float, list[str]]] | None = None
               ) -> str:
    """One class verdict in a line: the class and its band's bounds, the choice (its
    leaders where none is decisively fastest), how far ahead it is, and (elementwise)
    the crossover with and without host transfers; there, where the crossovers' CPU
    reference is not NumPy, the speedup over that reference too (``against``), so that
    the line's two baselines are both named."""
    head = f"{v.title[0].upper()}{v.title[1:]} ({v.bounds_text()})"
    w = v.winner
    assert w is not None
    if w.median < 1:
        kind = "GPU" if split_backend_id(w.backend)[1] == "gpu" else "other"
        return (f"{head}: stay on NumPy; the fastest {kind} framework, {w.backend}, is "
                f"{said_against_numpy(w, '')}.")
    leaders = v.leaders
    # beside the crossover only: the one figure of the line read against that reference
    beside = (_against(v, leaders if len(leaders) > 1 else [w], against or {})
              if v.cls == crossover_class() else "")
    if len(leaders) > 1:
        said = [f"{s.backend} {said_against_numpy(s, 'NumPy' if not i else '')}"
                for i, s in enumerate(leaders)]
        # the figures are medians (the note under the lines, the compact matrix's note)
        text = f"{head}: {listed(said)}{beside}: too close to call, their ranges overlap"
    else:
        text = f"{head}: {w.backend}, {said_against_numpy(w)}{beside}"
        r = v.runner_up
        if r is not None:
            text += f"; {r.backend}, {said_against_numpy(r)}, lies below"
    if v.cls == crossover_class():
        cs = [c for _, c in verdicts.leader_crossovers(v, cross) if math.isfinite(c.median)]
        if cs:
            lo, hi = min(c.median for c in cs), max(c.median for c in cs)
            where = (f"≈ {verdicts.sig2(lo)}" if verdicts.sig2(lo) == verdicts.sig2(hi) else
                     f"≈ {verdicts.sig2(lo)}–{verdicts.sig2(hi)}")
            refs = sorted({n for c in cs for n in c.references})
            named = f" ({' / '.join(refs)})" if not (beside or numpy_only(refs)) else ""
            text += f"; the CPU{named} below {where} elements"
            fin = [c.t_median for c in cs if c.t_n and math.isfinite(c.t_median)]
            never = [c for c in cs if c.t_n and not math.isfinite(c.t_median)]
            if fin:
                tl, th = verdicts.sig2(min(fin)), verdicts.sig2(max(fin))
                text += f", below ≈ {tl if tl == th else f'{tl}–{th}'} with host transfers"
            elif never:
                c = never[0]
                text += (f"; with host transfers the CPU stays ahead at every size in "
                         f"{c.t_never} of {c.t_n} cases")
    if v.largest:
        text += f"; {v.largest}"
    if v.precision:
        text += f"; {v.precision}"
    return text + "."


def headline_verdicts(matrix: Any) -> list[Any]:
    """Per workload class, in order, its verdict at its headline band (the largest it
    has), where that verdict names a winner."""
    out = []
    for cls in verdicts.speedup_classes():
        per = matrix.verdicts.get(cls, {})
        band = next((b for b in reversed(verdicts.BAND_NAMES) if b in per), None)
        if band is not None and per[band].winner is not None:
            out.append(per[band])
    return out


def short_lines(matrix: Any) -> list[str]:
    """:func:`short_line` per class, in the order of the full sentences."""
    against = getattr(matrix, "against_reference", {})
    return [short_line(v, matrix.crossovers, against) for v in headline_verdicts(matrix)]


# -- the figure ---------------------------------------------------------------------------------



@dataclass
class Overview:
    """The first screen's figure: its data, caption and alt text."""

    case: tuple[str, str, str]
    #: columns: backend, size_key, speedup (the CPU reference's time over the GPU's),
    #: transfers (bool), measured (bool: a +transfers row, not the estimate)
    lines: pd.DataFrame
    #: columns: backend, transfers (bool), size (the crossover; NaN: never), text,
    #: speedup (its curve's value there: 1 where the curve crosses, more where the GPU
    #: wins from the first size)
    crossovers: pd.DataFrame
    caption: str
    alt: str
    #: the case's CPU reference, as the axis names it: "numpy-cpu (1 thread)"
    reference: str = ""
    figure: Figure | None = field(default=None)


def _pick_case(ok: pd.DataFrame) -> tuple[str, str, str] | None:
    """The case of the class the first recommendation names that the most GPU frameworks
    measured at the most sizes inside the range of the case's CPU reference
    (:func:`~.sections.crossover.cpu_reference`); a case with measured host transfers
    first, float32 before float64."""
    # the classes whose records say overview, in their order: the first with rows wins
    for cls in (c.key for c in WORKLOAD_CLASSES if c.overview):
        rows = ok[ok["kernel"].isin(verdicts.classes().get(cls, ()))]
        if rows.empty:
            continue
        best, key = None, None
        for (k, var, d), g in rows.groupby(["kernel", "variant", "dtype"], sort=True):
            gpu = g[g["device"] == "gpu"]
            if gpu.empty:
                continue
            cpu = cpu_reference(g[g["device"] == "cpu"])[2]
            if cpu["size_key"].nunique() < 2:
                continue
            lo, hi = cpu["size_key"].min(), cpu["size_key"].max()
            gpu = gpu[(gpu["size_key"] >= lo) & (gpu["size_key"] <= hi)]
            if gpu.empty:
                continue
            score = (bool(gpu["implementation"].astype(str).str.endswith(
                TRANSFERS_SUFFIX).any()), gpu["backend"].nunique(),
                gpu["size_key"].nunique(), d == "float32")
            if key is None or score > key:
                best, key = (str(k), str(var), str(d)), score
        if best is not None:
            return best
    return None


def reference_label(backend: str, threads: int) -> str:
    """"numpy-cpu (1 thread)": the CPU reference as the overview's axis names it."""
    return f"{backend} ({threads} thread{'s' if threads != 1 else ''})"


def _curve_at(lines: pd.DataFrame, backend: str, transfers: bool, x: float) -> float:
    """The plotted curve's speedup at ``x``, read as the figure draws it (straight in
    log-log between its points): where a crossover's ✕ sits on its curve."""
    s = lines[(lines["backend"] == backend) & (lines["transfers"] == transfers)]
    if s.empty or not math.isfinite(x):
        return math.nan
    s = s.sort_values("size_key")
    xs, ys = np.log(s["size_key"].to_numpy(float)), np.log(s["speedup"].to_numpy(float))
    return float(np.exp(np.interp(math.log(x), xs, ys)))


def overview(df: pd.DataFrame, crossings: Sequence[Any], link_gbps: float | None,
             matrix: Any = None) -> Overview | None:
    """Speedup over the case's one CPU reference (the crossovers' own,
    :func:`~.sections.crossover.cpu_reference`) against size for one case
    (:func:`_pick_case`), per GPU framework (its fastest implementation per size,
    caller's clock, pipelined), with host transfers (measured where a +transfers row
    exists, else the device-resident time plus the bytes over the probe's pageable
    host-to-device bandwidth, as the crossover section estimates them). The curves are
    the ones the crossovers are read from (:func:`~.sections.crossover.speedup_curve`),
    so each ✕ (the crossover section's figure) sits where its curve crosses 1."""
    mode = primary_mode(df)
    ok = df[(df["status"] == "ok") & (df["mode"] == mode) & (df["caller_s"] > 0)]
    case = _pick_case(ok)
    if case is None:
        return None
    k, var, d = case
    g = ok[(ok["kernel"] == k) & (ok["variant"] == var) & (ok["dtype"] == d)]
    ref, threads, cpu = cpu_reference(g[g["device"] == "cpu"])
    c_sizes, c_times = cpu["size_key"].to_numpy(float), cpu["caller_s"].to_numpy(float)
    gpu = g[g["device"] == "gpu"]
    e2e = gpu["implementation"].astype(str).str.endswith(TRANSFERS_SUFFIX)
    rows = []
    estimated = []

    def add(backend: str, best: pd.DataFrame, transfers: bool, measured: bool,
            extra: np.ndarray | float = 0.0) -> None:
        curve = speedup_curve(best["size_key"].to_numpy(float),
                              best["caller_s"].to_numpy(float) + extra, c_sizes, c_times)
        if curve is not None:
            rows.extend([backend, int(x), float(y), transfers, measured]
                        for x, y in zip(*curve, strict=True))

    for backend in verdicts.ordered_backends(gpu["backend"]):
        mine = gpu[gpu["backend"] == backend]
        mine_e2e = e2e[mine.index]
        resident = best_per(mine[~mine_e2e], ["size_key"], by="caller_s")
        add(backend, resident, False, True)
        if mine_e2e.any():
            add(backend, best_per(mine[mine_e2e], ["size_key"], by="caller_s"), True, True)
        elif link_gbps and len(resident) and (resident["bytes"] > 0).all():
            add(backend, resident, True, False,
                resident["bytes"].to_numpy(float) / (link_gbps * 1e9))
            estimated.append(backend)
    lines = pd.DataFrame(rows, columns=["backend", "size_key", "speedup", "transfers",
                                        "measured"])
    lines = lines[np.isfinite(lines["speedup"]) & (lines["speedup"] > 0)]
    if lines.empty or lines["size_key"].nunique() < 2:
        return None
    marks = []
    for c in crossings:
        if (c.kernel, c.variant, c.dtype) != case or c.backend not in set(lines["backend"]):
            continue
        x = float(c.device_resident[1])
        marks.append([c.backend, False, x, str(c.device_resident[0]),
                      _curve_at(lines, c.backend, False, x)])
        t = c.measured_transfers or c.estimated_transfers
        if t:
            x = float(t[1])
            marks.append([c.backend, True, x, str(t[0]), _curve_at(lines, c.backend, True, x)])
    cross = pd.DataFrame(marks, columns=["backend", "transfers", "size", "text", "speedup"])
    measured_by = sorted(set(lines.loc[lines["transfers"] & lines["measured"], "backend"]))
    estimated = [b for b in estimated if b in set(lines["backend"])]
    how = []
    if measured_by:
        how.append(f"measured for {', '.join(measured_by)} (its +transfers implementation)")
    if estimated:
        how.append(f"estimated for {', '.join(estimated)} (device time plus the bytes at "
                   f"the probe's {link_gbps:,.0f} GB/s pageable host-to-device rate)")
    label = reference_label(ref, threads)

    def said(transfers: bool, name: Callable[[str], str] = str) -> str:
        rows = cross[np.isfinite(cross["size"]) & (cross["transfers"] == transfers)]
        return ", ".join(f"{name(r.backend)} ≈ {r.size:,.0f}"
                         for r in rows.itertuples()) or "none"

    caption = (f"{k} {var} {d}, the memory-bound case the most GPU frameworks measured at "
               f"the most sizes ({int(lines['size_key'].min()):,}–"
               f"{int(lines['size_key'].max()):,} elements): each GPU framework's fastest "
               "implementation per size over the case's CPU reference, "
               f"{reference_name(ref, threads)}, caller's clock (CPU: wall time). Solid: "
               "data on the device; dashed: with host transfers, " + "; ".join(how)
               + ". ✕: the crossover, from which the GPU wins for good: on the device "
               f"{said(False)}; with host transfers {said(True)}."
               + _against_class(case, cross, matrix))
    # the figure speaks the answer's words: frameworks by name, in its title, axis,
    # legend and the text a screen reader reads (reader_name), the rows keeping their ids
    named = reference_label(reader_name(ref), threads)
    alt = (f"Log-log plot of speedup over {named} against problem size for {k} {var} {d}, "
           f"{lines['backend'].nunique()} GPU frameworks, solid on the device and dashed "
           f"with host transfers; crossovers on the device {said(False, reader_name)}; with "
           f"host transfers {said(True, reader_name)}.")
    title = f"{k} {d}: speedup over {named}, caller's clock"
    ov = Overview(case, lines.reset_index(drop=True), cross.reset_index(drop=True), caption,
                  alt, reference=label)
    ov.figure = Figure(alt, overview_figure, (ov.lines, ov.crossovers, title, named),
                       "overview")
    return ov


def _against_class(case: tuple[str, str, str], cross: pd.DataFrame, matrix: Any) -> str:
    """How this case's crossover stands against the class figure the first
    recommendation gives, for the class's winner."""
    if matrix is None:
        return ""
    cls = next((c for c, ks in verdicts.classes().items() if case[0] in ks), None)
    per = matrix.verdicts.get(cls, {}) if cls else {}
    band = next((b for b in reversed(verdicts.BAND_NAMES) if b in per), None)
    w = per[band].winner if band else None
    c = matrix.crossovers.get((w.backend, cls)) if w is not None else None
    mine = cross[(cross["backend"] == w.backend) & ~cross["transfers"]] if w else cross[:0]
    if c is None or not c.n or mine.empty or not math.isfinite(c.median):
        return ""
    return (f" One case, not the class: the recommendation's figure for {w.backend}, "
            f"{c.text()}, is the median over the {class_title(cls)} class's cases.")


def _label(backend: str, transfers: bool, measured: bool) -> str:
    """The legend's entry: the framework by name ("PyTorch on GPU, on the device")."""
    name = reader_name(backend)
    if not transfers:
        return f"{name}, on the device"
    return f"{name}, + transfers, {'measured' if measured else 'estimated'}"


def overview_figure(lines: pd.DataFrame, crossovers: pd.DataFrame, title: str,
                    reference: str) -> str:
    """The overview as PNG: one colour per framework, solid on the device, dashed with
    host transfers, crossovers as markers on their curves (at 1× where a curve crosses),
    the y axis naming the CPU reference ("× NumPy (1 thread)"), frameworks by name."""
    fig = figures.new_figure(4.4)
    fig.subplots_adjust(left=0.08, right=0.70, top=0.9, bottom=0.13)
    ax = fig.subplots()
    cmap = figures.colors(len(set(lines["backend"])))
    for i, b, parts, c in overview_series(lines, crossovers):
        for transfers, s in parts:
            ax.plot(s["size_key"].to_numpy(float), s["speedup"].to_numpy(float),
                    color=cmap(i % cmap.N), marker=figures.MARKERS[i % len(figures.MARKERS)],
                    markersize=4, linewidth=1.4 if not transfers else 1.1,
                    linestyle="--" if transfers else "-",
                    label=_label(b, transfers, bool(s["measured"].all())))
        if len(c):
            ax.scatter(c["size"].to_numpy(float), c["speedup"].to_numpy(float), marker="X",
                       s=60,
                       color=cmap(i % cmap.N), edgecolors="black", linewidths=0.6, zorder=5)
    ax.axhline(1.0, color="black", linewidth=0.8)
    figures.log_scale(ax, "x", lines["size_key"].to_numpy(float))
    figures.log_scale(ax, "y", np.r_[lines["speedup"].to_numpy(float), 1.0])
    figures.size_limits(ax, lines["size_key"].to_numpy(float))
    figures.grid(ax)
    ax.set_xlabel("problem size (elements, log scale)")
    ax.set_ylabel(f"× {reference}, log scale")
    ax.set_title(title, fontsize=11)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return figures.png(fig)


# -- the compact matrix -----------------------------------------------------------------------



def _num(v: float) -> str:
    if not math.isfinite(v):
        return "—"
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def compact(m: Any) -> tuple[pd.DataFrame | None, list[str]]:
    """The matrix in eight columns, one number per cell with the unit in its header, and
    the notes that explain its dashes (one per distinct reason)."""
    if not m.backends:
        return None, []
    compact_classes = [c.key for c in WORKLOAD_CLASSES if c.compact]
    headers = ["framework", *(f"{class_title(c)}, × NumPy" for c in compact_classes),
               "crossover, elements (device / with transfers)", "call overhead, µs",
               "first call, extra ms (median)"]
    notes: dict[str, list[str]] = {}
    rows = []

    def dash(col: str, backend: str, text: str) -> str:
        why = text.removeprefix(f"{NOT_MEASURED}: ")
        notes.setdefault(f"{col}: {why}", []).append(backend)
        return "—"

    for b in m.backends:
        row = [b]
        for cls in compact_classes:
            cell = m.cells[(b, verdicts.speedup_aspect(cls))]
            if split_backend_id(b)[0] == BASELINE_FRAMEWORK:
                row.append("1 (baseline)")
            elif not cell.measured or not math.isfinite(cell.value):
                row.append(dash(class_title(cls), b, cell.text))
            else:
                extra = " not ranked" if "not ranked" in cell.text else ""
                spread = (f" ({_num(cell.lo)}–{_num(cell.hi)})"
                          if math.isfinite(cell.lo) and cell.lo != cell.hi else "")
                row.append(f"{_num(cell.value)}{spread}{extra}")
        c = m.crossovers.get((b, crossover_class()))
        if split_backend_id(b)[1] == "cpu":
            row.append("— (CPU)")
        elif c is None or not c.n:
            row.append(dash("crossover", b, m.cells[(b, "CPU/GPU crossover")].text))
        else:
            def one(med: float, n: int, bound: bool) -> str:
                if not n:
                    return "not measured"
                if not math.isfinite(med):
                    return "never"
                return f"{'≤ ' if bound else ''}{verdicts.sig2(med)}"
            row.append(f"{one(c.median, c.n, c.bound)} / {one(c.t_median, c.t_n, c.t_bound)}")
        oh = m.cells[(b, "call overhead")]
        row.append(f"{oh.value * 1e6:.3g}" if oh.measured and math.isfinite(oh.value)
                   else dash("call overhead", b, oh.text))
        fc = m.cells[(b, "first call, JIT")]
        row.append(f"{fc.value * 1e3:.3g}" if fc.measured and math.isfinite(fc.value)
                   else dash("first call", b, fc.text))
        rows.append(row)
    table = text_table(headers, rows, frozenset(headers[1:]))
    out = [f"— {why} ({', '.join(bs)})" for why, bs in notes.items()]
    return table, out


# -- banners ------------------------------------------------------------------------------------


def name_rows(rows: pd.DataFrame, limit: int = 4) -> str:
    """The measurements of ``rows`` by name: backend, kernel/variant, dtype,
    implementation and sizes ("torch-gpu linalg/eigh float32 eager at n = 256, 512");
    past ``limit`` groups, the rest counted."""
    parts = []
    keys = ["backend", "kernel", "variant", "dtype", "implementation"]
    for (b, k, var, d, impl), g in rows.groupby(keys, sort=True):
        sizes = ", ".join(f"{int(s):,}" for s in sorted(set(g["size_key"])))
        n = "n = " if verdicts.unit_of(str(k)) == "n" else ""
        parts.append(f"{b} {k}/{var} {d} {impl} at {n}{sizes}")
    more = f" and {len(parts) - limit} more" if len(parts) > limit else ""
    return "; ".join(parts[:limit]) + more
