"""Noise-aware comparisons from the recorded samples.

Medians alone cannot say whether two numbers differ: a 3 % gap between two noisy
measurements is no evidence, and "no evidence of a difference" is no evidence of
equality either. Every "which is faster" in the report and in the run-vs-run comparison
is therefore read off one confidence interval: the Hodges–Lehmann estimate of the ratio
new / base (the median of all pairwise ratios of samples) with its distribution-free
interval, obtained by inverting the two-sided Mann–Whitney U test at level ``alpha``
(Lehmann, *Nonparametrics*, 1975; exact null distribution for small samples, the
normal approximation beyond). Against the smallest effect that matters, ``min_effect``
(5 %; nvbench's compare uses a noise threshold the same way):

* ``FASTER`` / ``SLOWER``: the interval excludes 1 (the test rejects equality) *and*
  the estimate differs from 1 by more than ``min_effect``;
* ``SAME``: the whole interval lies within ±``min_effect``: equivalence shown, the
  bound stated ("within ±5 %");
* ``UNRESOLVED``: anything else. The samples cannot tell whether the difference reaches
  ``min_effect``; with 5 against 6 samples no difference short of complete separation
  can be called, so too few samples read *unresolved*, never "within noise".

The p-value of SciPy's Mann–Whitney U test (normal approximation with tie and
continuity correction; computed here with SciPy's formula and ``scipy.special``, as
importing ``scipy.stats`` took a third of the report's start) is reported beside the
label. Where no samples were recorded, the quartiles in the timings row stand in: two
measurements differ when their interquartile ranges do not overlap and the effect is
above the threshold, and are the same when both ranges lie within ±``min_effect`` of
each other.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special

from gpubench import results
from gpubench.thresholds import ALPHA, MIN_EFFECT

#: relative slack of the interval's ends against 1 (float rounding of tied samples)
ROUNDING = 1e-9

SAME, FASTER, SLOWER, UNRESOLVED = "SAME", "FASTER", "SLOWER", "UNRESOLVED"
#: every label :func:`compare` gives, in the order tables list them
LABELS = (FASTER, SLOWER, SAME, UNRESOLVED)


def mann_whitney(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(U of ``a``, two-sided p): SciPy's Mann–Whitney U test, by the normal approximation
    with tie and continuity correction.

    The asymptotic method is asked for explicitly: SciPy's default switches to the exact
    distribution for small samples without ties, and the verdicts' significance level was
    chosen for this one. Empty input gives NaN (SciPy raises), and all-tied samples
    (zero variance) give p = 1: no evidence either way."""
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    if a.size == 0 or b.size == 0:
        return math.nan, math.nan
    # scipy.stats.mannwhitneyu(a, b, use_continuity=True, alternative="two-sided",
    # method="asymptotic") step by step (SciPy 1.17's _mannwhitneyu): average ranks,
    # tie counts, U, the tie-corrected z and 2 * ndtr(-z), clipped to [0, 1]
    n1, n2 = a.size, b.size
    xy = np.concatenate([a, b])
    order = np.argsort(xy, kind="stable")
    y = xy[order]
    first = np.concatenate([[True], y[:-1] != y[1:]])
    starts = np.flatnonzero(first)
    counts = np.diff(starts, append=y.size)
    ranks = np.empty(y.size, dtype=np.float64)
    ranks[order] = np.repeat((starts + 1) + (counts.astype(np.float64) - 1) / 2, counts)
    u1 = ranks[:n1].sum() - n1 * (n1 + 1) / 2
    u = np.maximum(u1, n1 * n2 - u1)
    n = n1 + n2
    t = counts.astype(np.float64)
    tie_term = np.sum(t**3 - t)
    sd = np.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (u - n1 * n2 / 2 - 0.5) / sd
    p = float(np.clip(special.ndtr(-z) * 2, 0.0, 1.0))
    return float(u1), (1.0 if math.isnan(p) else min(1.0, p))


@dataclass(frozen=True)
class Verdict:
    """The outcome of comparing ``new`` with ``base``: ``ratio`` = new / base median;
    ``lo``/``hi`` bound the ratio at the test's confidence (NaN where no interval could
    be formed: the quartile method, or too few samples)."""

    label: str
    ratio: float
    p_value: float
    method: str  # "hodges-lehmann" or "iqr"
    lo: float = math.nan
    hi: float = math.nan

    @property
    def differs(self) -> bool:
        """A difference beyond ``min_effect`` the data support (FASTER or SLOWER)."""
        return self.label in (FASTER, SLOWER)

    @property
    def equivalent(self) -> bool:
        """Equivalence within ±``min_effect`` shown by the data."""
        return self.label == SAME


@functools.lru_cache(maxsize=256)
def _u_null_cdf(m: int, n: int) -> np.ndarray:
    """P(U <= u), u = 0..m*n, under the null hypothesis without ties: arrangements counted
    by the recursion N(u; i, j) = N(u - j; i - 1, j) + N(u; i, j - 1) (the largest value
    comes from the first sample, beating all j of the second, or from the second)."""
    row = [np.ones(1) for _ in range(n + 1)]  # i = 0: one arrangement, U = 0
    for i in range(1, m + 1):
        new = [np.ones(1)]  # j = 0
        for j in range(1, n + 1):
            out = np.zeros(i * j + 1)
            above = row[j]  # N(.; i - 1, j), shifted by j
            out[j:j + above.size] += above
            left = new[j - 1]  # N(.; i, j - 1)
            out[:left.size] += left
            new.append(out)
        row = new
    counts = row[n]
    return np.cumsum(counts) / counts.sum()


#: above this many pairs the interval uses the normal approximation (the exact count is
#: cubic in the sample sizes)
EXACT_MAX_PAIRS = 2500


def excluded_per_side(m: int, n: int, alpha: float) -> int:
    """How many of the m*n ordered pairwise differences lie outside the 1 - alpha
    interval on each side: the largest c with P(U < c) <= alpha / 2 (Lehmann). Zero means
    no interval at that level exists for these sample sizes."""
    pairs = m * n
    if pairs <= EXACT_MAX_PAIRS:
        cdf = _u_null_cdf(m, n)  # cdf[u] = P(U <= u)
        # P(U < c) = cdf[c - 1]; the largest c with cdf[c-1] <= alpha/2
        below = np.flatnonzero(cdf <= alpha / 2 + 1e-12)
        return int(below[-1] + 1) if below.size else 0
    z = float(special.ndtri(1 - alpha / 2))  # scipy.stats.norm.ppf
    sd = math.sqrt(m * n * (m + n + 1) / 12)
    return max(0, math.floor(pairs / 2 - z * sd))


#: candidates left from which :meth:`PairwiseDifferences.kth` computes them all, and the
#: sample it draws its pivots from in each round before that
GATHER = 1 << 15
SAMPLE = 1024


class PairwiseDifferences:
    """The m*n differences ``x[i] - y[j]`` (float64, as ``np.subtract.outer`` computes
    them) without holding them: their k-th smallest by selection in the implicit sorted
    matrix. Two rows of 2,000 samples make 4 million differences; partitioning them for
    each comparison took two thirds of a CPU run's report. With ``y``
    sorted descending each row ``x[i] - y`` is non-decreasing (rounding is monotone), so
    a row's count of differences at most t is a binary search, and a randomised
    selection narrows every row's window of candidates until the k-th is found: the
    very float the partition of all m*n would give."""

    def __init__(self, x: np.ndarray, y: np.ndarray, seed: int = 0) -> None:
        self.x = np.sort(np.asarray(x, dtype=float))
        self.y = np.sort(np.asarray(y, dtype=float))[::-1].copy()
        self.size = self.x.size * self.y.size
        self.rng = np.random.default_rng(seed)

    def _count(self, t: float, lo: np.ndarray, hi: np.ndarray, strict: bool) -> np.ndarray:
        """Per row, how many of its differences are < t (``strict``) or <= t, searched
        within [lo, hi] (every row's count is known to lie there).

        One ``searchsorted`` of ``x - t`` among the y guesses every row's count; a guess
        is kept where the computed differences on either side of it confirm it (the
        comparison is monotone along a row), and only the other rows are searched
        difference by difference: the same counts, in one pass for almost every row."""
        n = self.y.size
        guess = n - np.searchsorted(self.y[::-1], self.x - t,
                                    side="right" if strict else "left")
        guess = np.clip(guess, lo, hi)
        left = self.x - self.y[np.maximum(guess - 1, 0)]
        right = self.x - self.y[np.minimum(guess, n - 1)]
        left_in = left < t if strict else left <= t
        right_in = right < t if strict else right <= t
        sure = ((guess == lo) | left_in) & ((guess == hi) | ~right_in)
        if sure.all():
            return guess
        lo = np.where(sure, guess, lo)
        hi = np.where(sure, guess, hi)
        rows = np.arange(self.x.size)
        while True:
            open_ = lo < hi
            if not open_.any():
                return lo
            r = rows[open_]
            mid = (lo[r] + hi[r]) // 2
            val = self.x[r] - self.y[mid]
            below = val < t if strict else val <= t
            lo[r] = np.where(below, mid + 1, lo[r])
            hi[r] = np.where(below, hi[r], mid)

    def kth(self, k: int) -> float:
        """The k-th smallest difference (0-based).

        Each round draws a sample of the candidates left and takes two of its values as
        pivots, just below and just above where the k-th should lie (Floyd and Rivest's
        selection): counting each row's differences under both narrows the candidates
        around the k-th to a few per cent in a round, where one random pivot halves
        them. Once few enough are left they are computed and partitioned."""
        if not 0 <= k < self.size:
            raise IndexError(f"difference {k} of {self.size}")
        n = self.y.size
        a = np.zeros(self.x.size, dtype=np.int64)  # rows' candidates: columns [a, b)
        b = np.full(self.x.size, n, dtype=np.int64)
        for _ in range(64 + 8 * max(1, self.size).bit_length()):
            width = b - a
            total = int(width.sum())
            rank = k - int(a.sum())  # the k-th's rank among the candidates
            if total <= GATHER:
                rows = np.repeat(np.arange(self.x.size), width)
                cols = a[rows] + (np.arange(total) - np.repeat(np.cumsum(width) - width,
                                                               width))
                return float(np.partition(self.x[rows] - self.y[cols], rank)[rank])
            ends = np.cumsum(width)
            pick = self.rng.integers(total, size=SAMPLE)
            i = np.searchsorted(ends, pick, side="right")
            j = a[i] + pick - (ends[i] - width[i])
            values = np.sort(self.x[i] - self.y[j])
            where = rank / total * SAMPLE
            spread = 3.0 * math.sqrt(SAMPLE)
            pivots = (float(values[max(0, int(where - spread))]),
                      float(values[min(SAMPLE - 1, int(where + spread))]))
            # a row's columns before a hold differences at most an earlier pivot below t,
            # from b on at least one above it: its counts at t lie in [a, b]
            lo_lt = self._count(pivots[0], a, b, strict=True)
            lo_le = self._count(pivots[0], lo_lt, b, strict=False)
            if int(lo_lt.sum()) <= k < int(lo_le.sum()):
                return pivots[0]
            if k < int(lo_lt.sum()):
                b = lo_lt
                continue
            hi_lt = self._count(pivots[1], lo_le, b, strict=True)
            hi_le = self._count(pivots[1], hi_lt, b, strict=False)
            if int(hi_lt.sum()) <= k < int(hi_le.sum()):
                return pivots[1]
            # the counts lie in [a, b]: they are the narrowed window's new ends
            if k < int(hi_lt.sum()):
                a, b = lo_le, hi_lt
            else:
                a = hi_le
        raise RuntimeError(f"difference {k} of {self.size} not found")  # a bug, not data

    def median(self) -> float:
        """As ``np.median`` of all of them: the middle one, or the mean of the two."""
        mid = self.size // 2
        if self.size % 2:
            return self.kth(mid)
        return float(np.mean(np.array([self.kth(mid - 1), self.kth(mid)])))


def ratio_interval(new: np.ndarray, base: np.ndarray, alpha: float = ALPHA
                   ) -> tuple[float, float, float]:
    """(estimate, lo, hi) of new / base: the Hodges–Lehmann shift of the log times and
    its 1 - ``alpha`` interval from the Mann–Whitney test; (NaN, 0, inf) where the
    sample sizes allow no interval at that level. Log times: timings scale, so a ratio
    is the effect that carries from one size to another."""
    x = np.log(np.asarray(new, dtype=float))
    y = np.log(np.asarray(base, dtype=float))
    d = PairwiseDifferences(x, y)
    est = float(np.exp(d.median()))
    c = excluded_per_side(x.size, y.size, alpha)
    if c == 0:
        return est, 0.0, math.inf
    # the c-th smallest and largest difference
    return est, float(np.exp(d.kth(c - 1))), float(np.exp(d.kth(d.size - c)))


def compare(base_median: float, new_median: float, base_samples: np.ndarray | None = None,
            new_samples: np.ndarray | None = None,
            base_iqr: tuple[float, float] | None = None,
            new_iqr: tuple[float, float] | None = None, alpha: float = ALPHA,
            min_effect: float = MIN_EFFECT) -> Verdict:
    """FASTER (new takes less time), SLOWER, SAME (within ±``min_effect``) or
    UNRESOLVED, noise-aware (see the module doc). ``ratio`` is new / base of the
    medians; non-positive or non-finite medians give UNRESOLVED."""
    ratio = float(new_median / base_median) if base_median > 0 else math.nan
    if not (math.isfinite(ratio) and ratio > 0):
        return Verdict(UNRESOLVED, ratio, math.nan, "none")
    top = 1.0 + min_effect
    big = abs(math.log(ratio)) > math.log(top)
    if _usable(base_samples) and _usable(new_samples):
        _, p = mann_whitney(new_samples, base_samples)
        _, lo, hi = ratio_interval(new_samples, base_samples, alpha)
        method = "hodges-lehmann"
        # an end of the interval within rounding of 1 does not exclude it: tied samples
        # put the end at exactly 1, and rescaling them moves it by an ulp either way
        clear = lo > 1.0 + ROUNDING or hi < 1.0 - ROUNDING
        same = lo >= 1.0 / top and hi <= top
    else:
        p, lo, hi, method = math.nan, math.nan, math.nan, "iqr"
        clear = same = False
        if base_iqr and new_iqr and all(map(_finite, (*base_iqr, *new_iqr))):
            (b1, b3), (n1, n3) = map(float, base_iqr), map(float, new_iqr)
            b1, b3, n1, n3 = float(b1), float(b3), float(n1), float(n3)
            clear = n3 < b1 or n1 > b3
            low, high = min(b1, n1), max(b3, n3)
            same = low > 0 and high <= low * top
    if clear and big:
        return Verdict(FASTER if ratio < 1 else SLOWER, ratio, p, method, lo, hi)
    if same:
        return Verdict(SAME, ratio, p, method, lo, hi)
    return Verdict(UNRESOLVED, ratio, p, method, lo, hi)


def _usable(samples: np.ndarray | None) -> bool:
    """Enough positive, finite samples for the rank test (three or more)."""
    if samples is None or len(samples) < 3:
        return False
    arr = np.asarray(samples, dtype=float)
    return bool(np.isfinite(arr).all() and (arr > 0).all())


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
    """Read a samples CSV (plain, .gz or .xz) and attach each run of samples to its row.

    The samples file's key has no ``mode`` column, so a GPU case's hot and cold runs share
    a key. Each run starts at ``sample == 0`` and is written contiguously; a run belongs
    to the row of the same key whose sample count and median it reproduces exactly.
    A ``mode`` column, where a file has one, is used as part of the key. A missing file
    is a note: comparisons then fall back to quartiles. A file that cannot be read
    (:func:`results.read_csv`: not a regular file, too large, cut short, not CSV), or
    with samples that are wrong (a time not finite and positive, a clock or index off)
    or doubled (a key, clock and index given more often than the rows have that key: a
    file concatenated twice, a step collected twice), raises :class:`results.SchemaError`
    naming the file, line, key and value: attached, such samples would change verdicts
    (a doubled run attaches as a second run), and set aside they would hide the fault.
    """
    if not path:
        return Samples({}, "not given")
    path = Path(path)
    if not path.exists():
        return Samples({}, f"{path.name} (missing)")
    frame = results.read_csv(path, results.SAMPLES_MAX_BYTES, "samples file")
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
