# plexus_add_plugin(<target> <source>... [EXPORTS <symbol>...])
#
# Builds a Plexus device plugin: a MODULE library named lib<target>.so that
# sees the ABI headers (Plexus::headers) but does not link libplexus, and
# exports nothing but px_plugin_get_api (mark it PX_PLUGIN_EXPORT). Used for
# the plugins in this tree and, through find_package(Plexus), outside it.
#
# On Linux a linker version script makes every other symbol local, the C++
# library's template copies and a helper left at default visibility
# included, so `nm -D --defined-only` on the plugin lists px_plugin_get_api
# alone (CTest's plugins.exports.* checks the plugins this tree builds).
# EXPORTS names more symbols to leave global: for a test-only build of a
# plugin (plugins/cuda builds plexus-cuda-test with its fault hook), never
# for the plugin you ship.
#
# Install it where the runtime looks, e.g.
#   install(TARGETS <target> LIBRARY DESTINATION ${PLEXUS_PLUGIN_INSTALL_DIR})
# or name its folder in PLEXUS_PLUGIN_PATH.
if(NOT DEFINED PLEXUS_PLUGIN_INSTALL_DIR)
  include(GNUInstallDirs)
  set(PLEXUS_PLUGIN_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/plexus/plugins)
endif()

function(plexus_add_plugin target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "EXPORTS")
  if(NOT arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "plexus_add_plugin(${target}): give at least one source file")
  endif()
  add_library(${target} MODULE ${arg_UNPARSED_ARGUMENTS})
  target_link_libraries(${target} PRIVATE Plexus::headers)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")  # GNU ld, gold and lld all read version scripts
    set(globals px_plugin_get_api ${arg_EXPORTS})
    list(JOIN globals "; " globals)
    set(map ${CMAKE_CURRENT_BINARY_DIR}/${target}.exports.map)
    file(CONFIGURE OUTPUT ${map} CONTENT "{\n  global: ${globals};\n  local: *;\n};\n")
    target_link_options(${target} PRIVATE "LINKER:--version-script=${map}")
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${map})
  endif()
endfunction()
