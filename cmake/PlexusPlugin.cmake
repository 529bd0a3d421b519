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
# alone (CTest's plugins.exports.* checks the plugins this tree builds); a
# plugin that does not export px_plugin_get_api fails its build, with the
# line that defines it (PlexusPluginEntryCheck.cmake).
# EXPORTS names more symbols to leave global: for a test-only build of a
# plugin (plugins/cuda builds plexus-cuda-test with its fault hook), never
# for the plugin you ship.
#
# Its sources are compiled without floating-point contraction
# (plexus_no_fp_contraction below), as the contract needs.
#
# Install it where the runtime looks: outside the Plexus tree, the installed
# package's own folder,
#   install(TARGETS <target> LIBRARY DESTINATION ${Plexus_PLUGIN_DIR})
# (PLEXUS_PLUGIN_INSTALL_DIR is relative to the installing project's prefix),
# or name its folder in PLEXUS_PLUGIN_PATH.
set(_PLEXUS_PLUGIN_HELPERS ${CMAKE_CURRENT_LIST_DIR})  # (PlexusPluginEntryCheck.cmake lies beside this file)
if(NOT DEFINED PLEXUS_PLUGIN_INSTALL_DIR)
  include(GNUInstallDirs)
  set(PLEXUS_PLUGIN_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/plexus/plugins)
endif()

# ---- no floating-point contraction: the one place that decides it ----
# A compiler may fuse a * b + c into one multiply-add, rounded once. The
# contract fixes bits that need each product and sum rounded on its own:
# philox.h's random streams (R14, whose px_mul_rn is a plain product in host
# code) and the SGD update (R15). GCC and Clang fuse where the instruction set
# has FMA (-march=native, -mfma, AVX-512 copies of a loop), nvcc always
# (--fmad=true is its default). These are the flags that stop it, for
# C and C++ sources and for CUDA sources compiled by nvcc; a source that may
# fuse (its results are held to a tolerance, not to bits) says so with its
# own COMPILE_OPTIONS, which come after these (plugins/cpu's conv_direct_*.cpp).
set(PLEXUS_NO_FP_CONTRACTION_C_CXX -ffp-contract=off)
set(PLEXUS_NO_FP_CONTRACTION_CUDA --fmad=false)

# plexus_no_fp_contraction(<target> [LANGUAGES <C|CXX|CUDA>...])
# Compiles the target's sources of those languages (all three by default)
# with the flags above. plexus_add_plugin calls it for every plugin.
function(plexus_no_fp_contraction target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "LANGUAGES")
  if(NOT arg_LANGUAGES)
    set(arg_LANGUAGES C CXX CUDA)
  endif()
  foreach(lang IN LISTS arg_LANGUAGES)
    if(lang STREQUAL "C" OR lang STREQUAL "CXX")
      set(flags ${PLEXUS_NO_FP_CONTRACTION_C_CXX})
    elseif(lang STREQUAL "CUDA")
      set(flags ${PLEXUS_NO_FP_CONTRACTION_CUDA})
    else()
      message(FATAL_ERROR "plexus_no_fp_contraction(${target}): '${lang}' is not one of the languages it knows (C, CXX, CUDA)")
    endif()
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:${lang}>:${flags}>")
  endforeach()
endfunction()

function(plexus_add_plugin target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "EXPORTS")
  if(NOT arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "plexus_add_plugin(${target}): give at least one source file")
  endif()
  add_library(${target} MODULE ${arg_UNPARSED_ARGUMENTS})
  target_link_libraries(${target} PRIVATE Plexus::headers)
  if(CMAKE_CXX_COMPILER_LOADED)  # the kit (plugin_kit.hpp) is C++17; a C plugin needs no C++
    target_compile_features(${target} PRIVATE cxx_std_17)
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    PLEXUS_PLUGIN ON)  # what plexus_add_conformance_test asks for
  plexus_no_fp_contraction(${target})
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")  # GNU ld, gold and lld all read version scripts
    set(globals px_plugin_get_api ${arg_EXPORTS})
    list(JOIN globals "; " globals)
    set(map ${CMAKE_CURRENT_BINARY_DIR}/${target}.exports.map)
    file(CONFIGURE OUTPUT ${map} CONTENT "{\n  global: ${globals};\n  local: *;\n};\n")
    target_link_options(${target} PRIVATE "LINKER:--version-script=${map}")
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${map})
  endif()
  if(CMAKE_NM)  # a plugin that does not export its entry point fails its build, not its first load
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DPLUGIN=$<TARGET_FILE:${target}> -DTARGET=${target}
              -P ${_PLEXUS_PLUGIN_HELPERS}/PlexusPluginEntryCheck.cmake
      VERBATIM)
  endif()
endfunction()

# plexus_add_conformance_test(<target> [NAME <test>] [DEVICES <id>...] [ARGS <arg>...])
#
# Adds a CTest test (call enable_testing() first) that runs plexus-conformance
# on the plugin <target> made by plexus_add_plugin:
#   plexus-conformance --plugin $<TARGET_FILE:target> [--device <id>]...
#                      --json <build folder>/<test>.json [<arg>...]
# which fails when any check fails, or the plugin does not load. DEVICES
# names devices as the tool does (mydev:0, accel:0); without them every device of the
# plugin is tested. ARGS go to the tool as they are: --timeout 10, a Catch
# filter "[R7]", --skip-absent (a machine without the device then reports
# the test skipped: the tool's exit 4 is its SKIP_RETURN_CODE). The test is
# named <target>.conformance unless NAME says, and labelled conformance. The tool is the target Plexus::conformance: the
# installed plexus-conformance found with the package, or in the Plexus tree
# the one it builds.
function(plexus_add_conformance_test target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "NAME" "DEVICES;ARGS")
  set(me "plexus_add_conformance_test(${target})")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${me}: unexpected arguments '${arg_UNPARSED_ARGUMENTS}' (it takes NAME, DEVICES and ARGS)")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "${me}: there is no target ${target}; make it with plexus_add_plugin first")
  endif()
  get_target_property(is_plugin ${target} PLEXUS_PLUGIN)
  if(NOT is_plugin)
    message(FATAL_ERROR "${me}: ${target} is not a plugin; make it with plexus_add_plugin")
  endif()
  if(NOT TARGET Plexus::conformance)
    message(FATAL_ERROR "${me}: this Plexus has no plexus-conformance (Plexus::conformance); "
                        "it is built where Catch2 is found and PLEXUS_BUILD_TOOLS is ON")
  endif()
  if(NOT arg_NAME)
    set(arg_NAME ${target}.conformance)
  endif()
  set(devices)
  foreach(device IN LISTS arg_DEVICES)
    list(APPEND devices --device ${device})
  endforeach()
  add_test(NAME ${arg_NAME}
    COMMAND $<TARGET_FILE:Plexus::conformance> --plugin $<TARGET_FILE:${target}> ${devices}
            --json ${CMAKE_CURRENT_BINARY_DIR}/${arg_NAME}.json ${arg_ARGS})
  set_tests_properties(${arg_NAME} PROPERTIES LABELS conformance SKIP_RETURN_CODE 4)
endfunction()
