# plexus_add_plugin(<target> <source>...)
#
# Builds a Plexus device plugin: a MODULE library named lib<target>.so that
# sees the ABI headers (Plexus::headers) but does not link libplexus, and
# exports nothing but px_plugin_get_api (mark it PX_PLUGIN_EXPORT). Used for
# the plugins in this tree and, through find_package(Plexus), outside it.
#
# Install it where the runtime looks, e.g.
#   install(TARGETS <target> LIBRARY DESTINATION ${PLEXUS_PLUGIN_INSTALL_DIR})
# or name its folder in PLEXUS_PLUGIN_PATH.
if(NOT DEFINED PLEXUS_PLUGIN_INSTALL_DIR)
  include(GNUInstallDirs)
  set(PLEXUS_PLUGIN_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/plexus/plugins)
endif()

function(plexus_add_plugin target)
  if(ARGC LESS 2)
    message(FATAL_ERROR "plexus_add_plugin(${target}): give at least one source file")
  endif()
  add_library(${target} MODULE ${ARGN})
  target_link_libraries(${target} PRIVATE Plexus::headers)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
endfunction()
