// Catch2 main with one extra option: --device cpu:1 picks the device under
// test (the conformance suite is registered once per device this way).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
    Catch::Session session;
    std::string device;
    auto cli = session.cli() |
               Catch::clara::Opt(device, "kind:index")["--device"]("the device under test, e.g. cpu:0 or gpu:0");
    session.cli(cli);
    if (int rc = session.applyCommandLine(argc, argv)) return rc;
    if (!device.empty()) setenv("PLEXUS_TEST_DEVICE", device.c_str(), 1);
    return session.run();
}
