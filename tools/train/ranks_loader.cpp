// Finds and loads libplexus-train-mpi for plexus-train --distributed.
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "ranks.hpp"

#ifndef PLEXUS_INSTALL_LIBDIR
#define PLEXUS_INSTALL_LIBDIR "lib"
#endif

namespace plexus::train {

std::unique_ptr<Ranks> open_mpi_ranks(int& argc, char**& argv) {
    namespace fs = std::filesystem;
    // Beside the tool: <prefix>/bin/plexus-train and <prefix>/<libdir>/plexus/
    // when installed; bin/ and lib/plexus/ in the build tree.
    const fs::path prefix = boost::dll::program_location().parent_path().parent_path();
    std::vector<fs::path> places{prefix / PLEXUS_INSTALL_LIBDIR / "plexus" / ranks_module_file};
    if (std::string(PLEXUS_INSTALL_LIBDIR) != "lib") places.push_back(prefix / "lib" / "plexus" / ranks_module_file);
    std::string tried;
    for (const fs::path& place : places) {
        if (!fs::exists(place)) {
            tried += "\n  " + place.string() + ": not there";
            continue;
        }
        boost::dll::shared_library lib;
        // Global symbols: MPI's own components, loaded later by MPI, look
        // for its symbols there. Never unloaded (RTLD_NODELETE): MPI cannot
        // start twice in a process and its libraries do not unload cleanly.
        const auto mode = boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_global |
                          static_cast<boost::dll::load_mode::type>(RTLD_NODELETE);
        try {
            // The throwing form: its message keeps dlerror's text (e.g. which
            // of MPI's libraries is missing); the error_code form loses it.
            lib.load(place, mode);
        } catch (const std::exception& e) {
            tried += "\n  " + place.string() + ": it could not be loaded: " + e.what();
            continue;
        }
        if (!lib.has(open_ranks_symbol)) {
            tried += "\n  " + place.string() + ": it has no " + open_ranks_symbol + " (not plexus-train's MPI module)";
            continue;
        }
        char error[512] = {0};
        Ranks* ranks = lib.get<OpenRanks>(open_ranks_symbol)(&argc, &argv, error, sizeof error);
        if (!ranks) throw std::runtime_error(std::string("--distributed: starting MPI failed: ") + error);
        return std::unique_ptr<Ranks>(ranks);
    }
    throw std::runtime_error("--distributed needs a loadable " + std::string(ranks_module_file) +
                             " (built with plexus when MPI is found: install libopenmpi-dev and build again; it needs "
                             "MPI's libraries at run time); tried:" +
                             tried);
}

}  // namespace plexus::train
