"""Data cannot rot silently (issue 31, item 5): every Parquet page fastcredit
writes carries a CRC-32 checksum, every page it reads is verified, and a file
changed after it was written is refused naming it, by the library and by the
command line (one line, exit status 2), never scored; an ``m`` larger than
the actions in the data and a negative ``beta`` are refused by name."""
import os
import subprocess
import sys

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

from fastcredit import scoring  # noqa: E402
from fastcredit.cli import write_synthetic  # noqa: E402
from fastcredit.scoring import (ActionCountError, ScoreConfig,  # noqa: E402
                                UnreadableFileError)


def fastcredit(*args, cwd):
    return subprocess.run([sys.executable, "-m", "fastcredit.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def one_line(result, *words):
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """5,000 requests written by ``fastcredit synth`` (as a user makes them)."""
    d = tmp_path_factory.mktemp("synth")
    result = fastcredit("synth", "requests.parquet", "--requests", 5000, "--quiet", cwd=d)
    assert result.returncode == 0, result.stderr
    return d / "requests.parquet"


def corrupt(path, dest, at=0.5, size=4096, seed=0):
    """``path`` with ``size`` bytes at the fraction ``at`` of it overwritten."""
    data = bytearray(path.read_bytes())
    i = int(len(data) * at)
    data[i:i + size] = np.random.default_rng(seed).integers(0, 256, size, np.uint8).tobytes()
    dest.write_bytes(bytes(data))
    return dest


def page_checksums(path) -> bool:
    """Whether every data page of ``path`` verifies (reading it checks)."""
    pq.ParquetFile(path, page_checksum_verification=True).read()
    return True


def has_checksums(path) -> bool:
    """Whether the pages carry CRCs: a flipped byte inside the first data
    page is then refused by a verifying reader."""
    _, start, length = max(chunks(path), key=lambda c: c[2])
    data = bytearray(path.read_bytes())
    at = start + length // 2
    data[at] ^= 0xFF
    probe = path.with_name(".probe." + path.name)
    probe.write_bytes(bytes(data))
    try:
        pq.ParquetFile(probe, page_checksum_verification=True).read()
        return False
    except OSError as err:
        return "CRC" in str(err)
    finally:
        probe.unlink()


def test_synth_and_score_write_page_checksums(synthetic, tmp_path):
    assert has_checksums(synthetic) and page_checksums(synthetic)
    out = tmp_path / "scored.parquet"
    scoring.score_parquet(synthetic, out, ScoreConfig(base="base_advantage"))
    assert has_checksums(out) and page_checksums(out)
    d = tmp_path / "dir"
    scoring.score_parquet([synthetic], str(d) + "/", ScoreConfig())
    assert has_checksums(d / synthetic.name)


def test_4_kb_overwritten_in_the_middle_is_refused_naming_the_file(synthetic, tmp_path):
    bad = corrupt(synthetic, tmp_path / "bad.parquet", at=0.5)
    result = fastcredit("score", "bad.parquet", "out.parquet", cwd=tmp_path)
    one_line(result, "bad.parquet", "cannot be read")
    assert sorted(os.listdir(tmp_path)) == ["bad.parquet"]   # nothing written
    with pytest.raises(UnreadableFileError, match="bad.parquet") as info:
        scoring.score_parquet(bad, tmp_path / "out.parquet")
    assert info.value.path.endswith("bad.parquet")
    assert sorted(os.listdir(tmp_path)) == ["bad.parquet"]


def chunks(path):
    """(leaf path, first byte, bytes) of each column chunk of row group 0."""
    meta = pq.ParquetFile(path).metadata.row_group(0)
    out = []
    for i in range(meta.num_columns):
        c = meta.column(i)
        start = min(o for o in (c.dictionary_page_offset, c.data_page_offset) if o)
        out.append((c.path_in_schema, start, c.total_compressed_size))
    return out


def test_4_kb_overwritten_in_any_column_read_is_refused(synthetic, tmp_path):
    """Every column a run reads is verified: 4 KB overwritten in the middle
    of any column chunk is refused (prerank is read with capacity, its only
    use)."""
    size = synthetic.stat().st_size
    for leaf, start, length in chunks(synthetic):
        bad = corrupt(synthetic, tmp_path / "bad.parquet",
                      at=(start + length // 2 - 2048) / size)
        with pytest.raises(UnreadableFileError, match="bad.parquet"):
            scoring.score_parquet(bad, tmp_path / "out.parquet",
                                  ScoreConfig(base="base_advantage", capacity=10))
        assert sorted(os.listdir(tmp_path)) == ["bad.parquet"], leaf


def test_a_column_the_run_does_not_read_is_not_verified(synthetic, tmp_path):
    """Without capacity the prerank column is not read (nor verified): the
    scores are those of the intact file, which is what a run uses."""
    size = synthetic.stat().st_size
    leaf, start, length = next(c for c in chunks(synthetic) if c[0].endswith("prerank"))
    bad = corrupt(synthetic, tmp_path / "bad.parquet", at=(start + length // 2) / size)
    scoring.score_parquet(bad, tmp_path / "a.parquet")
    scoring.score_parquet(synthetic, tmp_path / "b.parquet")
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "b.parquet"))
    with pytest.raises(UnreadableFileError):
        scoring.score_parquet(bad, tmp_path / "c.parquet", ScoreConfig(capacity=10))


def test_a_corrupt_file_inside_a_directory_is_named(synthetic, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    table = pq.read_table(synthetic)
    for i in range(3):
        write_synthetic(src / f"part-{i}.parquet", 1000, seed=i, progress=False)
    corrupt(src / "part-1.parquet", src / "part-1.parquet", at=0.5)
    result = fastcredit("score", "in", "out/", cwd=tmp_path)
    one_line(result, "part-1.parquet")
    assert not (tmp_path / "out").exists()
    assert table.num_rows == 5000


def test_a_file_without_checksums_is_read_as_it_is(synthetic, tmp_path):
    """Older files (pyarrow's default writes no checksums) cannot be
    verified: they are read, and score like the same data with checksums."""
    plain = tmp_path / "plain.parquet"
    pq.write_table(pq.read_table(synthetic), plain)
    assert not has_checksums(plain)
    a = scoring.score_parquet(plain, tmp_path / "a.parquet")
    b = scoring.score_parquet(synthetic, tmp_path / "b.parquet")
    assert a.scored == b.scored == 5000
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "b.parquet"))


def test_m_larger_than_the_actions_present_is_refused(synthetic, tmp_path):
    result = fastcredit("score", synthetic, "out.parquet", "--m", 6, cwd=tmp_path)
    one_line(result, "--m 6", "5 actions")
    assert os.listdir(tmp_path) == []
    with pytest.raises(ActionCountError, match="m = 6 is more than the 5 actions") as info:
        scoring.score_parquet(synthetic, tmp_path / "out.parquet", ScoreConfig(m=6))
    assert (info.value.m, info.value.present) == (6, 5)
    assert os.listdir(tmp_path) == []
    # synth's files state their actions (statistics): refused before any work
    from fastcredit.scoring import pipeline

    def no_work(*args, **kwargs):
        raise AssertionError("scored")
    real, pipeline._score = pipeline._score, no_work
    try:
        with pytest.raises(ActionCountError, match="m = 6"):
            scoring.score_parquet(synthetic, tmp_path / "out.parquet", ScoreConfig(m=6))
    finally:
        pipeline._score = real
    # without statistics: refused once the data are read, the output discarded
    pq.write_table(pq.read_table(synthetic), tmp_path / "nostats.parquet",
                   write_statistics=False, row_group_size=1000)
    with pytest.raises(ActionCountError, match="m = 7 is more than the 5"):
        scoring.score_parquet(tmp_path / "nostats.parquet", tmp_path / "out.parquet",
                              ScoreConfig(m=7))
    assert os.listdir(tmp_path) == ["nostats.parquet"]
    (tmp_path / "nostats.parquet").unlink()
    # the data's own m scores; per-action columns beyond m are refused by name
    table = pa.table({"request_id": [0, 1],
                      **{f"action_{i}": [[{"ad_id": i, "score": 1.0, "value": 1.0}]] * 2
                         for i in range(3)}})
    pq.write_table(table, tmp_path / "cols.parquet")
    with pytest.raises(ValueError, match="'action_2'"):
        scoring.score_parquet(tmp_path / "cols.parquet", tmp_path / "o.parquet",
                              ScoreConfig(m=2))
    with pytest.raises(ValueError, match="'action_3'"):
        scoring.score_parquet(tmp_path / "cols.parquet", tmp_path / "o.parquet",
                              ScoreConfig(m=4))
    assert scoring.score_parquet(tmp_path / "cols.parquet", tmp_path / "o.parquet",
                                 ScoreConfig(m=3)).scored == 2


def test_negative_beta_is_refused(synthetic, tmp_path):
    result = fastcredit("score", synthetic, "out.parquet", "--base", "base_advantage",
                        "--beta", "-1", cwd=tmp_path)
    one_line(result, "--beta", "-1")
    with pytest.raises(ValueError, match="beta must be >= 0"):
        ScoreConfig(beta=-1.0)
    assert ScoreConfig(beta=0.0).beta == 0.0
