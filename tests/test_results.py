"""The results schema: validation errors name the file and column; writes are atomic."""

from __future__ import annotations

import os

import pytest

from gpubench import results


def _row(**kw):
    row = results.empty_row()
    row.update(framework="numpy", device="cpu", backend="numpy-cpu", implementation="ufunc",
               kernel="vector_add", variant="default", size=1024, dtype="float64",
               threads=1, status="ok", median_s=1e-6, samples=5,
               schema_version=results.SCHEMA_VERSION, mode="hot")
    row.update(kw)
    return row


def test_valid_frame_roundtrips(tmp_path):
    frame = results.rows_frame([_row(), _row(size=2048)])
    results.atomic_write_csv(tmp_path / "t.csv", frame)
    back = results.read_timings(tmp_path / "t.csv")
    assert list(back.columns) == list(results.COLUMN_NAMES)
    assert back["size"].tolist() == [1024, 2048]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([_row(status="fast")], "status"),
        ([_row(median_s=float("nan"))], "positive median_s"),
        ([_row(status="error", reason="")], "without a reason"),
        ([_row(), _row()], "share a key"),
        ([_row(schema_version=0)], "schema version"),
    ],
)
def test_invalid_rows_are_rejected(rows, message):
    with pytest.raises(results.SchemaError, match=message):
        results.validate(results.rows_frame(rows))


def test_missing_column_and_bad_type_name_the_file(tmp_path):
    frame = results.rows_frame([_row()])
    frame.drop(columns=["median_s"]).to_csv(tmp_path / "a.csv", index=False)
    with pytest.raises(results.SchemaError, match=r"a\.csv.*median_s"):
        results.read_timings(tmp_path / "a.csv")
    frame.assign(size="big").to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(results.SchemaError, match=r"b\.csv.*'size'"):
        results.read_timings(tmp_path / "b.csv")


def test_missing_empty_and_corrupt_files_name_the_file(tmp_path):
    with pytest.raises(results.SchemaError, match=r"nope\.csv: file is missing"):
        results.read_timings(tmp_path / "nope.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(results.SchemaError, match=r"empty\.csv"):
        results.read_timings(tmp_path / "empty.csv")
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00garbage\x00\n\x01")
    with pytest.raises(results.SchemaError, match=r"bin\.csv"):
        results.read_timings(tmp_path / "bin.csv")


def test_atomic_write_leaves_no_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "out.csv"

    def explode(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", explode)
    with pytest.raises(OSError):
        results.atomic_write_text(target, "data")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_bytes_writes_them_exactly_with_a_plain_files_mode(tmp_path):
    from gpubench.files import atomic_write_bytes

    data = bytes(range(256)) * 3 + b"\r\n\x00"  # no newline translation, no encoding
    atomic_write_bytes(tmp_path / "sub" / "k.cubin", data)
    assert (tmp_path / "sub" / "k.cubin").read_bytes() == data
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "sub" / "k.cubin").stat().st_mode & 0o777 == 0o666 & ~umask
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["k.cubin"]


def test_schema_markdown_lists_every_column():
    text = results.schema_markdown()
    for name in results.COLUMN_NAMES:
        assert f"`{name}`" in text


@pytest.mark.parametrize("suffix", [".csv.gz", ".csv.xz"])
def test_compressed_timings_and_samples_read_as_the_plain_files(tmp_path, suffix):
    """The committed evidence is compressed (gzip, xz): every reader takes it by suffix,
    and a damaged file is a SchemaError naming it, not a decompressor's traceback."""
    import gzip
    import lzma

    compress = {".csv.gz": gzip.compress, ".csv.xz": lzma.compress}[suffix]
    frame = results.rows_frame([_row(), _row(size=2048)])
    results.atomic_write_csv(tmp_path / "t.csv", frame)
    packed = tmp_path / f"t{suffix}"
    packed.write_bytes(compress((tmp_path / "t.csv").read_bytes()))
    assert results.read_timings(packed).equals(results.read_timings(tmp_path / "t.csv"))
    assert results.record_lines(packed) == results.record_lines(tmp_path / "t.csv") == [2, 3]
    assert results.find_csv(tmp_path, "t") == tmp_path / "t.csv"
    (tmp_path / "t.csv").unlink()
    assert results.find_csv(tmp_path, "t") == packed
    assert results.find_csv(tmp_path, "nothing") is None
    broken = tmp_path / f"broken{suffix}"
    broken.write_bytes(packed.read_bytes()[: len(packed.read_bytes()) // 2])
    with pytest.raises(results.SchemaError, match=rf"broken{suffix.replace('.', r'.')}"):
        results.read_timings(broken)
    with pytest.raises(results.SchemaError, match="broken"):
        results.read_samples(broken)
    assert results.record_lines(broken) is None
