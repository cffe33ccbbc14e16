"""Worker process: starts one framework and measures a list of plan items.

Reads a JSON job on stdin, writes JSON lines on stdout (hello, start, result) and
human progress on stderr (the step's log). Run by :mod:`gpubench.runner` only.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from collections.abc import Mapping
from typing import Any

import numpy as np


def case_key(it: Any) -> tuple[Any, ...]:
    """A case of a plan item (a :class:`gpubench.runner.PlanItem` or its dict, as a
    worker gets it): kernel, variant, size, dtype and parameters; implementation,
    threads and mode aside."""
    get = it.get if isinstance(it, Mapping) else lambda k: getattr(it, k)
    return (get("kernel"), get("variant"), int(get("size")), get("dtype"),
            json.dumps(get("params") or {}, sort_keys=True))


def emit(msg: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(msg, default=float) + "\n")
    sys.stdout.flush()


class Floors:
    """Per implementation, kernel, variant, dtype and mode: the least pipelined median
    measured so far in this worker (the dispatch floor its larger sizes should not
    exceed by much; :func:`gpubench.harness.recheck_reason`)."""

    def __init__(self) -> None:
        self._least: dict[tuple[Any, ...], float] = {}

    @staticmethod
    def key(item: dict[str, Any]) -> tuple[Any, ...]:
        return (item["kernel"], item["variant"], item["dtype"], item["implementation"],
                item.get("mode", "hot"), json.dumps(item.get("params", {}), sort_keys=True))

    def get(self, item: dict[str, Any]) -> float | None:
        return self._least.get(self.key(item))

    def update(self, item: dict[str, Any], fields: dict[str, Any]) -> None:
        """Take an ok row's pipelined median into its implementation's floor."""
        value = fields.get("pipelined_median_s")
        if fields.get("status") != "ok" or not isinstance(value, float) or not value > 0:
            return
        key = self.key(item)
        self._least[key] = min(self._least.get(key, value), value)


#: an ok candidate's energy_reason until its case's implementations are compared
#: (:class:`BestEnergy`); replaced then, so it stays only on a worker that stopped first
PENDING = ("not measured: energy: best only, and the worker stopped before this "
           "case's implementations were compared")


def not_best(best: str) -> str:
    return (f"not measured: energy: best only (a faster implementation of this case was "
            f"read: {best})")


class BestEnergy:
    """``energy: best``: the candidates of the case being measured (every hot
    implementation at the case's largest size, :func:`gpubench.runner.mark_energy`),
    collected until the worker leaves the case. Then the one with the lowest device
    median is built again and its energy read (:func:`gpubench.harness.
    measure_energy_again`); the others' rows say which was read."""

    def __init__(self) -> None:
        self.case: tuple[Any, ...] | None = None
        #: (index in the job, implementation, the row's fields)
        self.rows: list[tuple[int, Any, dict[str, Any]]] = []

    def add(self, index: int, item: dict[str, Any], impl: Any,
            fields: dict[str, Any]) -> None:
        self.case = case_key(item)
        self.rows.append((index, impl, fields))
        if fields.get("status") == "ok":
            fields["energy_reason"] = PENDING

    def due(self, next_item: dict[str, Any] | None) -> bool:
        """Whether the case's candidates are all measured: the next item (None: none) is
        another case. A case's items are contiguous in a worker's list."""
        return bool(self.rows) and (next_item is None or case_key(next_item) != self.case)

    def take(self) -> tuple[tuple[int, Any, dict[str, Any]] | None,
                            list[tuple[int, dict[str, Any]]]]:
        """(the fastest ok candidate or None, [(index, energy fields)] for the others)."""
        ok = [r for r in self.rows if r[2].get("status") == "ok"
              and isinstance(r[2].get("median_s"), float) and r[2]["median_s"] > 0]
        best = min(ok, key=lambda r: r[2]["median_s"]) if ok else None
        others = [(i, {"energy_reason": not_best(best[1].name)})
                  for i, _, f in ok if best is not None and i != best[0]]
        self.case, self.rows = None, []
        return best, others


def pin_cpus(threads: int) -> None:
    """Confine the process to ``threads`` cores so every runtime's pool honours the count."""
    if hasattr(os, "sched_getaffinity"):
        allowed = sorted(os.sched_getaffinity(0))
        if threads < len(allowed):
            os.sched_setaffinity(0, allowed[:threads])


def main() -> int:
    from gpubench.procs import end_with_parent

    end_with_parent()  # a step killed hard (SIGKILL) cannot stop its workers: the kernel does
    job = json.loads(sys.stdin.read())
    from gpubench import refcache
    from gpubench.backends import load_backend, load_plugins
    from gpubench.harness import (
        Settings,
        measure,
        measure_energy_again,
        memory_short,
        pipeline_depth,
        skip_reason,
    )
    from gpubench.ledger import Ledger
    from gpubench.spec import Case, get_kernel, implementations
    from gpubench.spread import Spread

    load_plugins()
    backend_id, threads = job["backend"], int(job["threads"])
    backend = load_backend(backend_id)
    if backend.device == "cpu":
        pin_cpus(threads)
    settings = Settings.from_config(job.get("harness", {}))
    hello: dict[str, Any] = {"event": "hello", "timer": backend.facts.timer}
    try:
        t0 = time.perf_counter()
        hello["versions"] = backend.start(threads)
        hello["start_s"] = time.perf_counter() - t0
        hello["device_name"] = backend.device_name()
        hello["available"] = True
    except Exception as exc:  # noqa: BLE001 - Unavailable or any start failure is a reason
        hello.update(available=False, reason=f"{type(exc).__name__}: {exc}"[:500],
                     versions={})
        emit(hello)
        return 0
    emit(hello)
    tag = f"[{backend_id} t={threads}]"
    #: the worker's seconds by stage, from here on (its log's last line)
    ledger = Ledger()
    ledger.enter("between rows")
    print(f"{tag} started in {hello['start_s']:.2f} s on {hello['device_name']}",
          file=sys.stderr, flush=True)
    cached_key: tuple | None = None
    floors = Floors()
    best_energy = BestEnergy()
    spread = Spread(backend, settings)
    #: the kept rows' fields as emitted (the spread rounds' statistics replace them)
    spread_fields: dict[int, dict[str, Any]] = {}
    host_inputs: dict[str, np.ndarray] = {}
    ref: Any = None

    def next_item(index: int) -> dict[str, Any] | None:
        return job["items"][index + 1] if index + 1 < len(job["items"]) else None

    def read_best_energy(spec: Any, case: Any, key: tuple,
                         held: tuple[dict[str, np.ndarray], Any, tuple | None]
                         ) -> tuple[dict[str, np.ndarray], Any, tuple | None]:
        """The case's candidates are measured: say which were not the fastest, read
        the fastest one's energy. Returns the case's inputs, reference and key as
        held now."""
        best, others = best_energy.take()
        for j, fields in others:
            emit({"event": "energy", "index": j, "fields": fields})
        if best is None:
            return held
        j, impl, fields = best
        emit({"event": "energy_start", "index": j})
        ledger.enter("energy of the fastest")
        host_inputs, ref, cached_key = held
        t0 = time.perf_counter()
        try:
            if key != cached_key:  # the case's last item was skipped: inputs are gone
                host_inputs, ref, cached_key = {}, None, None
                seed = case.seed(settings.seed)
                host_inputs = spec.make_inputs(case, np.random.default_rng(seed))
                ref = refcache.reference(spec, case, host_inputs, seed,
                                         job.get("ref_cache"))
                cached_key = key
        except MemoryError as exc:
            energy = {"energy_reason": f"not measured: out of memory making inputs "
                                       f"again for the energy reading: {exc}"}
        else:
            k = int(fields.get("pipelined_k")
                    or pipeline_depth(fields["median_s"], settings))
            energy = measure_energy_again(spec, impl, case, backend, settings,
                                          host_inputs, ref, k)
        got = (f"{energy['energy_j'] * 1e3:.4g} mJ/call at "
               f"{energy['energy_power_w']:.0f} W" if energy.get("energy_j")
               else energy.get("energy_reason", ""))
        print(f"{tag} {case.kernel}/{case.variant} {case.dtype} size={case.size} energy "
              f"of the fastest, {impl.name}: {got} ({time.perf_counter() - t0:.2f} s)",
              file=sys.stderr, flush=True)
        emit({"event": "energy", "index": j, "fields": energy})
        ledger.enter("between rows")
        return host_inputs, ref, cached_key

    def finish(row: Any) -> None:
        """A kept row's spread rounds are done: its statistics over all its samples."""
        if row.error:
            print(f"{tag} spread rounds stopped for item {row.index}: {row.error}; "
                  "the row keeps its samples from before", file=sys.stderr, flush=True)
        fields, clocks = spread_result(row, spread_fields.pop(row.index))
        emit({"event": "spread", "index": row.index, "fields": fields, "samples": clocks})

    ticked = 0.0
    for index, item in enumerate(job["items"]):
        emit({"event": "start", "index": index})
        spec = get_kernel(item["kernel"])
        case = Case(item["kernel"], item["variant"], int(item["size"]), item["dtype"],
                    item.get("params", {}))
        impl = next(i for i in implementations(case.kernel, backend.framework, backend.device)
                    if i.name == item["implementation"])
        key = (case.kernel, case.variant, case.size, case.dtype)
        if spread.held and memory_short(spec, case, backend, settings):
            # the spread rows' inputs must not cost an item its measurement
            n = spread.release(finish)
            gc.collect()
            print(f"{tag} {case.kernel}/{case.variant} {case.dtype} size={case.size} "
                  f"needs the memory the spread rows held: {n} rows let go with the "
                  "rounds they had", file=sys.stderr, flush=True)
        if key != cached_key and skip_reason(spec, impl, case, backend, settings):
            # Too big for memory (or the implementation's cap): measure() records the
            # skip before touching inputs, which must not be made for a case that
            # cannot fit; the previous case's are let go.
            host_inputs, ref, cached_key = {}, None, None
        elif key != cached_key:
            # Inputs and reference are shared by all implementations of one case.
            host_inputs, ref, cached_key = {}, None, None
            rng = np.random.default_rng(case.seed(settings.seed))
            try:
                ledger.enter("inputs")
                host_inputs = spec.make_inputs(case, rng)
                ledger.enter("reference")
                ref = refcache.reference(spec, case, host_inputs, case.seed(settings.seed),
                                         job.get("ref_cache"))
                cached_key = key
                ledger.enter("between rows")
            except MemoryError as exc:
                emit({"event": "result", "index": index, "samples": [],
                      "fields": {"status": "skipped",
                                 "reason": f"out of memory making inputs: {exc}"}})
                if best_energy.due(next_item(index)):
                    host_inputs, ref, cached_key = read_best_energy(
                        spec, case, key, (host_inputs, ref, cached_key))
                continue
        t0 = time.perf_counter()
        mode = item.get("mode", "hot")
        m = measure(spec, impl, case, backend, settings, host_inputs, ref, mode=mode,
                    energy=bool(item.get("energy")), caller_floor=floors.get(item),
                    ledger=ledger)
        ledger.enter("between rows")
        if m.caller:
            floors.update(item, m.fields)
        med = m.fields.get("median_s")
        extra = f" median {med * 1e3:.4g} ms" if med else ""
        if m.fields.get("energy_j"):
            extra += (f", {m.fields['energy_j'] * 1e3:.4g} mJ/call at "
                      f"{m.fields['energy_power_w']:.0f} W")
        if m.caller:
            extra += (f", caller sync {m.fields['sync_median_s'] * 1e3:.4g} ms, pipelined "
                      f"{m.fields['pipelined_median_s'] * 1e3:.4g} ms "
                      f"(k={m.fields['pipelined_k']}, {m.fields['caller_rounds']} rounds)")
        print(f"{tag} {case.kernel}/{case.variant} {case.dtype} size={case.size} {mode} "
              f"{impl.name}: {m.fields['status']}, {len(m.samples)} samples{extra} "
              f"({time.perf_counter() - t0:.2f} s) {m.fields.get('reason', '')}",
              file=sys.stderr, flush=True)
        for note in m.notes:
            print(f"{tag}   {note}", file=sys.stderr, flush=True)
        if item.get("energy_best"):
            best_energy.add(index, item, impl, m.fields)
        if m.fields.get("status") == "ok":
            m.fields["caller_spread_rounds"] = 0  # until the spread rounds add some
        emit({"event": "result", "index": index, "fields": m.fields, "samples": m.samples,
              "caller": m.caller})
        first = m.caller.get("pipelined") if m.caller else m.samples
        if m.call is not None and spread.keep(index, m.call, m.fields, first or [], mode,
                                              int(m.fields.get("bytes") or 0),
                                              m.caller.get("sync"), m.context):
            spread_fields[index] = dict(m.fields)
        m.call = m.context = None
        if best_energy.due(next_item(index)):
            host_inputs, ref, cached_key = read_best_energy(
                spec, case, key, (host_inputs, ref, cached_key))
        if spread.due():
            # the runner knows no item is in flight: a worker lost here loses none
            emit({"event": "spread_start"})
            ledger.enter("spread rounds")
            ticked += spread.tick(finish)
            ledger.enter("between rows")
            emit({"event": "spread_end"})
    if ticked:
        print(f"{tag} spread rounds between the items: {ticked:.1f} s", file=sys.stderr,
              flush=True)
    if spread.kept:
        n = len(spread.kept)
        print(f"{tag} spread rounds: {n} rows, up to {settings.caller_spread_rounds} rounds "
              f"over up to {settings.caller_spread_s:g} s", file=sys.stderr, flush=True)
        emit({"event": "spread_start"})
        ledger.enter("spread rounds")
        took = spread.run(finish)
        ledger.enter(None)
        emit({"event": "spread_end"})
        print(f"{tag} spread rounds done in {took:.1f} s", file=sys.stderr, flush=True)
    ledger.enter(None)
    print(f"{tag} time by stage, {ledger.total():.1f} s after the start: {ledger.line()}",
          file=sys.stderr, flush=True)
    return 0


def spread_result(row: Any, fields: dict[str, Any]
                  ) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """A spread row's new statistics over all its samples (those before and the spread
    ones; ``caller_spread_s``: the seconds from its first round to its last) and its new
    samples by clock. GPU rows: the pipelined and the sync clocks (the
    same samples where k = 1). CPU rows: the samples on the row's own
    clock, which are its caller clocks too, and the throughput they give."""
    from gpubench.harness import caller_stats, summarize

    first, last = row.span
    took = last - first if row.rounds and first is not None else 0.0
    out: dict[str, Any] = {"caller_spread_rounds": row.rounds, "caller_spread_s": took}
    if not row.new:
        return out, {}
    every = row.first + row.new
    if row.gpu:
        clocks = {"pipelined": list(row.new)}
        out.update(caller_stats("pipelined", every))
        if row.k == 1:
            clocks["sync"] = list(row.new)
            out.update(caller_stats("sync", every))
        elif row.new_sync:
            clocks["sync"] = list(row.new_sync)
            out.update(caller_stats("sync", row.first_sync + row.new_sync))
        return out, clocks
    stats = summarize(every)
    med = stats["median_s"]
    out.update(stats, **caller_stats("sync", every), **caller_stats("pipelined", every))
    for col, unit in (("gbps", "bytes"), ("gflops", "flops")):
        amount = fields.get(unit)
        out[col] = amount / med / 1e9 if med > 0 and amount else float("nan")
    return out, {"device": list(row.new)}


if __name__ == "__main__":
    sys.exit(main())
