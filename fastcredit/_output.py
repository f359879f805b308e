"""Outputs that are complete or absent, never half-written, never an input.

:class:`AtomicOutput` is how every command and the batch scorer write a file
or a directory:

* before any work (when it is constructed, :func:`check_output`) the paths are
  resolved (symlinks, ``..``, hard links) and a destination that is an input,
  contains an input or lies inside an input directory is refused, as are a
  missing or unwritable parent directory and a destination of the wrong kind
  (a directory where a file is meant, or the reverse); each refusal is an
  :class:`OutputError` (a ValueError) naming the file;
* the work writes a temporary beside the destination, a hidden name with the
  process id, ``.NAME.fastcredit-PID.tmp``, so the rename that publishes it
  never crosses a file system;
* a clean exit renames the temporary into place (``os.replace``; a directory
  replaces an existing one by two renames); any exception removes it, and so
  do SIGTERM, SIGINT and SIGHUP, whose handlers remove every temporary in
  use and then let the signal take its previous course (SIGTERM and SIGHUP
  end the process with the conventional status, SIGINT raises
  KeyboardInterrupt);
* a failed write (a full disk, a quota, a file size limit, an I/O error) is
  the output's, not the input's: the writers wrap their writing in
  :func:`writing`, which turns an OSError into a :class:`WriteError` naming
  the destination;
* SIGKILL (or a crash of the interpreter, or a power loss) cannot be caught:
  the killed run leaves its partial temporary, ``.NAME.fastcredit-PID.tmp``
  (``.NAME.fastcredit-PID.old`` too when it was replacing a directory
  between its two renames), beside the destination, which itself is as it
  was. The next run writing the same destination removes it (:func:`sweep`)
  once no process of that id is alive on this machine (a live process's
  temporaries are left alone), and puts a ``.old`` directory back in place
  when the destination is missing; a temporary whose destination is never
  written again stays until it is deleted by hand.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import threading

__all__ = ["AtomicOutput", "OutputError", "WriteError", "check_output", "sweep",
           "write_file", "writing"]

SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP")
                if hasattr(signal, name))
# files a dataset directory may hold besides .parquet files: it may be replaced
_DATASET_FILES = ("_metadata", "_common_metadata", "_SUCCESS")


class OutputError(ValueError):
    """An output refused before any work: its message names the file."""


class WriteError(OSError):
    """Writing an output failed: ``errno`` is the cause's, the message names
    the destination (not its temporary) and says why, e.g. ``cannot write
    the output 'out.parquet': No space left on device``."""

    def __init__(self, destination, cause: OSError):
        # pyarrow's messages wrap the system's ("Error writing bytes to file.
        # Detail: [errno 28] No space left on device"): the errno says it
        reason = os.strerror(cause.errno) if cause.errno else " ".join(str(cause).split())
        super().__init__(cause.errno, f"cannot write the output {_show(destination)}: {reason}")

    def __str__(self) -> str:
        return self.strerror


@contextlib.contextmanager
def writing(destination):
    """Turn an OSError raised inside into a :class:`WriteError` naming
    ``destination``. Wrap only the writing of an output: an error of reading
    the input must keep naming the input."""
    try:
        yield
    except WriteError:
        raise
    except OSError as err:
        raise WriteError(destination, err) from err


def _show(path) -> str:
    return repr(os.fspath(path))


def _inside(path: str, directory: str) -> bool:
    """Whether the resolved ``path`` is ``directory`` or below it."""
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _resolved(path) -> str:
    """The real path of ``path`` (which need not exist), every symlink and
    ``..`` resolved."""
    return os.path.realpath(os.fspath(path))


def _dataset_only(directory: str) -> str | None:
    """None when ``directory`` holds nothing but Parquet output (``*.parquet``,
    dataset metadata, hidden files, subdirectories of the same), else the
    first other file found."""
    for root, _, files in os.walk(directory):
        for name in files:
            if not (name.endswith(".parquet") or name in _DATASET_FILES
                    or name.startswith(".")):
                return os.path.join(root, name)
    return None


def check_output(destination, *, inputs=(), directory: bool = False) -> str:
    """Refuse (:class:`OutputError`, naming the file) a ``destination`` that
    cannot be written safely; return its absolute path (its directory
    resolved, a final symlink kept: the rename replaces the link).

    Refused: a destination that is one of ``inputs`` (after resolving
    symlinks and ``..``, or the same file by another hard link), a directory
    containing an input, or a path inside an input directory; a missing
    parent directory, or one not writable; with ``directory=False`` an
    existing directory, with ``directory=True`` an existing file, or an
    existing directory holding anything but Parquet output (``*.parquet``,
    ``_metadata``, ``_common_metadata``, ``_SUCCESS``, hidden files), which
    replacing it would delete. Nothing is created or changed.
    """
    raw = os.fspath(destination)
    head, name = os.path.split(raw.rstrip(os.sep) or raw)
    if name in ("", ".", ".."):
        raise OutputError(f"output {_show(destination)} does not name a file or directory")
    parent = os.path.realpath(head or os.curdir)
    path = os.path.join(parent, name)   # where the temporary goes and the rename lands
    real = os.path.realpath(path)       # a final symlink followed
    for source in inputs:
        source_real = _resolved(source)
        if not os.path.exists(source_real):
            continue
        if real == source_real or (os.path.exists(real) and os.path.samefile(real, source_real)):
            raise OutputError(f"output {_show(destination)} is the input {_show(source)}; "
                              f"choose another output file")
        if _inside(source_real, real):
            raise OutputError(f"output {_show(destination)} contains the input "
                              f"{_show(source)}; choose another output")
        if os.path.isdir(source_real) and _inside(real, source_real):
            raise OutputError(f"output {_show(destination)} is inside the input directory "
                              f"{_show(source)}; choose an output outside it")
    if not os.path.isdir(parent):
        what = "is not a directory" if os.path.exists(parent) else "does not exist"
        raise OutputError(f"directory {_show(head or os.curdir)} of the output "
                          f"{_show(destination)} {what}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"directory {_show(head or os.curdir)} of the output "
                          f"{_show(destination)} is not writable")
    if directory:
        if os.path.exists(real) and not os.path.isdir(real):
            raise OutputError(f"output {_show(destination)} is a file, not a directory")
        if os.path.isdir(real):
            other = _dataset_only(real)
            if other is not None:
                raise OutputError(f"output directory {_show(destination)} holds "
                                  f"{_show(other)}, which is not Parquet output; remove it or "
                                  f"choose another output")
    elif os.path.isdir(real):
        raise OutputError(f"output {_show(destination)} is a directory; name a file")
    return path


# --- temporaries and signals -------------------------------------------------

def _temp_name(name: str, pid: int, kind: str = "tmp") -> str:
    return f".{name}.fastcredit-{pid}.{kind}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # alive, another user's
        return True
    return True


def _remove(path: str) -> None:
    """Remove a file or directory tree; whatever is already gone is fine."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


def sweep(destination) -> list[str]:
    """Remove the temporaries of killed runs into ``destination`` (their
    process is no longer alive); return the paths removed. The pid check is
    for this machine: a run on another host sharing the directory is not
    seen."""
    path = os.path.abspath(os.fspath(destination))
    parent, name = os.path.split(path)
    pattern = re.compile(rf"\.{re.escape(name)}\.fastcredit-(\d+)\.(tmp|old)")
    removed = []
    try:
        entries = os.listdir(parent)
    except OSError:
        return removed
    for entry in entries:
        match = pattern.fullmatch(entry)
        if not match or int(match.group(1)) == os.getpid() or _alive(int(match.group(1))):
            continue
        leftover = os.path.join(parent, entry)
        if match.group(2) == "old" and not os.path.lexists(path):
            # killed between the two renames that replace a directory: the
            # previous output goes back into place
            try:
                os.rename(leftover, path)
                continue
            except OSError:
                pass
        _remove(leftover)
        removed.append(leftover)
    return removed


_lock = threading.RLock()   # re-entrant: a signal handler may run while it is held
_active: dict[int, str] = {}      # id(AtomicOutput) -> temporary path in use
_previous: dict[int, object] = {}  # signal -> handler before ours


def _on_signal(signum, frame):
    with _lock:
        temps = list(_active.values())
        _active.clear()
    for temp in temps:
        _remove(temp)
    _restore_handlers()
    signal.raise_signal(signum)   # its previous course: die, or KeyboardInterrupt


def _install_handlers() -> None:
    if _previous or threading.current_thread() is not threading.main_thread():
        return
    for signum in SIGNALS:
        previous = signal.getsignal(signum)
        if previous is signal.SIG_IGN or previous is None:
            continue   # ignored (nohup) or set outside Python: left alone
        _previous[signum] = previous
        signal.signal(signum, _on_signal)


def _restore_handlers() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    while _previous:
        signum, previous = _previous.popitem()
        signal.signal(signum, previous)


class AtomicOutput:
    """Write ``destination`` through a temporary that is renamed into place
    when the ``with`` block completes and removed otherwise.

    ::

        with AtomicOutput("out.parquet", inputs=["in.parquet"]) as tmp:
            writer = pq.ParquetWriter(tmp, schema)   # write to tmp
            ...
            writer.close()
        # out.parquet is complete, or (any exception, SIGTERM/SIGINT/SIGHUP)
        # absent with any previous out.parquet untouched

    Parameters
    ----------
    destination : path of the file (or with ``directory=True`` the
        directory) to write.
    inputs : paths (files or directories) the work reads. The destination
        must not be, contain or lie inside any of them.
    directory : write a directory: the temporary is an empty directory,
        which replaces an existing directory of Parquet output at the end.
    fsync : flush the file to disk before the rename (and the directory
        after it), so that after a power loss the destination is the old or
        the new file and never a truncated one; off by default (it costs a
        full write-back).

    The checks of :func:`check_output` run when the object is constructed,
    before any work, and raise :class:`OutputError` (a ValueError naming the
    file). ``__enter__`` removes the temporaries that killed runs left for
    this destination (:func:`sweep`), creates the temporary (an empty file or
    directory, ``.NAME.fastcredit-PID.tmp`` beside the destination) and
    returns its path as a str; writers open it themselves (truncating it).
    While any AtomicOutput is open, handlers for SIGTERM, SIGINT and SIGHUP
    (installed from the main thread; an ignored signal stays ignored)
    remove every temporary in use and re-raise the signal under the previous
    handler, which is restored when the last AtomicOutput closes.

    An OSError of creating the temporary or of publishing it is a
    :class:`WriteError` naming the destination; the ``with`` block wraps its
    own writing in :func:`writing`.

    Attributes: ``destination`` (absolute path), ``temp`` (the temporary's
    path, set by ``__enter__``), ``directory``.
    """

    def __init__(self, destination, *, inputs=(), directory: bool = False,
                 fsync: bool = False):
        self.directory = bool(directory)
        self.fsync = bool(fsync)
        self.destination = check_output(destination, inputs=inputs, directory=self.directory)
        self._given = os.fspath(destination)   # what messages name, as the caller wrote it
        parent, self._name = os.path.split(self.destination)
        self.temp = os.path.join(parent, _temp_name(self._name, os.getpid()))
        self._entered = False

    def __repr__(self) -> str:
        return f"AtomicOutput({self.destination!r}, directory={self.directory})"

    def __enter__(self) -> str:
        if self._entered:
            raise RuntimeError(f"{self!r} is already in use")
        sweep(self.destination)
        with _lock:
            if self.temp in _active.values():
                raise RuntimeError(f"{self.destination!r} is already being written by this "
                                   f"process")
            _remove(self.temp)   # this process's own, from an earlier failed run
            _active[id(self)] = self.temp
            _install_handlers()
        self._entered = True
        try:
            with writing(self._given):
                if self.directory:
                    os.mkdir(self.temp)
                else:
                    os.close(os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except BaseException:
            self._release()
            raise
        return self.temp

    def _release(self) -> None:
        with _lock:
            _active.pop(id(self), None)
            last = not _active
        if last:
            _restore_handlers()
        self._entered = False

    def _publish(self) -> None:
        if not os.path.lexists(self.temp):
            raise FileNotFoundError(f"the temporary output {self.temp!r} disappeared before "
                                    f"it could be renamed to {self.destination!r}")
        if self.fsync and not self.directory:
            fd = os.open(self.temp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        if self.directory and os.path.isdir(self.destination):
            old = os.path.join(os.path.dirname(self.destination),
                               _temp_name(self._name, os.getpid(), "old"))
            _remove(old)
            os.rename(self.destination, old)
            os.rename(self.temp, self.destination)
            _remove(old)
        else:
            os.replace(self.temp, self.destination)
        if self.fsync:
            fd = os.open(os.path.dirname(self.destination), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            if exc_type is None:
                with writing(self._given):
                    self._publish()
        finally:
            if exc_type is not None or os.path.lexists(self.temp):
                _remove(self.temp)
            self._release()
        return False


def write_file(destination, write, *, inputs=(), fsync: bool = False):
    """Write a (small) file atomically: ``write(f)`` is called with a binary
    file object open on the temporary; the file is renamed into place when
    ``write`` returns, and removed if it raises; ``write`` only writes, so
    an OSError it raises is a :class:`WriteError` naming the destination.
    Returns the absolute path of the destination. Example:
    ``write_file("x.npz", lambda f: np.savez(f, a=a))`` (the file gets
    exactly the name given)."""
    output = AtomicOutput(destination, inputs=inputs, fsync=fsync)
    with output as temp, writing(destination), open(temp, "wb") as f:
        write(f)
    return output.destination
