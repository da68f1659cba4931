# Installation rules and CPack .deb packages (docs/deploy.md; one command: scripts/package.sh).
#
#   kiln-runtime  libkiln_runtime.so.N and kiln-run-npy: what a device installs (amd64, arm64)
#   kiln          the compiler: libkiln.so.N and the `kiln` CLI (full builds only)
#   kiln-dev      headers, the libkiln*.so link names and the CMake packages KilnRuntime and Kiln
#                 (find_package(KilnRuntime) -> Kiln::runtime, find_package(Kiln) -> Kiln::kiln)
# A KILN_RUNTIME_ONLY build (e.g. the AArch64 cross build) packages kiln-runtime only.
# Libraries go to the Debian multiarch directory (lib/<triplet>) when the prefix is /usr.
include(GNUInstallDirs)
# `install`/cpack build only what they package (scripts/package.sh builds those targets), not
# every test binary.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
include(CMakePackageConfigHelpers)

set(KILN_PKG_DIR "${CMAKE_CURRENT_LIST_DIR}/packaging")
set(KILN_CMAKE_CONFIG_DIR "${CMAKE_INSTALL_LIBDIR}/cmake")

# --- what each package holds ------------------------------------------------------------------
install(TARGETS kiln_runtime
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
install(TARGETS kiln_run_npy RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
set(KILN_PACKAGE_COMPONENTS runtime)
if(NOT KILN_RUNTIME_ONLY)
  install(TARGETS kiln LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT compiler NAMELINK_COMPONENT dev)
  install(TARGETS kiln_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT compiler)
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/kiln" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
  foreach(_pkg KilnRuntime Kiln)
    configure_package_config_file("${KILN_PKG_DIR}/${_pkg}Config.cmake.in"
      "${CMAKE_BINARY_DIR}/packaging/${_pkg}Config.cmake"
      INSTALL_DESTINATION "${KILN_CMAKE_CONFIG_DIR}/${_pkg}"
      PATH_VARS CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR)
    write_basic_package_version_file("${CMAKE_BINARY_DIR}/packaging/${_pkg}ConfigVersion.cmake"
      VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
    install(FILES "${CMAKE_BINARY_DIR}/packaging/${_pkg}Config.cmake"
                  "${CMAKE_BINARY_DIR}/packaging/${_pkg}ConfigVersion.cmake"
            DESTINATION "${KILN_CMAKE_CONFIG_DIR}/${_pkg}" COMPONENT dev)
  endforeach()
  list(APPEND KILN_PACKAGE_COMPONENTS compiler dev)
endif()

# Debian policy files: copyright and a compressed changelog in /usr/share/doc/<package>.
set(KILN_DEB_NAME_runtime kiln-runtime)
set(KILN_DEB_NAME_compiler kiln)
set(KILN_DEB_NAME_dev kiln-dev)
find_program(KILN_GZIP gzip)
foreach(_comp IN LISTS KILN_PACKAGE_COMPONENTS)
  set(_name ${KILN_DEB_NAME_${_comp}})
  set(_doc "${CMAKE_BINARY_DIR}/packaging/doc/${_name}")
  string(TIMESTAMP KILN_PACKAGE_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
  set(KILN_DEB_PACKAGE ${_name})
  configure_file("${KILN_PKG_DIR}/changelog.in" "${_doc}/changelog.Debian" @ONLY)
  if(KILN_GZIP)
    execute_process(COMMAND ${KILN_GZIP} -9nf "${_doc}/changelog.Debian")
  endif()
  install(FILES "${KILN_PKG_DIR}/copyright" DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/${_name}" COMPONENT ${_comp})
  install(FILES "${_doc}/changelog.Debian.gz" DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/${_name}"
          COMPONENT ${_comp} OPTIONAL)
  # lintian tags that stay, each with the reason (cmake/packaging/lintian-overrides.<package>).
  if(EXISTS "${KILN_PKG_DIR}/lintian-overrides.${_name}")
    install(FILES "${KILN_PKG_DIR}/lintian-overrides.${_name}" RENAME ${_name}
            DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides" COMPONENT ${_comp})
  endif()
endforeach()

# --- CPack: one .deb per component ------------------------------------------------------------
if(CMAKE_CROSSCOMPILING OR NOT KILN_DEB_ARCH)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    set(KILN_DEB_ARCH arm64)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|amd64|AMD64)$")
    set(KILN_DEB_ARCH amd64)
  else()
    set(KILN_DEB_ARCH ${CMAKE_SYSTEM_PROCESSOR})
  endif()
endif()
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kiln)
set(CPACK_PACKAGE_VENDOR "Kiln")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Kiln developers <kiln-dev@lists.kiln.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "deep-learning compiler and runtime")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${KILN_PACKAGE_COMPONENTS})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${KILN_DEB_ARCH})
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://kiln.invalid/")
# shlibs files for libkiln_runtime.so.N / libkiln.so.N, and the ldconfig trigger.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# Debian's ldconfig trigger for the packages with libraries (CPack 3.25 also calls ldconfig
# from postinst/postrm: lintian's maintscript-calls-ldconfig warning, harmless and explained).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA "${KILN_PKG_DIR}/triggers")
set(CPACK_DEBIAN_COMPILER_PACKAGE_CONTROL_EXTRA "${KILN_PKG_DIR}/triggers")
set(_kiln_full_version "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME kiln-runtime)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
# libkiln_runtime needs libc, libstdc++ and libgcc_s only (checked by tests/deploy): stated here
# rather than by dpkg-shlibdeps, which cannot read a foreign architecture's libraries.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "libc6 (>= 2.34), libgcc-s1 (>= 3.0), libstdc++6 (>= 12)")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "Kiln runtime: runs compiled models\n The library that loads and runs the models the Kiln compiler writes (one\n shared library per model), with kiln-run-npy, a runner for .npy inputs.\n It needs nothing but the C and C++ standard libraries.")

set(CPACK_DEBIAN_COMPILER_PACKAGE_NAME kiln)
set(CPACK_DEBIAN_COMPILER_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_COMPILER_PACKAGE_SHLIBDEPS ON)
# libkiln_runtime is our own (kiln-runtime, depended on below): dpkg-shlibdeps finds it here.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}")
set(CPACK_DEBIAN_COMPILER_PACKAGE_DEPENDS "kiln-runtime (= ${_kiln_full_version}), gcc | clang")
set(CPACK_DEBIAN_COMPILER_PACKAGE_SUGGESTS "gcc-aarch64-linux-gnu, libc6-dev-arm64-cross")
set(CPACK_COMPONENT_COMPILER_DESCRIPTION
    "Kiln deep-learning compiler\n Compiles ONNX models into one shared library per model for x86-64 or\n AArch64 CPUs (libkiln and the kiln command-line tool). Linking for\n AArch64 needs the GNU cross compiler it suggests.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME kiln-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "kiln-runtime (= ${_kiln_full_version}), libdlpack-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "kiln (= ${_kiln_full_version})")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "Kiln headers and CMake packages\n C and C++ headers of the Kiln runtime and compiler, and the CMake\n packages KilnRuntime (target Kiln::runtime) and Kiln (target Kiln::kiln).")

set(CPACK_OUTPUT_FILE_PREFIX "${CMAKE_BINARY_DIR}/cpack-out")  # scripts/package.sh copies them on
include(CPack)
