"""The C library inside the fastcredit package: where its headers, its shared
library and its pkg-config file are.

The kernels of csrc/ are also built as a plain C99 shared library,
``libfastcredit.so`` (no Python inside), for C and C++ programs::

    cc  prog.c   -I$(python -m fastcredit._native --include) \\
                 -L$(python -m fastcredit._native --library-dir) \\
                 -Wl,-rpath,$(python -m fastcredit._native --library-dir) -lfastcredit
    c++ prog.cpp $(python -m fastcredit._native --cflags --libs)
    PKG_CONFIG_PATH=$(python -m fastcredit._native --pkg-config-path) \\
        cc prog.c $(pkg-config --cflags --libs fastcredit)

fastcredit.h declares every function with C linkage (extern "C" in C++).

Layout. A wheel ships ``fastcredit/include/`` (fastcredit.h and the family
headers it includes), ``fastcredit/lib/libfastcredit.so`` (soname
``libfastcredit.so``) and ``fastcredit/lib/pkgconfig/fastcredit.pc``, whose
paths are relative to the file (``${pcfiledir}``), so it stays valid wherever
the wheel is installed. An editable install (``pip install -e .``) builds the
library and fastcredit.pc in place into ``fastcredit/lib/`` of the source tree
(re-run it after changing csrc/), and its include directory is ``csrc/``.
``--pkg-config`` prints a fastcredit.pc with absolute paths instead, to copy
anywhere (e.g. into /usr/local/lib/pkgconfig).
"""
import argparse
import pathlib
import shlex
import sys

__all__ = ["get_include", "get_library", "get_library_dir"]

_PACKAGE = pathlib.Path(__file__).resolve().parent
_LIBRARY = "libfastcredit.dylib" if sys.platform == "darwin" else "libfastcredit.so"


def get_include() -> str:
    """The directory holding fastcredit.h and the family headers it includes.

    It is the ``-I`` of a C or C++ program that uses fastcredit: ``include/``
    inside an installed package, ``csrc/`` in a source tree (editable install).

    Returns
    -------
    str
        The absolute path of the directory.

    Raises
    ------
    FileNotFoundError
        If fastcredit.h is installed in neither place.

    See Also
    --------
    get_library, get_library_dir

    Examples
    --------
    >>> import os
    >>> import fastcredit as fc
    >>> os.path.isfile(os.path.join(fc.get_include(), "fastcredit.h"))
    True
    """
    for directory in (_PACKAGE / "include",           # installed from a wheel or sdist
                      _PACKAGE.parent / "csrc"):      # editable install / source tree
        if (directory / "fastcredit.h").is_file():
            return str(directory)
    raise FileNotFoundError(f"fastcredit.h is not installed with fastcredit in {_PACKAGE}; "
                            "reinstall fastcredit (pip install fastcredit, or pip install -e . "
                            "in a source tree)")


def get_library_dir() -> str:
    """The directory holding libfastcredit.so (``-L`` and ``-Wl,-rpath``).

    Returns
    -------
    str
        The absolute path of the directory of :func:`get_library`.

    Raises
    ------
    FileNotFoundError
        If the shared library is not built.

    Examples
    --------
    >>> import os
    >>> import fastcredit as fc
    >>> fc.get_library_dir() == os.path.dirname(fc.get_library())
    True
    """
    return str(pathlib.Path(get_library()).parent)


def get_library() -> str:
    """The path of the shared library libfastcredit.so.

    It holds the C99 kernels of csrc/, the functions fastcredit.h declares,
    with no Python inside (libfastcredit.dylib on macOS).

    Returns
    -------
    str
        The absolute path of the library file.

    Raises
    ------
    FileNotFoundError
        If the library is not built (reinstall fastcredit; an editable install
        builds it in place).

    Examples
    --------
    >>> import os
    >>> import fastcredit as fc
    >>> os.path.basename(fc.get_library()) in ("libfastcredit.so", "libfastcredit.dylib")
    True
    """
    library = _PACKAGE / "lib" / _LIBRARY
    if not library.is_file():
        raise FileNotFoundError(f"{library} is not built; reinstall fastcredit (an editable "
                                "install builds it in place: pip install -e .)")
    return str(library)


def _pkg_config_dir() -> str:
    directory = _PACKAGE / "lib" / "pkgconfig"
    if not (directory / "fastcredit.pc").is_file():
        raise FileNotFoundError(f"{directory / 'fastcredit.pc'} is not built; reinstall fastcredit")
    return str(directory)


def _cflags() -> list:
    return ["-I" + get_include()]


def _libs() -> list:
    lib_dir = get_library_dir()
    return ["-L" + lib_dir, "-Wl,-rpath," + lib_dir, "-lfastcredit"]


def _pkg_config_text() -> str:
    from . import __version__
    return (f"# fastcredit {__version__}, absolute paths of this installation\n"
            f"libdir={get_library_dir()}\n"
            f"includedir={get_include()}\n\n"
            "Name: fastcredit\n"
            "Description: C99 kernels for credit assignment over sets of actions\n"
            f"Version: {__version__}\n"
            "Cflags: -I${includedir}\n"
            "Libs: -L${libdir} -Wl,-rpath,${libdir} -lfastcredit\n"
            "Libs.private: -lm\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m fastcredit._native",
        description="Where the fastcredit C library is: headers, shared library, pkg-config.")
    parser.add_argument("--include", action="store_true", help="print the include directory")
    parser.add_argument("--library", action="store_true", help="print the path of libfastcredit.so")
    parser.add_argument("--library-dir", action="store_true", help="print its directory")
    parser.add_argument("--cflags", action="store_true", help="print compiler flags (-I)")
    parser.add_argument("--libs", action="store_true", help="print linker flags (-L, rpath, -l)")
    parser.add_argument("--pkg-config-path", action="store_true",
                        help="print the directory of fastcredit.pc (for PKG_CONFIG_PATH)")
    parser.add_argument("--pkg-config", action="store_true",
                        help="print a fastcredit.pc with this installation's absolute paths")
    args = parser.parse_args(argv)
    try:
        lines, flags = [], []
        if args.include:
            lines.append(get_include())
        if args.library:
            lines.append(get_library())
        if args.library_dir:
            lines.append(get_library_dir())
        if args.pkg_config_path:
            lines.append(_pkg_config_dir())
        if args.cflags:
            flags += _cflags()
        if args.libs:
            flags += _libs()
        if flags:
            lines.append(shlex.join(flags))
        if args.pkg_config:
            lines.append(_pkg_config_text().rstrip("\n"))
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not lines:
        parser.print_help()
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
