"""Commands never lose data: a user error is one line on stderr naming the
file, row or option, and exit status 2, never a traceback; outputs are
written through a temporary in the destination's directory, renamed when
complete and removed on any error or signal (SIGKILL: by the next run); an
output that resolves to an input is refused before any work starts.

The commands run in subprocesses (``python -m fastcredit.cli``, or the
console script ``fastcredit``), as a user runs them."""
import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

from fastcredit import _output, cli  # noqa: E402
from fastcredit._output import AtomicOutput, OutputError, check_output, write_file  # noqa: E402

TEMP = re.compile(r"\..+\.fastcredit-(\d+)\.(tmp|old)")


def fastcredit(*args, cwd, **kwargs):
    """Run the command line to completion."""
    return subprocess.run([sys.executable, "-m", "fastcredit.cli", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=120, **kwargs)


def in_process(*args, cwd):
    """Run ``cli.main`` in this process (faster than a subprocess; a
    traceback would be an exception escaping it), as a CompletedProcess."""
    err, out, here = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                status = cli.main([str(a) for a in args])
            except SystemExit as exc:   # argparse
                status = exc.code
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


#: The console script pip installed beside this interpreter (``fastcredit``).
SCRIPT = os.path.join(os.path.dirname(sys.executable), "fastcredit")


def start(*args, cwd, script=False):
    """Start the command line (``python -m fastcredit.cli``, or with
    ``script`` the console script as a user types it)."""
    # the child inherits an ignored signal: under nohup SIGHUP is ignored,
    # in a background job without job control SIGINT, and the tests below
    # need their default actions
    saved = {sig: signal.signal(sig, signal.SIG_DFL) for sig in (signal.SIGHUP, signal.SIGINT)}
    try:
        command = [SCRIPT] if script else [sys.executable, "-m", "fastcredit.cli"]
        return subprocess.Popen([*command, *map(str, args)], cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def temps(directory):
    return sorted(name for name in os.listdir(directory) if TEMP.fullmatch(name))


def assert_user_error(result, *words):
    """Exit status 2 and one line on stderr, ``fastcredit COMMAND: ...``,
    naming each of ``words``; no traceback."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and re.match(r"fastcredit( \w+)?: ", lines[0]), result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def requests(tmp_path_factory):
    """A Parquet file of 40,000 requests: scoring it takes a while."""
    path = tmp_path_factory.mktemp("requests") / "requests.parquet"
    cli.write_synthetic(path, 40_000, seed=3, row_group=5_000, progress=False)
    return path


def wait_for_temp(proc, directory, timeout=60.0):
    """The name of the temporary ``proc`` writes in ``directory`` once it
    holds data (the run is then under way)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        for name in temps(directory):
            path = os.path.join(directory, name)
            if int(TEMP.fullmatch(name).group(1)) == proc.pid and (
                    os.path.isdir(path) or os.path.getsize(path) > 0):
                return name
        time.sleep(0.01)
    proc.kill()
    raise AssertionError("no temporary output appeared")


# --- signals ---------------------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_synth_stopped_by_a_signal_leaves_the_destination_as_it_was(tmp_path, sig):
    out = tmp_path / "out.parquet"
    out.write_bytes(b"the previous output")
    proc = start("synth", out, "--requests", 2_000_000, "--row-group", 2_000, "--quiet",
                 cwd=tmp_path)
    wait_for_temp(proc, tmp_path)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    if sig == signal.SIGINT:   # KeyboardInterrupt: one line, status 130
        assert proc.returncode == 130 and err == "fastcredit synth: interrupted\n", err
    else:                      # the default action of the signal
        assert proc.returncode == -sig, (proc.returncode, err)
    assert temps(tmp_path) == []
    assert out.read_bytes() == b"the previous output"


def test_score_stopped_by_sigterm_leaves_no_output(tmp_path, requests):
    before = requests.read_bytes()
    proc = start("score", requests, "scored.parquet", "--batch-rows", 1_000, "--quiet",
                 cwd=tmp_path)
    wait_for_temp(proc, tmp_path)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGTERM
    assert os.listdir(tmp_path) == []
    assert requests.read_bytes() == before


def mapped(proc, library, timeout=60.0):
    """Wait until ``proc`` has loaded a shared library whose path holds
    ``library`` (Linux: /proc/PID/maps), i.e. its import is under way."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        with contextlib.suppress(OSError), open(f"/proc/{proc.pid}/maps") as maps:
            if library in maps.read():
                return
        time.sleep(0.001)
    proc.kill()
    raise AssertionError(f"{library} was never loaded")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/maps")
@pytest.mark.parametrize("stage", [
    pytest.param("_multiarray_umath", id="importing numpy"),
    pytest.param("libarrow", id="importing pyarrow"),
    pytest.param(None, id="scoring")])
def test_sigint_at_any_time_of_the_start_is_one_line_and_status_130(tmp_path, requests,
                                                                    stage):
    """SIGINT from the first imports of ``fastcredit score`` (the console
    script a user runs) to the work itself: ``interrupted``, status 130, no
    traceback (Python's default would print one and die by the signal), no
    output or temporary left."""
    if not os.path.exists(SCRIPT):
        pytest.skip(f"no console script {SCRIPT}")
    before = requests.read_bytes()
    proc = start("score", requests, "scored.parquet", "--batch-rows", 1_000, "--quiet",
                 cwd=tmp_path, script=True)
    if stage is None:
        wait_for_temp(proc, tmp_path)
    else:
        mapped(proc, stage)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert re.fullmatch(r"fastcredit( score)?: interrupted\n", err), err
    assert proc.returncode == 130
    assert os.listdir(tmp_path) == []
    assert requests.read_bytes() == before


def test_an_interrupt_while_the_command_line_is_read(monkeypatch, capsys):
    def interrupted():
        raise KeyboardInterrupt
    monkeypatch.setattr(cli.parser, "_parser", interrupted)
    try:
        status = cli.main(["score", "in.parquet", "out.parquet"])
    except KeyboardInterrupt:   # would end the test session
        pytest.fail("KeyboardInterrupt escaped main")
    assert status == 130
    assert capsys.readouterr().err == "fastcredit: interrupted\n"


def test_a_killed_run_leaves_a_temporary_the_next_run_removes(tmp_path):
    proc = start("synth", "out.parquet", "--requests", 2_000_000, "--row-group", 2_000,
                 "--quiet", cwd=tmp_path)
    name = wait_for_temp(proc, tmp_path)
    proc.kill()
    proc.communicate(timeout=60)
    assert temps(tmp_path) == [name]   # identifiable: destination and dead pid
    assert not (tmp_path / "out.parquet").exists()
    other = tmp_path / ".other.parquet.fastcredit-1.tmp"   # another destination's
    other.write_bytes(b"x")
    result = fastcredit("synth", "out.parquet", "--requests", 50, "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert temps(tmp_path) == [other.name]
    assert pq.ParquetFile(tmp_path / "out.parquet").metadata.num_rows == 50


def test_the_next_run_leaves_a_live_processs_temporary_alone(tmp_path):
    """A temporary of a process that is gone is removed by the next run into
    the same destination; one of a live process (a run still writing it) is
    not."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = tmp_path / f".out.parquet.fastcredit-{gone.pid}.tmp"
    busy = tmp_path / f".out.parquet.fastcredit-{os.getpid()}.tmp"   # this test's
    stale.write_bytes(b"partial")
    busy.write_bytes(b"being written")
    result = fastcredit("synth", "out.parquet", "--requests", 50, "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert temps(tmp_path) == [busy.name] and busy.read_bytes() == b"being written"
    assert pq.ParquetFile(tmp_path / "out.parquet").metadata.num_rows == 50


# --- outputs that would destroy an input -----------------------------------

def test_output_that_is_the_input_is_refused(tmp_path, requests):
    before = requests.read_bytes()
    work = tmp_path / "work"
    work.mkdir()
    (work / "link.parquet").symlink_to(requests)
    os.link(requests, work / "hard.parquet")
    relative = os.path.join("..", "..", requests.parent.name, requests.name)
    assert_user_error(fastcredit("score", requests, f"./{relative}", cwd=work), "is the input")
    for output in (requests, relative, "link.parquet", "hard.parquet"):
        assert_user_error(in_process("score", requests, output, cwd=work), "is the input")
        assert requests.read_bytes() == before
    assert temps(requests.parent) == temps(work) == []
    # the directory of the input as output, and an output inside an input directory
    assert_user_error(in_process("score", requests, requests.parent, cwd=work), "input")
    assert_user_error(in_process("score", requests.parent, requests.parent / "x.parquet",
                                 cwd=work), "inside the input directory")
    assert requests.read_bytes() == before
    assert sorted(os.listdir(requests.parent)) == [requests.name]


# --- one line, exit status 2 ---------------------------------------------------

def test_user_errors_are_one_line_and_status_2(tmp_path, requests):
    (tmp_path / "existing").mkdir()
    (tmp_path / "existing" / "notes.txt").write_text("keep me")
    (tmp_path / "d.npz").mkdir()
    cases = [
        (["synth", "x.parquet", "--m", "17"], ["--m", "17"]),
        (["demo", "--out", "missing/x.npz"], ["missing/x.npz", "does not exist"]),
        (["synth", "existing"], ["'existing'", "is a directory"]),
        (["synth", "missing/x.parquet"], ["'missing'", "does not exist"]),
        (["synth", "x.parquet", "--requests", "many"], ["--requests", "many"]),
        (["demo", "--out", "d.npz"], ["'d.npz'", "is a directory"]),
        (["score", requests, "missing/out.parquet"], ["missing'", "does not exist"]),
        (["score", requests, "existing"], ["notes.txt"]),
        (["score", "absent.parquet", "out.parquet"], ["'absent.parquet'"]),
        (["score", requests, "out.parquet", "--rules", "shapley,nope"], ["--rules", "nope"]),
        (["score", requests, "out.parquet", "--key", "user"], ["'user'"]),
        (["score", requests, "out.parquet", "--m", "4"], ["action"]),
        (["frobnicate"], ["frobnicate"]),
    ]
    for i, (argv, words) in enumerate(cases):
        run = fastcredit if i < 2 else in_process   # a few as the user runs them
        assert_user_error(run(*argv, cwd=tmp_path), *words)
    assert (tmp_path / "existing" / "notes.txt").read_text() == "keep me"
    assert sorted(os.listdir(tmp_path)) == ["d.npz", "existing"]


def test_a_corrupt_page_is_one_line_naming_the_file(tmp_path, requests):
    table = pq.read_table(requests).slice(0, 3000)
    path = tmp_path / "corrupt.parquet"
    pq.write_table(table, path, row_group_size=1000)   # snappy pages
    meta = pq.ParquetFile(path).metadata
    column = [meta.row_group(0).column(i) for i in range(meta.num_columns)
              if meta.row_group(0).column(i).path_in_schema.endswith("score")][0]
    data = bytearray(path.read_bytes())
    at = column.data_page_offset + 200   # inside the first page; the footer is intact
    data[at:at + 16] = bytes(b ^ 0xFF for b in data[at:at + 16])
    path.write_bytes(bytes(data))
    assert pq.ParquetFile(path).metadata.num_rows == 3000
    result = fastcredit("score", path, "out.parquet", cwd=tmp_path)
    assert_user_error(result, "corrupt.parquet")
    assert sorted(os.listdir(tmp_path)) == ["corrupt.parquet"]


def test_a_malformed_row_is_one_line_naming_the_row(tmp_path, requests):
    table = pq.read_table(requests).slice(0, 50)
    bad = table.column("base_advantage").to_pylist()
    bad[17] = None
    table = table.set_column(table.schema.get_field_index("base_advantage"),
                             pa.field("base_advantage", pa.float64()), pa.array(bad))
    pq.write_table(table, tmp_path / "rows.parquet")
    result = fastcredit("score", "rows.parquet", "out.parquet", "--base", "base_advantage",
                        cwd=tmp_path)
    assert_user_error(result, "rows.parquet", "row 17")
    assert not (tmp_path / "out.parquet").exists()


def test_a_closed_stdout_ends_the_demo_quietly(tmp_path):
    proc = start("demo", "--requests", 20_000, "--out", "d.npz", "--quiet", cwd=tmp_path)
    assert proc.stdout.readline().startswith("fastcredit demo: 20,000 ")
    proc.stdout.close()   # fastcredit demo | head -1
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert proc.returncode == 141 and err == "", err
    assert sorted(np.load(tmp_path / "d.npz")) == sorted(
        [f"table_{mode}" for mode in cli.MODES]
        + [f"{rule}_{mode}" for rule in cli.RULES for mode in cli.MODES])


# --- AtomicOutput itself ---------------------------------------------------------

def test_atomic_output_publishes_only_complete_work(tmp_path):
    dest = tmp_path / "out.bin"
    with AtomicOutput(dest) as temp:
        assert os.path.dirname(temp) == str(tmp_path) and TEMP.fullmatch(os.path.basename(temp))
        assert signal.getsignal(signal.SIGTERM) is _output._on_signal
        with open(temp, "wb") as f:
            f.write(b"new")
    assert dest.read_bytes() == b"new" and temps(tmp_path) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    with pytest.raises(RuntimeError, match="half way"):
        with AtomicOutput(dest) as temp:
            with open(temp, "wb") as f:
                f.write(b"partial")
            raise RuntimeError("half way")
    assert dest.read_bytes() == b"new" and temps(tmp_path) == []
    assert write_file(tmp_path / "small.npz", lambda f: np.savez(f, a=np.arange(3))) \
        == str(tmp_path / "small.npz")
    assert np.load(tmp_path / "small.npz")["a"].tolist() == [0, 1, 2]


def test_atomic_output_directories(tmp_path):
    dest = tmp_path / "dataset"
    with AtomicOutput(dest, directory=True) as temp:
        assert os.path.isdir(temp)
        (tmp_path / temp / "part-0.parquet").write_bytes(b"0")
    assert os.listdir(dest) == ["part-0.parquet"]
    with AtomicOutput(dest, directory=True) as temp:   # replaces a dataset directory
        (tmp_path / temp / "part-1.parquet").write_bytes(b"1")
    assert os.listdir(dest) == ["part-1.parquet"] and temps(tmp_path) == []
    with pytest.raises(ValueError):
        with AtomicOutput(dest, directory=True) as temp:
            raise ValueError
    assert os.listdir(dest) == ["part-1.parquet"] and temps(tmp_path) == []
    (dest / "README").write_text("mine")
    with pytest.raises(OutputError, match="README"):
        AtomicOutput(dest, directory=True)
    with pytest.raises(OutputError, match="is a file"):
        AtomicOutput(dest / "README", directory=True)
    # killed between the two renames of a replacement: the old output comes back
    old = tmp_path / ".gone.fastcredit-999999999.old"
    old.mkdir()
    (old / "a.parquet").write_bytes(b"a")
    with AtomicOutput(tmp_path / "gone", directory=True):
        assert (tmp_path / "gone" / "a.parquet").exists()
    assert (tmp_path / "gone").is_dir() and not old.exists()


def test_check_output_refusals(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.parquet").write_bytes(b"a")
    link = tmp_path / "link"
    link.symlink_to(data)
    for dest, inputs, match in [
            (data / "a.parquet", [data / "a.parquet"], "is the input"),
            (link / "a.parquet", [data / "a.parquet"], "is the input"),
            (data / "sub" / ".." / "a.parquet", [data / "a.parquet"], "does not exist|input"),
            (data, [data / "a.parquet"], "contains the input"),
            (tmp_path, [data], "contains the input"),
            (link / "b.parquet", [data], "inside the input directory"),
            (tmp_path / "no" / "b.parquet", [], "no' of the output .* does not exist"),
            (data / "a.parquet" / "b", [], "is not a directory"),
            (data, [], "is a directory"),
            ("", [], "does not name"),
    ]:
        with pytest.raises(OutputError, match=match):
            check_output(dest, inputs=inputs)
    assert check_output(tmp_path / "new.parquet", inputs=[data]) == str(tmp_path / "new.parquet")
