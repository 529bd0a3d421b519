// Catch2 main of every test program, with one extra option: --device cpu:1
// picks the device under test (the conformance suite is registered once per
// device this way), and a registered skip check (test_main.hpp). Catch2's
// implementation is compiled here once for all of them.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "test_main.hpp"

namespace {
plexus_test::skip_check registered_check = nullptr;  // constant-initialised: set before main
}

bool plexus_test::set_skip_check(skip_check check) {
    registered_check = check;
    return true;
}

int main(int argc, char** argv) {
    Catch::Session session;
    std::string device;
    auto cli = session.cli() |
               Catch::clara::Opt(device, "kind:index")["--device"]("the device under test, e.g. cpu:0 or gpu:0");
    session.cli(cli);
    if (int rc = session.applyCommandLine(argc, argv)) return rc;
    if (!device.empty()) setenv("PLEXUS_TEST_DEVICE", device.c_str(), 1);
    const auto& cfg = session.configData();
    const bool listing = cfg.listTests || cfg.listTestNamesOnly || cfg.listTags || cfg.showHelp;
    if (!listing && registered_check != nullptr) {
        const std::string why = registered_check();
        if (!why.empty()) {
            std::printf("skipped: %s\n", why.c_str());
            return 4;
        }
    }
    return session.run();
}
