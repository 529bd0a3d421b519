// PLEXUS_MAX_LIVE_TENSORS: a cap on live tensor handles, so a leak fails
// fast as out-of-memory. It also reaches the path where a call with two
// results publishes the first and is refused the second: the first must be
// released, not leaked.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "plexus/plexus.h"

namespace {

const px_device cpu0{PX_DEVICE_CPU, 0};

bool says(const std::string& needle) { return std::string(px_last_error()).find(needle) != std::string::npos; }

// Sets the variable for one test; afterwards unsets it and creates a runtime,
// which puts the default limit back for the tests after this one.
struct LimitEnvironment {
    explicit LimitEnvironment(const char* value) { setenv("PLEXUS_MAX_LIVE_TENSORS", value, 1); }
    ~LimitEnvironment() {
        unsetenv("PLEXUS_MAX_LIVE_TENSORS");
        px_runtime* rt = nullptr;
        if (px_runtime_create(nullptr, &rt) == PX_OK) px_runtime_destroy(rt);
    }
};

px_status full(px_runtime* rt, std::vector<int64_t> shape, px_tensor** out) {
    return px_tensor_full(rt, cpu0, PX_FLOAT32, int32_t(shape.size()), shape.data(), 1.0, out);
}

}  // namespace

TEST_CASE("PLEXUS_MAX_LIVE_TENSORS caps live tensors, and a refused second result releases the first",
          "[capi][limits]") {
    LimitEnvironment limit("64");
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK);
    std::vector<px_tensor*> live;
    for (;;) {  // fill the table up to the cap
        px_tensor* t = nullptr;
        px_status s = full(rt, {2}, &t);
        if (s != PX_OK) {
            CHECK(s == PX_ERROR_OUT_OF_MEMORY);
            CHECK(says("px_tensor_full: too many live handles: 64 of at most 64 (PLEXUS_MAX_LIVE_TENSORS)"));
            CHECK(t == nullptr);
            break;
        }
        live.push_back(t);
        REQUIRE(live.size() <= 64);
    }
    REQUIRE(live.size() >= 4);  // 64 less any tensors this process holds elsewhere

    // Four slots: x, b and dy take three, dx the last, and dbias finds none.
    for (int i = 0; i < 4; ++i) {
        REQUIRE(px_tensor_release(live.back()) == PX_OK);
        live.pop_back();
    }
    px_tensor *x = nullptr, *b = nullptr, *dy = nullptr;
    REQUIRE(full(rt, {1, 2, 4, 4}, &x) == PX_OK);
    REQUIRE(full(rt, {2}, &b) == PX_OK);
    REQUIRE(full(rt, {1, 2, 2, 2}, &dy) == PX_OK);
    px_tensor *dx = nullptr, *dbias = nullptr;
    CHECK(px_bias_relu_max_pool2d_backward(x, b, dy, 2, 2, 2, 2, 0, 0, &dx, &dbias) == PX_ERROR_OUT_OF_MEMORY);
    CHECK(says("px_bias_relu_max_pool2d_backward: too many live handles: 64 of at most 64"));
    CHECK(dx == nullptr);
    CHECK(dbias == nullptr);
    // dx's slot was given back: exactly one more tensor fits.
    px_tensor *one = nullptr, *two = nullptr;
    CHECK(full(rt, {2}, &one) == PX_OK);
    CHECK(full(rt, {2}, &two) == PX_ERROR_OUT_OF_MEMORY);
    CHECK(two == nullptr);

    // Released tensors free their slots for reuse.
    for (px_tensor* t : live) REQUIRE(px_tensor_release(t) == PX_OK);
    for (px_tensor* t : {x, b, dy, one}) REQUIRE(px_tensor_release(t) == PX_OK);
    live.clear();
    for (int i = 0; i < 60; ++i) {
        px_tensor* t = nullptr;
        REQUIRE(full(rt, {2}, &t) == PX_OK);
        live.push_back(t);
    }
    for (px_tensor* t : live) REQUIRE(px_tensor_release(t) == PX_OK);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
}

TEST_CASE("Without PLEXUS_MAX_LIVE_TENSORS a new runtime lifts an earlier cap", "[capi][limits]") {
    {
        LimitEnvironment limit("3");
        px_runtime* rt = nullptr;
        REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK);
        REQUIRE(px_runtime_destroy(rt) == PX_OK);
    }  // unset again, and a runtime made
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK);
    std::vector<px_tensor*> live(100, nullptr);
    for (auto& t : live) REQUIRE(full(rt, {1}, &t) == PX_OK);
    for (auto* t : live) REQUIRE(px_tensor_release(t) == PX_OK);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
}

TEST_CASE("A bad PLEXUS_MAX_LIVE_TENSORS fails px_runtime_create with the reason", "[capi][limits]") {
    for (const char* bad : {"0", "-1", "+5", " 5", "5x", "", "abc", "16777217", "99999999999999999999"}) {
        INFO("PLEXUS_MAX_LIVE_TENSORS='" << bad << "'");
        LimitEnvironment limit(bad);
        px_runtime* rt = nullptr;
        CHECK(px_runtime_create(nullptr, &rt) == PX_ERROR_INVALID_ARGUMENT);
        CHECK(rt == nullptr);
        CHECK(says(std::string("px_runtime_create: PLEXUS_MAX_LIVE_TENSORS='") + bad +
                   "' is not a whole number in [1, 16777216]"));
    }
    LimitEnvironment largest("16777216");
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
}
