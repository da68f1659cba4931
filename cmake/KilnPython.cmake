# The Python module `kiln` (python/, docs/python.md): option KILN_BUILD_PYTHON, ON by default when
# pybind11 (Debian's pybind11-dev) and the headers of the Python at Python_EXECUTABLE
# (python3-dev) are found; OFF with a note otherwise. Forcing it ON without them is an error.
set(_kiln_python_default OFF)
set(PYBIND11_FINDPYTHON ON)
find_package(Python 3.8 COMPONENTS Interpreter Development.Module QUIET)
find_package(pybind11 2.6 CONFIG QUIET)
if(Python_FOUND AND pybind11_FOUND)
  set(_kiln_python_default ON)
endif()
option(KILN_BUILD_PYTHON "Build the Python module (python/): needs pybind11-dev and python3-dev" ${_kiln_python_default})
if(KILN_BUILD_PYTHON)
  if(NOT Python_FOUND OR NOT pybind11_FOUND)
    message(FATAL_ERROR "KILN_BUILD_PYTHON is ON but pybind11 (found: ${pybind11_FOUND}) or the "
                        "Python headers (found: ${Python_FOUND}) are missing: run scripts/install-deps.sh "
                        "(pybind11-dev, python3-dev) or configure with -DKILN_BUILD_PYTHON=OFF")
  endif()
  message(STATUS "Kiln: Python module for ${Python_EXECUTABLE} (${Python_VERSION}), pybind11 ${pybind11_VERSION}")
  add_subdirectory("${PROJECT_SOURCE_DIR}/python" "${PROJECT_BINARY_DIR}/python-build")
elseif(NOT _kiln_python_default)
  message(STATUS "Kiln: Python module not built (pybind11-dev or python3-dev not found)")
endif()
