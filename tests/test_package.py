"""The package's surface: the lazily imported public names (PEP 562) and
what ``import fastcredit`` loads."""
import subprocess
import sys

import pytest

import fastcredit


def test_the_package_re_exports_fastcredit_audit_all():
    """fastcredit's lazy table of names lists fastcredit.audit's __all__
    exactly: a name added to one and not the other fails here."""
    import fastcredit.audit
    assert set(fastcredit._PUBLIC[".audit"]) == set(fastcredit.audit.__all__)
    assert len(fastcredit._PUBLIC[".audit"]) == len(fastcredit.audit.__all__)


def test_every_public_name_resolves_to_its_module():
    for module, names in fastcredit._PUBLIC.items():
        for name in names:
            value = getattr(fastcredit, name)
            home = getattr(value, "__module__", None)
            assert home is None or home.startswith("fastcredit"), (name, home)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        fastcredit.not_a_name


def test_import_fastcredit_loads_no_kernel():
    """``import fastcredit`` imports nothing heavy, so that the console
    script's interrupt handling runs before numpy and the kernels load."""
    code = ("import sys, fastcredit; heavy = {'numpy', 'numba', 'cffi', 'pyarrow'}; "
            "print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_a_family_module_named_like_its_function_leaves_the_function():
    """fastcredit.interactions is a module and the package's function of the
    same name: importing the module first (as fastcredit.shapiq does) must
    not turn ``fc.interactions`` into the module."""
    code = ("import fastcredit.interactions, fastcredit as fc, types; "
            "print(isinstance(fc.interactions, types.FunctionType), "
            "type(fc.interactions([0., 1., 2., 4.], 'SII', 1)).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["True", "Interactions"]
