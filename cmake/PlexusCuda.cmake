# CUDA, detected once for the whole tree: PLEXUS_HAVE_CUDA says whether the
# CUDA plugin (and plexus-bench's GPU rows) are built. Included by the root
# CMakeLists.txt, so CUDA is enabled at the top level with its
# architectures already in the cache, and every folder that compiles a .cu
# sees the same setting (a plain `cmake -S . -B build` once failed with
# "CUDA_ARCHITECTURES is empty for target plexus-bench").
set(PLEXUS_WITH_CUDA AUTO CACHE STRING "Build the CUDA plugin: AUTO, ON or OFF")
set_property(CACHE PLEXUS_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)
if(NOT PLEXUS_WITH_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "PLEXUS_WITH_CUDA is '${PLEXUS_WITH_CUDA}'; use AUTO, ON or OFF")
endif()
set(PLEXUS_HAVE_CUDA OFF)
if(NOT PLEXUS_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Turing to Hopper as machine code, plus PTX that newer GPUs compile at
    # load time. Override with -DCMAKE_CUDA_ARCHITECTURES=90 (or native).
    set(CMAKE_CUDA_ARCHITECTURES "75-real;80-real;86-real;89-real;90-real;90-virtual"
        CACHE STRING "CUDA architectures the CUDA plugin is built for")
    enable_language(CUDA)
    find_package(CUDAToolkit)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND)
    set(PLEXUS_HAVE_CUDA ON)
    message(STATUS "CUDA plugin: CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
  elseif(PLEXUS_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "PLEXUS_WITH_CUDA=ON but no CUDA compiler or toolkit was found "
                        "(set CMAKE_CUDA_COMPILER, or put nvcc on PATH)")
  else()
    message(STATUS "CUDA plugin: not built (no CUDA compiler or toolkit found)")
  endif()
endif()
