# The CUDA plugin's own sources built a second time against the CUDA
# emulator (emu_runtime.cpp, emu_launch.cpp, emu_kernel.hpp) instead of the
# CUDA runtime, cuBLAS and nvcc, so that the conformance suite runs every
# line of the plugin and every kernel on a machine without a GPU. The plugin
# is not installed and lives outside the plugin folder; tests name its file.
# Included by this folder's CMakeLists.txt and by the fuzz build
# (tests/fuzz), which fuzzes the plugin's execute on it.
set(emu_dir ${CMAKE_CURRENT_LIST_DIR})
set(cuda_dir ${PROJECT_SOURCE_DIR}/plugins/cuda)
file(GLOB kernel_sources CONFIGURE_DEPENDS ${cuda_dir}/*.cu)
file(GLOB host_sources CONFIGURE_DEPENDS ${cuda_dir}/*.cpp)
set(translated)
foreach(cu IN LISTS kernel_sources)
  get_filename_component(stem ${cu} NAME_WE)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/translated/${stem}.cpp)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DIN=${cu} -DOUT=${out} -P ${emu_dir}/translate_launches.cmake
    DEPENDS ${cu} ${emu_dir}/translate_launches.cmake
    COMMENT "Translating ${stem}.cu's launches for the CUDA emulator")
  list(APPEND translated ${out})
endforeach()
set_source_files_properties(${translated} PROPERTIES
  # #pragma unroll is nvcc's. No FMA contraction (plexus_add_plugin's flags,
  # below): philox.h's px_mul_rn is a plain product here, and __dmul_rn on a
  # GPU is never fused.
  COMPILE_OPTIONS "-include;${emu_dir}/emu_kernel.hpp;-Wno-unknown-pragmas")
# ThreadSanitizer checks the plugin's host code (its locks, queues and
# staging), not the kernels: they run on fibers (Boost.Context), whose
# switches ThreadSanitizer is not told of, so they and the launcher that
# switches between them are left uninstrumented in that build.
if(PLEXUS_SANITIZE MATCHES "thread")
  set_property(SOURCE ${translated} ${emu_dir}/emu_launch.cpp APPEND PROPERTY COMPILE_OPTIONS -fno-sanitize=thread)
endif()

# The emulated CUDA runtime, cuBLAS and NCCL in one shared library, as the
# real ones are shared libraries the plugin links (NCCL: opens) at run time.
set(emu_sources emu_runtime.cpp emu_errors.cpp emu_streams.cpp emu_launch.cpp emu_cublas.cpp emu_nccl.cpp emu_faults.cpp)
list(TRANSFORM emu_sources PREPEND ${emu_dir}/)
add_library(plexus-cudart-emu SHARED ${emu_sources})
target_include_directories(plexus-cudart-emu PRIVATE ${emu_dir} ${CUDAToolkit_INCLUDE_DIRS}
  ${PLEXUS_CBLAS_INCLUDE} ${PROJECT_SOURCE_DIR}/api)  # the last: plexus/half.h
plexus_optimize_kernels(plexus-cudart-emu -O2)
target_link_libraries(plexus-cudart-emu PRIVATE ${PLEXUS_BLAS_LIBRARIES} Threads::Threads Boost::context)
set_target_properties(plexus-cudart-emu PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

# A test build, like plexus-cuda-test: it has the fault hook (test_hook.hpp).
plexus_add_plugin(plexus-cuda-emu ${host_sources} ${translated} EXPORTS px_cuda_test_fault)
target_include_directories(plexus-cuda-emu PRIVATE ${cuda_dir} ${emu_dir}
  ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(plexus-cuda-emu PRIVATE PLEXUS_CUDA_PLUGIN_VERSION="${PROJECT_VERSION}-emulated")
plexus_optimize_kernels(plexus-cuda-emu -O2)
target_link_libraries(plexus-cuda-emu PRIVATE plexus-cudart-emu Threads::Threads ${CMAKE_DL_LIBS})
plexus_cuda_stays_loaded(plexus-cuda-emu)  # as the real one (CMakeLists.txt)
set_target_properties(plexus-cuda-emu PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# A plugin and a runtime, not test code: tests/' PLEXUS_TEST_CODE_OPTIONS
# (-O0 under the sanitizers) leave them, so they keep the plugins' -O (-O1
# there). At -O0 the emulator's conformance run under clang's ASan took 280 s.
if(PLEXUS_TEST_CODE_OPTIONS)
  foreach(target plexus-cudart-emu plexus-cuda-emu)
    get_target_property(options ${target} COMPILE_OPTIONS)
    list(REMOVE_ITEM options ${PLEXUS_TEST_CODE_OPTIONS})
    set_property(TARGET ${target} PROPERTY COMPILE_OPTIONS ${options})
  endforeach()
endif()
# The plugin opens NCCL and cuBLAS by name; here that is the library it already links.
target_compile_definitions(plexus-cuda-emu PRIVATE "PXCUDA_NCCL_LIBRARIES=\"$<TARGET_FILE:plexus-cudart-emu>\""
  "PXCUDA_CUBLAS_LIBRARIES=\"$<TARGET_FILE:plexus-cudart-emu>\"")

# The fuzz build (tools/run-fuzz.sh) instruments the plugin as the op-call
# fuzzer's own code, as it does the CPU plugin; the emulator under it gets
# ASan and UBSan only, so that coverage counts the plugin's branches.
if(PLEXUS_FUZZ)
  target_compile_options(plexus-cudart-emu PRIVATE ${PLEXUS_FUZZ_OPTIONS})
  target_link_options(plexus-cudart-emu PRIVATE ${PLEXUS_FUZZ_LINK_OPTIONS})
  target_compile_options(plexus-cuda-emu PRIVATE -fsanitize=fuzzer-no-link ${PLEXUS_FUZZ_OPTIONS})
  target_link_options(plexus-cuda-emu PRIVATE ${PLEXUS_FUZZ_LINK_OPTIONS})
endif()
