"""cffi (API mode, out-of-line) build of csrc/ into fastcredit._cffi.

The cdef is read from the family headers that csrc/fastcredit.h includes, so a
function declared in a header is callable from Python with no second list to
keep in sync. Preprocessor lines and comments are dropped; #define constants
with literal integer values are kept as cffi integer constants; static inline
helpers (C-only conveniences) are left out. From internal.h, which is no
part of the C ABI, the module alone also gets the switch of the paths that
kernels choose by processor (fastcredit._c.paths).

SOURCES, INCLUDE_DIRS, CFLAGS and public_headers() are shared with setup.py,
which compiles the same sources with the same flags into the plain shared
library libfastcredit.so that C and C++ programs link against.
"""
import pathlib
import re

from cffi import FFI

ROOT = pathlib.Path(__file__).resolve().parent
CSRC = ROOT / "csrc"
# Relative to ROOT (the build runs there), so the build records no absolute paths.
SOURCES = sorted(str(p.relative_to(ROOT)) for p in CSRC.glob("*.c"))
INCLUDE_DIRS = [str(CSRC.relative_to(ROOT))]
# -ffp-contract=off: no fused multiply-adds, so C rounds like the Numba
# kernels (which LLVM never contracts without fastmath). No -march: the hot
# kernels are multiversioned (FC_CLONES in csrc/internal.h), so one build runs
# on any x86-64.
CFLAGS = ["-std=c99", "-O3", "-ffp-contract=off"]
# "#define FC_NAME value" with an integer literal, in parentheses when negative
# (FC_EINVAL) and with U/L suffixes when it needs them (FC_RNG_GOLDEN).
_LITERAL_DEFINE = re.compile(r"\s*#define\s+(FC_\w+)\s+\(?(-?(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*)\)?\s*$")


def public_headers():
    """fastcredit.h and every header it includes with "...", recursively: the
    C ABI (internal.h is not among them)."""
    found, todo = [], [CSRC / "fastcredit.h"]
    while todo:
        path = todo.pop(0)
        if path not in found:
            found.append(path)
            todo += [CSRC / name for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"',
                                                        path.read_text(), flags=re.M)]
    return found


def _cdef():
    parts = []
    for path in public_headers():
        text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
        # static inline helpers are for C callers; cffi sees declarations only
        text = re.sub(r"^static inline[^;{]*\{.*?^\}", "", text, flags=re.S | re.M)
        for line in text.splitlines():
            define = _LITERAL_DEFINE.match(line)
            if define:
                parts.append(f"#define {define.group(1)} {define.group(2)}")
            elif not line.lstrip().startswith("#") and 'extern "C"' not in line and line.strip() != "}":
                parts.append(line)
    return "\n".join(parts)


def _internal_cdef():
    """What internal.h gives the cffi module alone, for the tests and the
    bench: the switch of the paths that kernels choose by processor
    (fc_internal_* functions, FC_PATH_* constants)."""
    text = re.sub(r"/\*.*?\*/", "", (CSRC / "internal.h").read_text(), flags=re.S)
    parts = []
    for line in text.splitlines():
        define = _LITERAL_DEFINE.match(line)
        if define and define.group(1).startswith("FC_PATH_"):
            parts.append(f"#define {define.group(1)} {define.group(2)}")
        elif re.match(r"\s*int\s+fc_internal_\w+\(.*\);\s*$", line):
            parts.append(line)
    return "\n".join(parts)


ffibuilder = FFI()
ffibuilder.cdef(_cdef() + "\n" + _internal_cdef())
ffibuilder.set_source(
    "fastcredit._cffi",
    '#include "fastcredit.h"\n#include "internal.h"',
    sources=SOURCES,
    include_dirs=INCLUDE_DIRS,
    extra_compile_args=CFLAGS,
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
