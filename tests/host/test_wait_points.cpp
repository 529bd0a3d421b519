// The waiting points (host/device_wait.cpp): every failure of queued work
// reaches the application once, at a call that waits for that work, however
// the host's own waits (a timed wait's background wait, the trace's end)
// overlap with the application's. On the CPU plugin's two devices
// (PLEXUS_CPU_DEVICES=2). Each case failed before the waits were redone.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "plugin_runtime.hpp"

namespace {

const px_device cpu0{PX_DEVICE_CPU, 0}, cpu1{PX_DEVICE_CPU, 1};

// Tensors released at the end of a case.
struct Held {
    std::vector<px_tensor*> all;
    px_tensor* operator()(px_tensor* t) {
        all.push_back(t);
        return t;
    }
    ~Held() {
        for (px_tensor* t : all) px_tensor_release(t);
    }
};

// `n` products of 1024 x 1024 matrices queued on `d` (about 2 GFLOP each).
void busy(px_runtime* rt, px_device d, int n, Held& held) {
    const int64_t shape[2] = {1024, 1024};
    px_tensor* a = nullptr;
    REQUIRE(px_tensor_full(rt, d, PX_FLOAT32, 2, shape, 0.001, &a) == PX_OK);
    held(a);
    for (int i = 0; i < n; ++i) {
        px_tensor* b = nullptr;
        REQUIRE(px_matmul(a, a, &b) == PX_OK);
        a = held(b);
    }
}

// An integer division by zero queued on `d`: it fails on the device, naming "div".
px_tensor* failing_div(px_runtime* rt, px_device d, Held& held) {
    const int64_t n = 4;
    px_tensor *x = nullptr, *zero = nullptr, *q = nullptr;
    REQUIRE(px_tensor_full(rt, d, PX_INT32, 1, &n, 7, &x) == PX_OK);
    REQUIRE(px_tensor_full(rt, d, PX_INT32, 1, &n, 0, &zero) == PX_OK);
    held(x), held(zero);
    REQUIRE(px_binary(PX_OP_DIV, x, zero, &q) == PX_OK);
    return held(q);
}

// A lookup of row 99 of a 3-row table queued on cpu(0): it fails, naming "take".
px_tensor* failing_take(px_runtime* rt, Held& held) {
    const int64_t table_shape[2] = {3, 2}, n = 2;
    const int32_t rows[2] = {1, 99};
    px_tensor *table = nullptr, *index = nullptr, *out = nullptr;
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 2, table_shape, 5.0, &table) == PX_OK);
    REQUIRE(px_tensor_from_host(rt, cpu0, PX_INT32, 1, &n, rows, sizeof rows, &index) == PX_OK);
    held(table), held(index);
    REQUIRE(px_take(table, index, &out) == PX_OK);
    return held(out);
}

bool said(const char* words) { return std::string(px_last_error()).find(words) != std::string::npos; }

// A timed wait that gives up, and time for its background wait to end unseen.
void timed_wait_gives_up(px_runtime* rt) {
    CHECK(px_runtime_synchronize_timeout(rt, cpu0, 1e-4) == PX_ERROR_DEVICE);
    CHECK(said("did not finish within"));
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
}

}  // namespace

TEST_CASE("a timed wait after one that gave up waits for the work queued since", "[wait]") {
    pxtest::Runtime r({pxtest::cpu_plugin});
    Held held;
    busy(r.rt, cpu0, 3, held);
    timed_wait_gives_up(r.rt);
    busy(r.rt, cpu0, 6, held);
    failing_div(r.rt, cpu0, held);
    // It had found the earlier background wait finished and returned PX_OK at once.
    CHECK(px_runtime_synchronize_timeout(r.rt, cpu0, 60) == PX_ERROR_DEVICE);
    CHECK(said("div"));
    CHECK(px_runtime_synchronize(r.rt, cpu0) == PX_OK);
}

TEST_CASE("a read or a copy after a timed wait gave up reports the failure its background wait took", "[wait]") {
    pxtest::Runtime r({pxtest::cpu_plugin});
    Held held;
    for (bool copy : {false, true}) {
        INFO((copy ? "a copy to cpu(1)" : "a read to the host"));
        busy(r.rt, cpu0, 2, held);
        px_tensor* bad = failing_take(r.rt, held);
        timed_wait_gives_up(r.rt);
        float values[4] = {0};
        px_tensor* moved = nullptr;
        // Both had returned PX_OK with the failed output's NaN.
        CHECK((copy ? px_tensor_copy_to(bad, cpu1, &moved) : px_tensor_to_host(bad, values, sizeof values)) ==
              PX_ERROR_DEVICE);
        CHECK(said("take"));
        CHECK(moved == nullptr);
        CHECK(px_runtime_synchronize(r.rt, cpu0) == PX_OK);  // reported once
    }
}

TEST_CASE("a read beside the trace's end reports the failure the end's wait took", "[wait]") {
    pxtest::Runtime r({pxtest::cpu_plugin});
    const std::string path = "/tmp/plexus-wait-test-" + std::to_string(getpid()) + ".json";
    int read_whole = 0;
    for (int round = 0; round < 100; ++round) {
        Held held;
        REQUIRE(px_trace_begin(r.rt, path.c_str()) == PX_OK);
        px_tensor* bad = failing_take(r.rt, held);
        px_status read = PX_OK;
        std::thread reader([&] {
            float values[4];
            read = px_tensor_to_host(bad, values, sizeof values);
        });
        CHECK(px_trace_end(r.rt) == PX_OK);
        reader.join();
        // The read had returned PX_OK with NaN when the end's wait took the failure first.
        read_whole += read == PX_OK;
        CHECK(px_runtime_synchronize(r.rt, cpu0) == PX_OK);  // and the failure once only
    }
    CHECK(read_whole == 0);
    std::remove(path.c_str());
    std::remove((path.substr(0, path.size() - 5) + ".summary.txt").c_str());
}

TEST_CASE("two failures the host's own waits took are both reported", "[wait]") {
    pxtest::Runtime r({pxtest::cpu_plugin});
    const std::string path = "/tmp/plexus-wait-test-two-" + std::to_string(getpid()) + ".json";
    Held held;
    REQUIRE(px_trace_begin(r.rt, path.c_str()) == PX_OK);
    failing_div(r.rt, cpu0, held);
    REQUIRE(px_trace_end(r.rt) == PX_OK);  // keeps the division's failure
    busy(r.rt, cpu0, 3, held);
    failing_take(r.rt, held);
    timed_wait_gives_up(r.rt);  // its background wait takes the lookup's
    REQUIRE(px_trace_begin(r.rt, path.c_str()) == PX_OK);
    REQUIRE(px_trace_end(r.rt) == PX_OK);
    // The lookup's had been dropped: a failure was kept already.
    CHECK(px_runtime_synchronize(r.rt, cpu0) == PX_ERROR_DEVICE);
    CHECK(said("div"));
    CHECK(said("take"));
    CHECK(px_runtime_synchronize(r.rt, cpu0) == PX_OK);
    std::remove(path.c_str());
    std::remove((path.substr(0, path.size() - 5) + ".summary.txt").c_str());
}

TEST_CASE("synchronize_all waits for every device after one fails, and names each failure", "[wait]") {
    pxtest::Runtime r({pxtest::cpu_plugin});
    Held held;
    failing_div(r.rt, cpu0, held);
    busy(r.rt, cpu1, 6, held);
    failing_div(r.rt, cpu1, held);
    CHECK(px_runtime_synchronize_all(r.rt) == PX_ERROR_DEVICE);
    const std::string message = px_last_error();
    CHECK(message.find("cpu(0)") != std::string::npos);
    CHECK(message.find("and on cpu(1)") != std::string::npos);
    // cpu(1)'s work had still been running: the wait stopped at cpu(0)'s failure.
    CHECK(px_runtime_synchronize_timeout(r.rt, cpu1, 1e-3) == PX_OK);
}
