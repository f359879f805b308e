"""Where requests come from and where scores go: datasets in (files,
directories, globs, lists, hive partitions, URIs), files or directories out,
written atomically."""
from __future__ import annotations

import contextlib
import fnmatch
import os
import posixpath
import re
import threading
from dataclasses import dataclass

from .._output import AtomicOutput, writing
from .arrow import _GROUPED_FIELDS
from .config import ScoreConfig, UnreadableFileError, _READ_BUFFER, _pa


def _one_line(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


# --- input -------------------------------------------------------------------

_GLOB = re.compile(r"[*?\[]")


def _natural(path: str):
    """Sort key putting part.2 before part.10."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", path)]


def _hidden(rel: str) -> bool:
    return any(part.startswith((".", "_")) for part in rel.split("/"))


@dataclass(frozen=True)
class _File:
    path: str        # on the source's filesystem
    rel: str         # below the source's base directory ('/'-separated)
    partition: tuple = ()  # ((name, pyarrow scalar), ...) of hive directories


def _partition_keys(fragment, schema) -> tuple:
    """((name, pyarrow scalar of the dataset's type), ...) of a fragment."""
    import pyarrow.dataset as ds
    pa = _pa()
    keys = ds.get_partition_keys(fragment.partition_expression)
    return tuple((k, pa.scalar(v, type=schema.field(k).type
                               if schema.get_field_index(k) >= 0 else None))
                 for k, v in sorted(keys.items()))


class _Source:
    """The Parquet files of a ``source``, in input order, on one filesystem."""

    def __init__(self, filesystem, files: list, base: str, local: bool, roots=(),
                 name: str = "source"):
        self.name = name
        self.filesystem = filesystem
        self.roots = list(roots)
        self.files = files
        self.base = base
        self.local = local
        self._footers: dict = {}

    @staticmethod
    def _locate(item, name: str):
        """(filesystem, path, local) of one source item."""
        from pyarrow import fs as pafs
        if isinstance(item, os.PathLike):
            item = os.fspath(item)
        if isinstance(item, bytes) or not isinstance(item, str):
            raise TypeError(f"{name} must be a path, URI, glob, list of them or a pyarrow "
                            f"dataset, got {type(item).__name__}")
        if not item:
            raise ValueError(f"{name} must not be an empty path")
        if "://" in item:
            filesystem, path = pafs.FileSystem.from_uri(item)
            local = filesystem.type_name == "local"
            return filesystem, path.rstrip("/") or path, local
        path = os.path.abspath(os.path.expanduser(item))
        return pafs.LocalFileSystem(), path.replace(os.sep, "/"), True

    @classmethod
    def resolve(cls, source, name: str = "source") -> "_Source":
        _pa()   # pyarrow loaded with interrupts held, or the extra named
        import pyarrow.dataset as ds
        from pyarrow import fs as pafs
        if isinstance(source, ds.FileSystemDataset):
            return cls._from_dataset(source, name)
        items = list(source) if isinstance(source, (list, tuple)) else [source]
        if not items:
            raise ValueError(f"{name} must name at least one file")
        located = [cls._locate(item, name) for item in items]
        filesystem, _, local = located[0]
        if any(fs.type_name != filesystem.type_name for fs, _, _ in located):
            raise ValueError(f"{name} mixes filesystems "
                             f"({sorted({fs.type_name for fs, _, _ in located})})")
        files, bases, roots = [], [], []
        for item, (_, path, _) in zip(items, located):
            info = filesystem.get_file_info(path)
            if info.type == pafs.FileType.Directory:
                base = path
                roots.append(path)
                found = [i.path for i in filesystem.get_file_info(
                    pafs.FileSelector(path, recursive=True))
                    if i.type == pafs.FileType.File and i.path.endswith(".parquet")
                    and not _hidden(posixpath.relpath(i.path, path))]
                if not found:
                    raise ValueError(f"{name} {str(item)!r} holds no .parquet files")
                files += sorted(found, key=_natural)
            elif info.type == pafs.FileType.File:
                base = posixpath.dirname(path)
                files.append(path)
            elif _GLOB.search(path):
                base, found = cls._glob(filesystem, path)
                if not found:
                    raise FileNotFoundError(f"{name} {str(item)!r} matches no file")
                files += found
            else:
                raise FileNotFoundError(f"{name} {str(item)!r} does not exist")
            bases.append(base)
        if len(set(files)) != len(files):
            twice = next(f for f in files if files.count(f) > 1)
            raise ValueError(f"{name} names the file {twice!r} twice")
        base = bases[0] if len(bases) == 1 else posixpath.commonpath(bases)
        rels = [posixpath.relpath(f, base) if base else f.lstrip("/") for f in files]
        partitions = cls._partitions(filesystem, files, rels, base)
        return cls(filesystem, [_File(f, r, p) for f, r, p in zip(files, rels, partitions)],
                   base, local, roots, name)

    @staticmethod
    def _glob(filesystem, pattern: str):
        """(base, sorted matches) of a glob: ``*``, ``?`` and ``[...]`` match
        within one path component (a name starting with a dot only when the
        pattern does), a ``**`` component any number of them."""
        from pyarrow import fs as pafs
        parts = pattern.split("/")
        fixed = next(i for i, p in enumerate(parts) if _GLOB.search(p))
        base = "/".join(parts[:fixed]) or "/"
        want = parts[fixed:]
        if filesystem.get_file_info(base).type != pafs.FileType.Directory:
            return base, []
        infos = filesystem.get_file_info(pafs.FileSelector(base, recursive=True))

        def match(names, pats):
            if not pats:
                return not names
            if pats[0] == "**":
                return any(match(names[i:], pats[1:]) for i in range(len(names) + 1))
            return bool(names) and fnmatch.fnmatchcase(names[0], pats[0]) \
                and (pats[0].startswith(".") or not names[0].startswith(".")) \
                and match(names[1:], pats[1:])

        found = [i.path for i in infos if i.type == pafs.FileType.File
                 and match(posixpath.relpath(i.path, base).split("/"), want)]
        return base, sorted(found, key=_natural)

    @staticmethod
    def _partitions(filesystem, files, rels, base):
        """The hive partition keys of each file (pyarrow's inference of their
        types over all the files), or () when no directory is ``key=value``."""
        if not any("=" in posixpath.dirname(r) for r in rels):
            return [()] * len(files)
        import pyarrow.dataset as ds
        try:
            dataset = ds.dataset(files, filesystem=filesystem, format="parquet",
                                 partitioning="hive", partition_base_dir=base)
        except Exception:  # not hive directories after all: no partition keys
            return [()] * len(files)
        out = {frag.path: _partition_keys(frag, dataset.schema)
               for frag in dataset.get_fragments()}
        return [out.get(f, ()) for f in files]

    @classmethod
    def _from_dataset(cls, dataset, name: str) -> "_Source":
        files = [(frag.path, _partition_keys(frag, dataset.schema))
                 for frag in dataset.get_fragments()]
        if not files:
            raise ValueError(f"{name} dataset holds no files")
        try:
            base = posixpath.commonpath([posixpath.dirname(p) for p, _ in files])
        except ValueError:  # absolute and relative paths mixed
            base = ""
        return cls(dataset.filesystem,
                   [_File(p, posixpath.relpath(p, base) if base else p.lstrip("/"), k)
                    for p, k in files],
                   base, dataset.filesystem.type_name == "local", name=name)

    def open(self, file: _File):
        """The ParquetFile of ``file``, its footer read once per source (the
        column check, the check of ``m``, the progress total, Dask's
        partitioning and the reader all use it); a file that is not Parquet
        is a ValueError naming it and the argument."""
        import pyarrow.parquet as pq
        try:
            reader = pq.ParquetFile(file.path, filesystem=self.filesystem, pre_buffer=False,
                                    metadata=self._footers.get(file.path),
                                    buffer_size=_READ_BUFFER, page_checksum_verification=True)
        except _pa().ArrowInvalid as err:
            raise ValueError(f"{self.name} file {file.path!r} is not a Parquet file: "
                             f"{err}") from None
        self._footers[file.path] = reader.metadata
        return reader

    def metadata(self, file: _File):
        """The Parquet footer of ``file`` (see :meth:`open`)."""
        footer = self._footers.get(file.path)
        return self.open(file).metadata if footer is None else footer

    def __getstate__(self):
        # what a Dask task is sent: the files, not the footers read here
        return {**self.__dict__, "_footers": {}}

    def local_paths(self) -> list:
        """The input files and the directories named, on the local disk."""
        return self.roots + [f.path for f in self.files] if self.local else []


def needed_columns(present, config: ScoreConfig, subject: str, where: str) -> list:
    """The input columns scoring reads, checked to be among ``present``
    (column names); errors say ``subject`` (the input) and ``where`` (its
    file, or its columns)."""
    present = set(present)

    def need(col, what):
        if col not in present:
            raise ValueError(f"{subject} has no {what}{col!r} ({where})")
    need(config.key, "key column ")
    if config.candidates in present:
        cands = [config.candidates]
    else:
        cands = [f"action_{i}" for i in range(config.m)]
        missing = [c for c in cands if c not in present]
        if missing:
            raise ValueError(f"{subject} has neither a {config.candidates!r} column nor "
                             f"{missing[0]!r} ({where})")
        if f"action_{config.m}" in present:
            raise ValueError(f"m = {config.m} reads only action_0 .. action_{config.m - 1}, "
                             f"but {subject} has a column 'action_{config.m}' ({where}); "
                             f"score it with the number of actions it holds")
    if config.base is not None:
        need(config.base, "base-advantage column ")
    for col in config.carry:
        need(col, "column to carry ")
    return list(dict.fromkeys([config.key, *config.carry, *cands]
                              + ([config.base] if config.base else [])))


def _read(source: _Source, config: ScoreConfig, rows_per_batch: int, files=None,
          row_groups=None):
    """(file index, record batch of the needed columns, first input row) of
    every file in turn, at most ``rows_per_batch`` rows at a time; a file
    without rows gives one empty batch (its schema). pre_buffer=False: with
    pre-buffering the reader keeps every column chunk it has fetched until
    the file is closed (memory grew by a row group per batch on a 16 GB
    file), and a dataset scanner's read-ahead buffers many row groups
    whenever the kernels are the slower side; the read-ahead here is the
    bounded queue of the pipeline instead."""
    first = 0
    for index in (range(len(source.files)) if files is None else files):
        reader, in_file, partition = _open_columns(source, index, config)
        groups = range(reader.metadata.num_row_groups) if row_groups is None else row_groups
        empty = True
        batches = reader.iter_batches(batch_size=rows_per_batch, row_groups=groups,
                                      columns=_leaves(reader, in_file, config),
                                      use_threads=True)
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                break
            except (OSError, _pa().ArrowException) as err:
                # a page checksum that does not match, or pages that do not decode
                raise UnreadableFileError(source.files[index].path,
                                          _one_line(str(err))) from None
            empty = False
            yield index, _with_partition(batch, partition), first
            first += batch.num_rows
        if empty:
            yield index, _empty_batch(reader, in_file, partition), first


def _open_columns(source: _Source, index: int, config: ScoreConfig):
    """(ParquetFile, the needed columns it holds, the needed hive partition
    columns it lacks as (name, value)) of file ``index``; a missing column is
    a ValueError naming the file."""
    file = source.files[index]
    reader = source.open(file)
    schema = reader.schema_arrow
    partition = [(k, v) for k, v in file.partition if schema.get_field_index(k) < 0]
    for k, v in partition:
        schema = schema.append(_pa().field(k, v.type))
    wanted = needed_columns(schema.names, config, "input", f"file {file.path!r}")
    names = dict(partition)
    return reader, [c for c in wanted if c not in names], \
        [(k, v) for k, v in partition if k in wanted]


def _actions_in_statistics(source: _Source, config: ScoreConfig):
    """The actions present in the input by its Parquet statistics (the
    largest ``action`` of a candidate + 1), or None when some row group of
    the candidates layout has no statistics of it (or the layout is the
    per-action one): the check before any work of an ``m`` too large."""
    leaf = None
    present = 0
    for file in source.files:
        meta = source.metadata(file)
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            if group.num_rows == 0:
                continue
            if leaf is None:
                names = [group.column(j).path_in_schema for j in range(group.num_columns)]
                found = [j for j, n in enumerate(names)
                         if n.split(".")[0] == config.candidates and n.endswith(".action")
                         and n.count(".") == 3]
                if len(found) != 1:
                    return None
                leaf = names[found[0]]
            column = next((group.column(j) for j in range(group.num_columns)
                           if group.column(j).path_in_schema == leaf), None)
            stats = None if column is None else column.statistics
            if stats is None or not stats.has_min_max:
                if stats is not None and stats.num_values == 0 and stats.has_null_count:
                    continue   # no candidates in this row group
                return None
            present = max(present, int(stats.max) + 1)
    return present


def _empty_batch(reader, in_file, partition):
    """A batch of no rows with the columns a file gives the scorer."""
    pa = _pa()
    batch = pa.RecordBatch.from_pylist(
        [], schema=pa.schema([reader.schema_arrow.field(c) for c in in_file]))
    return _with_partition(batch, partition)


def _leaves(reader, columns, config: ScoreConfig) -> list:
    """The Parquet columns to decode for ``columns``: of a candidates column
    only the struct fields scoring uses (prerank only with capacity), each
    field costing a fifth of the decoding; whole columns otherwise (and when
    the file's list encoding is not the standard three levels)."""
    fields = set(_GROUPED_FIELDS) | ({"prerank"} if config.capacity is not None else set())
    lists = {config.candidates} | {f"action_{i}" for i in range(config.m)}
    paths = [column.path.split(".") for column in reader.schema]
    out = []
    for col in columns:
        leaves = [".".join(p) for p in paths if p[0] == col and len(p) == 4]
        use = [leaf for leaf in leaves if leaf.rsplit(".", 1)[1] in fields]
        if col in lists and leaves and len(leaves) == sum(p[0] == col for p in paths) and use:
            out += use
        else:
            out.append(col)
    return out


def _with_partition(batch, partition):
    pa = _pa()
    for name, value in partition:
        batch = batch.append_column(pa.field(name, value.type), pa.repeat(value, batch.num_rows))
    return batch


# --- output ------------------------------------------------------------------

def _write_options(schema, config: ScoreConfig) -> dict:
    """Dictionary pages only for the key and carried columns: the computed
    doubles are nearly all distinct, and trying dictionaries on them costs
    2.4x the encoding time for a 2 % smaller file. Every page carries its
    CRC-32 checksum, which readers that verify them (fastcredit's do) check."""
    return {"use_dictionary": [c for c in (config.key, *config.carry)
                               if schema.get_field_index(c) >= 0
                               and not _pa().types.is_nested(schema.field(c).type)],
            "compression": "snappy", "write_page_checksum": True}


class _Writer:
    """Parquet writers of one run: one file, or one file per input file in a
    directory. Scored batches are gathered into row groups of ``rows``. An
    OSError of writing (a full disk, a quota, an I/O error) is a
    WriteError naming ``name``, the destination as the caller gave it (a
    path or URI)."""

    def __init__(self, filesystem, root: str, directory: bool, source: _Source,
                 config: ScoreConfig, rows: int, name):
        self.name = name
        self.filesystem = filesystem
        self.root = root
        self.directory = directory
        self.source = source
        self.config = config
        self.rows = rows
        self.writer = None
        self.schema = None
        self.index = None
        self.pending = []
        self.pending_rows = 0

    def _open(self, index, schema):
        import pyarrow.parquet as pq
        if self.directory:
            path = posixpath.join(self.root, self.source.files[index].rel)
            self.filesystem.create_dir(posixpath.dirname(path), recursive=True)
        else:
            path = self.root
        self.writer = pq.ParquetWriter(path, schema, filesystem=self.filesystem,
                                       **_write_options(schema, self.config))
        self.schema = schema

    def _flush(self):
        if self.pending_rows:
            table = _pa().Table.from_batches(self.pending, schema=self.schema)
            with writing(self.name):
                self.writer.write_table(table, row_group_size=self.rows)
        self.pending, self.pending_rows = [], 0

    def write(self, index: int, batch) -> None:
        if self.index != index and (self.directory or self.writer is None):
            self.close()
            with writing(self.name):
                self._open(index, batch.schema)
        self.index = index
        if not batch.schema.equals(self.schema):
            try:
                batch = batch.cast(self.schema)
            except (ValueError, TypeError, NotImplementedError) as err:
                raise ValueError(
                    f"file {self.source.files[index].path!r} gives columns of other types "
                    f"than the first file ({batch.schema} vs {self.schema}): {err}") from None
        if batch.num_rows:
            self.pending.append(batch)
            self.pending_rows += batch.num_rows
            if self.pending_rows >= self.rows:
                self._flush()

    def close(self) -> None:
        if self.writer is not None:
            self._flush()
            with writing(self.name):
                self.writer.close()
            self.writer = None

    def abandon(self) -> None:
        """Close without writing what is pending (the output is discarded)."""
        self.pending, self.pending_rows = [], 0
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.close()
            self.writer = None


def _same_or_inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


@contextlib.contextmanager
def _remote_atomic_output(filesystem, path: str, inputs, directory: bool):
    """The same on a pyarrow filesystem: a temporary name beside ``path``,
    moved into place on success, deleted on error."""
    from pyarrow import fs as pafs
    if path in inputs or (directory and any(_same_or_inside(p, path) for p in inputs)):
        raise ValueError(f"destination {path!r} is or holds an input")
    parent, name = posixpath.split(path)
    tmp = posixpath.join(parent, f".{name}.{os.getpid()}.{threading.get_ident()}.tmp")
    if directory:
        filesystem.create_dir(tmp, recursive=True)
    try:
        yield tmp
    except BaseException:
        with contextlib.suppress(Exception):
            if directory:
                filesystem.delete_dir(tmp)
            else:
                filesystem.delete_file(tmp)
        raise
    if directory and filesystem.get_file_info(path).type == pafs.FileType.Directory:
        filesystem.delete_dir(path)
    filesystem.move(tmp, path)


def _destination(destination, source: _Source):
    """(filesystem, context manager yielding the path to write, directory?):
    every check on the destination, done before any work."""
    from pyarrow import fs as pafs
    if isinstance(destination, os.PathLike):
        destination = os.fspath(destination)
    if not isinstance(destination, str):
        raise TypeError(f"destination must be a path or URI, got {type(destination).__name__}")
    if not destination:
        raise ValueError("destination must not be an empty path")
    as_dir = destination.endswith(("/", os.sep))
    if "://" in destination:
        filesystem, path = pafs.FileSystem.from_uri(destination)
        path = path.rstrip("/") or path
        if filesystem.type_name != "local":
            directory = as_dir or filesystem.get_file_info(path).type == pafs.FileType.Directory
            inputs = [f.path for f in source.files] \
                if source.filesystem.type_name == filesystem.type_name else []
            return filesystem, _remote_atomic_output(filesystem, path, inputs, directory), \
                directory
        destination = path
    path = os.path.abspath(os.path.expanduser(destination))
    directory = as_dir or os.path.isdir(path)
    return pafs.LocalFileSystem(), AtomicOutput(path, inputs=source.local_paths(),
                                                directory=directory), directory
