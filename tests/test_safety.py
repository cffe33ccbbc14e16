"""Safe by default with the user's files (gpubench.safety): outputs that are inputs,
the report's figures folder, the results folder."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpubench import report, safety
from gpubench import workflow as gw
from gpubench.report import compare

ROOT = Path(__file__).resolve().parents[1]


def run_set(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    files = {"timings": folder / "timings.csv", "samples": folder / "samples.csv",
             "env": folder / "env" / "host.json", "lock": folder / "raw" / "a.lock.txt"}
    for name, path in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"the run's {name}\n")
    return files


def report_args(f: dict[str, Path], html: Path, md: Path) -> list[str]:
    return ["--timings", str(f["timings"]), "--env", str(f["env"]), "--samples",
            str(f["samples"]), "--locks", str(f["lock"]), "--html", str(html), "--md",
            str(md)]


@pytest.mark.parametrize("which", ["timings", "env", "samples", "lock"])
@pytest.mark.parametrize("flag", ["html", "md"])
def test_report_refuses_to_overwrite_an_input(tmp_path, capsys, which, flag):
    f = run_set(tmp_path / "results")
    outs = {"html": tmp_path / "index.html", "md": tmp_path / "summary.md"}
    outs[flag] = f[which]
    with pytest.raises(SystemExit) as exc:
        report.main(report_args(f, outs["html"], outs["md"]))
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert f"--{flag} {f[which]} is one of the inputs" in err
    assert f[which].read_text() == f"the run's {which}\n"
    assert not (tmp_path / "index.html").exists() and not (tmp_path / "summary.md").exists()


def test_report_refuses_the_same_file_twice_and_a_path_spelled_otherwise(tmp_path, capsys):
    f = run_set(tmp_path / "results")
    with pytest.raises(SystemExit) as exc:
        report.main(report_args(f, tmp_path / "out.txt", tmp_path / "out.txt"))
    assert exc.value.code == 2 and "--md" in capsys.readouterr().err
    twisted = tmp_path / "results" / "raw" / ".." / "timings.csv"
    with pytest.raises(SystemExit) as exc:
        report.main(report_args(f, tmp_path / "i.html", twisted))
    assert exc.value.code == 2 and "is one of the inputs" in capsys.readouterr().err


@pytest.mark.parametrize("target", ["timings.csv", "samples.csv", "host.json"])
def test_compare_refuses_to_overwrite_either_sets_files(tmp_path, capsys, target):
    base, new = tmp_path / "base", tmp_path / "new"
    run_set(base)
    run_set(new)
    (new / "host.json").write_text("the run's host.json\n")
    victim = new / target
    before = victim.read_text()
    with pytest.raises(SystemExit) as exc:
        compare.main(["--base", str(base), "--new", str(new), "--html", str(victim)])
    assert exc.value.code == 2 and "is one of the inputs" in capsys.readouterr().err
    assert victim.read_text() == before
    with pytest.raises(SystemExit) as exc:  # a timings CSV given: its neighbours count
        compare.main(["--base", str(base / "timings.csv"), "--new", str(new),
                      "--html", str(tmp_path / "c.html"), "--md", str(base / "samples.csv")])
    assert exc.value.code == 2 and "--md" in capsys.readouterr().err


# -- the figures folder -------------------------------------------------------------------


@pytest.fixture
def fake_build(monkeypatch):
    """build_report that draws two figures as the real one does (write_pngs removes
    the folder's fig-*.png first), without reading anything."""
    calls = []

    def build(timings, env, html, md, samples=None, locks=(), mpi=None, mpi_samples=None,
              workers=None, figures_dir=None, suite_json=None):
        folder = safety.figures_folder(md, figures_dir)
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("fig-*.png"):
            old.unlink()
        for i in (1, 2):
            (folder / f"fig-{i:03d}.png").write_text("png")
        Path(html).write_text("page")
        Path(md).write_text(f"![a]({folder.name}/fig-001.png)\n")
        calls.append(folder)

    monkeypatch.setattr(report, "build_report", build)
    return calls


def test_report_replaces_its_figures_and_refuses_a_foreign_one(tmp_path, capsys, fake_build):
    f = run_set(tmp_path / "results")
    out = tmp_path / "results" / "report"
    out.mkdir()
    args = report_args(f, out / "index.html", out / "summary.md")
    assert report.main(args) == 0
    figures = out / "summary_figures"
    assert (figures / ".gpubench-figures").read_text().split() == ["fig-001.png",
                                                                   "fig-002.png"]
    (figures / "notes.txt").write_text("mine")
    assert report.main(args) == 0  # its own figures are replaced, other files stay
    assert (figures / "notes.txt").read_text() == "mine" and len(fake_build) == 2
    (figures / "fig-777.png").write_text("my own figure")
    with pytest.raises(SystemExit) as exc:
        report.main(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "fig-777.png" in err and "no earlier report" in err
    assert (figures / "fig-777.png").read_text() == "my own figure" and len(fake_build) == 2


def test_a_report_from_before_the_manifest_counts_the_figures_it_links(tmp_path):
    figures = tmp_path / "summary_figures"
    figures.mkdir()
    for name in ("fig-001.png", "fig-002.png"):
        (figures / name).write_text("png")
    md = tmp_path / "summary.md"
    md.write_text("![a](summary_figures/fig-001.png)\n")
    assert [p.name for p in safety.foreign_figures(figures, md)] == ["fig-002.png"]
    md.write_text("![a](summary_figures/fig-001.png) ![b](summary_figures/fig-002.png)")
    assert safety.foreign_figures(figures, md) == []


# -- the results folder -------------------------------------------------------------------


def test_root_and_home_are_refused_naming_the_key(tmp_path):
    with pytest.raises(safety.UnsafeFolder, match=r"config key results_dir: '/' is the root"):
        safety.check_results_folder("/", "results_dir")
    home = tmp_path / "home"
    home.mkdir()
    with pytest.raises(safety.UnsafeFolder, match=r"config key logs_dir: .* is the home"):
        safety.check_results_folder(str(home / "." / ""), "logs_dir", home=home,
                                    marker_needed=False)
    with pytest.raises(safety.UnsafeFolder, match="is the root folder"):
        safety.check_results_folder("/tmp/..", "results_dir")


def test_a_results_folder_is_new_empty_or_marked(tmp_path):
    safety.check_results_folder(tmp_path / "new")  # not there yet
    empty = tmp_path / "empty"
    empty.mkdir()
    safety.check_results_folder(empty)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        (foreign / name).write_text("x")
    with pytest.raises(safety.UnsafeFolder) as exc:
        safety.check_results_folder(foreign)
    message = str(exc.value)
    assert message.startswith("config key results_dir:") and "a.txt, b.txt, c.txt and 1 "\
        "more" in message and f"touch {foreign}/.gpubench-results" in message
    (foreign / ".gpubench-run.lock").write_text("")  # an earlier run's lock
    safety.check_results_folder(foreign)
    (foreign / ".gpubench-run.lock").unlink()
    safety.mark_results_folder(foreign)
    safety.check_results_folder(foreign)


def test_prepare_marks_the_folder_it_will_use_and_refuses_others(tmp_path):
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config.update(results_dir=str(tmp_path / "r"), logs_dir=str(tmp_path / "l"))
    gw.prepare(config)
    assert (tmp_path / "r" / safety.RESULTS_MARKER).is_file()
    gw.prepare(config)  # an earlier run's folder: used again
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("x")
    config["results_dir"] = str(tmp_path / "mine")
    with pytest.raises(gw.SetupError, match="config key results_dir"):
        gw.prepare(config)
    assert not (tmp_path / "mine" / safety.RESULTS_MARKER).exists()
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == [
        "thesis.tex"]


@pytest.mark.parametrize("key", ["results_dir", "logs_dir"])
def test_the_config_check_refuses_root_and_home(tmp_path, key):
    from gpubench.config import ConfigError, load_config

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    for bad in ("/", str(Path.home())):
        config[key] = bad
        path = tmp_path / "c.yaml"
        path.write_text(yaml.safe_dump(config))
        with pytest.raises(ConfigError, match=f"config key {key}: .* is the"):
            load_config(path)


def test_compare_reads_and_guards_compressed_result_sets(tmp_path):
    """A results folder committed compressed (``timings.csv.gz``, ``samples.csv.xz``) is
    found by compare, and each of its files counts as an input not to overwrite."""
    from gpubench import results

    assert safety.CSV_SUFFIXES == results.CSV_SUFFIXES
    folder = tmp_path / "set"
    folder.mkdir()
    listed = safety.result_set_files(folder)
    for stem in ("timings", "samples"):
        assert [folder / f"{stem}{s}" for s in results.CSV_SUFFIXES] == [
            p for p in listed if p.name.startswith(stem)]
    assert safety.result_set_files(folder / "t.csv.gz")[0] == folder / "t.csv.gz"
    # the committed folder, compressed as committed: resolve finds both files
    src = ROOT / "evidence" / "h100-default-suite"  # committed evidence: fails when absent
    timings, samples = results.find_csv(src, "timings"), results.find_csv(src, "samples")
    assert timings is not None and timings.name == "timings.csv.gz"
    assert samples is not None and samples.name.startswith("samples.csv."), samples
    got = compare.resolve(src)
    assert got.timings == timings and len(got.df) == 684
    assert got.samples.by_row and "matched to their samples" in got.samples.note
