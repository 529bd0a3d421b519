# CUDA, detected once for the whole tree (included by the root
# CMakeLists.txt, after the options):
#   PLEXUS_HAVE_CUDA          the CUDA plugin (plugins/cuda) and plexus-bench's
#                             GPU rows are built: nvcc and the toolkit found
#                             (PLEXUS_WITH_CUDA=AUTO) or required (ON);
#   PLEXUS_HAVE_CUDA_HEADERS  the toolkit's headers are there, even with
#                             PLEXUS_WITH_CUDA=OFF (the sanitizer and fuzz builds);
#   PLEXUS_HAVE_CUDA_EMULATOR they and Boost.Context are, which is all the
#                             CUDA emulator (tests/cuda_emu) and the GPU
#                             op-call fuzzers need.
# CUDA is enabled here, at the top level, with its architectures already in
# the cache, so every folder that compiles a .cu (all of them are under
# plugins/cuda/) sees the same setting: a plain `cmake -S . -B build` once
# failed with "CUDA_ARCHITECTURES is empty for target plexus-bench", when the
# plugins' folder enabled CUDA and set the architectures for itself alone
# (CTest's build.plain_configure_and_cuda_build guards it).
if(NOT PLEXUS_WITH_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "PLEXUS_WITH_CUDA is '${PLEXUS_WITH_CUDA}'; use AUTO, ON or OFF")
endif()
set(PLEXUS_HAVE_CUDA OFF)
if(NOT PLEXUS_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Turing to Hopper as machine code, plus PTX that newer GPUs compile at
    # load time. Override with -DCMAKE_CUDA_ARCHITECTURES=90 (or native), or
    # CMake's own CUDAARCHS environment variable.
    if(DEFINED ENV{CUDAARCHS})
      set(default_architectures "$ENV{CUDAARCHS}")
    else()
      set(default_architectures "75-real;80-real;86-real;89-real;90-real;90-virtual")
    endif()
    set(CMAKE_CUDA_ARCHITECTURES "${default_architectures}"
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
# The headers alone, for the emulator: no compiler needed.
if(NOT CUDAToolkit_FOUND AND (PLEXUS_CUDA_EMULATOR OR PLEXUS_FUZZ))
  find_package(CUDAToolkit QUIET)
endif()
if(CUDAToolkit_FOUND)
  set(PLEXUS_HAVE_CUDA_HEADERS ON)
else()
  set(PLEXUS_HAVE_CUDA_HEADERS OFF)
endif()
# The emulator (tests/cuda_emu) also runs a block's threads as fibers on
# Boost.Context (libboost-context-dev): PLEXUS_HAVE_CUDA_EMULATOR says both are here.
set(PLEXUS_HAVE_CUDA_EMULATOR OFF)
if(PLEXUS_HAVE_CUDA_HEADERS AND (PLEXUS_CUDA_EMULATOR OR PLEXUS_FUZZ))
  find_package(boost_context 1.74 CONFIG QUIET)
  if(boost_context_FOUND)
    set(PLEXUS_HAVE_CUDA_EMULATOR ON)
  else()
    message(STATUS "CUDA emulator: not built (Boost.Context was not found: apt-get install libboost-context-dev)")
  endif()
endif()
