// A plugin file is checked before dlopen(): the loader maps its segments and
// a file cut short faults (SIGBUS) when the missing pages are touched,
// killing the process; a FIFO or device on the path blocks the open forever.
#pragma once

#include <string>

namespace px {

// "" when `path` is a regular file whose ELF header, program headers, loaded
// segments and section header table all lie within it; else why not.
std::string check_plugin_file(const std::string& path);

}  // namespace px
