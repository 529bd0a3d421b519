# Run by plexus_add_plugin after a plugin is linked: the runtime loads a
# plugin through px_plugin_get_api, so a build whose file does not export it
# (a misspelt name, a C++ function without extern "C", no PX_PLUGIN_EXPORT)
# stops here, and the file is removed so that the next build links it again.
#   cmake -DNM=<nm> -DPLUGIN=<file> -DTARGET=<target> -P PlexusPluginEntryCheck.cmake
execute_process(COMMAND ${NM} -D --defined-only ${PLUGIN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(WARNING "plexus_add_plugin(${TARGET}): ${NM} could not read ${PLUGIN} (${err}); its entry point is not checked")
  return()
endif()
if(NOT out MATCHES "(^|\n)[0-9a-fA-F]* *[TtWw] px_plugin_get_api(\n|$)")
  file(REMOVE ${PLUGIN})
  message(FATAL_ERROR "plexus_add_plugin(${TARGET}): ${PLUGIN}\n"
    "does not export px_plugin_get_api: the runtime could not load it. Define it as\n"
    "  extern \"C\" PX_PLUGIN_EXPORT const px_plugin_api* px_plugin_get_api(void)\n"
    "(without extern \"C\" in a C source); see examples/plugin-template/plugin.cpp")
endif()
