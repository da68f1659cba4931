# Configure-time check, after project(): a C++ compiler without C++20 gets one clear message with
# the fix (instead of hundreds of errors from the first file that uses a C++20 feature). The
# build-directory checks run before project(), in KilnBuildDirChecks.cmake.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-std=c++20")
check_cxx_source_compiles([=[
#include <concepts>
#include <span>
template <std::integral T> constexpr T twice(T v) { return v * 2; }
int main() { int a[2] = {1, 2}; std::span<int> s(a); return twice(s[0]) == 2 ? 0 : 1; }
]=] KILN_CXX_HAS_CXX20)
unset(CMAKE_REQUIRED_FLAGS)
if(NOT KILN_CXX_HAS_CXX20)
  message(FATAL_ERROR
    "Kiln needs a C++20 compiler: ${CMAKE_CXX_COMPILER} (${CMAKE_CXX_COMPILER_ID} "
    "${CMAKE_CXX_COMPILER_VERSION}) cannot compile C++20 (<concepts>, <span>).\n"
    "Fix: use g++ >= 11 or clang++ >= 14, e.g. 'apt-get install g++' or "
    "-DCMAKE_CXX_COMPILER=g++-12 in a new build directory.")
endif()
