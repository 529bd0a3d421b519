# The installed package: headers, libraries, plugins and tools (installed by
# their own folders), the CMake package and the pkg-config files. Every path
# in them is relative to the installation, so the tree can be moved.
include(CMakePackageConfigHelpers)
set(PLEXUS_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Plexus)

install(EXPORT PlexusTargets NAMESPACE Plexus:: DESTINATION ${PLEXUS_CMAKE_INSTALL_DIR})
configure_package_config_file(cmake/PlexusConfig.cmake.in
  ${PROJECT_BINARY_DIR}/PlexusConfig.cmake
  INSTALL_DESTINATION ${PLEXUS_CMAKE_INSTALL_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR PLEXUS_PLUGIN_INSTALL_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/PlexusConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/PlexusConfig.cmake
  ${PROJECT_BINARY_DIR}/PlexusConfigVersion.cmake
  cmake/PlexusPlugin.cmake
  cmake/PlexusPluginEntryCheck.cmake
  DESTINATION ${PLEXUS_CMAKE_INSTALL_DIR})

foreach(pc plexus plexus-nn)
  configure_file(cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
