"""Every python code block of README.md and docs/*.md runs as written (read
from the pages by tests/doc_blocks.py): each block imports what it uses and
makes its own tiny inputs. A block runs in a fresh namespace, except on the
pages of STATEFUL, which build up state from block to block (docs/replay.md
records an agent, then attributes the record; docs/trainers.md makes a tiny
batch, then shapes it): their blocks run in order in one namespace per page.
A block that imports a module that is not installed (an extra: shapiq,
pyarrow, dask; a trainer stack: torch, TRL, verl) is skipped, and on a
stateful page so are the blocks after it. ``# Sketch:`` blocks (templates of
the reader's own code) are compiled, not run."""
import pytest

from doc_blocks import PAGES, python_blocks

STATEFUL = {"replay.md", "trainers.md"}

#: (block, the blocks of its page it builds on, run first)
CASES = [(block, blocks[:k] if page.name in STATEFUL else [])
         for page in PAGES for blocks in [python_blocks(page)]
         for k, block in enumerate(blocks)]


def _run(block, namespace):
    if block.sketch:
        block.compiled()
        return namespace
    missing = block.missing_modules()
    if missing:
        pytest.skip(f"{block.name} needs {', '.join(missing)}")
    return block.run(namespace)


@pytest.mark.parametrize("block, before", CASES, ids=[block.name for block, _ in CASES])
def test_block_runs_as_written(block, before):
    namespace = {}
    for earlier in before:
        namespace = _run(earlier, namespace)
    _run(block, namespace)


def test_every_page_is_read():
    """The README and the narrative pages are all here, with their blocks."""
    names = {page.name for page in PAGES}
    assert {"README.md", "replay.md", "trainers.md", "trees.md"} <= names
    assert STATEFUL <= names
    assert len(python_blocks(PAGES[0])) >= 5           # README's tour
