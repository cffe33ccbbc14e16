"""The two suites: quick (the default) cuts breadth only, answers every class and band
the full suite answers, and says what the full suite adds; selecting it by the config
key, the command line and the profile; the report and the comparison name it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from report_data import write_set
from snakemake.utils import update_config

from gpubench import cli, suites
from gpubench.config import ConfigError, validate_config
from gpubench.report import compare
from gpubench.report.verdicts import band_of, classes
from gpubench.runner import plan

ROOT = Path(__file__).resolve().parents[1]
OVERLAY = ROOT / "config" / "suites" / "quick.yaml"
#: what an overlay may set: breadth (which rows), never how a row is measured; its thread
#: counts are counts the full suite measures too (test_every_quick_row_is_a_full_row)
BREADTH = {"suite", "gpu_modes", "baseline", "energy", "mpi", "kernels", "threads"}
KERNEL_BREADTH = {"enabled", "sizes", "gpu_sizes", "baseline_sizes", "gpu_modes", "dtypes",
                  "variants", "implementations"}
KEY = ("kernel", "variant", "size", "dtype", "implementation", "threads", "mode")


def rows(config: dict, backend: str, cores: int) -> set[tuple]:
    return {tuple(getattr(it, k) for k in KEY) for it in plan(backend, config, cores)}


@pytest.fixture(scope="module")
def both() -> tuple[dict, dict]:
    return validate_config(suites.suite_config("quick")), validate_config(
        suites.suite_config("full"))


def test_the_overlay_merges_as_snakemake_merges_config_files():
    base = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    expected = json.loads(json.dumps(base))
    update_config(expected, yaml.safe_load(OVERLAY.read_text()))
    got = suites.merge_over(base, yaml.safe_load(OVERLAY.read_text()))
    assert got == expected
    assert base == yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


def test_full_is_the_config_file_as_it_is_and_quick_the_default():
    base = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    assert base["suite"] == suites.DEFAULT == "quick"
    assert suites.suite_config("full") == {**base, "suite": "full"}
    assert suites.overlay_path("full") is None and suites.overlay_path("quick") == OVERLAY


def test_quick_cuts_breadth_only_every_row_measured_as_in_full(both):
    """No harness setting (samples, clocks, spread rounds) or kernel parameter in the
    overlay: a quick row is a full row, measured the same way."""
    overlay = yaml.safe_load(OVERLAY.read_text())
    assert set(overlay) <= BREADTH
    for name, kcfg in overlay["kernels"].items():
        assert set(kcfg) <= KERNEL_BREADTH, name
    quick, full = both
    for key in ("harness", "gpu_harness", "step_threads", "gpu_cold_max_bytes"):
        assert quick.get(key) == full.get(key), key


@pytest.mark.parametrize("cores", [2, 6, 16])
def test_every_quick_row_is_a_full_row(both, cores):
    quick, full = both
    for backend in full["backends"]:
        assert rows(quick, backend, cores) <= rows(full, backend, cores), backend


@pytest.mark.parametrize("cores", [2, 16])
def test_quick_answers_every_class_band_and_framework_the_full_suite_does(both, cores):
    """Per framework: every (class, band) with a case in the full plan has one in the
    quick plan, and the NumPy baseline measures every such class and band."""
    quick, full = both
    cls_of = {k: c for c, ks in classes().items() for k in ks}

    def answered(config: dict, backend: str) -> set[tuple[str, str]]:
        return {(cls_of[it.kernel], band_of(it.kernel, it.size))
                for it in plan(backend, config, cores) if it.kernel in cls_of}

    for backend in full["backends"]:
        missing = answered(full, backend) - answered(quick, backend)
        assert not missing, (backend, sorted(missing))
        assert plan(backend, quick, cores), backend


def test_quick_is_a_fraction_of_full(both):
    quick, full = both
    n_q = sum(len(plan(b, quick, 16)) for b in quick["backends"])
    n_f = sum(len(plan(b, full, 16)) for b in full["backends"])
    assert n_q < n_f / 3


def test_the_difference_counts_what_full_adds_by_the_key_that_cuts_it(both):
    quick, full = both
    diff = suites.difference(quick, full, 2)
    added = sum(int(a.rsplit("(", 1)[1].split()[0].replace(",", ""))
                for a in diff.adds if a.endswith("rows)"))
    assert diff.rows + added == diff.full_rows
    text = " ".join(diff.adds)
    for what in ("cold-cache rows", "more dtypes", "more implementations", "more sizes",
                 "the transfer kernel", "the MPI jobs"):
        assert what in text
    assert suites.difference(full, full, 2, "full").adds == []
    # one key at a time: the reason named is that key's
    only_dtype = suites.merge_over(full, {"kernels": {"matmul": {"dtypes": ["float32"]}}})
    d = suites.difference(only_dtype, full, 2)
    assert [a.split(" (")[0] for a in d.adds] == ["more dtypes"]


def test_the_sentence_names_the_suite_what_full_adds_and_the_command():
    quick = {"suite": "quick", "rows": 700, "full_rows": 3096,
             "adds": ["cold-cache rows (576 rows)"], "command": suites.FULL_COMMAND}
    text, command = suites.describe(quick)
    assert text.startswith("Suite quick: 700 measurements") and "2,396 more" in text
    assert "cold-cache rows (576 rows)" in text and command == "gpubench run --suite full"
    text, command = suites.describe({"suite": "full", "rows": 3096})
    assert text.startswith("Suite full") and command == ""
    assert suites.describe({}) == ("", "")


def test_read_record_ignores_what_is_not_a_suite_record(tmp_path):
    path = tmp_path / "suite.json"
    assert suites.read_record(path) == {}
    path.write_text("{not json")
    assert suites.read_record(path) == {}
    path.write_text(json.dumps({"suite": "tiny"}))
    assert suites.read_record(path) == {}
    path.write_text(json.dumps({"suite": "quick", "rows": 3}))
    assert suites.read_record(path)["rows"] == 3


def test_a_wrong_suite_or_implementation_is_refused_naming_the_key(both):
    quick, _ = both
    with pytest.raises(ConfigError, match="config key suite"):
        validate_config({**quick, "suite": "fast"})
    bad = suites.merge_over(quick, {"kernels": {"matmul": {"implementations": {
        "cupy-gpu": ["cublas", "tensor_cores"]}}}})
    with pytest.raises(ConfigError, match=r"kernels\.matmul\.implementations\.cupy-gpu\[1\]"):
        validate_config(bad)
    bad = suites.merge_over(quick, {"kernels": {"matmul": {"implementations": {
        "fortran-cpu": ["blas"]}}}})
    with pytest.raises(ConfigError, match=r"implementations\.fortran-cpu: unknown backend"):
        validate_config(bad)


def test_implementations_restrict_one_backend_only(both):
    _, full = both
    cfg = suites.merge_over(full, {"kernels": {"vector_add": {"implementations": {
        "cupy-gpu": ["raw_kernel"]}}}})
    cupy = {it.implementation for it in plan("cupy-gpu", cfg, 2) if it.kernel == "vector_add"}
    numba = {it.implementation for it in plan("numba-gpu", cfg, 2)
             if it.kernel == "vector_add"}
    assert cupy == {"raw_kernel"} and numba == {"cuda_jit", "vectorize_cuda"}


def snake(argv: list[str]) -> list[str]:
    cmd = cli.snakemake_command(argv, cwd=ROOT)
    assert cmd[:3] == [sys.executable, "-m", "snakemake"]
    return cmd[3:]


def test_run_selects_the_suite_and_keeps_the_profiles_own(monkeypatch):
    monkeypatch.delenv(cli.CONFIG_VAR, raising=False)
    assert snake(["--suite", "full"]) == ["--config", "suite=full", "--profile",
                                          "profiles/local"]
    assert cli.profile_config(ROOT / "profiles" / "slurm") == ["suite=full"]
    # a --config on the command line replaces the profile's config: items as a whole,
    # so gpubench run puts them first (its own and the user's win)
    assert snake(["--profile", "slurm", "--backends", "numpy-cpu"]) == [
        "--config", "suite=full", "backends=[numpy-cpu]", "--profile", "profiles/slurm"]
    assert snake(["--profile", "slurm", "--suite", "quick"]) == [
        "--config", "suite=full", "suite=quick", "--profile", "profiles/slurm"]
    assert snake(["--profile", "slurm", "--config", "results_dir=r"]) == [
        "--profile", "profiles/slurm", "--config", "suite=full", "results_dir=r"]
    assert snake(["--profile", "slurm"]) == ["--profile", "profiles/slurm"]
    with pytest.raises(SystemExit):
        snake(["--suite", "fast"])


def test_the_report_header_and_summary_name_the_suite(tmp_path):
    from gpubench import report

    paths = write_set(tmp_path, gpu=False)
    record = tmp_path / "suite.json"
    record.write_text(json.dumps({"suite": "quick", "rows": 12, "full_rows": 40,
                                  "adds": ["more sizes (28 rows)"],
                                  "command": suites.FULL_COMMAND}))
    html, md = tmp_path / "r.html", tmp_path / "summary.md"
    report.build_report(paths["timings"], paths["env"], html, md, paths["samples"],
                        workers=1, suite_json=record)
    first = md.read_text().splitlines()[:6]
    assert any("**suite** quick" in line for line in first)
    assert any(line.startswith("Suite quick: 12 measurements") and "28 more" in line
               and "`gpubench run --suite full`" in line for line in first)
    page = html.read_text()
    header = page[:page.index("</header>")]
    assert "<strong>suite</strong> quick" in header
    assert "<code>gpubench run --suite full</code>" in header


def test_compare_of_a_quick_and_a_full_run_names_the_missing_rows(tmp_path):
    base, new = write_set(tmp_path / "quick"), write_set(tmp_path / "full")
    timings = pd.read_csv(new["timings"])
    extra = timings[timings["backend"] == "cupy-gpu"].assign(
        size=lambda f: f["size"] * 3)
    pd.concat([timings, extra]).to_csv(new["timings"], index=False)
    for folder, name in ((tmp_path / "quick", "quick"), (tmp_path / "full", "full")):
        (folder / "suite.json").write_text(json.dumps({"suite": name}))
    md = tmp_path / "cmp.md"
    compare.build_compare(tmp_path / "quick", tmp_path / "full", tmp_path / "cmp.html",
                          md, workers=1)
    text = md.read_text()
    banner = next(line for line in text.splitlines() if line.startswith("> quick (Test"))
    assert "is the quick suite and full (Test GPU) the full suite" in banner
    assert (f"{len(extra)} rows of full (Test GPU) and 0 of quick (Test GPU) have no "
            "counterpart") in banner
    only = text[text.index("## Only in new"):]
    assert "| cupy-gpu |" in only and "sizes" in only.splitlines()[2]
    assert base["timings"].exists()


def test_the_workflows_own_config_given_again_is_refused_for_quick(tmp_path):
    """A --configfile config/config.yaml goes over the quick overlay (Snakemake's order):
    the full suite's sizes would come back named quick, so the run is refused."""
    from gpubench import workflow as gw

    base = ROOT / "config" / "config.yaml"
    with pytest.raises(gw.SetupError, match=r"--configfile .*config\.yaml: the workflow "
                       r"reads it already"):
        gw.check_suite_files("quick", [tmp_path / "none.yaml", base], base)
    gw.check_suite_files("full", [base], base)
    gw.check_suite_files("quick", [ROOT / ".test" / "config" / "config.yaml"], base)


@pytest.mark.parametrize(("gpus", "mode", "kept"), [
    (0, "venv", False),    # a laptop: the GPU steps write unavailable rows
    (1, "venv", True),     # a GPU here: NumPy's rows at the GPU sizes are compared
    (0, "system", True),   # the driver cannot tell (a login node): kept
])
def test_the_quick_suite_measures_baseline_sizes_only_where_a_gpu_step_can(both, gpus, mode,
                                                                           kept):
    from gpubench import workflow as gw

    quick, full = both
    for config, expect in ((quick, kept), (full, True)):
        cfg = {**config, "environments": {**config["environments"], "mode": mode}}
        settings = gw.Plan(cfg, gpus=lambda n=gpus: (n, "")).step_settings()
        sizes = {int(s) for it in plan("numpy-cpu", settings, 2) for s in [it.size]
                 if it.kernel == "vector_add"}
        assert (16777216 in sizes) is expect, (config["suite"], gpus, mode)


def test_a_frameworks_own_venv_plans_no_hand_off_from_a_framework_it_lacks() -> None:
    """Each venv holds one framework and NumPy: an interop consumer of another framework
    could only give unavailable rows there, so the plan leaves it out and the suite
    record says which; system environments keep them (a missing one is a real row)."""
    from gpubench.runner import left_out, plan

    config = suites.suite_config("full")
    config["environments"] = {**config["environments"], "mode": "venv"}
    names = {it.implementation for it in plan("numpy-cpu", config, 2)
             if it.kernel == "interop"}
    assert "from_torch" not in names and "from_jax" not in names
    torch_names = {it.implementation for it in plan("torch-cpu", config, 2)
                   if it.kernel == "interop"}
    assert torch_names == {"from_numpy"}  # NumPy is in every environment
    assert ("interop", "from_jax", "jax") in left_out("torch-cpu", config)
    words = suites.left_out_words(config)
    assert any(w.startswith("interop from_torch in numpy-cpu, jax-cpu") and
               w.endswith("(needs torch)") for w in words), words
    record = suites.difference(config, config, 2, "full").as_dict()
    text, _ = suites.describe(record)
    assert "Not planned" in text and "from_jax in numpy-cpu, torch-cpu" in text

    config["environments"]["mode"] = "system"
    assert {"from_torch", "from_jax"} <= {it.implementation for it in plan(
        "numpy-cpu", config, 2) if it.kernel == "interop"}
    assert left_out("numpy-cpu", config) == [] and suites.left_out_words(config) == []
    text, _ = suites.describe(suites.difference(config, config, 2, "full").as_dict())
    assert "Not planned" not in text
