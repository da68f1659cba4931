"""Imports the extension kiln._kiln, explaining the one failure users hit most: an extension built
for another Python (its file name carries that Python's tag, e.g. _kiln.cpython-311-x86_64-linux-gnu.so)."""
import glob
import os
import sys
import sysconfig


def mismatch_message(built_files, ext_suffix, version):
    """The ImportError text when none of `built_files` is for this interpreter (`ext_suffix`), else None."""
    names = sorted(os.path.basename(f) for f in built_files)
    if not names or any(n.endswith(ext_suffix) for n in names):
        return None
    return (f"kiln: the extension in this package was built for another Python ({', '.join(names)}), "
            f"but this is Python {version} (it needs _kiln{ext_suffix}).\n"
            f"hint: rebuild and install kiln with this interpreter: "
            f"{sys.executable} -m pip install <kiln source tree> (docs/python.md)")


def load():
    try:
        from . import _kiln
    except ImportError as e:
        here = os.path.dirname(os.path.abspath(__file__))
        message = mismatch_message(glob.glob(os.path.join(here, "_kiln.*.so")),
                                   sysconfig.get_config_var("EXT_SUFFIX"), sys.version.split()[0])
        if message:
            raise ImportError(message) from e
        raise ImportError(f"kiln: cannot load the extension kiln._kiln from {here}: {e}\n"
                          "hint: run `kiln doctor`, or reinstall kiln (docs/python.md)") from e
    return _kiln
