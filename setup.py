"""`pip install .` for Kiln's Python package (docs/python.md). Offline with Debian 12's pip,
setuptools and wheel: no pyproject build isolation, nothing fetched.

The extension is built by Kiln's own CMake build (python/CMakeLists.txt), never by setuptools:
build_ext configures (once) and builds the target kiln_python in $KILN_BUILD_DIR, else ./build
when that directory was configured for this same Python, else ./build-py<X.Y>; then
`cmake --install --component python` stages the extension with libkiln and libkiln_runtime
(RPATH $ORIGIN) and they are copied into the package under their sonames: the installed package
needs no LD_LIBRARY_PATH and no PYTHONPATH. `pip install -e .` links python/kiln/_kiln*.so to the
build tree's extension instead, which finds the build tree's libraries: a rebuilt libkiln is
picked up with no reinstall."""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def _version():
    text = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    return re.search(r"project\(Kiln VERSION ([0-9.]+)", text).group(1)


def _cache_value(build_dir, name):
    """`name`'s value in build_dir's CMakeCache.txt: None without a cache, "" when unset."""
    cache = os.path.join(build_dir, "CMakeCache.txt")
    if not os.path.exists(cache):
        return None
    m = re.search(r"^" + name + r":[A-Z]*=(.*)$", open(cache).read(), re.M)
    return m.group(1).strip() if m else ""


def _cached_python(build_dir):
    return _cache_value(build_dir, "Python_EXECUTABLE")


def _same_python(executable):
    """True when `executable` is this interpreter's version (a venv's python and its base are the same)."""
    try:
        out = subprocess.run([executable, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return False
    return out == sysconfig.get_config_var("EXT_SUFFIX")


def _build_dir():
    if os.environ.get("KILN_BUILD_DIR"):
        d = os.environ["KILN_BUILD_DIR"]
        return d if os.path.isabs(d) else os.path.join(ROOT, d)
    default = os.path.join(ROOT, "build")
    cached = _cached_python(default)
    if cached is None or (cached and _same_python(cached)):
        return default
    return os.path.join(ROOT, "build-py%d.%d" % sys.version_info[:2])


def _run(cmd):
    print("kiln setup.py:", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


class CMakeBuild(build_ext):
    def run(self):
        build_dir = _build_dir()
        python = getattr(sys, "_base_executable", sys.executable)
        cached = _cached_python(build_dir)
        if (cached is None or not cached or not _same_python(cached)
                or _cache_value(build_dir, "KILN_BUILD_PYTHON") not in ("ON", "TRUE", "1")):
            _run(["bash", os.path.join(ROOT, "scripts", "configure.sh"), build_dir,
                  f"-DPython_EXECUTABLE={python}", "-DKILN_BUILD_PYTHON=ON"])
        jobs = subprocess.run(["bash", os.path.join(ROOT, "scripts", "job-count.sh")], capture_output=True,
                              text=True).stdout.strip() or "1"
        _run(["cmake", "--build", build_dir, "-j", jobs, "--target", "kiln_python"])
        for ext in self.extensions:
            target = self.get_ext_fullpath(ext.name)
            package_dir = os.path.dirname(os.path.abspath(target))
            os.makedirs(package_dir, exist_ok=True)
            if self.inplace:
                self._link_build_tree(build_dir, package_dir)
            else:
                self._stage_installed(build_dir, package_dir)

    @staticmethod
    def _link_build_tree(build_dir, package_dir):
        name = "_kiln" + sysconfig.get_config_var("EXT_SUFFIX")
        link = os.path.join(package_dir, name)
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.join(build_dir, "python", "kiln", name), link)

    @staticmethod
    def _stage_installed(build_dir, package_dir):
        staging = tempfile.mkdtemp(prefix="kiln-wheel-")
        try:
            _run(["cmake", "--install", build_dir, "--component", "python", "--prefix", staging])
            src = os.path.join(staging, "kiln")
            for name in sorted(os.listdir(src)):
                path = os.path.join(src, name)
                # Libraries go in under their soname (the symlink's name), once: wheels hold no links.
                real = os.path.realpath(path)
                if not os.path.islink(path) and any(os.path.islink(os.path.join(src, n)) and
                                                    os.path.realpath(os.path.join(src, n)) == real
                                                    for n in os.listdir(src)):
                    continue
                shutil.copyfile(real, os.path.join(package_dir, name))
                shutil.copymode(real, os.path.join(package_dir, name))
        finally:
            shutil.rmtree(staging, True)


setup(
    name="kiln",
    version=_version(),
    description="Kiln: a deep-learning compiler (ONNX -> optimized CPU kernels) and its runtime",
    packages=["kiln"],
    package_dir={"": "python"},
    ext_modules=[Extension("kiln._kiln", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.8",
    install_requires=["numpy"],
    zip_safe=False,
    # setuptools' own scratch files stay out of the CMake build tree's lib/ and bin/.
    options={"build": {"build_base": os.path.join("build", "setuptools")}},
)
