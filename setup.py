"""Build of fastcredit: the cffi extension fastcredit._cffi (build_ffi.py) and,
from the same sources with the same flags, the C library others link against:

    fastcredit/include/fastcredit.h (+ the family headers it includes)
    fastcredit/lib/libfastcredit.so          soname libfastcredit.so
    fastcredit/lib/pkgconfig/fastcredit.pc   paths relative to ${pcfiledir}

A wheel carries all three. An editable install (pip install -e .) builds the
library and fastcredit.pc in place, into fastcredit/lib/ of the source tree,
and its headers are csrc/ itself (fastcredit.get_include() says which).

Wheels are tagged abi3 (cp311-abi3): the cffi extension is compiled against
the limited API (cffi's _cffi_include.h defines Py_LIMITED_API), so one wheel
serves every CPython >= 3.11.
"""
import os
import pathlib
import sys
import sysconfig

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
import build_ffi  # noqa: E402  (SOURCES, CFLAGS, public_headers of the cffi build)

if sys.platform == "darwin":
    LIBRARY = "libfastcredit.dylib"
    SONAME_FLAGS = ["-Wl,-install_name,@rpath/" + LIBRARY]
else:
    LIBRARY = "libfastcredit.so"
    # The library is versioned with the package that ships it, so its soname
    # is its file name: a program linked with -lfastcredit finds it again
    # through its rpath (no libfastcredit.so.N symlink, which wheels cannot hold).
    SONAME_FLAGS = ["-Wl,-soname," + LIBRARY]

PC_TEMPLATE = """\
# fastcredit {version}: the C library shipped inside the Python package.
# Paths are relative to this file, so it stays valid wherever it is installed:
#   PKG_CONFIG_PATH=$(python -m fastcredit._native --pkg-config-path) \\
#       cc prog.c $(pkg-config --cflags --libs fastcredit)
libdir=${{pcfiledir}}/..
includedir=${{pcfiledir}}/{includedir}

Name: fastcredit
Description: C99 kernels for credit assignment over sets of actions
Version: {version}
Cflags: -I${{includedir}}
Libs: -L${{libdir}} -Wl,-rpath,${{libdir}} -lfastcredit
Libs.private: -lm
"""


def _limited_api() -> bool:
    """Whether this interpreter builds abi3 extensions (cffi's own rule: not on
    debug or free-threaded CPython, not on PyPy)."""
    return (sys.implementation.name == "cpython" and not hasattr(sys, "gettotalrefcount")
            and not sysconfig.get_config_var("Py_GIL_DISABLED"))


class build_ext_with_library(build_ext):
    """build_ext plus libfastcredit.so, its headers and fastcredit.pc."""

    def run(self):
        super().run()
        if os.name == "posix":
            self._build_library()

    def _package_dir(self) -> pathlib.Path:
        if self.inplace:  # editable install / build_ext --inplace: the source tree
            return pathlib.Path(self.get_finalized_command("build_py").get_package_dir("fastcredit"))
        return pathlib.Path(self.build_lib) / "fastcredit"

    def _library_outputs(self):
        if os.name != "posix":
            return []
        lib = self._package_dir() / "lib"
        outputs = [lib / LIBRARY, lib / "pkgconfig" / "fastcredit.pc"]
        if not self.inplace:
            outputs += [self._package_dir() / "include" / h.name for h in build_ffi.public_headers()]
        return outputs

    def get_outputs(self):
        return super().get_outputs() + [str(p) for p in self._library_outputs()]

    def _build_library(self):
        pkg = self._package_dir()
        lib_dir = pkg / "lib"
        target = lib_dir / LIBRARY
        lib_dir.mkdir(parents=True, exist_ok=True)
        if self.inplace:
            # Build output inside the source tree: keep it out of git.
            (lib_dir / ".gitignore").write_text("# built by setup.py\n*\n")
        depends = build_ffi.SOURCES + [str(p) for p in build_ffi.CSRC.glob("*.[hi]*")] + [
            __file__, build_ffi.__file__]
        if self.force or not target.exists() or any(
                os.path.getmtime(d) > target.stat().st_mtime for d in depends):
            objects = self.compiler.compile(
                build_ffi.SOURCES, output_dir=os.path.join(self.build_temp, "libfastcredit"),
                include_dirs=build_ffi.INCLUDE_DIRS, extra_postargs=build_ffi.CFLAGS,
                debug=self.debug)
            # Python's own link line may carry an rpath to its lib/ (pyenv
            # does); the library needs none, so it gets none.
            linker = self.compiler.linker_so
            self.compiler.linker_so = [a for a in linker if not a.startswith(("-Wl,-rpath", "-Wl,-R"))]
            try:
                self.compiler.link_shared_object(
                    objects, str(target), libraries=["m"], extra_postargs=SONAME_FLAGS,
                    debug=self.debug)
            finally:
                self.compiler.linker_so = linker
        if self.inplace:
            include = build_ffi.CSRC
        else:
            include = pkg / "include"
            include.mkdir(parents=True, exist_ok=True)
            for header in build_ffi.public_headers():
                self.copy_file(str(header), str(include / header.name))
        pc_dir = lib_dir / "pkgconfig"
        pc_dir.mkdir(exist_ok=True)
        (pc_dir / "fastcredit.pc").write_text(PC_TEMPLATE.format(
            version=self.distribution.get_version(),
            includedir=pathlib.Path(os.path.relpath(include, pc_dir)).as_posix()))


setup(
    cffi_modules=["build_ffi.py:ffibuilder"],
    cmdclass={"build_ext": build_ext_with_library},
    options={"bdist_wheel": {"py_limited_api": "cp311"}} if _limited_api() else {},
)
