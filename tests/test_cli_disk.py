"""Commands on a full disk: an error of writing names the output (not the
input), and synth refuses, before writing anything, a file larger than the
space free where it goes.

A disk is made full for real without filling the machine's: a child whose
file size limit (RLIMIT_FSIZE) is small gets EFBIG from any write past it,
as it would get ENOSPC from a full disk; and, when running as root on
Linux, a 256 kB tmpfs gives ENOSPC itself."""
import collections
import errno
import os
import resource
import shutil
import signal
import subprocess
import sys

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

from fastcredit import cli  # noqa: E402
from fastcredit._output import OutputError, WriteError, write_file  # noqa: E402
from fastcredit.cli import synth  # noqa: E402

from test_data_safety import assert_user_error, temps  # noqa: E402

LIMIT = 64 * 1024   # bytes a limited child may write to one file
Usage = collections.namedtuple("Usage", "total used free")   # as shutil.disk_usage's


def fastcredit(*args, cwd, file_limit=None):
    """Run the command line to completion, with writes past ``file_limit``
    bytes failing with EFBIG (SIGXFSZ ignored: it would kill the child)."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))
    return subprocess.run([sys.executable, "-m", "fastcredit.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120,
                          preexec_fn=limit if file_limit is not None else None)


@pytest.fixture(scope="module")
def requests(tmp_path_factory):
    """5,000 requests: about 8 MB of Parquet, and about 1 MB of scores."""
    path = tmp_path_factory.mktemp("requests") / "requests.parquet"
    cli.write_synthetic(path, 5_000, seed=5, row_group=1_000, progress=False)
    return path


def assert_output_error(result, output, reason):
    """Exit status 2 and one line naming the output and ``reason``, not the
    input."""
    line = assert_user_error(result, f"cannot write the output {output!r}", reason)
    assert "input" not in line, line


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="no RLIMIT_FSIZE")
def test_score_into_a_full_disk_names_the_output(tmp_path, requests):
    before = requests.read_bytes()
    result = fastcredit("score", requests, "scored.parquet", "--batch-rows", 1_000, "--quiet",
                        cwd=tmp_path, file_limit=LIMIT)
    # EFBIG here; ENOSPC (test_score_into_a_full_tmpfs_names_the_output) the same way
    assert_output_error(result, "scored.parquet", os.strerror(errno.EFBIG))
    assert os.listdir(tmp_path) == []   # no output, no temporary
    assert requests.read_bytes() == before
    # a dataset directory as output: the directory is named
    (tmp_path / "scored").mkdir()
    result = fastcredit("score", requests, "scored", "--quiet", cwd=tmp_path,
                        file_limit=LIMIT)
    assert_output_error(result, "scored", os.strerror(errno.EFBIG))
    assert os.listdir(tmp_path) == ["scored"] and os.listdir(tmp_path / "scored") == []
    # the same run with room enough writes the output (the limit is the cause)
    result = fastcredit("score", requests, "scored.parquet", cwd=tmp_path, file_limit=2**24)
    assert result.returncode == 0, result.stderr
    assert pq.ParquetFile(tmp_path / "scored.parquet").metadata.num_rows == 5_000


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="no RLIMIT_FSIZE")
def test_synth_into_a_full_disk_names_the_output(tmp_path):
    (tmp_path / "out.parquet").write_bytes(b"the previous output")
    result = fastcredit("synth", "out.parquet", "--requests", 5_000, "--row-group", 1_000,
                        "--quiet", cwd=tmp_path, file_limit=LIMIT)
    assert_output_error(result, "out.parquet", os.strerror(errno.EFBIG))
    assert os.listdir(tmp_path) == ["out.parquet"]
    assert (tmp_path / "out.parquet").read_bytes() == b"the previous output"


@pytest.fixture
def tmpfs(tmp_path):
    """A directory on a 256 kB tmpfs (root on Linux only)."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0 \
            or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root on Linux")
    mnt = tmp_path / "small"
    mnt.mkdir()
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)],
                           capture_output=True, text=True)
    if mount.returncode:
        pytest.skip(f"cannot mount a tmpfs: {mount.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_score_into_a_full_tmpfs_names_the_output(tmpfs, requests):
    before = requests.read_bytes()
    result = fastcredit("score", requests, tmpfs / "scored.parquet", "--batch-rows", 1_000,
                        "--quiet", cwd=tmpfs.parent)
    assert_output_error(result, str(tmpfs / "scored.parquet"), os.strerror(errno.ENOSPC))
    assert os.listdir(tmpfs) == []
    assert requests.read_bytes() == before
    # synth refuses before writing: the file would not fit
    result = fastcredit("synth", tmpfs / "s.parquet", "--requests", 5_000, cwd=tmpfs.parent)
    assert_user_error(result, "--requests 5,000", "kB free")
    assert os.listdir(tmpfs) == []


def test_write_file_names_the_output(tmp_path):
    """demo --out and --html write through write_file: a full disk there
    names the file too."""
    def full(f):
        f.write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(WriteError) as caught:
        write_file(tmp_path / "d.npz", full)
    assert caught.value.errno == errno.ENOSPC
    assert str(caught.value) == \
        f"cannot write the output {str(tmp_path / 'd.npz')!r}: No space left on device"
    assert os.listdir(tmp_path) == []


# --- synth: the size it writes, checked against the free space ---------------

@pytest.mark.parametrize("n, m, k, row_group", [
    (0, 5, 20, 65_536), (1, 16, 20, 1), (3, 1, 1, 1), (2_000, 5, 20, 65_536),
    (2_000, 16, 1, 65_536), (3_000, 1, 1, 1), (3_000, 2, 3, 50), (300, 1, 500, 65_536)])
def test_synthetic_bytes_is_an_estimate_from_above(tmp_path, n, m, k, row_group):
    """The estimate synth checks against the free space is never below the
    file it writes (a run that fills the disk), and not far above it (a run
    that fits refused)."""
    path = tmp_path / "s.parquet"
    cli.write_synthetic(path, n, m=m, k=k, row_group=row_group, progress=False, threads=1)
    size, estimate = path.stat().st_size, synth.synthetic_bytes(n, m=m, k=k, row_group=row_group)
    assert size <= estimate <= 1.6 * size, (size, estimate)


def test_synth_refuses_more_than_the_free_space_before_writing(tmp_path):
    result = fastcredit("synth", "out.parquet", "--requests", 10**13, cwd=tmp_path)
    line = assert_user_error(result, "--requests 10,000,000,000,000", "PB",
                             "'" + str(tmp_path / "out.parquet") + "'", "free")
    assert result.stdout == "" and os.listdir(tmp_path) == [], line


def test_synth_checks_the_free_space_of_the_outputs_file_system(tmp_path, monkeypatch,
                                                                capsys):
    size = synth.synthetic_bytes(300, m=5, k=20, row_group=100)
    free, seen = size - 1, []

    def disk_usage(path):
        seen.append(path)
        return Usage(10 * size, 10 * size - free, free)
    monkeypatch.setattr(shutil, "disk_usage", disk_usage)
    out = tmp_path / "out.parquet"
    argv = ["synth", str(out), "--requests", "300", "--row-group", "100"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fastcredit synth: --requests 300 would "
                                                   f"write about {synth._size(size)} to ")
    assert os.listdir(tmp_path) == [] and seen == [os.path.realpath(tmp_path)]
    with pytest.raises(OutputError, match="n_requests = 300 would write about"):
        cli.write_synthetic(out, 300, row_group=100, progress=False)
    assert os.listdir(tmp_path) == []
    free = size   # just enough: written, and the size said before the work
    assert cli.main(argv) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"fastcredit synth: writing 300 requests, about "
                          f"{synth._size(size)}, to {out}\n")
    assert pq.ParquetFile(out).metadata.num_rows == 300 and temps(tmp_path) == []


def test_sizes_are_said_in_decimal_units():
    assert [synth._size(n) for n in (0, 999, 1_000, 2_116, 1.7e9, 2.1e16, 3e21)] == \
        ["0 bytes", "999 bytes", "1.0 kB", "2.1 kB", "1.7 GB", "21.0 PB", "3.0 ZB"]
