# OpenBLAS for the cpu plugin and the benchmarks' raw baselines.
# Prefer Debian's OpenMP build of OpenBLAS, so OpenBLAS and our own kernels
# share one OpenMP thread pool instead of two pools fighting over the cores.
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(Threads REQUIRED)
find_library(PLEXUS_OPENBLAS_OPENMP openblas
  PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp NO_DEFAULT_PATH)
if(PLEXUS_OPENBLAS_OPENMP)
  set(PLEXUS_BLAS_LIBRARIES ${PLEXUS_OPENBLAS_OPENMP})
  message(STATUS "OpenBLAS (OpenMP build): ${PLEXUS_OPENBLAS_OPENMP}")
else()
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS REQUIRED)
  set(PLEXUS_BLAS_LIBRARIES ${BLAS_LIBRARIES})
  message(STATUS "BLAS: ${BLAS_LIBRARIES}")
endif()
find_path(PLEXUS_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas REQUIRED)
