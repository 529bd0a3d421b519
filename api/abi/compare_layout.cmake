# Compares the current ABI layout with the recorded one, and checks that
# every struct declared in the ABI's headers (HEADERS, comma-separated:
# plugin.h and types.h) is listed in plugin_abi_layout.c.
file(READ ${RECORDED} recorded)
file(READ ${CURRENT} current)

string(REPLACE "," ";" headers "${HEADERS}")
foreach(path ${headers})
  file(READ ${path} header)
  get_filename_component(file ${path} NAME)
  string(REGEX MATCHALL "typedef struct px_[a-z0-9_]+ {" declared "${header}")
  foreach(decl ${declared})
    string(REGEX REPLACE "typedef struct (px_[a-z0-9_]+) {" "\\1" name "${decl}")
    if(NOT current MATCHES "struct ${name} size=")
      message(FATAL_ERROR "plugin ABI check: struct ${name} in ${file} is not listed in "
                          "api/abi/plugin_abi_layout.c; list it and its fields there.")
    endif()
  endforeach()
endforeach()

if(NOT recorded STREQUAL current)
  string(REPLACE "\n" ";" rec_lines "${recorded}")
  string(REPLACE "\n" ";" cur_lines "${current}")
  set(diff "")
  foreach(line ${rec_lines})
    list(FIND cur_lines "${line}" at)
    if(at EQUAL -1)
      string(APPEND diff "  recorded, now different or gone: ${line}\n")
    endif()
  endforeach()
  foreach(line ${cur_lines})
    list(FIND rec_lines "${line}" at)
    if(at EQUAL -1)
      string(APPEND diff "  new or changed: ${line}\n")
    endif()
  endforeach()
  message(FATAL_ERROR "plugin ABI check: the layout of api/plexus/plugin.h and types.h differs from "
    "api/abi/plugin_abi.layout:\n${diff}"
    "Plugins built against the recorded ABI would break. Only append fields and slots "
    "(bump PX_PLUGIN_ABI_MINOR), then run `cmake --build <build> --target plexus-abi-update`.")
endif()
