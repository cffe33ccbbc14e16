"""Noise-aware comparisons from the recorded samples.

Medians alone cannot say whether two numbers differ: a 3 % gap between two noisy
measurements is no evidence. Every "which is faster" in the report and in the
run-vs-run comparison is therefore decided by two tests that must both pass:

* a two-sided Mann–Whitney U test on the samples (rank-based: no normality assumed,
  robust to the long right tail timings have), ``scipy.stats.mannwhitneyu`` by the normal
  approximation with tie and continuity correction, at significance ``alpha``; and
* a minimum effect: the ratio of medians must differ from 1 by more than
  ``min_effect`` (default 5 %), so that a statistically clear but practically
  irrelevant difference still reads as SAME (nvbench's compare does the same with its
  noise threshold).

Where no samples were recorded, the quartiles in the timings row stand in: two
measurements differ only when their interquartile ranges do not overlap *and* the
effect is above the threshold.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from gpubench import results

ALPHA = 0.01
MIN_EFFECT = 0.05

SAME, FASTER, SLOWER = "SAME", "FASTER", "SLOWER"


def mann_whitney(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(U of ``a``, two-sided p): SciPy's Mann–Whitney U test, by the normal approximation
    with tie and continuity correction.

    The asymptotic method is asked for explicitly: SciPy's default switches to the exact
    distribution for small samples without ties, and the verdicts' significance level was
    chosen for this one. Empty input gives NaN (SciPy raises), and all-tied samples
    (zero variance) give p = 1: no evidence either way."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.size == 0 or b.size == 0:
        return math.nan, math.nan
    res = scipy_stats.mannwhitneyu(a, b, use_continuity=True, alternative="two-sided",
                                   method="asymptotic")
    p = float(res.pvalue)
    return float(res.statistic), (1.0 if math.isnan(p) else min(1.0, p))


@dataclass(frozen=True)
class Verdict:
    """The outcome of comparing ``new`` with ``base`` (ratio = new / base median)."""

    label: str
    ratio: float
    p_value: float
    method: str  # "mann-whitney" or "iqr"

    @property
    def differs(self) -> bool:
        return self.label != SAME


def compare(base_median: float, new_median: float, base_samples: np.ndarray | None = None,
            new_samples: np.ndarray | None = None,
            base_iqr: tuple[float, float] | None = None,
            new_iqr: tuple[float, float] | None = None, alpha: float = ALPHA,
            min_effect: float = MIN_EFFECT) -> Verdict:
    """SAME, FASTER (new takes less time) or SLOWER, noise-aware (see the module doc)."""
    ratio = new_median / base_median if base_median > 0 else math.nan
    big = math.isfinite(ratio) and abs(math.log(ratio)) > math.log1p(min_effect)
    if (base_samples is not None and new_samples is not None
            and len(base_samples) >= 3 and len(new_samples) >= 3):
        _, p = mann_whitney(new_samples, base_samples)
        clear = p < alpha
        method = "mann-whitney"
    else:
        p = math.nan
        method = "iqr"
        clear = False
        if base_iqr and new_iqr and all(map(_finite, (*base_iqr, *new_iqr))):
            clear = new_iqr[1] < base_iqr[0] or new_iqr[0] > base_iqr[1]
    if not (clear and big):
        return Verdict(SAME, ratio, p, method)
    return Verdict(FASTER if ratio < 1 else SLOWER, ratio, p, method)


def _finite(x: object) -> bool:
    try:
        return math.isfinite(float(x))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


# -- samples ------------------------------------------------------------------------------


@dataclass
class Samples:
    """Each timings row's samples (by the row's index in the prepared frame and the
    clock: ``device``, ``sync``, ``pipelined``), and a note."""

    by_row: dict[tuple[int, str], np.ndarray]
    note: str

    def get(self, index: int, clock: str = "device") -> np.ndarray | None:
        return self.by_row.get((index, clock))


def load_samples(path: str | Path | None, rows: pd.DataFrame) -> Samples:
    """Read a samples CSV (plain or .gz) and attach each run of samples to its row.

    The samples file's key has no ``mode`` column, so a GPU case's hot and cold runs share
    a key. Each run starts at ``sample == 0`` and is written contiguously; a run belongs
    to the row of the same key whose sample count and median it reproduces exactly.
    A ``mode`` column, where a file has one, is used as part of the key. A missing or
    unreadable file is a note: comparisons then fall back to quartiles. A readable file
    with samples that are wrong (a time not finite and positive, a clock or index off) or
    doubled (a key, clock and index given more often than the rows have that key: a file
    concatenated twice, a step collected twice) raises :class:`results.SchemaError`
    naming the file, line, key and value: attached, such samples would change verdicts
    (a doubled run attaches as a second run), and set aside they would hide the fault.
    """
    if not path:
        return Samples({}, "not given")
    path = Path(path)
    if not path.exists():
        return Samples({}, f"{path.name} (missing)")
    try:
        frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    except (OSError, ValueError, UnicodeDecodeError, EOFError) as exc:
        return Samples({}, f"{path.name} (unreadable: {str(exc)[:200]})")
    if "clock" not in frame.columns:  # schema 1: device samples only
        frame["clock"] = "device"
    missing = [c for c in results.SAMPLE_COLUMNS if c not in frame.columns]
    if missing:
        return Samples({}, f"{path.name} (missing columns {missing}; not used)")
    results.check_samples(frame, str(path), rows, path)
    try:
        return _attach(frame, rows, path.name)
    except (ValueError, TypeError, KeyError) as exc:
        return Samples({}, f"{path.name} (not usable: {str(exc)[:200]})")


#: per clock, the row columns a run of samples must reproduce: (count, median)
_CLOCK_COLUMNS = {"device": ("samples", "median_s"),
                  "sync": ("sync_samples", "sync_median_s"),
                  "pipelined": ("pipelined_samples", "pipelined_median_s")}


def _attach(frame: pd.DataFrame, rows: pd.DataFrame, name: str) -> Samples:
    keys = list(results.KEY_NAMES) + (["mode"] if "mode" in frame.columns else [])
    total = len(frame)
    if total == 0:
        return Samples({}, f"{name} (0 samples)")
    sample = pd.to_numeric(frame["sample"], errors="coerce").to_numpy()
    times = pd.to_numeric(frame["time_s"], errors="coerce").to_numpy(float)
    key_txt = _key_text(frame, keys)
    clocks = frame["clock"].astype(str).to_numpy(dtype=object)
    # a new run where the sample index restarts, or the key or the clock changes
    starts = np.r_[True, (sample[1:] <= sample[:-1]) | (key_txt[1:] != key_txt[:-1])
                   | (clocks[1:] != clocks[:-1])]
    bounds = np.r_[np.flatnonzero(starts), total]
    runs = pd.DataFrame({
        "k": key_txt[bounds[:-1]], "clock": clocks[bounds[:-1]], "n": np.diff(bounds),
        "med": [float(np.median(times[a:b])) for a, b in itertools.pairwise(bounds)],
        "seg": np.arange(len(bounds) - 1)})
    ok = rows[rows["status"].isin(["ok", "implausible"])]
    ok_keys = _key_text(ok, keys)
    by_row: dict[tuple[int, str], np.ndarray] = {}
    for clock, (n_col, med_col) in _CLOCK_COLUMNS.items():
        if n_col not in ok.columns:
            continue
        cand = pd.DataFrame({"k": ok_keys, "samples": ok[n_col].to_numpy(float),
                             "median_s": ok[med_col].to_numpy(float), "row": ok.index})
        merged = runs[runs["clock"] == clock].merge(cand, on="k", how="inner")
        match = merged[(merged["n"] == merged["samples"])
                       & np.isclose(merged["med"], merged["median_s"], rtol=1e-9, atol=0)]
        match = match.drop_duplicates("seg").drop_duplicates("row")
        by_row.update({(int(r), clock): times[bounds[s]:bounds[s + 1]] for s, r in
                       zip(match["seg"].to_numpy(), match["row"].to_numpy(), strict=True)})
    # a CPU row's caller clock is its wall time: the device samples serve all three
    host = ok.index[ok["device"] != "gpu"]
    for r in host:
        if (int(r), "device") in by_row:
            for clock in ("sync", "pipelined"):
                by_row.setdefault((int(r), clock), by_row[(int(r), "device")])
    matched = sum(1 for _, c in by_row if c == "device")
    note = (f"{name} ({total:,} samples; {matched:,} of {len(ok):,} measured rows matched "
            "to their samples)")
    return Samples(by_row, note)


def _key_text(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """One string per row for the key columns; numbers as integers where they are.

    Only distinct keys are formatted (the rows' codes combine each column's factorized
    codes): the samples file repeats each key hundreds of times, and formatting every
    row took a second of the report's build."""
    parts = []
    combined = np.zeros(len(frame), dtype=np.int64)
    for col in keys:
        codes, uniques = pd.factorize(frame[col], use_na_sentinel=False)
        values = pd.Series(uniques, dtype=object)
        if col in ("size", "threads"):
            num = pd.to_numeric(values, errors="coerce")
            values = num.map(lambda v: "" if pd.isna(v) else str(int(v)))
        parts.append((values.astype(str).to_numpy(dtype=object), codes))
        # renumbered after each column, so the combined code never overflows
        combined = pd.factorize(combined * max(len(uniques), 1) + codes)[0].astype(np.int64)
    if not parts:
        return np.empty(len(frame), dtype=object)
    n = int(combined.max()) + 1 if len(combined) else 0
    first = np.full(n, len(combined), dtype=np.int64)
    np.minimum.at(first, combined, np.arange(len(combined)))
    out = parts[0][0][parts[0][1][first]]
    for text, codes in parts[1:]:
        out = out + "\x1f" + text[codes[first]]
    return np.asarray(out, dtype=object)[combined]
