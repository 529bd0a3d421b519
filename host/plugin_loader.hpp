// Finds plugin files and loads them (Boost.DLL), checking the ABI. A file that
// fails is recorded with the reason and never stops the others.
#pragma once

#include <string>
#include <vector>

#include "objects.hpp"

namespace px {

// Folder of default plugins: <dir of libplexus>/plexus/plugins.
std::string default_plugin_folder();

// Fills rt.records, rt.plugins and rt.devices.
void load_plugins(Runtime& rt, const px_runtime_options* options);

}  // namespace px
