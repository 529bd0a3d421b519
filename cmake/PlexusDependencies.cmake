# Every library Plexus builds against, found once here for the whole tree
# (included by the root CMakeLists.txt, after the options): no folder below
# looks for a package or a toolchain of its own. What each folder may use:
#   Boost::headers (Boost.DLL, header-only), ZLIB::ZLIB, Threads::Threads,
#   PkgConfig::LIBZIP (.npz files), PkgConfig::SLEEF, OpenMP::OpenMP_CXX and PLEXUS_BLAS_LIBRARIES /
#   PLEXUS_CBLAS_INCLUDE (cmake/PlexusBlas.cmake), Catch2::Catch2 where
#   PLEXUS_HAVE_CATCH2, MPI::MPI_C where PLEXUS_HAVE_MPI; CUDA's are in
#   cmake/PlexusCuda.cmake.
include(PlexusBlas)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)  # gzip for the IDX reader, crc32 for parameter files
find_package(Boost 1.74 REQUIRED)  # header-only Boost.DLL (the host, plexus-train)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SLEEF REQUIRED IMPORTED_TARGET sleef)  # the CPU plugin's vector math, and its tests
pkg_check_modules(LIBZIP QUIET IMPORTED_TARGET libzip)  # NumPy's .npz files (zip archives) for libplexus-nn
if(NOT LIBZIP_FOUND)
  message(FATAL_ERROR "libzip was not found (pkg-config libzip): libplexus-nn reads NumPy .npz files through it. "
                      "Install it with: apt-get install libzip-dev (tools/install-packages.sh does)")
endif()

# Catch2 (header-only): the test suites need it; plexus-conformance, a tool,
# is built only where it is found.
set(PLEXUS_HAVE_CATCH2 OFF)
if(PLEXUS_BUILD_TESTS OR PLEXUS_BUILD_TOOLS)
  if(PLEXUS_BUILD_TESTS)
    find_package(Catch2 2 REQUIRED)
  else()
    find_package(Catch2 2 QUIET)
  endif()
  if(Catch2_FOUND)
    set(PLEXUS_HAVE_CATCH2 ON)
    include(Catch)
  else()
    message(STATUS "Catch2 not found: plexus-conformance is not built")
  endif()
endif()

# libplexus-mpi: data parallelism across processes (optional; needs MPI,
# e.g. Debian's libopenmpi-dev). Nothing else in Plexus links MPI.
if(NOT PLEXUS_WITH_MPI MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "PLEXUS_WITH_MPI is '${PLEXUS_WITH_MPI}'; use AUTO, ON or OFF")
endif()
set(PLEXUS_HAVE_MPI OFF)
if(NOT PLEXUS_WITH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS C)
  if(MPI_C_FOUND)
    set(PLEXUS_HAVE_MPI ON)
    message(STATUS "libplexus-mpi: built (MPI ${MPI_C_VERSION})")
  elseif(PLEXUS_WITH_MPI STREQUAL "ON")
    message(FATAL_ERROR "PLEXUS_WITH_MPI=ON but no MPI was found (apt-get install libopenmpi-dev)")
  else()
    message(STATUS "libplexus-mpi: not built (no MPI found)")
  endif()
endif()
