// The waiting points (host/device_wait.cpp): every failure of queued work
// reaches the application once, at a call that waits for that work, however
// the host's own waits (a timed wait's background wait, the trace's end)
// overlap with the application's. On the CPU plugin's two devices
// (PLEXUS_CPU_DEVICES=2). Each case failed before the waits were redone.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../sanitizers.hpp"
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

// How many of 100 rounds a waiting call of the failed lookup's output
// (`call`, on another thread) returned PX_OK beside the trace's end, whose
// own wait may take the failure first; `busy_first` queues work before the
// lookup and lets the call begin first. Each round's failure must be
// reported once.
template <class Call>
int whole_beside_trace_end(px_runtime* rt, bool busy_first, Call call) {
    const std::string path = "/tmp/plexus-wait-test-" + std::to_string(getpid()) + ".json";
    int whole = 0;
    for (int round = 0; round < 100; ++round) {
        Held held;
        REQUIRE(px_trace_begin(rt, path.c_str()) == PX_OK);
        if (busy_first) busy(rt, cpu0, 1, held);
        px_tensor* bad = failing_take(rt, held);
        px_status status = PX_OK;
        std::thread caller([&] { status = call(bad, held); });
        if (busy_first) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        CHECK(px_trace_end(rt) == PX_OK);
        caller.join();
        whole += status == PX_OK;
        CHECK(px_runtime_synchronize(rt, cpu0) == PX_OK);  // and the failure once only
    }
    std::remove(path.c_str());
    std::remove((path.substr(0, path.size() - 5) + ".summary.txt").c_str());
    return whole;
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

TEST_CASE("a poll says whether the work has run, and the one that finds it done reports its failure once", "[wait]") {
    pxtest::Runtime r({pxtest::cpu_plugin});
    Held held;
    int32_t finished = -1;
    CHECK(px_runtime_poll(r.rt, cpu0, 0, &finished) == PX_OK);  // nothing queued: idle
    CHECK(finished == 1);
    busy(r.rt, cpu0, 6, held);
    failing_div(r.rt, cpu0, held);
    CHECK(px_runtime_poll(r.rt, cpu0, 0, &finished) == PX_OK);  // about 12 GFLOP queued: still running
    CHECK(finished == 0);
    int polls = 0;
    px_status status = PX_OK;
    while (finished == 0 && polls < 6000) {  // in slices, as Python's waits poll for Ctrl-C
        status = px_runtime_poll(r.rt, cpu0, 0.05, &finished);
        ++polls;
    }
    CHECK(status == PX_ERROR_DEVICE);
    CHECK(finished == 1);
    CHECK(polls > 1);
    CHECK(said("div"));  // the poll that found the work done reported its failure
    CHECK(px_runtime_poll(r.rt, cpu0, 0, &finished) == PX_OK);  // once
    CHECK(finished == 1);
    CHECK(px_runtime_synchronize(r.rt, cpu0) == PX_OK);
    // A read after a poll that gave up reports the failure too (it had been lost when the waiter was let go).
    busy(r.rt, cpu0, 2, held);
    px_tensor* bad = failing_take(r.rt, held);
    CHECK(px_runtime_poll(r.rt, cpu0, 0, &finished) == PX_OK);
    CHECK(finished == 0);
    float values[4] = {0};
    CHECK(px_tensor_to_host(bad, values, sizeof values) == PX_ERROR_DEVICE);
    CHECK(said("take"));
    CHECK(px_runtime_synchronize(r.rt, cpu0) == PX_OK);
    // Refusals.
    for (double bad_seconds : {-1.0, 1e10, std::nan("")}) {
        CHECK(px_runtime_poll(r.rt, cpu0, bad_seconds, &finished) == PX_ERROR_INVALID_ARGUMENT);
        CHECK(said("is not between 0 and 1e9"));
    }
    CHECK(px_runtime_poll(r.rt, cpu0, 0, nullptr) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(said("px_runtime_poll: 'finished' is NULL"));
    const px_device cpu9{PX_DEVICE_CPU, 9};
    CHECK(px_runtime_poll(r.rt, cpu9, 0, &finished) == PX_ERROR_NO_DEVICE);
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
    // It had returned PX_OK with NaN when the end's wait took the failure first.
    CHECK(whole_beside_trace_end(r.rt, false, [](px_tensor* bad, Held&) {
              float values[4];
              return px_tensor_to_host(bad, values, sizeof values);
          }) == 0);
}

TEST_CASE("a copy beside the trace's end reports the failure the end's wait took", "[wait]") {
    pxtest::Runtime r({pxtest::cpu_plugin});
    // It had returned PX_OK with the failed output's NaN, settling before the copy alone.
    CHECK(whole_beside_trace_end(r.rt, true, [](px_tensor* bad, Held& held) {
              px_tensor* moved = nullptr;
              const px_status st = px_tensor_copy_to(bad, cpu1, &moved);
              if (moved) held(moved);
              return st;
          }) == 0);
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
    busy(r.rt, cpu1, 20, held);  // about half a second
    failing_div(r.rt, cpu1, held);
    CHECK(px_runtime_synchronize_all(r.rt) == PX_ERROR_DEVICE);
    const std::string message = px_last_error();
    CHECK(message.find("cpu(0)") != std::string::npos);
    CHECK(message.find("and on cpu(1)") != std::string::npos);
    // cpu(1)'s work had still been running: the wait stopped at cpu(0)'s failure.
    // (0.1 s: the timed wait's own thread must start, on a loaded machine too.)
    CHECK(px_runtime_synchronize_timeout(r.rt, cpu1, 0.1) == PX_OK);
}

TEST_CASE("a timed wait is no time-out for the work queued after it that the trace's end waits for", "[wait]") {
    pxtest::Runtime r({pxtest::cpu_plugin});
    const std::string path = "/tmp/plexus-wait-test-later-" + std::to_string(getpid()) + ".json";
    Held held;
    REQUIRE(px_trace_begin(r.rt, path.c_str()) == PX_OK);
    busy(r.rt, cpu0, 2, held);  // what the timed wait waits for
    px_status timed = PX_ERROR_INTERNAL;
    std::thread waiter([&] { timed = px_runtime_synchronize_timeout(r.rt, cpu0, 1.0); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    busy(r.rt, cpu0, 80, held);  // seconds more, queued after it
    REQUIRE(px_trace_end(r.rt) == PX_OK);
    waiter.join();
    // It had waited for the end's wait, which covers the later work, and said its own work did not finish.
    CHECK(timed == PX_OK);
    CHECK(px_runtime_synchronize(r.rt, cpu0) == PX_OK);
    std::remove(path.c_str());
    std::remove((path.substr(0, path.size() - 5) + ".summary.txt").c_str());
}

#ifndef PXTEST_TSAN  // (a child of a process with threads: ThreadSanitizer does not follow it)
TEST_CASE("a child forked while a timed wait's background wait runs gets the plugin's refusal at once", "[wait]") {
    pxtest::Runtime r({pxtest::cpu_plugin});
    Held held;
    const int64_t four = 4;
    px_tensor* small = nullptr;
    REQUIRE(px_tensor_full(r.rt, cpu0, PX_FLOAT32, 1, &four, 1.0, &small) == PX_OK);
    held(small);
    busy(r.rt, cpu0, 20, held);
    CHECK(px_runtime_synchronize_timeout(r.rt, cpu0, 1e-3) == PX_ERROR_DEVICE);  // its background wait runs on
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        alarm(20);  // a hang ends the child, which the parent sees
        // The parent's background wait had left the child waiting for a thread it does not have.
        const bool refused = px_runtime_synchronize(r.rt, cpu0) == PX_ERROR_DEVICE && said("forked child");
        float values[4];
        const bool read_refused = px_tensor_to_host(small, values, sizeof values) == PX_ERROR_DEVICE;
        // A trace begins and ends (the CPU plugin's trace_enable had waited for the parent's queue).
        const std::string trace = "/tmp/plexus-wait-test-child-" + std::to_string(getpid()) + ".json";
        if (px_trace_begin(r.rt, trace.c_str()) == PX_OK) px_trace_end(r.rt);
        std::remove(trace.c_str());
        std::remove((trace.substr(0, trace.size() - 5) + ".summary.txt").c_str());
        const bool destroyed = px_runtime_destroy(r.rt) == PX_OK;
        _exit((refused ? 0 : 1) | (read_refused ? 0 : 2) | (destroyed ? 0 : 4));
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    // (exit bits: 1 the synchronize, 2 the read, 4 the destroy did not do as said)
    INFO("the child " << (WIFSIGNALED(status) ? "was killed (it hung)" : "exited with " + std::to_string(WEXITSTATUS(status))));
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    CHECK(px_runtime_synchronize(r.rt, cpu0) == PX_OK);
}

// Whether a child forked now, which runs `child` (true: as it should) under
// a 20 s alarm, exits 0; a hang ends it with the alarm.
template <class Child>
bool forked_child_ends(Child child) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        alarm(20);
        _exit(child() ? 0 : 1);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST_CASE("a child forked while other threads wait on the device gets the plugin's refusal at every wait",
          "[wait]") {
    pxtest::Runtime r({pxtest::cpu_plugin});
    Held held;
    busy(r.rt, cpu0, 20, held);
    // A thread inside a timed wait when the child is made: the child had hung at its second timed wait
    // (the device's condition variable still counted the parent's waiter).
    std::thread waiter([&] { px_runtime_synchronize_timeout(r.rt, cpu0, 60.0); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(forked_child_ends([&] {
        for (int i = 0; i < 3; ++i)
            if (px_runtime_synchronize_timeout(r.rt, cpu0, 1.0) != PX_ERROR_DEVICE) return false;
        return px_runtime_synchronize(r.rt, cpu0) == PX_ERROR_DEVICE;
    }));
    waiter.join();
    // A thread reading in a loop: a child made while it held the device's wait lock had hung at its first wait.
    const int64_t four = 4;
    px_tensor* small = nullptr;
    REQUIRE(px_tensor_full(r.rt, cpu0, PX_FLOAT32, 1, &four, 1.0, &small) == PX_OK);
    held(small);
    std::atomic<bool> stop{false};
    std::thread reader([&] {
        float values[4];
        while (!stop) px_tensor_to_host(small, values, sizeof values);
    });
    int hung = 0;
    for (int i = 0; i < 30; ++i)
        hung += !forked_child_ends([&] { return px_runtime_synchronize(r.rt, cpu0) == PX_ERROR_DEVICE; });
    stop = true;
    reader.join();
    CHECK(hung == 0);
    // The parent idle: a child's timed wait is refused as its other waits are
    // (the idle fast path had answered PX_OK from the parent's count).
    REQUIRE(px_runtime_synchronize(r.rt, cpu0) == PX_OK);
    CHECK(forked_child_ends([&] { return px_runtime_synchronize_timeout(r.rt, cpu0, 1.0) == PX_ERROR_DEVICE; }));
}

TEST_CASE("a child forked while the parent's trace ends can begin and end a trace of its own", "[wait]") {
    pxtest::Runtime r({pxtest::cpu_plugin});
    const std::string path = "/tmp/plexus-wait-test-ending-" + std::to_string(getpid()) + ".json";
    Held held;
    REQUIRE(px_trace_begin(r.rt, path.c_str()) == PX_OK);
    busy(r.rt, cpu0, 30, held);
    std::thread ender([&] { CHECK(px_trace_end(r.rt) == PX_OK); });  // waits for the work, holding the trace's lock
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    // The child had hung on the trace's lock, inherited held.
    CHECK(forked_child_ends([&] {
        const std::string own = path + ".child.json";
        if (px_trace_begin(r.rt, own.c_str()) == PX_OK) px_trace_end(r.rt);
        std::remove(own.c_str());
        std::remove((own.substr(0, own.size() - 5) + ".summary.txt").c_str());
        return true;
    }));
    ender.join();
    std::remove(path.c_str());
    std::remove((path.substr(0, path.size() - 5) + ".summary.txt").c_str());
}
#endif

#if !defined(PXTEST_ASAN) && !defined(PXTEST_TSAN)  // (their shadow memory needs the address space this limits)
TEST_CASE("a timed wait whose thread cannot start says so and the next starts one", "[wait]") {
    pxtest::Runtime r({pxtest::cpu_plugin});
    Held held;
    busy(r.rt, cpu0, 1, held);  // work to wait for (an idle device needs no thread)
    // glibc reuses cached stacks: threads that hold them leave none for the wait's thread.
    std::vector<std::thread> holders;
    std::atomic<bool> release{false};
    for (int i = 0; i < 32; ++i)
        holders.emplace_back([&] {
            while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        });
    long vm_kb = 0;
    {
        std::ifstream status("/proc/self/status");
        for (std::string line; std::getline(status, line);)
            if (line.rfind("VmSize:", 0) == 0) vm_kb = std::stol(line.substr(7));
    }
    rlimit old{}, tight{};
    REQUIRE(getrlimit(RLIMIT_AS, &old) == 0);
    tight = old;
    tight.rlim_cur = rlim_t(vm_kb) * 1024;  // no room for another thread's stack
    REQUIRE(setrlimit(RLIMIT_AS, &tight) == 0);
    const px_status first = px_runtime_synchronize_timeout(r.rt, cpu0, 1.0);
    const std::string message = px_last_error();
    REQUIRE(setrlimit(RLIMIT_AS, &old) == 0);
    release = true;
    for (std::thread& t : holders) t.join();
    CHECK(first == PX_ERROR_OUT_OF_MEMORY);
    CHECK(message.find("no thread could start") != std::string::npos);
    // A thread had stayed marked as running: every later timed wait timed out and destroy hung.
    CHECK(px_runtime_synchronize_timeout(r.rt, cpu0, 5.0) == PX_OK);
}
#endif

TEST_CASE("a timed wait finds an idle device idle however short its time, and never a busy one", "[wait]") {
    pxtest::Runtime r({pxtest::cpu_plugin});
    // Nothing queued yet: it had handed even this to a new thread, and given
    // up before the thread began (most of 200 at 1e-6 s).
    for (int i = 0; i < 200; ++i) REQUIRE(px_runtime_synchronize_timeout(r.rt, cpu0, 1e-6) == PX_OK);
    Held held;
    busy(r.rt, cpu0, 4, held);
    CHECK(px_runtime_synchronize_timeout(r.rt, cpu0, 1e-6) == PX_ERROR_DEVICE);  // still computing
    CHECK(said("did not finish within"));
    REQUIRE(px_runtime_synchronize(r.rt, cpu0) == PX_OK);
    for (int i = 0; i < 200; ++i) REQUIRE(px_runtime_synchronize_timeout(r.rt, cpu0, 1e-6) == PX_OK);
    // A failure queued since is still that wait's to report.
    failing_div(r.rt, cpu0, held);
    CHECK(px_runtime_synchronize_timeout(r.rt, cpu0, 60) == PX_ERROR_DEVICE);
    CHECK(said("div"));
    // Idle again once a wait has ended well (a failed wait may be a refusal, after which nothing ran).
    REQUIRE(px_runtime_synchronize_timeout(r.rt, cpu0, 60) == PX_OK);
    for (int i = 0; i < 200; ++i) REQUIRE(px_runtime_synchronize_timeout(r.rt, cpu0, 1e-6) == PX_OK);
}
