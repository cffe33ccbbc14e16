"""Does the quick suite give the full suite's answers? Its class verdicts and crossovers
against the full suite's, on the committed H100 run, computed with the report's code.

The quick suite's rows are a subset of the full suite's, measured with the same harness
settings, so a quick run is simulated exactly by the full run's rows that the quick plan
(gpubench.runner.plan of config/config.yaml + config/suites/quick.yaml) would measure:
same rows, same samples. For both row sets the report's own analysis
(gpubench.report.Inputs.analyse) gives the class verdicts per band and the crossovers per
GPU framework and class; this prints them side by side and checks, declared here:

* verdicts: every class and band the full run answers, the quick run answers too; no
  contradiction between their leaders (they share a framework, and a framework one
  names alone is among the other's leaders); each quick leader's median speedup over
  NumPy lies within the full run's range (lowest to highest case) for that framework;
* crossovers: every (GPU framework, class) the full run has, the quick run has too, and
  its median (on the device and with host transfers) lies within the full run's range
  over the class's cases ("never" above every size);
* implementations: in every case the quick run measures, each framework's fastest
  implementation in the full run is one the quick run keeps.

    PYTHONPATH=src python tools/quick_agreement.py [RUN_DIR] [--cores 16]

RUN_DIR (default evidence/quick-suite-agreement/full-h100) holds timings.csv.gz,
samples.csv.xz, host.json.
Exit 1 when a check fails.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

from gpubench import suites
from gpubench.report import Inputs, headline, load_inputs, verdicts
from gpubench.report.stats import Samples
from gpubench.runner import plan

#: the compact matrix's aspects (gpubench.report.headline.compact): the first screen
FIRST_SCREEN = ("speedup: elementwise", "speedup: reductions", "speedup: GEMM",
                "speedup: small arrays", "CPU/GPU crossover", "call overhead",
                "first call, JIT")
KEY = ["backend", "kernel", "variant", "size", "dtype", "implementation", "threads", "mode"]


def quick_keys(config: dict, backends: list[str], cores: int) -> set[tuple]:
    """Every row the quick plan measures, as the timings' key."""
    return {(b, it.kernel, it.variant, int(it.size), it.dtype, it.implementation,
             int(it.threads), it.mode) for b in backends for it in plan(b, config, cores)}


def subset(full: Inputs, keep: set[tuple], config: dict) -> Inputs:
    """The quick run simulated: the full run's rows in ``keep``, their samples with them,
    analysed by the report's code."""
    df = full.df
    mask = [tuple(k) in keep for k in zip(
        df["backend"], df["kernel"], df["variant"], df["size"].astype(int), df["dtype"],
        df["implementation"], df["threads"].astype(int), df["mode"], strict=True)]
    old = df.index[mask]
    new_of = {o: i for i, o in enumerate(old)}
    rows = df.loc[old].reset_index(drop=True)
    if str(config.get("energy")) == "off":  # no reading taken: as a quick run records it
        energy = [c for c in rows.columns if c.startswith("energy_")]
        rows[energy] = math.nan
        rows["energy_reason"] = ""
    samples = Samples({(new_of[i], c): v for (i, c), v in full.samples.by_row.items()
                       if i in new_of}, full.samples.note)
    return Inputs(rows, full.env, "quick subset", samples, full.mpi).analyse()


def fmt(x: float) -> str:
    return "never" if not math.isfinite(x) else f"{x:,.3g}"


def within(x: float, lo: float, hi: float) -> bool:
    """lo <= x <= hi, "never" (NaN or inf) above every size."""
    inf = math.inf
    x, lo, hi = (v if math.isfinite(v) else inf for v in (x, lo, hi))
    return lo <= x <= hi


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", nargs="?", default="evidence/quick-suite-agreement/full-h100")
    p.add_argument("--cores", type=int, default=16, help="the run's host cores")
    args = p.parse_args(argv)
    run = Path(args.run)
    full = load_inputs(run / "timings.csv.gz", run / "host.json", run / "samples.csv.xz")
    backends = sorted(set(full.df["backend"]))
    config = suites.suite_config("quick")
    keep = quick_keys(config, backends, args.cores)
    quick = subset(full, keep, config)
    have = set(zip(*(full.df[c] if c not in ("size", "threads") else full.df[c].astype(int)
                     for c in KEY), strict=True))
    lacking = sorted(keep - have)
    for b, k, i in sorted({(x[0], x[1], x[5]) for x in lacking}):
        print(f"lacking: {b} {k} {i}", file=sys.stderr)
    print(f"# The quick suite against the full suite on {run}\n")
    print(f"Rows: full {len(full.df):,}, quick {len(quick.df):,} "
          f"({len(quick.df) / len(full.df):.0%}); quick rows the run lacks (measured by "
          f"a later configuration): {len(lacking)}")
    per = quick.df.groupby("backend").size()
    print("Quick rows per backend: " + ", ".join(
        f"{b} {per.get(b, 0)}/{int((full.df['backend'] == b).sum())}" for b in backends)
        + "\n")
    failures: list[str] = []
    fv, qv = full.choice[0].verdicts, quick.choice[0].verdicts
    print("## Verdicts per class and band (leaders, median speedup over NumPy; full "
          "range of each quick leader in brackets)\n")
    print("| class | band | full: leaders | quick: leaders | quick within full |")
    print("|---|---|---|---|---|")
    for cls, bands in fv.items():
        for band, v in bands.items():
            q = qv.get(cls, {}).get(band)
            full_txt = ", ".join(f"{s.backend} {fmt(s.median)}×" for s in v.leaders) or "—"
            if q is None or not q.leaders:
                failures.append(f"{cls}/{band}: the quick run has no verdict")
                print(f"| {cls} | {band} | {full_txt} | — | **no verdict** |")
                continue
            a = {s.backend for s in v.leaders}
            b = {s.backend for s in q.leaders}
            ok = bool(a & b) and not (len(a) == 1 and not a <= b) and not (
                len(b) == 1 and not b <= a)
            if not ok:
                failures.append(f"{cls}/{band}: leaders {sorted(a)} vs {sorted(b)}")
            ranges = {s.backend: s for s in v.ranked + v.partial}
            cells = []
            for s in q.leaders:
                f = ranges.get(s.backend)
                inside = f is not None and within(s.median, f.lo, f.hi)
                if not inside:
                    failures.append(f"{cls}/{band}: {s.backend} {fmt(s.median)}× outside "
                                    + (f"{fmt(f.lo)}–{fmt(f.hi)}×" if f else "(not ranked)"))
                cells.append(f"{s.backend} {fmt(s.median)}× "
                             + (f"[{fmt(f.lo)}–{fmt(f.hi)}]" if f else "[—]")
                             + ("" if inside else " **out**"))
            print(f"| {cls} | {band} | {full_txt} ({len(v.cases)} cases) | "
                  f"{'; '.join(cells)} ({len(q.cases)} cases) | "
                  f"{'yes' if ok and all('**' not in c for c in cells) else '**no**'} |")
    # the fastest implementation of every case the quick run measures is among its rows
    best = verdicts.case_table(full.df)
    kept = verdicts.case_table(quick.df)
    on = ["backend", "kernel", "variant", "dtype", "size_key"]
    both = best.merge(kept, on=on, suffixes=("_full", "_quick"))
    lost = both[both["implementation_full"] != both["implementation_quick"]]
    for r in lost.itertuples(index=False):
        failures.append(f"fastest implementation: {r.backend} {r.kernel}/{r.variant} "
                        f"{r.dtype} {r.size_key:.0f}: {r.implementation_full} not kept "
                        f"({r.implementation_quick} instead)")
    print(f"\nCases the quick run measures whose fastest implementation in the full run "
          f"it does not keep: {len(lost)} of {len(both)}")
    fc, qc = full.choice[0].crossovers, quick.choice[0].crossovers
    print("\n## Crossover per GPU framework and class (elements: median [full range]; "
          "with host transfers beside)\n")
    print("| backend | class | full | quick | quick within full | full, transfers "
          "| quick, transfers | within |")
    print("|---|---|---|---|---|---|---|---|")
    for key, c in sorted(fc.items()):
        q = qc.get(key)
        if q is None:
            failures.append(f"crossover {key}: not in the quick run")
            print(f"| {key[0]} | {key[1]} | {fmt(c.median)} | — | **missing** | | | |")
            continue
        dev = within(q.median, c.lo, c.hi)
        tr = not c.t_n or within(q.t_median, c.t_lo, c.t_hi)
        if not dev:
            failures.append(f"crossover {key}: {fmt(q.median)} outside "
                            f"{fmt(c.lo)}–{fmt(c.hi)}")
        if not tr:
            failures.append(f"crossover {key} with transfers: {fmt(q.t_median)} outside "
                            f"{fmt(c.t_lo)}–{fmt(c.t_hi)}")
        print(f"| {key[0]} | {key[1]} | {fmt(c.median)} [{fmt(c.lo)}–{fmt(c.hi)}] "
              f"({c.n}) | {fmt(q.median)} ({q.n}) | {'yes' if dev else '**no**'} | "
              f"{fmt(c.t_median)} [{fmt(c.t_lo)}–{fmt(c.t_hi)}] | {fmt(q.t_median)} | "
              f"{'yes' if tr else '**no**'} |")
    cells = quick.choice[0].cells
    gone = [(b, a) for (b, a), cell in full.choice[0].cells.items()
            if cell.measured and ((b, a) not in cells or not cells[(b, a)].measured)]
    first = [(b, a) for b, a in gone if a in FIRST_SCREEN]
    failures += [f"first screen: {b}'s {a} not measured" for b, a in first]
    rest = sorted({a for _, a in gone if a not in FIRST_SCREEN})
    print(f"\nFirst-screen cells (the compact matrix: {', '.join(FIRST_SCREEN)}) measured "
          f"in the full run and not in the quick run: {len(first)}; other matrix "
          f"aspects the quick run leaves to the full suite: {', '.join(rest) or 'none'}")
    print("\n## The first screen's matrix, full then quick\n")
    for name, inp in (("full", full), ("quick", quick)):
        table, _ = headline.compact(inp.choice[0])
        print(f"{name}:\n")
        print(table.to_markdown(index=False) if table is not None else "(none)")
        print()
    print(f"\n**{'Agree' if not failures else 'Disagree'}**: "
          f"{len(failures)} check(s) failed" + (":" if failures else "."))
    for f in failures:
        print(f"- {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    pd.set_option("display.width", 200)
    sys.exit(main())
