// Handles and reference counts that cannot wrap (issue 37, item 4), and
// handles that one copy of libplexus refuses from another (item 6). The
// tables are tested directly (tests start slots near their last generation
// rather than churn one 2^26 times), the library through the C API.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "../../host/handles.hpp"
#include "../../host/refcount.hpp"
#include "plexus/plexus.h"

namespace {

using Table = px::HandleTable<int, px::HandleKind::tensor>;
constexpr uint32_t last_generation = px::HandleBits::generations - 1;
constexpr uint64_t slot_mask = (uint64_t(1) << px::HandleBits::slot) - 1;

template <class F>
px::Failure failure_of(F&& f) {
    try {
        f();
    } catch (const px::Failure& e) {
        return e;
    }
    FAIL("no px::Failure");
    return px::Failure(PX_OK, "");
}

bool says(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("a slot whose generations are used up is retired: its released handles stay dead", "[handles]") {
    Table t(5, last_generation - 1);
    int a = 1, b = 2, c = 3;
    const uint64_t first = t.insert(&a);
    CHECK((first & slot_mask) == 0);
    t.remove(first);
    const uint64_t second = t.insert(&b);  // the same slot, its last generation
    CHECK((second & slot_mask) == 0);
    CHECK(second != first);
    CHECK(t.lookup(first) == nullptr);
    CHECK(t.lookup(second) == &b);
    t.remove(second);
    // Reusing slot 0 would wrap its generation to one already given out; a new slot is used.
    const uint64_t third = t.insert(&c);
    CHECK((third & slot_mask) == 1);
    CHECK(t.lookup(first) == nullptr);
    CHECK(t.lookup(second) == nullptr);
    CHECK(t.lookup(third) == &c);
    CHECK(std::string(t.diagnose(second)) == "released or never issued");
    // Releasing a dead handle again frees nothing.
    t.remove(second);
    CHECK(t.lookup(third) == &c);
}

TEST_CASE("when every slot is retired or live, a new handle is refused with the reason", "[handles]") {
    Table t(5, last_generation, 3);
    int x = 0;
    for (int i = 0; i < 2; ++i) t.remove(t.insert(&x));  // two slots retired at once
    const uint64_t live = t.insert(&x);
    CHECK((live & slot_mask) == 2);
    const px::Failure f = failure_of([&] { t.insert(&x); });
    CHECK(f.status == PX_ERROR_OUT_OF_MEMORY);
    CHECK(f.message == "no handle slot left of 3 (2 retired after 67108864 uses each)");
    CHECK(t.lookup(live) == &x);
}

TEST_CASE("a handle of a table with another tag is refused and said to be foreign", "[handles]") {
    Table mine(5), theirs(6);
    int a = 1, b = 2;
    const uint64_t ha = mine.insert(&a), hb = theirs.insert(&b);
    CHECK((ha & ~(uint64_t(px::HandleBits::tags - 1) << 50)) == (hb & ~(uint64_t(px::HandleBits::tags - 1) << 50)));
    CHECK(mine.lookup(hb) == nullptr);
    CHECK(theirs.lookup(ha) == nullptr);
    CHECK(std::string(mine.diagnose(hb)) == "a handle of another copy of libplexus loaded in this process");
    mine.remove(hb);  // ignored: slot 0 of `mine` stays live
    CHECK(mine.lookup(ha) == &a);
}

TEST_CASE("a reference count refuses a retain at its limit instead of wrapping", "[handles]") {
    px::RefCount r(px::RefCount::limit - 1);
    r.retain();
    CHECK(r.count() == px::RefCount::limit);
    const px::Failure f = failure_of([&] { r.retain(); });
    CHECK(f.status == PX_ERROR_OUT_OF_MEMORY);
    CHECK(f.message == "the tensor already has 4611686018427387904 references, the most one may hold");
    CHECK(r.count() == px::RefCount::limit);  // unchanged by the refusal
    CHECK(!r.release());
    // Through the C API, retains and releases balance.
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK);
    px_tensor* t = nullptr;
    REQUIRE(px_tensor_full(rt, px_device{PX_DEVICE_CPU, 0}, PX_FLOAT32, 0, nullptr, 2.5, &t) == PX_OK);
    for (int i = 0; i < 3; ++i) REQUIRE(px_tensor_retain(t) == PX_OK);
    for (int i = 0; i < 3; ++i) REQUIRE(px_tensor_release(t) == PX_OK);
    float v = 0;
    REQUIRE(px_tensor_to_host(t, &v, sizeof v) == PX_OK);
    CHECK(v == 2.5f);
    REQUIRE(px_tensor_release(t) == PX_OK);
    CHECK(px_tensor_release(t) == PX_ERROR_INVALID_HANDLE);
    px_runtime_destroy(rt);
}

TEST_CASE("two copies of libplexus in one process refuse each other's handles", "[handles][capi]") {
    // A second copy: the same library under another file name, loaded apart.
    char dir[] = "/tmp/plexus-second-copy-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string copy = std::string(dir) + "/libplexus-copy.so";
    {
        std::ifstream in(PLEXUS_LIBRARY_FILE, std::ios::binary);
        std::ofstream out(copy, std::ios::binary);
        out << in.rdbuf();
    }
    void* lib = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
    INFO((lib ? "" : dlerror()));
    REQUIRE(lib != nullptr);
    auto sym = [&](const char* name) {
        void* f = dlsym(lib, name);
        REQUIRE(f != nullptr);
        return f;
    };
    auto other_create = reinterpret_cast<decltype(&px_runtime_create)>(sym("px_runtime_create"));
    auto other_destroy = reinterpret_cast<decltype(&px_runtime_destroy)>(sym("px_runtime_destroy"));
    auto other_count = reinterpret_cast<decltype(&px_runtime_plugin_count)>(sym("px_runtime_plugin_count"));
    auto other_error = reinterpret_cast<decltype(&px_last_error)>(sym("px_last_error"));

    // Each copy's first runtime: without the tag both would be slot 0, generation 0.
    const char* none[] = {"/nonexistent-plugin.so"};
    px_runtime_options o{sizeof o, none, 1, 1, 0};
    px_runtime *ours = nullptr, *theirs = nullptr;
    REQUIRE(px_runtime_create(&o, &ours) == PX_OK);
    REQUIRE(other_create(&o, &theirs) == PX_OK);
    int32_t n = -1;
    REQUIRE(px_runtime_plugin_count(ours, &n) == PX_OK);
    CHECK(n == 1);
    REQUIRE(other_count(theirs, &n) == PX_OK);
    CHECK(n == 1);
    CHECK(px_runtime_plugin_count(theirs, &n) == PX_ERROR_INVALID_HANDLE);
    CHECK(says(px_last_error(), "'runtime' is not a live runtime handle (a handle of another copy of libplexus "
                                "loaded in this process)"));
    CHECK(other_count(ours, &n) == PX_ERROR_INVALID_HANDLE);
    CHECK(says(other_error(), "a handle of another copy of libplexus loaded in this process"));
    CHECK(px_runtime_destroy(theirs) == PX_ERROR_INVALID_HANDLE);
    REQUIRE(other_destroy(theirs) == PX_OK);
    REQUIRE(px_runtime_destroy(ours) == PX_OK);
    dlclose(lib);
    std::remove(copy.c_str());
    rmdir(dir);
}
