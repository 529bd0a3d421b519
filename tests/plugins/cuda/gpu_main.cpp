// Catch2 main of the GPU-only tests: on a machine without a GPU it prints
// why and exits 4, which CTest reports as skipped (SKIP_RETURN_CODE).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "plexus/plexus.hpp"

int main(int argc, char** argv) {
    Catch::Session session;
    if (int rc = session.applyCommandLine(argc, argv)) return rc;
    const auto& cfg = session.configData();
    const bool listing = cfg.listTests || cfg.listTestNamesOnly || cfg.listTags || cfg.showHelp;
    if (!listing && plexus::num_gpus() == 0) {
        std::string why = "no plugin offers a GPU";
        for (const auto& p : plexus::plugins())
            if (std::string(p.name) == "cuda") why = p.message && *p.message ? p.message : "the cuda plugin has no devices";
        std::printf("skipped: this test needs a GPU: %s\n", why.c_str());
        return 4;
    }
    return session.run();
}
