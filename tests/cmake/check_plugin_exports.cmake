# A release plugin exports px_plugin_get_api and nothing else (issue 38):
# what `nm -D --defined-only` lists for each file in PLUGINS (a list) must be
# that one symbol. Test hooks go into a test build of a plugin
# (plexus_add_plugin's EXPORTS), the C++ library's template copies are made
# local by plexus_add_plugin's version script.
#   cmake -DNM=nm "-DPLUGINS=a.so;b.so" -P check_plugin_exports.cmake
cmake_policy(SET CMP0057 NEW)  # IN_LIST
if(NOT NM OR NOT PLUGINS)
  message(FATAL_ERROR "usage: cmake -DNM=<nm> -DPLUGINS=<file>[;<file>...] -P check_plugin_exports.cmake")
endif()
set(failed FALSE)
foreach(plugin IN LISTS PLUGINS)
  execute_process(COMMAND ${NM} -D --defined-only ${plugin}
    RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${plugin}: ${err}")
  endif()
  string(REGEX MATCHALL "[^\n]+" lines "${out}")
  set(symbols "")
  foreach(line IN LISTS lines)
    # "<address> <type> <name>"; the name is the last field.
    string(REGEX REPLACE "^.* " "" name "${line}")
    list(APPEND symbols ${name})
  endforeach()
  if(symbols STREQUAL "px_plugin_get_api")
    message("${plugin}: exports px_plugin_get_api only")
  else()
    set(failed TRUE)
    if(NOT "px_plugin_get_api" IN_LIST symbols)
      message("${plugin}: does not export px_plugin_get_api")
    endif()
    list(REMOVE_ITEM symbols px_plugin_get_api)
    list(JOIN symbols " " extra)
    message("${plugin}: also exports: ${extra}")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "a release plugin must export px_plugin_get_api and nothing else")
endif()
