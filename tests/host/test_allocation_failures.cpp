// Out of host memory at every allocation, one at a time: a session through
// the C API, and a training step with a save and a load through the C++
// frontend, are run again and again, each time with the calling thread's
// n-th allocation failing (n = 0, 1, 2, ... until the session ends without
// reaching it), once with only that allocation failing and once with every
// later one failing too. Each time: the call that met the failure reports an
// out-of-memory error (a status and a message through the C API; an
// OutOfMemoryError or std::bad_alloc through the C++ frontend), nothing
// aborts, every block allocated is given back once the handles go, and the
// next session gives the same values as the first.
//
// operator new is replaced for this executable (failing_new.cpp); malloc is
// not, so OpenBLAS's and the kernels' own blocks are outside the test (the
// device memory limit tests those paths: tests/host/test_capi_errors.cpp).
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "allocator.hpp"
#include "failing_new.hpp"
#include "plexus/data.hpp"
#include "plexus/nn.hpp"
#include "plexus/plexus.h"
#include "small_training.hpp"

namespace {

// What one run under injection ended with. Fixed-size, so that an outcome
// held while the test counts live blocks holds none itself.
struct Outcome {
    bool fired = false;                   // the injected failure happened
    px_status status = PX_OK;             // the first failing call's status
    std::array<char, 512> what{};         // its message, or the exception's
    std::array<char, 160> failed_call{};  // which call
    std::array<double, 8> values{};       // what a whole session computed
    bool complete = false;                // values holds them
    bool litter = false;                  // a file other than the saved one was left behind
    bool partly_loaded = false;           // a failed load changed the network anyway
    bool resumed = false;                 // the session went on after the error, with memory back
    void note(px_status s, const char* call, const char* message) {
        status = s;
        std::snprintf(failed_call.data(), failed_call.size(), "%s", call);
        std::snprintf(what.data(), what.size(), "%s", message);
    }
    bool says(const char* words) const { return std::strstr(what.data(), words) != nullptr; }
};

// Keeps a plugin (and the libraries it pulls in: OpenBLAS, SLEEF, libgomp)
// loaded for the whole test, so their static constructors run once,
// before any injection: a library's own initializers running out of memory
// inside dlopen is outside what Plexus can report.
void keep_loaded(const char* plugin) {
    void* handle = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);  // never closed
    REQUIRE(handle != nullptr);
}

// A user's session through the C API: a runtime over the CPU plugin,
// tensors made from host data, elementwise, matmul, a reduction, views, a
// copy, a cast, a convolution and a loss, read back; then everything
// released. Stops at the first call that fails; releases what it made in
// every case (with the injection disarmed, as a caller that frees memory
// would).
class CSession {
public:
    static constexpr bool kAnyThread = false;  // the calling thread's allocations fail
    // A runtime over `plugin` alone, computing on its device `kind`(0).
    CSession(const char* plugin, px_device_kind kind) : plugin_(plugin), dev_{kind, 0} {
        keep_loaded(plugin);
        made_.reserve(64);  // so that keeping a handle never allocates
    }

    Outcome run() {
        Outcome o;
        compute(o);
        failing_new::disarm();
        o.fired = failing_new::fired();
        for (auto it = made_.rbegin(); it != made_.rend(); ++it) REQUIRE(px_tensor_release(*it) == PX_OK);
        made_.clear();
        if (rt_) REQUIRE(px_runtime_destroy(rt_) == PX_OK);
        rt_ = nullptr;
        return o;
    }

private:
    const char* plugin_;
    const px_device dev_;
    px_runtime* rt_ = nullptr;
    std::vector<px_tensor*> made_;

    // Records a call's status; false (and what failed) when it failed.
    bool ok(px_status s, const char* call, Outcome& o) {
        if (s == PX_OK) return true;
        o.note(s, call, px_last_error());
        return false;
    }
    bool keep(px_status s, px_tensor* const* t, const char* call, Outcome& o) {
        if (s == PX_OK) made_.push_back(*t);
        return ok(s, call, o);
    }

#define PX_STEP(call) \
    if (!ok((call), #call, o)) return
#define PX_MAKE(out, call)                 \
    px_tensor* out = nullptr;              \
    if (!keep(call, &out, #call, o)) return

    void compute(Outcome& o) {
        const char* paths[] = {plugin_};
        px_runtime_options opts{sizeof opts, paths, 1, 1, 0};
        PX_STEP(px_runtime_create(&opts, &rt_));
        int32_t n = 0;
        PX_STEP(px_runtime_device_count(rt_, dev_.kind, &n));
        if (n < 1) {  // the plugin was skipped
            o.note(PX_ERROR_NO_DEVICE, "px_runtime_create", "the runtime was made without the plugin's device");
            return;
        }
        const px_device dev = dev_;
        const int64_t s23[] = {2, 3}, s32[] = {3, 2}, s2[] = {2}, s_img[] = {1, 1, 4, 4}, s_w[] = {2, 1, 3, 3};
        const float av[] = {1, 2, 3, 4, 5, 6}, img[16] = {1, 0, 2, 1, 3, 1, 0, 2, 1, 1, 2, 0, 0, 3, 1, 1};
        const float wv[18] = {1, 0, -1, 1, 0, -1, 1, 0, -1, 0.5f, 0.5f, 0.5f, 0, 0, 0, -0.5f, -0.5f, -0.5f};
        const int32_t labels[] = {1, 0};
        PX_MAKE(a, px_tensor_from_host(rt_, dev, PX_FLOAT32, 2, s23, av, sizeof av, &a));
        PX_MAKE(b, px_tensor_reshape(a, 2, s32, &b));
        PX_MAKE(c, px_matmul(a, b, &c));                                  // (2,2)
        PX_MAKE(d, px_binary_scalar(PX_OP_MUL, c, 0.01, 0, &d));
        PX_MAKE(e, px_unary(PX_OP_EXP, d, &e));
        PX_MAKE(f, px_reduce(PX_OP_SUM, e, 0, 1, 0, &f));                 // (2)
        PX_MAKE(g, px_tensor_slice(a, 1, 2, &g));                         // row 1
        const int32_t perm[] = {1, 0};
        PX_MAKE(h, px_transpose(a, perm, 2, &h));
        PX_MAKE(i, px_tensor_copy_to(h, dev, &i));
        PX_MAKE(j, px_cast(i, PX_FLOAT64, &j));
        px_tensor* both[] = {a, g};
        PX_MAKE(k, px_concat(both, 2, 0, &k));                            // (3,3)
        PX_MAKE(x, px_tensor_from_host(rt_, dev, PX_FLOAT32, 4, s_img, img, sizeof img, &x));
        PX_MAKE(w, px_tensor_from_host(rt_, dev, PX_FLOAT32, 4, s_w, wv, sizeof wv, &w));
        PX_MAKE(y, px_conv2d(x, w, 1, 1, 0, 0, &y));                      // (1,2,2,2)
        const int64_t s_logits[] = {2, 4};
        PX_MAKE(logits, px_tensor_reshape(y, 2, s_logits, &logits));
        PX_MAKE(l, px_tensor_from_host(rt_, dev, PX_INT32, 1, s2, labels, sizeof labels, &l));
        PX_MAKE(loss, px_softmax_cross_entropy(logits, l, &loss));
        // Read back: f (2), the last row of k (3), j's corner, loss (2).
        float fv[2], kv[9], lv[2];
        double jv[6];
        PX_STEP(px_tensor_to_host(f, fv, sizeof fv));
        PX_STEP(px_tensor_to_host(k, kv, sizeof kv));
        PX_STEP(px_tensor_to_host(j, jv, sizeof jv));
        PX_STEP(px_tensor_to_host(loss, lv, sizeof lv));
        o.values = {fv[0], fv[1], kv[6], kv[7], kv[8], jv[1], lv[0], lv[1]};
        o.complete = true;
    }
#undef PX_STEP
#undef PX_MAKE
};

// Runs `compute` (a session through the C++ frontend) with the failure armed,
// and notes how the first error it let out was reported.
template <class F>
Outcome run_through_frontend(F&& compute) {
    Outcome o;
    try {
        compute(o);
    } catch (const plexus::Error& e) {
        o.note(e.status(), "the frontend", e.what());
    } catch (const std::bad_alloc&) {
        o.note(PX_ERROR_OUT_OF_MEMORY, "the frontend", "std::bad_alloc: out of host memory");
    } catch (const std::exception& e) {
        o.note(PX_ERROR_INTERNAL, "the frontend", e.what());
    }
    failing_new::disarm();
    o.fired = failing_new::fired();
    // Work the failed session queued may still run (and hold scratch),
    // and a failure of it would be reported at the next session's first
    // wait: a user who goes on after an error waits for the device first.
    try {
        plexus::synchronize_all();
    } catch (const plexus::Error&) {
    }
    return o;
}

// A user's training through the C++ frontend: data made on cpu(0), one SGD
// step (momentum, weight decay) of a small LeNet with autograd, the
// parameters saved, loaded into a second network, and its output read back.
// A failed load must leave that network as it was (all or nothing), and no
// save may leave a temporary file behind.
class TrainingSession {
public:
    static constexpr bool kAnyThread = false;
    // Trains with each batch split over `devices`; loads onto them too.
    explicit TrainingSession(std::vector<plexus::Device> devices)
        : devices_(std::move(devices)),
          folder_(std::filesystem::temp_directory_path() /
                  ("plexus-alloc-failures-" + std::to_string(::getpid()))),
          file_((folder_ / "lenet.params").string()) {
        std::filesystem::remove_all(folder_);
        std::filesystem::create_directories(folder_);
    }
    ~TrainingSession() {
        std::error_code ec;
        std::filesystem::remove_all(folder_, ec);
    }
    TrainingSession(const TrainingSession&) = delete;
    TrainingSession& operator=(const TrainingSession&) = delete;

    Outcome run() {
        Outcome o = run_through_frontend([this](Outcome& out) { compute(out); });
        for (const auto& entry : std::filesystem::directory_iterator(folder_))
            o.litter = o.litter || entry.path().filename() != "lenet.params";
        std::filesystem::remove(file_);
        return o;
    }

private:
    std::vector<plexus::Device> devices_;
    std::filesystem::path folder_;
    std::string file_;

    void compute(Outcome& o) {
        using namespace plexus;
        seed(3);
        Tensor x = random_normal({6, 1, 8, 8}, 0, 1);
        Tensor y = random_uniform({6}, 0, 3).astype(DType::int32);
        nn::Sequential net;
        pxtest::train_split(net, devices_, x, y, 1);
        net.save_parameters(file_);
        nn::Sequential other;
        seed(5);
        pxtest::build_small_lenet(other);
        other.initialize(devices_);
        Tensor before = other(x);
        try {
            other.load_parameters(file_, devices_);
        } catch (...) {
            failing_new::disarm();  // to look at the network, then fail as the load did
            o.partly_loaded = pxtest::max_abs_diff(other(x), before) != 0.0;
            throw;
        }
        std::vector<float> out = other(x).to_vector<float>();
        failing_new::disarm();  // the session is over; what follows is the test's own bookkeeping
        std::copy_n(out.begin(), o.values.size(), o.values.begin());
        o.complete = true;
    }
};

// A user's data pipeline: a small data set read from IDX files, a shuffled
// DataLoader on cpu(0) (which prepares each next batch on another thread),
// two epochs read back. Allocations fail on any thread, so the prefetch
// thread's and the device's too. An error from begin_epoch() or next() is
// caught, and the call made again with memory back: the epochs must then come
// out whole, no batch lost or repeated (the loader tries a failed batch again).
class DataSession {
public:
    static constexpr bool kAnyThread = true;
    DataSession()
        : folder_(std::filesystem::temp_directory_path() /
                  ("plexus-alloc-failures-data-" + std::to_string(::getpid()))) {
        std::filesystem::remove_all(folder_);
        std::filesystem::create_directories(folder_);
        // 23 images of 3x4 pixels, image i holding i * 11 + p at pixel p, label i % 10; plain
        // IDX (zlib reads it as it reads gzip).
        std::vector<uint8_t> images{0, 0, 8, 3, 0, 0, 0, 23, 0, 0, 0, 3, 0, 0, 0, 4}, labels{0, 0, 8, 1, 0, 0, 0, 23};
        for (int i = 0; i < 23; ++i) {
            for (int p = 0; p < 12; ++p) images.push_back(uint8_t(i * 11 + p));
            labels.push_back(uint8_t(i % 10));
        }
        write(folder_ / "train-images-idx3-ubyte.gz", images);
        write(folder_ / "train-labels-idx1-ubyte.gz", labels);
    }
    ~DataSession() {
        std::error_code ec;
        std::filesystem::remove_all(folder_, ec);
    }
    DataSession(const DataSession&) = delete;
    DataSession& operator=(const DataSession&) = delete;

    Outcome run() { return run_through_frontend([this](Outcome& o) { compute(o); }); }

private:
    std::filesystem::path folder_;

    static void write(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
        std::FILE* f = std::fopen(path.c_str(), "wb");
        REQUIRE(f != nullptr);
        REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
        REQUIRE(std::fclose(f) == 0);
    }

    // Calls f until it returns: its first out-of-memory error is noted (the
    // injection then disarmed), and a batch whose preparation had already
    // failed on the prefetch thread may report it once more. Any other error,
    // or a third failure, ends the session.
    template <class F>
    static auto again_after_failure(Outcome& o, F&& f) {
        for (int failures = 0;; ++failures) {
            try {
                return f();
            } catch (const plexus::OutOfMemoryError& e) {
                if (failures == 2) throw std::runtime_error(std::string("still failing with memory back: ") + e.what());
                if (failures == 0) o.note(e.status(), "DataLoader", e.what());
            } catch (const std::bad_alloc&) {
                if (failures == 2) throw std::runtime_error("still failing with memory back: std::bad_alloc");
                if (failures == 0) o.note(PX_ERROR_OUT_OF_MEMORY, "DataLoader", "std::bad_alloc: out of host memory");
            }
            failing_new::disarm();
            o.resumed = true;
        }
    }

    void compute(Outcome& o) {
        using namespace plexus;
        const data::ImageDataset set = data::fashion_mnist(true, folder_.string());
        data::DataLoader loader(set, 5, true, cpu(0), 7);
        std::array<double, 8> v{};
        for (uint64_t epoch : {0, 1}) {
            again_after_failure(o, [&] { loader.begin_epoch(epoch); });
            data::Batch b;
            int64_t row = 0;
            while (again_after_failure(o, [&] { return loader.next(b); })) {
                // Order-sensitive sums of the pixels and the labels as they came.
                const std::vector<float> x = b.data.to_vector<float>();
                const std::vector<int32_t> y = b.label.to_vector<int32_t>();
                for (size_t i = 0; i < y.size(); ++i, ++row) {
                    v[epoch * 3] += double(y[i]) * double(row + 1);
                    for (size_t p = 0; p < 12; ++p) v[epoch * 3 + 1] += double(x[i * 12 + p]) * double(row * 12 + p + 1);
                }
                v[6] += 1;  // batches
            }
            v[epoch * 3 + 2] = double(row);
        }
        failing_new::disarm();
        o.values = v;
        o.complete = true;
    }
};

// Two runs with nothing injected, which must agree: what a first use sets up
// once and keeps (the plugin's libraries, the frontend's runtime) is not a
// leak. Returns the first run's outcome.
template <class Session>
Outcome warm_up(Session& session) {
    keep_loaded(PLEXUS_CPU_PLUGIN_FILE);
    const Outcome first = session.run();
    INFO(first.failed_call.data() << ": " << first.what.data());
    REQUIRE(first.complete);
    REQUIRE(session.run().values == first.values);
    px_tensor_release(nullptr);  // the thread's last-error text now holds a block, as after any failure
    return first;
}

// How the runs of fail_each_allocation_in_turn went.
struct Tally {
    int failed = 0;         // runs that met the injected failure
    int worked_around = 0;  // of them, the ones that reported nothing and computed all the same
};

// Every n from 0 on, until a run ends before its n-th allocation: the
// injected failure must surface as out-of-memory (or be worked around, the
// session whole and its values the first's: a loader that cannot start its
// prefetch thread makes the batch itself), leak nothing, and leave the next
// run's values as the first's.
template <class Session>
Tally fail_each_allocation_in_turn(Session& session, bool stay, const Outcome& expected) {
    Tally tally;
    for (uint64_t n = 0;; ++n) {
        const int64_t before = failing_new::live_blocks();  // Catch's own blocks come and go between runs
        if constexpr (Session::kAnyThread) {
            failing_new::fail_any_thread_from(n, stay);
        } else {
            failing_new::fail_from(n, stay);
        }
        Outcome o = session.run();
        const int64_t after = failing_new::live_blocks();
        INFO("allocation " << n << (stay ? " and every later one" : " alone") << " failed; "
                           << o.failed_call.data() << " gave " << px_status_name(o.status) << ": " << o.what.data());
        if (!o.fired) {  // the whole session fit before allocation n
            REQUIRE(o.complete);
            CHECK(o.values == expected.values);
            break;
        }
        ++tally.failed;
        if (o.complete) REQUIRE(o.values == expected.values);  // a session that went on after the error lost nothing
        if (o.status == PX_OK && o.complete) {
            ++tally.worked_around;
        } else {
            REQUIRE(o.status == PX_ERROR_OUT_OF_MEMORY);
            REQUIRE(o.says("out of host memory"));
        }
        REQUIRE_FALSE(o.litter);
        REQUIRE_FALSE(o.partly_loaded);
        REQUIRE(after == before);
        REQUIRE(n < 100000);  // a session of a bounded size
    }
    // And the next, with nothing injected, is whole.
    const int64_t before = failing_new::live_blocks();
    Outcome again = session.run();
    const int64_t after = failing_new::live_blocks();
    CHECK(again.values == expected.values);
    CHECK(after == before);
    return tally;
}

// Each allocation alone, then each with every later one too; each way at
// least `at_least` sessions must have met a failure (the loop really ran).
template <class Session>
void fail_each_allocation_both_ways(Session& session, const Outcome& first, int at_least) {
    for (bool stay : {false, true}) {
        const Tally tally = fail_each_allocation_in_turn(session, stay, first);
        WARN((stay ? "from the n-th allocation on: " : "the n-th allocation alone: ")
             << tally.failed << " sessions met the failure: " << tally.failed - tally.worked_around
             << " reported it, " << tally.worked_around << " worked around it");
        CHECK(tally.failed > at_least);
    }
}

}  // namespace

TEST_CASE("a C API session that runs out of host memory at any allocation reports it and leaks nothing",
          "[host][oom][alloc-failures]") {
    CSession session(PLEXUS_CPU_PLUGIN_FILE, PX_DEVICE_CPU);
    const Outcome first = warm_up(session);
    // Row 1 of a (the last row of the concatenation) and a[1][0] through the transpose.
    CHECK(first.values[2] == 4.0);
    CHECK(first.values[3] == 5.0);
    CHECK(first.values[4] == 6.0);
    CHECK(first.values[5] == 4.0);
    fail_each_allocation_both_ways(session, first, 50);
}

#ifdef PLEXUS_CUDA_EMU_PLUGIN_FILE
// The CUDA plugin's host side (its error paths, caches, staging, cuBLAS
// handles) on the CUDA emulator's GPU; the emulator's own allocations stand
// for the driver's and are left alone (tests/cuda_emu/emu_driver_scope.hpp).
TEST_CASE("a C API session on the CUDA emulator's GPU that runs out of host memory at any allocation reports it",
          "[host][oom][alloc-failures][emulator]") {
    CSession session(PLEXUS_CUDA_EMU_PLUGIN_FILE, PX_DEVICE_GPU);
    const Outcome first = warm_up(session);
    fail_each_allocation_both_ways(session, first, 50);
}
#endif

#ifdef PLEXUS_CUDA_EMU_PLUGIN_FILE
namespace {
// The emulator's fault hooks (tests/cuda_emu/emu_faults.h), found through the
// plugin that links it.
template <class F>
F* emulator_hook(const char* name) {
    void* plugin = dlopen(PLEXUS_CUDA_EMU_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(plugin != nullptr);
    auto* f = reinterpret_cast<F*>(dlsym(plugin, name));
    REQUIRE(f != nullptr);
    return f;
}
}  // namespace

// A double fault: the GPU is lost (a sticky CUDA error) while host memory has
// run out, from each allocation of the op on. Reporting the CUDA error builds
// messages; with no memory for them the plugin must still report a failure,
// mark the device lost, and not end the process.
TEST_CASE("a GPU lost while host memory has run out is reported and the device stays lost",
          "[host][oom][alloc-failures][emulator]") {
    constexpr int kDeviceLost = 2;  // PLEXUS_EMU_DEVICE_LOST
    auto* inject = emulator_hook<void(int, const char*, long)>("plexus_emu_inject");
    auto* disarm_fault = emulator_hook<void()>("plexus_emu_disarm");
    auto* revive = emulator_hook<int()>("plexus_emu_revive");
    auto* injected = emulator_hook<const char*()>("plexus_emu_injected");
    keep_loaded(PLEXUS_CUDA_EMU_PLUGIN_FILE);
    const char* paths[] = {PLEXUS_CUDA_EMU_PLUGIN_FILE};
    px_runtime_options opts{sizeof opts, paths, 1, 1, 0};
    const px_device gpu0{PX_DEVICE_GPU, 0};
    const int64_t n4[] = {4};
    const float v[] = {1, 2, 3, 4};
    int double_faults = 0, marked_without_memory = 0;
    for (uint64_t n = 0;; ++n) {
        px_runtime* rt = nullptr;
        REQUIRE(px_runtime_create(&opts, &rt) == PX_OK);
        px_tensor* a = nullptr;
        REQUIRE(px_tensor_from_host(rt, gpu0, PX_FLOAT32, 1, n4, v, sizeof v, &a) == PX_OK);
        inject(kDeviceLost, nullptr, 1);  // the next CUDA call on the device finds it lost
        px_tensor* out = nullptr;
        failing_new::fail_from(n, true);
        const px_status first = px_unary(PX_OP_EXP, a, &out);
        failing_new::disarm();
        const bool fired = failing_new::fired();
        const bool lost_in_it = injected() != nullptr;  // the op reached the device and found it lost
        INFO("allocations from " << n << " on failed; px_unary gave " << px_status_name(first) << ": "
                                 << px_last_error());
        CHECK((first == PX_ERROR_OUT_OF_MEMORY || first == PX_ERROR_DEVICE));
        if (first == PX_OK) px_tensor_release(out);
        // With memory back, the device is lost for good (the fault found it, or finds it now).
        px_tensor* again = nullptr;
        const px_status second = px_unary(PX_OP_EXP, a, &again);
        CHECK(second == PX_ERROR_DEVICE);
        const std::string said = px_last_error();
        CHECK(said.find("stays unusable") != std::string::npos);
        if (fired && lost_in_it) ++double_faults;
        // Marked with the fixed text: the words for the loss could not be built.
        if (said.find("met while out of host memory") != std::string::npos) ++marked_without_memory;
        disarm_fault();
        REQUIRE(px_tensor_release(a) == PX_OK);
        px_runtime_destroy(rt);  // its wait reports the lost device; it goes all the same
        REQUIRE(revive() == 0);
        if (!fired) break;  // the op ran out of nothing: every allocation was tried
        REQUIRE(n < 1000);
    }
    WARN(double_faults << " runs found the GPU lost with host memory gone; in " << marked_without_memory
                       << " there was no memory to say so and the device was marked all the same");
    CHECK(double_faults > 0);
    CHECK(marked_without_memory > 0);
}
#endif

TEST_CASE("a training step with a save and a load through the C++ frontend survives running out of host memory anywhere",
          "[nn][oom][alloc-failures]") {
    TrainingSession session({plexus::cpu(0)});
    const Outcome first = warm_up(session);
    fail_each_allocation_both_ways(session, first, 500);
}

// The same over two devices: split batches, replicas, the gradients' sum
// across devices, and a load onto both (ctest gives PLEXUS_CPU_DEVICES=2).
TEST_CASE("data-parallel training over two CPU devices survives running out of host memory anywhere",
          "[nn][oom][alloc-failures][parallel]") {
    TrainingSession session({plexus::cpu(0), plexus::cpu(1)});
    const Outcome first = warm_up(session);
    fail_each_allocation_both_ways(session, first, 500);
}

TEST_CASE("a DataLoader that runs out of host memory on any thread reports it and loses no batch",
          "[nn][oom][alloc-failures][data]") {
    DataSession session;
    const Outcome first = warm_up(session);
    CHECK(first.values[2] == 23.0);  // every image, each epoch
    CHECK(first.values[5] == 23.0);
    CHECK(first.values[6] == 10.0);  // 5 batches an epoch
    CHECK(first.values[0] != first.values[3]);  // reshuffled
    fail_each_allocation_both_ways(session, first, 50);
}

TEST_CASE("the CPU allocator frees a block it has no memory to cache and refuses one it cannot record",
          "[host][oom][alloc-failures]") {
    pxcpu::Allocator allocator(0, 0);
    std::string why;
    // A 3 MiB class: its free list is made empty at the first allocation, so
    // caching the block on release is the list's first growth.
    px_plugin_buffer* block = allocator.allocate(3 << 20, why);
    REQUIRE(block != nullptr);
    REQUIRE(allocator.figures().reserved == uint64_t(3) << 20);
    failing_new::fail_from(0, true);
    allocator.release(block);  // the list cannot grow: the block goes back to the system instead
    failing_new::disarm();
    CHECK(failing_new::fired());
    CHECK(allocator.figures().in_use == 0);
    CHECK(allocator.figures().reserved == 0);
    // The block is there but its small record is not: refused, naming host memory, nothing held.
    failing_new::fail_from(0, false);
    px_plugin_buffer* refused = allocator.allocate(100, why);
    failing_new::disarm();
    CHECK(refused == nullptr);
    CHECK(why == "out of host memory for the record of a block on cpu(0)");
    CHECK(allocator.figures().reserved == 0);
    CHECK(allocator.figures().in_use == 0);
    // And with memory back, the same sizes are given.
    px_plugin_buffer* again = allocator.allocate(100, why);
    REQUIRE(again != nullptr);
    allocator.release(again);
}
