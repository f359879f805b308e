"""The python code blocks of README.md and docs/*.md, read from the pages
themselves so that a page cannot drift from what the tests run
(tests/test_doc_blocks.py runs every one; tests/test_trainer_recipe.py runs
docs/trainers.md's array recipes on realistic trainer batches).

A block whose first line is a ``# Sketch:`` comment (saying which names are
the reader's) is a template of the reader's own code: it is compiled, not
run. Shell and output blocks are not Python and are not read."""
from __future__ import annotations

import ast
import dataclasses
import importlib.util
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
SKETCH = "# Sketch:"
_FENCE = re.compile(r"^```python\n(.*?)^```", flags=re.M | re.S)


@dataclasses.dataclass(frozen=True)
class Block:
    page: pathlib.Path
    line: int           # the line of the block's first line of code (1-based)
    code: str

    @property
    def name(self) -> str:
        return f"{self.page.name}:{self.line}"

    @property
    def sketch(self) -> bool:
        return self.code.startswith(SKETCH)

    def compiled(self):
        """The code, compiled so that tracebacks name the page and its lines."""
        return compile("\n" * (self.line - 1) + self.code, str(self.page), "exec")

    def missing_modules(self) -> list[str]:
        """The modules the block imports that are not installed (an extra,
        or a trainer stack)."""
        roots = set()
        for node in ast.walk(ast.parse(self.code)):
            if isinstance(node, ast.Import):
                roots.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots.add(node.module.split(".")[0])
        return sorted(root for root in roots if importlib.util.find_spec(root) is None)

    def run(self, namespace: dict | None = None) -> dict:
        """Execute the block in namespace (a fresh one by default); returns it."""
        namespace = {} if namespace is None else namespace
        exec(self.compiled(), namespace)
        return namespace


def python_blocks(page: pathlib.Path) -> list[Block]:
    text = page.read_text()
    return [Block(page, text.count("\n", 0, match.start(1)) + 1, match.group(1))
            for match in _FENCE.finditer(text)]


def block_containing(page: pathlib.Path, marker: str) -> Block:
    """The one python block of page whose code contains marker."""
    [block] = [b for b in python_blocks(page) if marker in b.code]
    return block
