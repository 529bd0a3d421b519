# Configures tests/cmake/plugin_helpers with CASE=flags and checks what
# cmake/PlexusPlugin.cmake made of it:
#   - plexus_add_plugin compiles C and C++ sources with -ffp-contract=off and,
#     given WITH_CUDA, CUDA sources with --fmad=false (compile_commands.json);
#   - plexus_add_conformance_test adds tests that run Plexus::conformance on
#     the plugin's file, with --device per device, --json into the build
#     folder and ARGS last (CTestTestfile.cmake).
# usage: cmake -DSOURCE=<tree> -DBINARY=<scratch> -DGENERATOR=Ninja [-DWITH_CUDA=ON] -P check_plugin_helpers.cmake
file(REMOVE_RECURSE ${BINARY})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE}/tests/cmake/plugin_helpers -B ${BINARY} -G ${GENERATOR}
                        -DPLEXUS_SOURCE=${SOURCE} -DCASE=flags -DWITH_CUDA=${WITH_CUDA}
                        -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "configuring the helpers' project failed:\n${out}")
endif()

file(READ ${BINARY}/compile_commands.json commands)
set(expect "c_source.c|-ffp-contract=off" "cxx_source.cpp|-ffp-contract=off")
if(WITH_CUDA)
  list(APPEND expect "cuda_source.cu|--fmad=false")
endif()
foreach(pair IN LISTS expect)
  string(REPLACE "|" ";" pair "${pair}")
  list(GET pair 0 file)
  list(GET pair 1 flag)
  string(JSON count LENGTH "${commands}")
  math(EXPR last "${count} - 1")
  set(found "")
  foreach(i RANGE ${last})
    string(JSON entry_file GET "${commands}" ${i} file)
    if(entry_file MATCHES "/${file}$")
      string(JSON found GET "${commands}" ${i} command)
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "no compile command for ${file}")
  endif()
  string(FIND "${found}" " ${flag}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${file} is compiled without ${flag}:\n${found}")
  endif()
  message("${file}: compiled with ${flag}")
endforeach()

file(READ ${BINARY}/CTestTestfile.cmake tests)
set(plugin "${BINARY}/libhelper-plugin.so")
foreach(expected
    "add_test(helper-plugin.conformance \"/opt/plexus/bin/plexus-conformance\" \"--plugin\" \"${plugin}\" \"--json\" \"${BINARY}/helper-plugin.conformance.json\")"
    "add_test(named.test \"/opt/plexus/bin/plexus-conformance\" \"--plugin\" \"${plugin}\" \"--device\" \"accel:0\" \"--device\" \"accel:1\" \"--json\" \"${BINARY}/named.test.json\" \"--timeout\" \"5\" \"[R7]\")"
    "set_tests_properties(named.test PROPERTIES  LABELS \"conformance\"")
  string(FIND "${tests}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "CTestTestfile.cmake lacks\n  ${expected}\nIt holds:\n${tests}")
  endif()
endforeach()
message("plexus_add_conformance_test: both tests registered as expected")
