"""cffi (API mode, out-of-line) build of csrc/ into fastcredit._cffi.

The cdef is read from the family headers that csrc/fastcredit.h includes, so a
function declared in a header is callable from Python with no second list to
keep in sync. Preprocessor lines and comments are dropped; #define constants
with literal integer values are kept as cffi integer constants; static inline
helpers (C-only conveniences) are left out.
"""
import pathlib
import re

from cffi import FFI

CSRC = pathlib.Path(__file__).resolve().parent / "csrc"
# "#define FC_NAME value" with an integer literal, in parentheses when negative
# (FC_EINVAL) and with U/L suffixes when it needs them (FC_RNG_GOLDEN).
_LITERAL_DEFINE = re.compile(r"\s*#define\s+(FC_\w+)\s+\(?(-?(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*)\)?\s*$")


def _headers():
    top = (CSRC / "fastcredit.h").read_text()
    return [CSRC / "fastcredit.h"] + [CSRC / name for name in re.findall(r'#include "([^"]+)"', top)]


def _cdef():
    parts = []
    for path in _headers():
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


ffibuilder = FFI()
ffibuilder.cdef(_cdef())
ffibuilder.set_source(
    "fastcredit._cffi",
    '#include "fastcredit.h"',
    sources=sorted(str(p.relative_to(CSRC.parent)) for p in CSRC.glob("*.c")),
    include_dirs=[str(CSRC.relative_to(CSRC.parent))],
    # -ffp-contract=off: no fused multiply-adds, so C rounds like the Numba
    # kernels (which LLVM never contracts without fastmath).
    extra_compile_args=["-std=c99", "-O3", "-ffp-contract=off"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
