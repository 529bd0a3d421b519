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
# The file the cpu plugin loads as it starts (plugins/cpu/openblas.hpp says
# why it is not linked): the soname beside the library found, as a link
# dependency would name it.
list(GET PLEXUS_BLAS_LIBRARIES 0 blas_library)
get_filename_component(blas_folder "${blas_library}" DIRECTORY)
if(EXISTS "${blas_folder}/libopenblas.so.0")
  set(PLEXUS_OPENBLAS_RUNTIME_FILE "${blas_folder}/libopenblas.so.0")
else()
  get_filename_component(PLEXUS_OPENBLAS_RUNTIME_FILE "${blas_library}" REALPATH)
endif()
