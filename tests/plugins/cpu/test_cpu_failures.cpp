// The CPU plugin's report of many failures between two waits: the first's
// status and message, then how many more failed and as many of their
// messages as fit in PX_MESSAGE_MAX (plugins/cpu/device_queue.hpp).
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "plexus/plexus.h"

TEST_CASE("forty failed ops before a wait: the first reported, the other 39 counted, the message bounded",
          "[host][cpu-abi][async]") {
    const char* paths[] = {PLEXUS_CPU_PLUGIN_FILE};
    px_runtime_options o{sizeof o, paths, 1, 1, 0};
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(&o, &rt) == PX_OK);
    const px_device cpu0{PX_DEVICE_CPU, 0};
    const int64_t n = 100000;  // large enough to be queued, not run on this thread
    px_tensor* zero = nullptr;
    REQUIRE(px_tensor_full(rt, cpu0, PX_INT32, 1, &n, 0, &zero) == PX_OK);
    for (int i = 0; i < 40; ++i) {
        px_tensor* q = nullptr;
        REQUIRE(px_binary(PX_OP_DIV, zero, zero, &q) == PX_OK);
        px_tensor_release(q);
    }
    REQUIRE(px_runtime_synchronize(rt, cpu0) == PX_ERROR_DEVICE);
    const std::string m = px_last_error();
    INFO(m);
    CHECK(m.find("div failed on ") != std::string::npos);
    CHECK(m.find("(and 39 more failed since the last wait: div: integer division by zero; div: ") !=
          std::string::npos);
    // The plugin's part, within PX_MESSAGE_MAX, ends with whole messages, "..." and ")".
    const std::string tail = "; ...) [plugin cpu]";
    CHECK(m.compare(m.size() - tail.size(), tail.size(), tail) == 0);
    CHECK(m.size() - m.find("div failed on ") < PX_MESSAGE_MAX);
    // Reported once: the device starts afresh.
    CHECK(px_runtime_synchronize(rt, cpu0) == PX_OK);
    px_tensor_release(zero);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
}
