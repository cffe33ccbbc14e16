"""Reliability: every fault the benchmark must survive, injected on purpose.

A benchmark that silently drops a framework, hangs an allocation or reports a
wrong-but-fast number does harm. ``CATALOGUE`` lists each fault: how it is injected,
what must happen, and the test that proves it (here, or in the test file that already
covered it). The "Reliability" section of docs/results.md is this table, word for word
(``test_readme_reliability_section_is_the_catalogue``; ``python tests/test_reliability.py``
prints it), and every test it names must be collected by pytest
(``test_every_catalogue_entry_names_a_collected_test``). Where a run plans N
measurements, the test asserts exactly N rows come out, each key once: no lost rows.

The faults come from ``reliability_plugin`` (stand-in backends whose kernels fail
through the real NVRTC and Numba compilers and the frameworks' real error types),
packages that shadow ``torch``, and Snakemake runs killed or doubled up on purpose.
Those runs use SLURM clients stubbed out to fail at once: a local run never uses them,
and a stopped controller costs each Snakemake start 9 s (``sinfo`` waits for it).
"""

from __future__ import annotations

import ast
import base64
import copy
import html
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import markupsafe
import pandas as pd
import pytest
import yaml

from gpubench import results
from gpubench.config import ConfigError, load_schema, validate_config
from gpubench.runner import BackendRun, plan

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
EVIL = "a; rm -rf ~"


# -- the catalogue --------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """One injected fault: its row of docs/results.md's table and the test that proves it."""

    id: str
    area: str  # which area of reliability it answers (AREAS)
    fault: str  # how it is injected
    outcome: str  # what happens
    test: str  # pytest node id, relative to tests/


#: the areas of reliability the catalogue covers
AREAS = ("framework", "compile", "wrong", "memory", "hang", "kill", "collect", "config",
         "shell", "html", "concurrent", "mpi", "rows", "readers", "outputs")

R = "test_reliability.py::"
H = "test_hostile_inputs.py::"
CATALOGUE: tuple[Scenario, ...] = (
    Scenario("import-error", "framework",
             "`torch` shadowed by a package whose import raises ImportError",
             "every planned row of torch-cpu `unavailable`, reason `Unavailable: import "
             "torch failed: ImportError: …`", R + "test_framework_that_fails_to_import"),
    Scenario("import-crash", "framework", "`torch` import kills its process (SIGSEGV)",
             "every planned row `error`: `framework did not start: worker killed by SIGSEGV`",
             R + "test_framework_that_crashes_on_import"),
    Scenario("import-hang", "framework", "`torch` import sleeps forever",
             "worker killed at `harness.start_timeout_s`; every planned row `error`: "
             "`timed out … while starting the framework`",
             R + "test_framework_that_hangs_on_import"),
    Scenario("compile-nvrtc", "compile",
             "the project's `vector_add.cu` with one `;` removed, compiled by NVRTC",
             "`error` row with NVRTC's log (`expected a \";\"`); the step goes on",
             R + "test_cuda_c_that_fails_to_compile"),
    Scenario("compile-numba", "compile", "an `@njit` loop adding a string to a float",
             "`error` row `first call: …TypingError…`; the step goes on",
             R + "test_numba_kernel_that_fails_to_compile"),
    Scenario("kernel-raises", "compile",
             "a kernel raising `CUDA_ERROR_ILLEGAL_ADDRESS`; a builder raising SyntaxError",
             "`error` row with the exception (`building: SyntaxError…`); the rest run",
             "test_runner_faults.py::test_every_planned_item_gets_exactly_one_row"),
    Scenario("wrong-values", "wrong",
             "one element off; outputs left unwritten (NaN poison); wrong only after the "
             "first call", "`wrong_result` with the relative error (or `not finite`) and "
             "no median, so never ranked",
             "test_runner_faults.py::test_every_planned_item_gets_exactly_one_row"),
    Scenario("wrong-never-ranked", "wrong", "a `wrong_result` row faster than every other",
             "never a winner, never in a speedup",
             "test_report.py::test_wrong_results_are_never_ranked"),
    Scenario("cpu-beyond-memory", "memory", "numpy-cpu at 2^40 elements (three 8 TiB "
             "arrays)",
             "`skipped` (`needs about … GiB with headroom, … GiB free on cpu`) before any "
             "input is allocated; the next size runs", R + "test_cpu_size_beyond_memory"),
    Scenario("cpu-oom", "memory", "NumPy asked for 1 EiB while building",
             "`skipped`: `out of memory while building: Unable to allocate 1.00 EiB…`",
             R + "test_host_out_of_memory_while_running"),
    Scenario("gpu-beyond-memory", "memory", "a GPU backend reporting 1 MiB free",
             "`skipped` (`… GiB free on gpu`) for the cases that do not fit; the rest run",
             R + "test_gpu_size_beyond_memory"),
    Scenario("gpu-oom", "memory",
             "PyTorch, CuPy, XLA and Numba CUDA out-of-memory errors raised by a kernel",
             "`skipped` with the framework's message, never `error`",
             R + "test_gpu_out_of_memory_while_running"),
    Scenario("worker-crash", "hang", "a kernel that kills its worker (SIGSEGV)",
             "that one row `error` (`worker killed by SIGSEGV`); a fresh worker runs the rest",
             "test_runner_faults.py::test_every_planned_item_gets_exactly_one_row"),
    Scenario("spread-crash", "hang", "a worker that dies as its spread rounds begin "
             "(between the items, and after them)",
             "no item lost: every row `ok` with the samples it had (`caller_spread_rounds` "
             "0); the step's log says `… during the spread rounds`; a fresh worker runs "
             "the items after",
             "test_spread.py::test_a_worker_lost_in_its_spread_rounds_loses_no_item"),
    Scenario("case-hang", "hang", "a kernel that sleeps for an hour",
             "killed at `harness.case_timeout_s`: that row `error` (`timed out`); the next "
             "runs", "test_runner_faults.py::test_every_planned_item_gets_exactly_one_row"),
    Scenario("step-hang", "hang", "a whole step hanging past its `runtime`",
             "stopped before the scheduler would kill it (10 % of its runtime, at least 30 s, "
             "early); every planned row `error` (`the step ran out of time …`)",
             "test_step_guard.py::test_step_past_its_time_limit_is_stopped_and_recorded"),
    Scenario("step-fails", "hang", "a step exiting with status 3",
             "retried while attempts are left; after the last, every row `error` with the "
             "attempt", "test_step_guard.py::test_failing_step_on_its_last_attempt_is_recorded"),
    Scenario("step-killed", "kill", "the guard of a step killed with SIGKILL mid-case",
             "its step and worker end with it (PR_SET_PDEATHSIG): nothing keeps measuring "
             "or writes later", R + "test_killed_step_leaves_no_process_behind"),
    Scenario("run-killed-resumed", "kill",
             "Snakemake's process group killed (SIGKILL) in the middle of a step, then "
             "`--unlock` and a re-run",
             "its processes end with it; the half-done step's lock file is refused as "
             "incomplete; `--rerun-incomplete` (after `--unlock`: Snakemake's own lock "
             "outlives a SIGKILL) re-runs that step alone, the finished step and the probe "
             "keep their files; every planned row once",
             R + "test_run_killed_mid_step_then_resumed"),
    Scenario("collect-missing", "collect", "a step's CSV missing at collect time",
             "exit 1, the message names the file; the last `timings.csv` is left as it "
             "was", R + "test_collect_with_a_missing_csv"),
    Scenario("collect-corrupt", "collect",
             "a step CSV cut mid-row, binary, without a column, with a duplicated row, "
             "or a corrupt samples file", "exit 1, the message names the file, nothing "
             "written", R + "test_collect_with_a_corrupt_csv"),
    Scenario("report-corrupt", "collect", "a corrupt timings CSV given to the report",
             "SchemaError naming the file; no page written",
             "test_report.py::test_corrupt_csv_raises"),
    Scenario("config-every-key", "config",
             "every key of the config schema given a value of the wrong type, and an "
             "out-of-range, unknown or empty one where the schema allows a check",
             "ConfigError `config key <key>: …` naming that key",
             R + "test_every_config_key_rejects_a_malformed_value"),
    Scenario("config-names", "config", "unknown backend, kernel, dtype, variant or parameter",
             "ConfigError naming the key", "test_config.py::test_bad_value_names_its_key"),
    Scenario("config-before-jobs", "config", "a bad value given to Snakemake",
             "Snakemake stops before any job, naming the key, no traceback",
             "test_workflow.py::test_bad_config_fails_before_any_job_with_the_key"),
    Scenario("shell-config-strings", "shell",
             "`a; rm -rf ~`, `$(…)` and backquotes in every text key of the config",
             "rejected naming the key, except `environments.pip_args` (quoted) and "
             "`mpi.launcher_args` (an argv element)",
             R + "test_shell_unsafe_config_strings_are_rejected_or_quoted"),
    Scenario("shell-pip-args", "shell", "`a; rm -rf ~` and `$(touch …)` as pip arguments",
             "one shell word each in `build_env`'s command, as `sh` splits it",
             R + "test_pip_args_are_quoted"),
    Scenario("shell-argv", "shell", "`a; rm -rf ~` in `mpi.launcher_args`; any `shell=True`",
             "one argv element of the launcher; no subprocess in the package or scripts "
             "goes through a shell", R + "test_no_command_goes_through_a_shell"),
    Scenario("shell-slurm-names", "shell",
             "a profile with `slurm_partition: a; rm -rf ~` (or the account)",
             "Snakemake stops before any job: `profile setting "
             "default-resources.slurm_partition: … is not a SLURM name`",
             R + "test_shell_unsafe_slurm_partition_is_refused"),
    Scenario("html-escape", "html",
             "`<script>` in every string of the rows, host.json (host, GPU name, "
             "packages), the locks and mpi.csv",
             "shown as text in the report, summary.md and the run-vs-run page: no tag, "
             "and a `$` in a figure label stays a dollar sign",
             R + "test_strings_from_results_and_environment_are_escaped"),
    Scenario("concurrent-same-workdir", "concurrent",
             "a second Snakemake in the same folder during a run",
             "refused: the step in progress reads as incomplete, and with "
             "`--rerun-incomplete` the directory is locked; the first run finishes with "
             "every row", R + "test_two_runs_at_once"),
    Scenario("concurrent-shared-results", "concurrent",
             "a second Snakemake from another folder, same `results_dir`",
             "refused before its first job, naming `results_dir` and the running pid "
             "(a lock the kernel drops if the holder is killed); no file touched",
             R + "test_two_runs_at_once"),
    Scenario("concurrent-busy-host", "concurrent",
             "a process spinning on every core while the numpy-cpu step measures",
             "its rows record the others' CPU share over the rule's 25 %; the report's "
             "notice names numpy-cpu, the steps it is compared with and `gpubench run -- "
             "--forcerun results/raw/numpy-cpu.csv` (the same rows measured quietly: no "
             "notice)",
             "test_host_conditions.py::test_a_comparison_with_the_loaded_step_is_flagged_"
             "naming_it"),
    Scenario("concurrent-steps", "concurrent",
             "`step_threads: 1` on a host of 4 cores, quick and full suites (dry run)",
             "every framework's step, MPI job and the probe takes `bench_slot=1`, of which "
             "the local profile has one: none measures beside another",
             "test_workflow.py::test_measuring_jobs_take_the_one_bench_slot_of_the_local_"
             "profile"),
    Scenario("atomic-writes", "concurrent", "two writers replacing one CSV 50 times each "
             "while it is read", "every read is a whole file of one writer; no temporary "
             "left", R + "test_concurrent_writes_never_show_a_partial_file"),
    Scenario("mpi-rank-dies", "mpi", "rank 1 exits with code 7 mid-job",
             "that item `error` naming rank 1 and the exit; the next launch runs the rest",
             "test_mpi_runs.py::test_a_dead_rank_ends_with_a_clear_error_and_the_rest_runs"),
    Scenario("mpi-rank-hangs", "mpi", "rank 1 sleeps forever",
             "ranks killed at `mpi.time_limit_s`; every row `error` with the reason",
             "test_mpi_runs.py::test_a_hung_rank_is_killed_at_the_time_limit"),
    Scenario("mpi-agreed-error", "mpi", "rank 1 raises in its local work",
             "all ranks agree: that item `error` (`rank 1: RuntimeError …`), the next runs",
             "test_mpi_runs.py::test_an_agreed_error_is_recorded_and_the_next_item_runs"),
    Scenario("mpi-step-killed", "mpi", "an MPI step killed with SIGKILL while a rank hangs",
             "the launcher gets SIGTERM and ends its ranks: no rank left running",
             R + "test_killed_mpi_step_leaves_no_rank_behind"),
    Scenario("mpi-oversubscribed", "mpi", "2 GPU ranks with 1 GPU; more CPU ranks than "
             "cores",
             "every row `skipped` (`2 ranks need 2 GPUs … set mpi.oversubscribe`), "
             "nothing launched", R + "test_mpi_job_with_more_ranks_than_devices"),
    Scenario("mpi-no-library", "mpi", "no `mpiexec` on PATH; an interpreter without mpi4py",
             "every row `unavailable` with how to install it",
             "test_mpi_units.py::test_missing_launcher_gives_unavailable_rows"),
    Scenario("row-pipelined-clock", "rows",
             "a GPU row's pipelined times divided by 100 (device and sync untouched)",
             "`implausible` (`a caller's pipelined calls took … % of the device clock's … "
             "one of the two clocks is wrong`: under a tenth of the device time, quartiles "
             "apart), with or without a probe record; never ranked",
             H + "test_a_pipelined_time_far_below_the_device_time_is_implausible"),
    Scenario("row-columns", "rows",
             "`size` 0, -4, empty, 2^62 or a matmul order whose data pass 2^63 bytes; `mode` "
             "`lukewarm` or empty; `device` `tpu`; an unknown `stop_reason`; `gbps` or "
             "`gflops` ×100",
             "collect (exit 1), report and compare (exit 2) refuse the file: `<file>: … line "
             "3 (<key>): column 'mode' = 'lukewarm': must be one of 'hot', 'cold'`, `column "
             "'gbps' = …, but bytes / median_s / 1e+09 = …: must be that rate`",
             H + "test_a_column_off_its_set_or_its_other_columns_is_refused"),
    Scenario("row-cpu-ceiling", "rows", "CPU rows made 100× faster (times ÷100, rates ×100)",
             "`implausible` past 2× the host's caches (`cpu_cache_bytes`, read from sysfs by "
             "the probe) above 10 × `threads` × the probe's one-thread copy (`… faster than "
             "memory`), under half the probe's empty-call time (`… faster than the clock "
             "that timed it`), and at any size above what their cores can move at all: 256 "
             "bytes a cycle per thread at twice the fastest clock the probe read "
             "(`cpu_clock_hz`; `… can move at all`). A row 100× the memory copy rate per "
             "thread is over that bound on any host whose copy rate per thread exceeds 5.1 "
             "bytes a cycle; in-cache rows made 100× faster from a slow start (plain-Python "
             "loops, small launch-bound sizes) can stay under it and are ranked (on the "
             "committed H100 CPU rows made 100× faster, 341 of 1,129 are refused at a 2 GHz "
             "clock; the in-cache bound's own test: "
             "`test_cpu_rows_within_the_caches_are_bounded_by_what_their_cores_move`); an "
             "older probe record says which check it lacked",
             H + "test_cpu_rows_are_checked_against_the_probe"),
    Scenario("reader-schema-version", "readers", "`schema_version` inf in one row",
             "exit 2: `column 'schema_version' is not int: line 3 (<key>) has inf`",
             H + "test_a_schema_version_that_is_not_a_whole_number_is_refused"),
    Scenario("host-record-types", "readers",
             "host.json's `cpu_cores` a string, a list, a dict or 0",
             "that field left out with a note (`environment file host.json: key cpu_cores: "
             "… left out`); the report is built, the cores read from the rows",
             H + "test_a_host_record_field_of_the_wrong_type_is_left_out_with_a_note"),
    Scenario("host-record-deep", "readers",
             "host.json nested 100,000 deep, or 40; `--env /dev/zero`",
             "a note, the report built without the record: `… nested deeper than Python "
             "can parse`, `… nested more than 32 levels`, `… not a regular file (a device, "
             "pipe or socket)`", H + "test_a_host_record_too_deep_or_a_device_is_a_note"),
    Scenario("cli-ranges", "readers",
             "`compare --alpha` 2, nan or 0; `--min-effect` -1 or inf; `--jobs 0`",
             "usage error, exit 2: `argument --alpha: '2' is outside (0, 1)`",
             H + "test_compare_options_out_of_range_are_usage_errors"),
    Scenario("config-file", "config",
             "to `validate-config`: a list, a number, binary bytes, a YAML syntax error, a "
             "missing file, a folder, 5,000 levels of nesting, a recursive alias, a 1 kB "
             "alias bomb, `sizes: [2**64]`, a matmul order whose data pass 2^63 bytes",
             "exit 1 in one line: `<file>: the document is a list, not a mapping of config "
             "keys`, `not valid YAML: … (line 2, column 2)`, `more than 100,000 values once "
             "its YAML aliases are expanded`, `config key kernels.vector_add.sizes[0]: "
             "18446744073709551616: must be a whole number from 1 to 2**53`; Snakemake "
             "stops on the same sizes before any job",
             H + "test_validate_config_refuses_in_one_line"),
    Scenario("config-bomb-object", "config", "an alias bomb in a config Snakemake loaded",
             "ConfigError `config: more than 100,000 values …` before the schema walks it",
             H + "test_a_config_given_to_snakemake_is_bounded_too"),
    Scenario("report-cut", "collect",
             "a timings or samples CSV cut mid-row (plain or .gz), given to the report or "
             "compare", "exit 2: `<file>: ends in the middle of a row (cut short?)`, as in "
             "collect", H + "test_a_file_cut_mid_row_is_refused_by_the_report_and_compare"),
    Scenario("output-write-fails", "outputs",
             "a full disk or a read-only folder while a file is written; a folder where the "
             "file goes",
             "`cannot write <file>: No space left on device` (report, compare, probe: exit "
             "2, 2, 1; collect: 1); the earlier file stays whole, no temporary is left",
             H + "test_a_failed_write_names_the_file_and_leaves_the_earlier_one"),
    Scenario("output-unwritable", "outputs",
             "`--md` naming a folder; an output folder this user cannot write",
             "exit 2 before anything is built: `--md … is a folder: give a file name`, "
             "`--html …: cannot write in … (read-only?)`",
             H + "test_outputs_that_cannot_be_written_are_refused_before_the_report"),
    Scenario("output-partial-figures", "outputs",
             "a full disk after the first of the report's figures, then a re-run",
             "the report stops naming the file; its figures were listed as its own before "
             "they were written, so the re-run replaces them instead of refusing",
             H + "test_a_report_stopped_while_writing_figures_runs_again"),
    Scenario("logs-dir-foreign", "outputs", "`logs_dir` a folder of the user's holding a "
             "`collect.log`",
             "refused before any job: `config key logs_dir: … holds files (collect.log) and "
             "no .gpubench-results marker …`; the workflow marks the logs folders it makes",
             H + "test_a_logs_folder_of_someone_else_is_refused_and_ours_is_marked"),
    Scenario("large-inputs", "readers",
             "a 200 MB timings file; a compressed one past the limit once decompressed; "
             "`--samples /dev/urandom`",
             "refused at once with its size: `timings.csv: 211.0 MB, over the 32.0 MB a "
             "timings file may have` (samples: 512 MB); compressed: `more than 32.0 MB of "
             "text …` while reading; a device: `not a regular file`",
             H + "test_inputs_over_their_size_or_endless_are_refused_at_once"),
)


def readme_table() -> str:
    """docs/results.md's Reliability table, made from the catalogue."""
    lines = ["| scenario | how it is injected | what happens | test |",
             "| --- | --- | --- | --- |"]
    for s in CATALOGUE:
        lines.append(f"| `{s.id}` | {s.fault} | {s.outcome} | `tests/{s.test}` |")
    return "\n".join(lines)


def _readme_section() -> str:
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    found = re.search(r"^## Reliability\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert found, "docs/results.md has no '## Reliability' section"
    return found.group(1)


def test_catalogue_covers_every_area() -> None:
    ids = [s.id for s in CATALOGUE]
    assert len(ids) == len(set(ids)) >= 20
    assert {s.area for s in CATALOGUE} == set(AREAS)
    for s in CATALOGUE:
        assert s.area in AREAS and s.fault and s.outcome and "::test_" in s.test


def test_readme_reliability_section_is_the_catalogue() -> None:
    section = _readme_section()
    table = "\n".join(ln for ln in section.splitlines() if ln.startswith("|"))
    assert table == readme_table(), "docs/results.md and CATALOGUE differ: paste " \
        "`python tests/test_reliability.py` into docs/results.md's Reliability section"


def test_every_catalogue_entry_names_a_collected_test() -> None:
    files = sorted({s.test.split("::")[0] for s in CATALOGUE})
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                          "-p", "no:cacheprovider", *(f"tests/{f}" for f in files)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    collected = {line.split("[")[0].removeprefix("tests/")
                 for line in out.stdout.splitlines() if "::" in line}
    missing = [s.test for s in CATALOGUE if s.test not in collected]
    assert not missing, f"catalogue names tests pytest does not collect: {missing}"


# -- helpers ------------------------------------------------------------------------------

FAST = {"warmup": 1, "min_samples": 3, "max_samples": 20, "target_rel_spread": 0.5,
        "max_time_s": 0.01, "case_timeout_s": 60, "start_timeout_s": 60}


def step_config(sizes: tuple[int, ...] = (1024, 4096), **harness: Any) -> dict[str, Any]:
    return {"threads": [1], "gpu_modes": ["hot"], "harness": {**FAST, **harness},
            "kernels": {"vector_add": {"sizes": list(sizes), "dtypes": ["float64"]}}}


def assert_every_planned_row_once(run: BackendRun) -> None:
    """Zero lost rows: one row per planned item, none twice, all of the step's backend."""
    fields = ("implementation", "kernel", "variant", "size", "dtype", "threads", "mode")
    got = [tuple(str(r[f]) for f in fields) for r in run.rows]
    planned = [tuple(str(getattr(i, f)) for f in fields) for i in run.items]
    assert planned and len(set(got)) == len(got) and sorted(got) == sorted(planned)
    assert {r["backend"] for r in run.rows} == {run.backend_id}


@pytest.fixture(scope="module")
def plugin_env() -> Iterator[dict[str, str]]:
    """reliability_plugin importable here and in every process the tests start."""
    mp = pytest.MonkeyPatch()
    paths = [str(TESTS), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
    mp.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    mp.setenv("GPUBENCH_PLUGINS", "reliability_plugin")
    mp.syspath_prepend(str(TESTS))
    import gpubench.backends

    gpubench.backends.load_plugins()
    yield dict(os.environ)
    mp.undo()


def run_backend(backend: str, config: dict[str, Any], log: Path) -> BackendRun:
    with open(log, "w") as fh:
        run = BackendRun(backend, config, cores=1, log=fh)
        run.run()
    assert_every_planned_row_once(run)
    return run


def by_impl(run: BackendRun) -> dict[tuple[str, int], dict[str, Any]]:
    return {(r["implementation"], r["size"]): r for r in run.rows}


def tagged_processes(tag: str) -> list[int]:
    """Pids of live processes started with GPUBENCH_TEST_TAG=tag (zombies excluded)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            env = (proc / "environ").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"GPUBENCH_TEST_TAG={tag}".encode() in env.split(b"\0") and state != "Z":
            found.append(int(proc.name))
    return found


def cmdline(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def wait_until(predicate: Any, timeout: float, what: str, proc: Any = None) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if proc is not None and proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            raise AssertionError(f"ended (rc {proc.returncode}) before {what}:\n{out[-3000:]}")
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def assert_none_left(tag: str, within: float = 10.0) -> None:
    """Every process of the test's tag ends within ``within`` s (killed if not: then fail)."""
    end = time.monotonic() + within
    while tagged_processes(tag) and time.monotonic() < end:
        time.sleep(0.1)
    left = tagged_processes(tag)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left running: {left}"


# -- frameworks ----------------------------------------------------------------------------


def shadow_torch(tmp_path: Path, body: str) -> dict[str, str]:
    """An environment in which ``import torch`` runs ``body`` instead of PyTorch."""
    pkg = tmp_path / "shadow" / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(body)
    return {"PYTHONPATH": os.pathsep.join([str(pkg.parent), os.environ.get("PYTHONPATH", "")])}


def check_import_fault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str,
                       status: str, reason: str, **harness: Any) -> None:
    """The real torch-cpu backend with ``import torch`` replaced by ``body``: one row per
    planned measurement, each with ``status`` and ``reason`` in its reason."""
    for key, value in shadow_torch(tmp_path, body).items():
        monkeypatch.setenv(key, value)
    t0 = time.monotonic()
    run = run_backend("torch-cpu", step_config(**harness), tmp_path / "log")
    assert time.monotonic() - t0 < 60
    assert {r["status"] for r in run.rows} == {status}
    assert all(reason in r["reason"] for r in run.rows), run.rows[0]["reason"]


def test_framework_that_fails_to_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    check_import_fault(tmp_path, monkeypatch, "raise ImportError('libtorch_cpu.so: cannot "
                       "open shared object file (injected)')\n", "unavailable",
                       "import torch failed: ImportError: libtorch_cpu.so: cannot open")


def test_framework_that_crashes_on_import(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    check_import_fault(tmp_path, monkeypatch, "import os, signal\n"
                       "os.kill(os.getpid(), signal.SIGSEGV)\n", "error",
                       "framework did not start: worker killed by SIGSEGV")


def test_framework_that_hangs_on_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    check_import_fault(tmp_path, monkeypatch, "import time\ntime.sleep(3600)\n", "error",
                       "framework did not start: timed out after 2 s while starting the "
                       "framework", start_timeout_s=2)


# -- kernels that fail to compile, and memory -----------------------------------------------


@pytest.fixture(scope="module")
def rely_cpu(plugin_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
             ) -> BackendRun:
    """One step of rely-cpu: correct, nvrtc_syntax_error, numba_typing_error, host_oom,
    at two sizes, in one worker."""
    log = tmp_path_factory.mktemp("rely_cpu") / "log"
    return run_backend("rely-cpu", step_config(), log)


@pytest.fixture(scope="module")
def rely_gpu(plugin_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
             ) -> BackendRun:
    """One step of the GPU stand-in with 1 MiB free: vector_add at 1024 elements (110 KiB
    with headroom) fits, 65536 (7 MiB) does not."""
    log = tmp_path_factory.mktemp("rely_gpu") / "log"
    return run_backend("rely-gpu", step_config((1024, 65536)), log)


def _went_on(run: BackendRun, impl: str) -> None:
    """After ``impl`` failed, the step went on: the next ``correct`` row is ok."""
    first = next(i for i, r in enumerate(run.rows) if r["implementation"] == impl)
    after = next(r for r in run.rows[first + 1:] if r["implementation"] == "correct")
    assert after["status"] == "ok", after["reason"]


def test_cuda_c_that_fails_to_compile(rely_cpu: BackendRun) -> None:
    """A CUDA C syntax error reaches the row with NVRTC's own log; the step goes on."""
    pytest.importorskip("cuda.core", reason="cuda-core not installed")
    rows = by_impl(rely_cpu)
    for size in (1024, 4096):
        row = rows[("nvrtc_syntax_error", size)]
        assert row["status"] == "error", row["reason"]
        assert row["reason"].startswith("building: RuntimeError: NVRTC compile failed")
        assert 'expected a ";"' in row["reason"]
        assert rows[("correct", size)]["status"] == "ok"
    _went_on(rely_cpu, "nvrtc_syntax_error")


def test_numba_kernel_that_fails_to_compile(rely_cpu: BackendRun) -> None:
    """Numba compiles at the first call: its TypingError is that call's error, untimed."""
    pytest.importorskip("numba")
    rows = by_impl(rely_cpu)
    for size in (1024, 4096):
        row = rows[("numba_typing_error", size)]
        assert row["status"] == "error"
        assert row["reason"].startswith("first call: numba.core.errors.TypingError")
        assert not row["samples"] or pd.isna(row["samples"])
    _went_on(rely_cpu, "numba_typing_error")


def test_host_out_of_memory_while_running(rely_cpu: BackendRun) -> None:
    """NumPy's MemoryError while building: ``skipped`` with NumPy's message."""
    rows = by_impl(rely_cpu)
    for size in (1024, 4096):
        row = rows[("host_oom", size)]
        assert row["status"] == "skipped"
        assert row["reason"].startswith("out of memory while building: Unable to allocate")
    assert rows[("correct", 4096)]["status"] == "ok"  # after host_oom at 1024


def test_cpu_size_beyond_memory(tmp_path: Path) -> None:
    """2^40 float64 elements: three 8 TiB arrays. The headroom check skips the case before
    the worker makes its inputs (an allocation that could exhaust the host, or be killed
    by the OOM killer with the step), and the next size runs."""
    run = run_backend("numpy-cpu", step_config((1024, 1 << 40, 4096)), tmp_path / "log")
    for row in run.rows:
        if row["size"] == 1 << 40:
            assert row["status"] == "skipped"
            assert re.fullmatch(r"needs about [\d.]+ GiB with headroom, [\d.]+ GiB free on "
                                r"cpu", row["reason"]), row["reason"]
        else:
            assert row["status"] == "ok", row["reason"]


def test_gpu_size_beyond_memory(rely_gpu: BackendRun) -> None:
    """The device's free memory decides before anything is placed on it."""
    rows = by_impl(rely_gpu)
    assert rows[("fits", 1024)]["status"] == "ok"
    for impl in ("fits", "torch_oom", "cupy_oom", "jax_oom", "numba_cuda_oom"):
        row = rows[(impl, 65536)]
        assert row["status"] == "skipped"
        assert re.fullmatch(r"needs about [\d.]+ GiB with headroom, [\d.]+ GiB free on gpu",
                            row["reason"]), row["reason"]


@pytest.mark.parametrize(("impl", "message"), [
    ("torch_oom", "OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB"),
    ("cupy_oom", "out of memory while first call: Out of memory allocating"),
    ("jax_oom", "XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory"),
    ("numba_cuda_oom", "CudaAPIError: [<CUresult.CUDA_ERROR_OUT_OF_MEMORY: 2>] Call to "
                       "cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY"),
], ids=["torch", "cupy", "jax", "numba_cuda"])
def test_gpu_out_of_memory_while_running(rely_gpu: BackendRun, impl: str, message: str
                                         ) -> None:
    """Each framework's out-of-memory error is a ``skipped`` row (the case does not fit
    this device), not an ``error`` (something is broken)."""
    if impl == "numba_cuda_oom":
        pytest.importorskip("numba.cuda.cudadrv.driver", reason="numba-cuda not installed")
    row = by_impl(rely_gpu)[(impl, 1024)]
    assert row["status"] == "skipped", row["reason"]
    assert message in row["reason"]


# -- steps killed hard ----------------------------------------------------------------------

RUN_PY = ROOT / "workflow" / "scripts" / "run.py"


def test_killed_step_leaves_no_process_behind(plugin_env: dict[str, str], tmp_path: Path
                                              ) -> None:
    """SIGKILL to a step's guard (what Snakemake's kill of a job, the OOM killer or a lost
    terminal does) while its worker is mid-case: the step process, in a session of its
    own, and its worker end too, and nothing is written afterwards."""
    gate, tag = tmp_path / "gate", uuid.uuid4().hex
    gate.touch()
    out = tmp_path / "out"
    cmd = [sys.executable, str(RUN_PY), "--backend", "gate-cpu", "--threads", "1",
           "--config-json", json.dumps(step_config()), "--csv", str(out / "t.csv"),
           "--samples", str(out / "s.csv"), "--env-mode", "system", "--env-name", "system",
           "--lock-out", str(out / "lock.txt"), "--attempt", "1", "--attempts", "1"]
    env = {**plugin_env, "GPUBENCH_TEST_GATE": str(gate), "GPUBENCH_TEST_TAG": tag}
    with open(tmp_path / "log", "w") as log:
        guard = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_until(Path(f"{gate}.reached").exists, 60, "the worker reaching its case")
            assert len(tagged_processes(tag)) == 3  # guard, step, worker
        finally:
            guard.kill()
            guard.wait()
    assert_none_left(tag)
    gate.unlink()  # a survivor would now finish its case and write the CSVs
    time.sleep(1)
    assert not (out / "t.csv").exists() and not (out / "s.csv").exists()


# -- collect: missing and corrupt files -----------------------------------------------------


def _row(**kw: Any) -> dict[str, Any]:
    row = results.empty_row()
    row.update(framework="numpy", device="cpu", backend="numpy-cpu", implementation="ufunc",
               kernel="vector_add", variant="default", size=1024, dtype="float64",
               threads=1, status="ok", reason="", median_s=1e-6, samples=3, mode="hot",
               host="h", timestamp="2026-01-01T00:00:00Z",
               schema_version=results.SCHEMA_VERSION)
    row.update(kw)
    return row


def step_files(folder: Path) -> dict[str, Path]:
    """Two valid step outputs (timings + samples) and an earlier collected result."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, size in (("a", 1024), ("b", 2048)):
        rows = [_row(size=size), _row(size=size * 2, implementation="other")]
        paths[name] = folder / f"{name}.csv"
        results.atomic_write_csv(paths[name], results.rows_frame(rows))
        paths[f"{name}_samples"] = folder / f"{name}.samples.csv"
        samples = pd.DataFrame([{**{k: r[k] for k in results.KEY_NAMES}, "sample": i,
                                 "time_s": 1e-6} for r in rows for i in range(3)])
        results.atomic_write_csv(paths[f"{name}_samples"], samples)
    return paths


def collect(paths: dict[str, Path], out: Path, capsys: pytest.CaptureFixture[str],
            timings: list[Path] | None = None, samples: list[Path] | None = None
            ) -> tuple[int, str]:
    from gpubench.cli import main

    argv = ["collect", "--timings", *map(str, timings or [paths["a"], paths["b"]]),
            "--samples", *map(str, samples or [paths["a_samples"], paths["b_samples"]]),
            "--out-timings", str(out / "timings.csv"), "--out-samples",
            str(out / "samples.csv")]
    rc = main(argv)
    return rc, capsys.readouterr().err


def test_collect_with_a_missing_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    paths = step_files(tmp_path / "raw")
    out = tmp_path / "out"
    rc, err = collect(paths, out, capsys)
    assert rc == 0 and len(results.read_timings(out / "timings.csv")) == 4  # the control
    before = {p: p.read_bytes() for p in out.iterdir()}
    gone = tmp_path / "raw" / "c.csv"
    rc, err = collect(paths, out, capsys, timings=[paths["a"], gone])
    assert rc == 1
    assert f"{gone}: file is missing" in err
    assert {p: p.read_bytes() for p in out.iterdir()} == before  # the last good result stays


def _cut_mid_row(text: str) -> str:
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    return text[: len(text) - len(last) // 2 - 1]


CORRUPTIONS = {
    "cut-mid-row": lambda p: p.write_text(_cut_mid_row(p.read_text())),
    "binary": lambda p: p.write_bytes(b"\xff\xfe\x00\x01garbage\x00\n\x02\x03"),
    "empty": lambda p: p.write_text(""),
    "no-median-column": lambda p: pd.read_csv(p).drop(columns=["median_s"]).to_csv(
        p, index=False),
    "duplicated-row": lambda p: p.write_text(p.read_text() + p.read_text().splitlines()[1]
                                             + "\n"),
    "not-a-number": lambda p: p.write_text(p.read_text().replace(",2048,", ",big,", 1)),
}


@pytest.mark.parametrize("corruption", [*CORRUPTIONS, "samples-binary", "samples-cut"])
def test_collect_with_a_corrupt_csv(corruption: str, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """One of two step files damaged: collect stops, naming it, and writes nothing (a
    row cut short would otherwise be read with its last fields empty)."""
    paths = step_files(tmp_path / "raw")
    bad = paths["b_samples" if corruption.startswith("samples-") else "b"]
    whole = bad.read_bytes()
    CORRUPTIONS[{"samples-binary": "binary", "samples-cut": "cut-mid-row"}.get(
        corruption, corruption)](bad)
    assert bad.read_bytes() != whole  # the damage took place
    out = tmp_path / "out"
    rc, err = collect(paths, out, capsys)
    assert rc == 1
    assert str(bad) in err, err
    assert not out.exists() or not any(out.iterdir())


# -- configuration ----------------------------------------------------------------------------


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[1]]
    return node


#: the real name a mapping of names is walked through (its key -> a name it takes)
MAPPED_NAME = {"implementations": "numpy-cpu", "jobs": "halo"}


def schema_keys() -> dict[str, dict[str, Any]]:
    """Every key the config schema defines (dotted path -> its schema); a mapping of
    names is walked through one real name: a backend for a kernel's ``implementations``,
    an MPI job (``halo``) for ``mpi.jobs``, a kernel (``vector_add``) for the others
    (``kernels``)."""
    schema = load_schema()
    defs = schema.get("$defs", {})
    out: dict[str, dict[str, Any]] = {}

    def walk(node: dict[str, Any], path: str) -> None:
        node = _resolve(node, defs)
        for name, sub in node.get("properties", {}).items():
            key = f"{path}.{name}" if path else name
            out[key] = _resolve(sub, defs)
            walk(sub, key)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            key = f"{path}.{MAPPED_NAME.get(path.rsplit('.', 1)[-1], 'vector_add')}"
            out[key] = _resolve(extra, defs)
            walk(extra, key)

    walk(schema, "")
    return out


SCHEMA_KEYS = schema_keys()


def _types(sub: dict[str, Any]) -> set[str]:
    kinds = {sub["type"]} if isinstance(sub.get("type"), str) else set(sub.get("type", []))
    for alt in sub.get("oneOf", []) + sub.get("anyOf", []):
        kinds |= _types(alt)
    return kinds


def malformed(key: str, sub: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """(what, value, the key the error must name) for one schema key: always a value of
    the wrong type; an unknown choice, a number below its minimum, a text failing its
    pattern, an empty list, a bad list element where the schema has such a check."""
    kinds = _types(sub)
    cases: list[tuple[str, Any, str]] = [
        ("wrong type", ["a list"] if "object" in kinds else {"a": "mapping"}, key)]
    if "enum" in sub:
        cases.append(("unknown choice", "bogus", key))
    for alt in [sub, *sub.get("oneOf", [])]:
        if "minimum" in alt:
            cases.append(("below minimum", alt["minimum"] - 1, key))
        if "exclusiveMinimum" in alt:
            cases.append(("at exclusive minimum", alt["exclusiveMinimum"], key))
        if "pattern" in alt:
            cases.append(("pattern", EVIL, key))
    if "array" in kinds:
        if sub.get("minItems"):
            cases.append(("empty list", [], key))
        item = sub.get("items") or {}
        cases += [(f"element: {what}", [value], f"{key}[0]")
                  for what, value, _ in malformed(key, item)[1:]]
        cases.append(("element: wrong type", [{"a": "mapping"}], f"{key}[0]"))
    return cases


def with_key(config: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    config = copy.deepcopy(config)
    node = config
    *parents, last = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    return config


@pytest.fixture(scope="module")
def default_config() -> dict[str, Any]:
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    validate_config(cfg)
    return cfg


@pytest.mark.parametrize("key", sorted(SCHEMA_KEYS))
def test_every_config_key_rejects_a_malformed_value(key: str, default_config: dict[str, Any]
                                                    ) -> None:
    cases = malformed(key, SCHEMA_KEYS[key])
    assert cases
    for what, value, named in cases:
        with pytest.raises(ConfigError) as err:
            validate_config(with_key(default_config, key, value))
        assert str(err.value).startswith(f"config key {named}:"), (what, str(err.value))


def test_config_schema_walk_finds_every_key() -> None:
    """The walk above reaches the keys the docs list (a guard against it finding none)."""
    for key in ("results_dir", "harness.case_timeout_s", "gpu_harness.max_time_s",
                "kernels.vector_add.sizes", "environments.pip_args", "mpi.launcher_args",
                "mpi.jobs.halo.steps", "mpi.harness.seed"):
        assert key in SCHEMA_KEYS
    assert len(SCHEMA_KEYS) > 100


# -- strings that reach a shell ---------------------------------------------------------------

#: string keys that take any text, and why that is safe
QUOTED = {
    "environments.pip_args[0]": "shlex.quote in rule build_env (test_pip_args_are_quoted)",
    "mpi.launcher_args[0]": "one argv element, no shell (test_no_command_goes_through_a_shell)",
    "compile_cache_dir": "shlex.join in Plan.step_compile_cache_args "
                         "(test_compile_cache.py::test_the_workflow_passes_the_folder)",
}


def string_keys() -> list[str]:
    """Every config key whose value (or list element) is text."""
    out = []
    def text(sub: dict[str, Any]) -> bool:
        return "string" in _types(sub) or any(isinstance(v, str) for v in sub.get("enum", []))

    for key, sub in SCHEMA_KEYS.items():
        if text(sub):
            out.append(key)
        if "array" in _types(sub) and text(sub.get("items") or {}):
            out.append(f"{key}[0]")
    return sorted(out)


@pytest.mark.parametrize("key", string_keys())
def test_shell_unsafe_config_strings_are_rejected_or_quoted(
        key: str, default_config: dict[str, Any]) -> None:
    """``a; rm -rf ~`` (and a command substitution) in each text key: refused with the
    key named, unless the key is one whose text is quoted or never meets a shell."""
    base = key.removesuffix("[0]")
    for evil in (EVIL, "$(touch /tmp/gpubench-pwned)", "`id`"):
        value = [evil] if key.endswith("[0]") else evil
        cfg = with_key(default_config, base, value)
        if key in QUOTED:
            validate_config(cfg)  # accepted: the tests named in QUOTED prove it is safe
            continue
        with pytest.raises(ConfigError) as err:
            validate_config(cfg)
        assert str(err.value).startswith(f"config key {key}:"), str(err.value)


# -- Snakemake runs -------------------------------------------------------------------------


def slurm_stubs(folder: Path) -> str:
    """PATH with SLURM's clients replaced by ones that fail at once (see the docstring)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("sinfo", "sacct", "squeue", "sacctmgr", "scontrol", "srun", "sbatch"):
        stub = folder / name
        stub.write_text("#!/bin/sh\nexit 1\n")
        stub.chmod(0o755)
    return os.pathsep.join([str(folder), os.environ.get("PATH", "")])


class Workflow:
    """A small workflow run in its own working directory (its own .snakemake)."""

    def __init__(self, base: Path, env: dict[str, str], backends: list[str],
                 results_dir: Path | None = None, **config: Any) -> None:
        from gpubench.spec import KERNELS

        base.mkdir(parents=True, exist_ok=True)
        self.base, self.workdir = base, base / "work"
        self.workdir.mkdir(exist_ok=True)
        self.results = results_dir or base / "results"
        kernels: dict[str, Any] = {k: {"enabled": False} for k in KERNELS}
        kernels["vector_add"] = {"sizes": [1024, 4096], "dtypes": ["float64"]}
        cfg = {"backends": backends, "step_threads": 1, "threads": [1],
               "harness": {**FAST, "case_timeout_s": 120, "start_timeout_s": 120},
               "kernels": kernels, "environments": {"mode": "system"},
               "mpi": {"enabled": False}, **config}
        self.configfile = base / "config.yaml"
        self.configfile.write_text(yaml.safe_dump(cfg))
        self.env = {**env, "PATH": slurm_stubs(base / "stubs"), "PYTHONWARNINGS": ""}

    def args(self, *extra: str, target: str = "timings.csv") -> list[str]:
        return [SNAKEMAKE, "-s", str(ROOT / "workflow" / "Snakefile"), "-d",
                str(self.workdir), "--cores", "2", "--configfile", str(self.configfile),
                "--config", f"results_dir={self.results}", f"logs_dir={self.base}/logs",
                *extra, "--", str(self.results / target)]

    def run(self, *extra: str, target: str = "timings.csv", timeout: float = 300
            ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.args(*extra, target=target), cwd=ROOT, env=self.env,
                              capture_output=True, text=True, timeout=timeout)

    def start(self, *extra: str) -> subprocess.Popen[str]:
        """In a session of its own, so that a test can kill its whole process group."""
        return subprocess.Popen(self.args(*extra), cwd=ROOT, env=self.env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)

    def incomplete(self) -> set[str]:
        """Outputs Snakemake has marked incomplete: its jobs started and not recorded as
        finished (``.snakemake/incomplete``, one file per output, named by its path in
        URL-safe base64, split into folders of chunks starting with ``@`` when long)."""
        marks = self.workdir / ".snakemake" / "incomplete"
        found = set()
        for path in marks.rglob("*") if marks.exists() else []:
            if path.is_file() and path.name != "migration_underway":
                parts = [q.lstrip("@") for q in path.relative_to(marks).parts]
                found.add(base64.urlsafe_b64decode("".join(parts)).decode())
        return found

    def planned(self, backend: str) -> int:
        cfg = yaml.safe_load(self.configfile.read_text())
        return len(plan(backend, cfg, 1))


def test_pip_args_are_quoted(plugin_env: dict[str, str], tmp_path: Path) -> None:
    """``environments.pip_args`` take any text (``--index-url URL``): each is one shell
    word of build_env's command, whatever it contains."""
    pwned = tmp_path / "pwned"
    evil = [EVIL, f"$(touch {pwned})", f"`touch {pwned}`", "it's"]
    wf = Workflow(tmp_path, plugin_env, ["numpy-cpu"], environments={
        "mode": "venv", "pip_args": evil, "venv_dir": str(tmp_path / "venvs"),
        "spec_dir": str(ROOT / "workflow" / "envs" / "pip")})
    out = wf.run("-n", "-p", target="envs/numpy/lock.txt")
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-3000:]
    line = next(ln for ln in text.splitlines() if "build_env.py" in ln)
    words = shlex.split(line)  # how sh splits it
    for arg in evil:
        assert f"--pip-arg={arg}" in words, line
    assert "rm" not in words and "touch" not in words
    assert not pwned.exists()


def test_shell_unsafe_slurm_partition_is_refused(plugin_env: dict[str, str], tmp_path: Path
                                                 ) -> None:
    """A site profile whose partition or account is not a plain SLURM name stops the
    workflow before any job (sbatch is started through a shell)."""
    for name in ("slurm_partition", "slurm_account"):
        profile = tmp_path / name
        profile.mkdir()
        resources = {"slurm_partition": "debug", "slurm_account": "gpubench", name: EVIL}
        (profile / "config.yaml").write_text(yaml.safe_dump({"default-resources": {
            **resources, "runtime": 30, "mem_mb": 4000}}))
        out = subprocess.run(
            [SNAKEMAKE, "--profile", "profiles/slurm", "--workflow-profile", str(profile),
             "-n", "--config", f"results_dir={tmp_path}/r", f"logs_dir={tmp_path}/l"],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
            env={**plugin_env, "PATH": slurm_stubs(tmp_path / "stubs")})
        text = out.stdout + out.stderr
        assert out.returncode != 0
        assert f"profile setting default-resources.{name}: {EVIL!r} is not a SLURM name" \
            in text, text[-3000:]
        assert "Traceback" not in text


def _runs_a_shell(node: ast.AST) -> bool:
    """A call with ``shell=`` anything but False, or ``os.system`` / ``os.popen``."""
    if not isinstance(node, ast.Call):
        return False
    if any(kw.arg == "shell" and not (isinstance(kw.value, ast.Constant)
                                      and kw.value.value is False) for kw in node.keywords):
        return True
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr in ("system", "popen")
            and isinstance(func.value, ast.Name) and func.value.id == "os")


def _shell_calls(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    return [f"{path.name}:{node.lineno}" for node in ast.walk(tree) if _runs_a_shell(node)]


def test_no_command_goes_through_a_shell(tmp_path: Path) -> None:
    """Outside Snakemake's shell: directives (their values are checked or quoted, above),
    commands are argv lists: no ``shell=True``, ``os.system`` or ``os.popen`` in the
    package or the workflow's scripts; ``mpi.launcher_args`` stay one argv element each."""
    files = [*sorted((ROOT / "src").rglob("*.py")), *sorted(
        (ROOT / "workflow" / "scripts").glob("*.py"))]
    assert len(files) > 20
    found = [hit for f in files for hit in _shell_calls(f)]
    assert not found, found
    probe = tmp_path / "probe.py"  # the check finds what it looks for
    probe.write_text("import os, subprocess\nsubprocess.run('x', shell=True)\n"
                     "subprocess.run(['x'], shell=False)\nos.system('x')\n")
    assert _shell_calls(probe) == ["probe.py:2", "probe.py:4"]

    from gpubench.mpi import launch, step

    cfg = {"mpi": {"launcher_args": [EVIL, "--bind-to", "none"], "oversubscribe": True}}
    s = step.Step("reduction", "numpy-cpu", 2, cfg)
    s.launcher = launch.Launcher("mpiexec", "/usr/bin/mpiexec", "openmpi")
    argv = s.command(tmp_path / "spec.json", tmp_path / "out.jsonl")
    assert EVIL in argv and argv.index(EVIL) < argv.index(s.python)
    assert shlex.split(launch.command_text(argv)) == argv  # the launcher column, quoted


# -- strings in the report ------------------------------------------------------------------

#: a tag, an attribute-breaking quote, and an unbalanced matplotlib mathtext
TAINT = "<script>alert('{}')</script>\"'&$x^$"
KEEP = {"status", "device", "mode", "dtype", "timestamp", "kernel", "job", "path",
        "size_meaning", "stop_reason", "clock"}


def _taint_frame(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """Every text column a run fills from its environment or config, tainted (the
    columns that drive the report's structure are left: status, device, kernel, ...)."""
    frame = frame.copy()
    for col in frame.columns:
        if col not in KEEP and not pd.api.types.is_numeric_dtype(frame[col]):
            frame[col] = frame[col].astype(str) + TAINT.format(source)
    return frame


def _taint_json(value: Any, source: str) -> Any:
    if isinstance(value, dict):
        return {k: _taint_json(v, source) for k, v in value.items()}
    if isinstance(value, list):
        return [_taint_json(v, source) for v in value]
    if isinstance(value, str) and value != "":
        return value + TAINT.format(source)
    return value


def tainted_set(folder: Path) -> dict[str, Path]:
    from report_data import ENV, write_set

    from gpubench import environments

    env = _taint_json(copy.deepcopy(ENV), "env")
    env["packages"] = {f"pkg{TAINT.format('env')}": f"1.0{TAINT.format('env')}"}
    env["cuda_visible_devices"] = f"0{TAINT.format('env')}"
    paths = write_set(folder, env=env)
    for name, source in (("timings", "row"), ("samples", "row"), ("mpi", "mpi")):
        frame = pd.read_csv(paths[name])
        _taint_frame(frame, source).to_csv(paths[name], index=False)
    lock = environments.Lock({"env": "numpy", "status": "ok", "mode": "system",
                              "python": f"3.11{TAINT.format('lock')}", "platform": "linux",
                              "backend": "numpy-cpu"},
                             [f"numpy==2.0{TAINT.format('lock')}"])
    paths["lock"] = folder / "numpy-cpu.lock.txt"
    paths["lock"].write_text(lock.text())
    return paths


def _without_report_scripts(page: str) -> str:
    """The page less the scripts the report inlines itself, each by its exact text or
    attributes: table sorting, the figures' boot, the detail view, plotly.js, each
    figure's JSON and the detail view's."""
    from gpubench.report import figures, sections

    for script in (figures.SORT_JS, figures.BOOT_JS, sections.details.DETAILS_JS):
        page = page.replace(f"<script>{script}</script>", "", 1)
    return re.sub(r'<script (type="text/plain" id="gpubench-plotlyjs"|type="application/json"'
                  r' class="plot-spec" data-for="gpubench-fig-\d+"|type="application/json"'
                  r' id="gpubench-details-data")>.*?</script>', "", page, flags=re.S)


def test_strings_from_results_and_environment_are_escaped(tmp_path: Path) -> None:
    """Host and GPU names, package versions, CUDA_VISIBLE_DEVICES, reasons, locks and MPI
    columns carrying ``<script>``, quotes and a ``$`` that matplotlib would read as maths:
    every one is shown as text (escaped) in the report, summary.md and the run-vs-run
    page; none becomes a tag."""
    from gpubench.report import build_report, compare

    base, new = tainted_set(tmp_path / "base"), tainted_set(tmp_path / "new")
    out = tmp_path / "out"
    build_report(new["timings"], new["env"], out / "index.html", out / "summary.md",
                 samples_csv=new["samples"], locks=[new["lock"]], mpi_csv=new["mpi"],
                 workers=1)
    assert compare.main(["--base", str(tmp_path / "base"), "--new", str(tmp_path / "new"),
                         "--html", str(out / "compare.html"), "--md", str(out / "compare.md"),
                         "--jobs", "1"]) == 0
    assert base["timings"].exists()
    page = (out / "index.html").read_text(encoding="utf-8")
    cmp_page = (out / "compare.html").read_text(encoding="utf-8")
    for text in (page, cmp_page):
        assert "<script" not in _without_report_scripts(text).lower()
    def shown_escaped(source: str, text: str) -> bool:
        # html.escape writes a quote &#x27;, Jinja2's autoescape (markupsafe) &#39;
        raw = f"<script>alert('{source}')</script>"
        return html.escape(raw) in text or str(markupsafe.escape(raw)) in text

    for source in ("row", "env", "lock", "mpi"):  # each input is shown, escaped
        assert shown_escaped(source, page), source
    for source in ("row", "env"):
        assert shown_escaped(source, cmp_page), source
    for name in ("summary.md", "compare.md"):
        md = (out / name).read_text(encoding="utf-8")
        assert not re.search(r"(?<!\\)<script", md), name


# -- runs at the same time ------------------------------------------------------------------


def test_concurrent_writes_never_show_a_partial_file(tmp_path: Path) -> None:
    """Two writers keep replacing one CSV while a reader reads it 30 times: every read is
    one writer's whole file (write to a temporary, then rename), never a mix or a cut.
    The writers run until the reader is done, so a slow machine cannot make the reads
    miss the writes."""
    target = tmp_path / "raw" / "numpy-cpu.csv"
    frames = {who: results.rows_frame([_row(size=s, host=who) for s in range(1, 200)])
              for who in ("first", "second")}
    results.atomic_write_csv(target, frames["first"])
    errors: list[BaseException] = []
    writes = {who: 0 for who in frames}
    done = threading.Event()

    def writer(who: str) -> None:
        try:
            while not done.is_set() and writes[who] < 100_000:
                results.atomic_write_csv(target, frames[who])
                writes[who] += 1
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in frames]
    for t in threads:
        t.start()
    try:
        for _ in range(30):
            frame = results.read_timings(target)
            assert len(frame) == 199 and frame["host"].nunique() == 1
    finally:
        done.set()
        for t in threads:
            t.join()
    assert not errors and min(writes.values()) > 0, (errors, writes)
    assert sorted(p.name for p in target.parent.iterdir()) == ["numpy-cpu.csv"]  # no .tmp


def _snapshot(folder: Path) -> dict[Path, tuple[int, bytes]]:
    """Each file's inode and bytes (a file replaced or rewritten shows; Snakemake's touch
    of a finished job's outputs does not)."""
    return {p: (p.stat().st_ino, p.read_bytes()) for p in folder.rglob("*") if p.is_file()}


def test_two_runs_at_once(plugin_env: dict[str, str], tmp_path: Path) -> None:
    """While a run is in the middle of a step: a second Snakemake in the same working
    directory is refused by Snakemake's lock; one in another working directory with the
    same results_dir is refused before its first job by the results folder's lock, naming
    it and the run holding it. Neither touches a file; the first run then finishes with
    every planned row."""
    gate, tag = tmp_path / "gate", uuid.uuid4().hex
    gate.touch()
    env = {**plugin_env, "GPUBENCH_TEST_GATE": str(gate), "GPUBENCH_TEST_TAG": tag}
    first = Workflow(tmp_path / "first", env, ["gate-cpu"])
    proc = first.start()
    try:
        host = first.results / "env" / "host.json"  # then only the gated step is running
        wait_until(lambda: Path(f"{gate}.reached").exists() and host.exists(), 120,
                   "the first run's probe and step", proc)
        files = _snapshot(first.results)
        # The step's outputs in progress read as incomplete; told to re-run them (as
        # profiles/local does), Snakemake finds its directory locked.
        for extra, message in (((), "IncompleteFilesException"),
                               (("--rerun-incomplete",), "Directory cannot be locked")):
            same = first.run(*extra)
            assert same.returncode != 0
            assert message in same.stdout + same.stderr, (same.stdout + same.stderr)[-2000:]
        other = Workflow(tmp_path / "second", env, ["gate-cpu"], results_dir=first.results)
        t0 = time.monotonic()
        refused = other.run()
        text = refused.stdout + refused.stderr
        assert refused.returncode != 0 and time.monotonic() - t0 < 60
        assert f"config key results_dir: '{first.results}' is in use by another run " \
               f"(pid {proc.pid} on " in text, text[-3000:]
        assert "Traceback" not in text
        assert not (other.base / "logs" / "run_backend").exists()  # no job started
        assert _snapshot(first.results) == files
    finally:
        gate.unlink()
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out[-3000:]
    frame = results.read_timings(first.results / "timings.csv")
    assert len(frame) == first.planned("gate-cpu") and (frame["status"] == "ok").all()
    assert_none_left(tag)


def test_run_killed_mid_step_then_resumed(plugin_env: dict[str, str], tmp_path: Path) -> None:
    """SIGKILL to Snakemake's whole process group while gate-cpu's step is mid-case and
    numpy-cpu's step has finished. The killed step leaves its lock file and no CSV; its
    processes end with it. A re-run refuses the half-done step's outputs as incomplete;
    with ``--rerun-incomplete`` it finds Snakemake's directory lock, which the killed run
    could not remove, until ``--unlock``; then it re-runs that one step. Every planned
    row comes out once, and the finished step's rows are those measured before the kill.
    """
    gate, tag = tmp_path / "gate", uuid.uuid4().hex
    gate.touch()
    env = {**plugin_env, "GPUBENCH_TEST_GATE": str(gate), "GPUBENCH_TEST_TAG": tag}
    wf = Workflow(tmp_path, env, ["numpy-cpu", "gate-cpu"])
    raw = wf.results / "raw"
    proc = wf.start()
    try:
        done = [raw / "numpy-cpu.csv", wf.results / "env" / "host.json"]
        wait_until(lambda: Path(f"{gate}.reached").exists() and all(
            p.exists() and str(p) not in wf.incomplete() for p in done), 120,
            "numpy-cpu and the probe recorded as done, gate-cpu mid-step", proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert_none_left(tag)  # the step and its worker did not outlive the kill
    assert (raw / "gate-cpu.lock.txt").exists()  # the killed step's partial output
    assert str(raw / "gate-cpu.lock.txt") in wf.incomplete()
    assert not {str(p) for p in done} & wf.incomplete()
    assert not (raw / "gate-cpu.csv").exists() and not (raw / "gate-cpu.samples.csv").exists()
    assert not list(wf.results.rglob("*.tmp"))
    kept = {p: p.stat().st_mtime_ns for p in [*raw.glob("numpy-cpu.*"),
                                               wf.results / "env" / "host.json"]}
    before = results.read_timings(raw / "numpy-cpu.csv")
    gate.unlink()

    refused = wf.run()
    assert refused.returncode != 0
    assert "IncompleteFilesException" in refused.stderr
    assert str(raw / "gate-cpu.lock.txt") in refused.stderr
    locked = wf.run("--rerun-incomplete")
    assert locked.returncode != 0 and "Directory cannot be locked" in locked.stderr
    assert wf.run("--unlock").returncode == 0
    resumed = wf.run("--rerun-incomplete")
    assert resumed.returncode == 0, resumed.stderr[-3000:]

    assert {p: p.stat().st_mtime_ns for p in kept} == kept  # numpy-cpu, probe: not re-run
    frame = results.read_timings(wf.results / "timings.csv")
    counts = frame["backend"].value_counts().to_dict()
    assert counts == {"numpy-cpu": wf.planned("numpy-cpu"), "gate-cpu": wf.planned("gate-cpu")}
    assert (frame["status"] == "ok").all()
    numpy_rows = frame[frame["backend"] == "numpy-cpu"].set_index(list(results.KEY_NAMES))
    assert numpy_rows["timestamp"].sort_index().equals(
        before.set_index(list(results.KEY_NAMES))["timestamp"].sort_index())
    assert_none_left(tag)


# -- MPI ------------------------------------------------------------------------------------

try:
    import mpi4py  # noqa: F401

    HAVE_MPI = bool(shutil.which("mpiexec"))
except ImportError:
    HAVE_MPI = False
needs_mpi = pytest.mark.skipif(not HAVE_MPI, reason="needs mpiexec and mpi4py "
                               "(apt-get install openmpi-bin libopenmpi-dev; pip install mpi4py)")


def mpi_config(**mpi: Any) -> dict[str, Any]:
    return {"harness": {"seed": 1}, "mpi": {
        "time_limit_s": 60, "jobs": {"reduction": {"sizes": [1000, 2000]}},
        "harness": {"warmup": 1, "min_samples": 3, "max_samples": 10, "max_time_s": 0.01},
        **mpi}}


@needs_mpi
def test_mpi_job_with_more_ranks_than_devices(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Two GPU ranks on one GPU, and more CPU ranks than cores: every planned row
    ``skipped`` with the reason and the setting that allows it; nothing is launched."""
    from gpubench.mpi import devices, schema, step

    monkeypatch.setattr(devices, "nvml_gpu_count", lambda env=None: (1, ""))
    cores = len(os.sched_getaffinity(0))
    for backend, ranks, reason in (
            ("numba-gpu", 2, "2 ranks need 2 GPUs (one per rank), 1 visible; set "
                             "mpi.oversubscribe: true to share GPUs"),
            ("numpy-cpu", cores + 1, f"{cores + 1} ranks on {cores} cores: set "
                                     "mpi.oversubscribe: true")):
        out = tmp_path / backend
        with open(tmp_path / f"{backend}.log", "w") as log:
            s = step.run_step("reduction", backend, ranks, mpi_config(), str(out / "r.csv"),
                              str(out / "s.csv"), log=log)
        frame = schema.read(out / "r.csv")
        assert len(frame) == len(s.items) > 0
        assert (frame["status"] == "skipped").all()
        assert frame["reason"].str.startswith(reason).all(), frame["reason"].iloc[0]
        assert (frame["launcher"].fillna("") == "").all() and not s.samples


@needs_mpi
def test_killed_mpi_step_leaves_no_rank_behind(tmp_path: Path) -> None:
    """SIGKILL to an MPI step while rank 1 hangs: its launcher (in a session of its own)
    gets SIGTERM from the kernel and ends both ranks."""
    tag = uuid.uuid4().hex
    code = ("import sys\nfrom gpubench.mpi import step\n"
            f"step.run_step('reduction', 'numpy-cpu', 2, {mpi_config(oversubscribe=True)!r},"
            f" {str(tmp_path / 'r.csv')!r}, {str(tmp_path / 's.csv')!r})\n")
    env = {**os.environ, "GPUBENCH_MPI_FAULT": "hang_rank1", "GPUBENCH_TEST_TAG": tag,
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    with open(tmp_path / "log", "w") as log:
        proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=log,
                                stderr=subprocess.STDOUT)

        def ranks() -> list[int]:
            return [pid for pid in tagged_processes(tag)
                    if cmdline(pid)[1:3] == [b"-m", b"gpubench.mpi.worker"]]
        try:
            wait_until(lambda: len(ranks()) == 2, 60, "two ranks", proc)
            time.sleep(1)  # rank 1 is in its hang, rank 0 waits for it
        finally:
            proc.kill()
            proc.wait()
    assert_none_left(tag, within=20)
    assert not (tmp_path / "r.csv").exists()


if __name__ == "__main__":
    print(readme_table())


def test_results_folder_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    """The lock behind ``concurrent-shared-results``: held by one process at a time,
    named in the refusal; where the filesystem cannot lock, a warning and no refusal."""
    from gpubench import runlock

    folder = tmp_path / "results"
    code = ("import sys, time\nfrom gpubench import runlock\nrunlock.claim(sys.argv[1])\n"
            "print('held', flush=True)\ntime.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(folder)], text=True,
                              stdout=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    try:
        assert holder.stdout and holder.stdout.readline().strip() == "held"
        with pytest.raises(runlock.FolderBusy, match=rf"'{re.escape(str(folder))}' is in "
                           rf"use by another run \(pid {holder.pid} on "):
            runlock.claim(folder)
    finally:
        holder.kill()
        holder.wait()
    assert runlock.claim(folder) == folder / runlock.LOCK_NAME  # released by the kernel

    def no_locks(fh: Any, op: int) -> None:
        raise OSError(37, "No locks available")

    monkeypatch.setattr(runlock.fcntl, "flock", no_locks)
    assert runlock.claim(tmp_path / "nfs") == tmp_path / "nfs" / runlock.LOCK_NAME
    assert "cannot lock" in capsys.readouterr().err
