// The GPU-only tests skip on a machine without a GPU (tests/test_main.hpp):
// the reason names what the cuda plugin said.
#include <string>

#include "plexus/plexus.hpp"
#include "../../test_main.hpp"

namespace {

std::string why_no_gpu() {
    if (plexus::num_gpus() > 0) return "";
    std::string why = "no plugin offers a GPU";
    for (const auto& p : plexus::plugins())
        if (std::string(p.name) == "cuda") why = p.message && *p.message ? p.message : "the cuda plugin has no devices";
    return "this test needs a GPU: " + why;
}

const bool registered = plexus_test::set_skip_check(&why_no_gpu);

}  // namespace
