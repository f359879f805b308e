"""Smoke test of an installed fastcredit (not the source tree): run from a
directory holding copies of tests/test_c_library.py and tests/c_abi_test.c,
with the python of the venv to check (.ci/packaging does)."""
import pathlib
import subprocess
import sys
import time

t0 = time.perf_counter()
import numpy as np  # noqa: E402

import fastcredit as fc  # noqa: E402

package = pathlib.Path(fc.__file__).resolve().parent
assert "site-packages" in package.parts, f"imported {package}, not an installed fastcredit"
print(f"fastcredit {fc.__version__} from {package} (import {time.perf_counter() - t0:.2f}s)")
assert "c" in fc.available_backends(), fc.available_backends()

glove = np.array([0., 0., 0., 1., 0., 1., 0., 1.])     # L = {0}, R = {1, 2}
phi = fc.shapley(glove, backend="c")
assert np.allclose(phi, [2 / 3, 1 / 6, 1 / 6], rtol=0, atol=1e-15), phi
print("shapley(glove, backend='c') =", phi)
print("include:", fc.get_include())
print("library:", fc.get_library())

# C and C++ programs linked against the shipped library (direct flags, the
# module's CLI, pkg-config), the C ABI test against the shared library.
here = pathlib.Path(__file__).resolve().parent
sys.exit(subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(here / "test_c_library.py")], cwd=here))
