// Every CUDA, cuBLAS and NCCL call the CUDA plugin makes, failed in turn on
// the emulated GPUs (emu_faults.h): first as out of memory at each call that
// allocates, then as a lost device at each call that uses one. Whatever
// fails, the runtime reports an error that says what happened (never wrong
// values), the devices not lost go on computing the right values, the lost
// one refuses work with its reason, and nothing leaks: no memory, stream,
// event, pool, cuBLAS handle or NCCL communicator is left once the runtime
// is destroyed. The reference values come from the CPU plugin.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../host/plugin_runtime.hpp"
#include "../support.hpp"
#include "emu_faults.h"
#include "plexus/plexus.h"

namespace {

struct Tensor {
    px_tensor* t = nullptr;
    Tensor() = default;
    Tensor(const Tensor&) = delete;
    Tensor& operator=(const Tensor&) = delete;
    ~Tensor() {
        if (t) px_tensor_release(t);
    }
};

// Where a workload stopped, and what the runtime said.
struct Failure {
    std::string step;
    px_status status;
    std::string message;
};

struct Outcome {
    std::optional<Failure> failure;
    std::vector<std::vector<float>> results;
};

constexpr px_device cpu0{PX_DEVICE_CPU, 0}, cpu1{PX_DEVICE_CPU, 1};
constexpr px_device gpu0{PX_DEVICE_GPU, 0}, gpu1{PX_DEVICE_GPU, 1};

std::vector<float> wave(size_t n, float scale) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * float(i) + 0.2f);
    return v;
}

// A product (cuBLAS), a convolution and its weight gradient (scratch memory),
// a loss whose kernel can report into the failure slot, then with
// `two_devices` copies of the product on d0 and d1 summed in place (NCCL);
// every result read back.
Outcome workload(px_runtime* rt, px_device d0, px_device d1, bool two_devices) {
    Outcome out;
    auto step = [&](const char* what, px_status s) {
        if (s != PX_OK) out.failure = Failure{what, s, px_last_error()};
        return s == PX_OK;
    };
    auto upload = [&](const char* what, const std::vector<float>& v, std::vector<int64_t> shape, Tensor& t) {
        return step(what, px_tensor_from_host(rt, d0, PX_FLOAT32, int32_t(shape.size()), shape.data(), v.data(),
                                              v.size() * sizeof(float), &t.t));
    };
    auto read = [&](const char* what, const Tensor& t) {
        int64_t n = 0;
        if (!step(what, px_tensor_numel(t.t, &n))) return false;
        std::vector<float> v(size_t(n), 0.0f);
        if (!step(what, px_tensor_to_host(t.t, v.data(), v.size() * sizeof(float)))) return false;
        out.results.push_back(std::move(v));
        return true;
    };
    const std::vector<float> a = wave(16 * 24, 1.0f), b = wave(24 * 8, 0.5f), x = wave(2 * 3 * 6 * 6, 1.0f),
                             w = wave(4 * 3 * 3 * 3, 0.3f), logits = wave(8 * 10, 2.0f);
    const std::vector<int32_t> labels = {0, 3, 9, 1, 4, 4, 7, 2};
    const int64_t label_shape[1] = {8};
    Tensor A, B, C, X, W, Y, DW, Logits, Labels, Loss, S0, S1;
    const bool computed =
        upload("upload A", a, {16, 24}, A) && upload("upload B", b, {24, 8}, B) &&
        step("matmul", px_matmul(A.t, B.t, &C.t)) && upload("upload x", x, {2, 3, 6, 6}, X) &&
        upload("upload w", w, {4, 3, 3, 3}, W) && step("conv2d", px_conv2d(X.t, W.t, 1, 1, 1, 1, &Y.t)) &&
        step("conv2d_backward_weight", px_conv2d_backward_weight(Y.t, X.t, 3, 3, 1, 1, 1, 1, &DW.t)) &&
        upload("upload logits", logits, {8, 10}, Logits) &&
        step("upload labels", px_tensor_from_host(rt, d0, PX_INT32, 1, label_shape, labels.data(),
                                                  labels.size() * sizeof(int32_t), &Labels.t)) &&
        step("softmax_cross_entropy", px_softmax_cross_entropy(Logits.t, Labels.t, &Loss.t));
    if (!computed || !read("read C", C) || !read("read y", Y) || !read("read dw", DW) || !read("read loss", Loss) ||
        !two_devices)
        return out;
    if (!step("copy C on its device", px_tensor_copy_to(C.t, d0, &S0.t)) ||
        !step("copy C to the second device", px_tensor_copy_to(C.t, d1, &S1.t)))
        return out;
    px_tensor* both[2] = {S0.t, S1.t};
    if (step("all_reduce_sum", px_all_reduce_sum(both, 2)) && read("read the sum", S0))
        read("read the sum on the second device", S1);
    return out;
}

int32_t gpus(px_runtime* rt) {
    int32_t n = -1;
    REQUIRE(px_runtime_device_count(rt, PX_DEVICE_GPU, &n) == PX_OK);
    return n;
}

// The CPU plugin's results: the reference (PLEXUS_CPU_DEVICES=2).
const Outcome& reference() {
    static const Outcome ref = [] {
        pxtest::Runtime cpus({pxtest::cpu_plugin});
        return workload(cpus.rt, cpu0, cpu1, true);
    }();
    REQUIRE_FALSE(ref.failure);
    return ref;
}

void require_reference_values(const Outcome& got, bool two_devices) {
    if (got.failure) FAIL("step " << got.failure->step << " failed: " << got.failure->message);
    const std::vector<std::vector<float>>& want = reference().results;
    REQUIRE(got.results.size() == (two_devices ? want.size() : want.size() - 2));
    for (size_t r = 0; r < got.results.size(); ++r) {
        REQUIRE(got.results[r].size() == want[r].size());
        for (size_t i = 0; i < want[r].size(); ++i) {
            INFO("result " << r << " element " << i);
            REQUIRE(std::fabs(got.results[r][i] - want[r][i]) <= 1e-4 * (1 + std::fabs(want[r][i])));
        }
    }
}

// Nothing the emulator made is left.
void require_nothing_held() {
    plexus_emu_live live{};
    plexus_emu_live_objects(&live);
    CHECK(live.device_blocks == 0);
    CHECK(live.host_blocks == 0);
    CHECK(live.streams == 0);
    CHECK(live.events == 0);
    CHECK(live.pools == 0);
    CHECK(live.blas_handles == 0);
    CHECK(live.nccl_comms == 0);
}

bool mentions(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// The runtime call's name as the plugin's message spells it (cuBLAS's
// functions are macros over their _v2 symbols).
std::string spelled(std::string fn) {
    const std::string v2 = "_v2";
    if (fn.size() > v2.size() && fn.compare(fn.size() - v2.size(), v2.size(), v2) == 0) fn.resize(fn.size() - v2.size());
    return fn;
}

// One try of a sweep: the fault armed for the nth call, a runtime made and
// the workload run on both GPUs (when the plugin could set them up).
struct Attempt {
    pxtest::Runtime runtime{{PLEXUS_CUDA_PLUGIN_FILE, pxtest::cpu_plugin}};
    bool created = gpus(runtime.rt) == 2;
    Outcome first = created ? workload(runtime.rt, gpu0, gpu1, true) : Outcome{};
    std::string fn;  // the call failed; "" when the nth call never came
    int device = -1;  // the device it failed on
    // What the runtime says of the CUDA plugin (loaded or not, and why).
    std::string plugin_message() { return runtime.by_file()["libplexus-cuda-emu.so"].message; }
};

// Fails the 1st, 2nd, ... call of `fault`'s kind in turn, each in a new
// runtime, handing each attempt to `check` (the runtime is destroyed after
// it returns) until the workload makes no nth call; nothing the emulator
// made may be left after any attempt. Returns the functions failed, and
// sets `tries`. PX_FAULTS_TRACE=1 prints each try (to find a hang).
template <class Check>
std::set<std::string> sweep(int fault, long& tries, Check&& check) {
    // The emulator counts the calls of the thread that armed the fault: the
    // plugin loads on it (no load time-out), not on a loader thread.
    ::setenv("PLEXUS_PLUGIN_TIMEOUT", "none", 1);
    std::set<std::string> failed;
    for (long n = 1;; ++n) {
        std::string fn;
        {
            plexus_emu_inject(fault, nullptr, n);
            Attempt a;
            const char* fired = plexus_emu_injected();
            a.fn = fn = fired ? fired : "";
            a.device = plexus_emu_injected_device();
            plexus_emu_disarm();
            if (std::getenv("PX_FAULTS_TRACE")) std::fprintf(stderr, "try %ld: %s on gpu(%d)\n", n, fn.c_str(), a.device);
            INFO("try " << n << ": " << (fn.empty() ? "no such call" : fn + " failed on gpu(" + std::to_string(a.device) + ")"));
            if (fn.empty()) {  // past the last such call: the workload ran as it should
                require_reference_values(a.first, true);
            } else {
                check(a);
            }
        }
        // A lost device's memory goes with its context (the driver's part);
        // everything else the plugin made, it released.
        REQUIRE(plexus_emu_revive() == 0);
        require_nothing_held();
        if (fn.empty()) {
            tries = n - 1;
            return failed;
        }
        failed.insert(fn);
    }
}

// A process group of two ranks, on gpu(0) and gpu(1), joined from two threads.
void join_two_ranks(px_runtime* rt, double timeout_s, px_group* groups[2]) {
    px_group_id id{};
    id.struct_size = sizeof id;
    REQUIRE(px_group_make_id(rt, gpu0, &id) == PX_OK);
    px_status joined1 = PX_ERROR_INTERNAL;
    std::thread rank1([&] { joined1 = px_group_join(rt, gpu1, &id, 1, 2, timeout_s, &groups[1]); });
    const px_status joined0 = px_group_join(rt, gpu0, &id, 0, 2, timeout_s, &groups[0]);
    rank1.join();
    REQUIRE(joined0 == PX_OK);
    REQUIRE(joined1 == PX_OK);
}

}  // namespace

TEST_CASE("every allocation the CUDA plugin makes can run out of memory, and nothing is lost or leaked",
          "[cuda][emulator][faults]") {
    reference();
    long tries = 0;
    const std::set<std::string> failed = sweep(PLEXUS_EMU_OUT_OF_MEMORY, tries, [](Attempt& a) {
        px_runtime* rt = a.runtime.rt;
        if (!a.created) {
            // The plugin could not set its devices up; it says why, and the CPU works.
            const std::string why = a.plugin_message();
            INFO("the plugin said: " << why);
            CHECK((mentions(why, "out of memory") && mentions(why, spelled(a.fn))));
            require_reference_values(workload(rt, cpu0, cpu0, false), false);
        } else if (a.first.failure) {
            INFO("step " << a.first.failure->step << " failed: " << a.first.failure->message);
            CHECK((a.first.failure->status == PX_ERROR_OUT_OF_MEMORY || a.first.failure->status == PX_ERROR_DEVICE));
            CHECK(mentions(a.first.failure->message, "out of memory"));
            // Running out is not fatal: the same work succeeds now.
            require_reference_values(workload(rt, gpu0, gpu1, true), true);
        } else {
            require_reference_values(a.first, true);  // the plugin recovered (e.g. emptied its cache and retried)
        }
    });
    for (const char* fn : {"cudaStreamCreateWithFlags", "cudaEventCreateWithFlags", "cudaMemPoolCreate", "cudaMalloc",
                           "cublasCreate_v2", "cudaMallocFromPoolAsync", "cudaHostAlloc", "ncclCommInitAll"})
        CHECK(failed.count(fn) == 1);
    WARN(tries << " allocations failed in turn, in " << failed.size() << " functions");
}

TEST_CASE("a device lost at any CUDA call is reported, refuses later work, and spares the other devices",
          "[cuda][emulator][faults]") {
    reference();
    long tries = 0;
    const std::set<std::string> failed = sweep(PLEXUS_EMU_DEVICE_LOST, tries, [](Attempt& a) {
        px_runtime* rt = a.runtime.rt;
        REQUIRE((a.device == 0 || a.device == 1));
        if (!a.created) {
            const std::string why = a.plugin_message();
            INFO("the plugin said: " << why);
            CHECK(mentions(why, "could not be set up"));
            return;
        }
        // Never wrong values: the loss is reported, as a device error.
        REQUIRE(a.first.failure);
        INFO("step " << a.first.failure->step << " failed: " << a.first.failure->message);
        CHECK(a.first.failure->status == PX_ERROR_DEVICE);
        // The lost device refuses work at once, saying why.
        Tensor t;
        const int64_t shape[1] = {4};
        CHECK(px_tensor_full(rt, px_device{PX_DEVICE_GPU, a.device}, PX_FLOAT32, 1, shape, 1.0, &t.t) == PX_ERROR_DEVICE);
        CHECK(mentions(px_last_error(), "has failed"));
        // The other GPU's next wait reports a sum with the lost one that it
        // had queued, if any; then it and the CPU compute the right values.
        const px_device other{PX_DEVICE_GPU, 1 - a.device};
        if (px_runtime_synchronize(rt, other) != PX_OK) {
            INFO("the other GPU said: " << px_last_error());
            CHECK(mentions(px_last_error(), "was abandoned: gpu(" + std::to_string(a.device) + ") failed"));
        }
        require_reference_values(workload(rt, other, other, false), false);
        require_reference_values(workload(rt, cpu0, cpu1, true), true);
    });
    for (const char* fn : {"cudaStreamCreateWithFlags", "cudaMemPoolCreate", "cudaLaunchKernel",
                           "cublasGemmStridedBatchedEx", "cudaMemcpyAsync", "cudaStreamSynchronize", "ncclAllReduce"})
        CHECK(failed.count(fn) == 1);
    WARN(tries << " calls lost a device in turn, in " << failed.size() << " functions");
}

TEST_CASE("a process group whose device is lost as it records a collective fails there, and its peer gives up",
          "[cuda][emulator][faults]") {
    {
        pxtest::Runtime r({PLEXUS_CUDA_PLUGIN_FILE});
        REQUIRE(gpus(r.rt) == 2);
        px_group* groups[2] = {nullptr, nullptr};
        join_two_ranks(r.rt, 1.0, groups);
        const int64_t shape[1] = {8};
        Tensor t0, t1;
        REQUIRE(px_tensor_full(r.rt, gpu0, PX_FLOAT32, 1, shape, 1.0, &t0.t) == PX_OK);
        REQUIRE(px_tensor_full(r.rt, gpu1, PX_FLOAT32, 1, shape, 2.0, &t1.t) == PX_OK);
        // Rank 1 queues its part and waits; rank 0's first event record loses gpu(0).
        px_status waited1 = PX_OK;
        std::string said1;
        std::thread peer([&] {
            if (px_group_all_reduce_sum(groups[1], &t1.t, 1) != PX_OK) return;
            waited1 = px_runtime_synchronize(r.rt, gpu1);
            said1 = px_last_error();
        });
        plexus_emu_inject(PLEXUS_EMU_DEVICE_LOST, "cudaEventRecord", 1);
        const px_status summed0 = px_group_all_reduce_sum(groups[0], &t0.t, 1);
        const std::string said0 = px_last_error();
        REQUIRE(plexus_emu_injected() != nullptr);
        plexus_emu_disarm();
        peer.join();
        CHECK(summed0 == PX_ERROR_DEVICE);
        PX_REQUIRE_MENTIONS(said0, "cudaEventRecord");
        PX_REQUIRE_MENTIONS(said0, "has failed");
        CHECK(waited1 == PX_ERROR_DEVICE);
        PX_REQUIRE_MENTIONS(said1, "waited 1 s for the other 1 process(es)");
        px_group_release(groups[0]);
        px_group_release(groups[1]);
        // gpu(1) still computes.
        std::vector<float> back(8, 0.0f);
        Tensor u;
        REQUIRE(px_tensor_full(r.rt, gpu1, PX_FLOAT32, 1, shape, 3.0, &u.t) == PX_OK);
        REQUIRE(px_tensor_to_host(u.t, back.data(), back.size() * sizeof(float)) == PX_OK);
        CHECK(back == std::vector<float>(8, 3.0f));
    }
    // gpu(0)'s context goes with the runtime; nothing else may be left.
    REQUIRE(plexus_emu_revive() == 0);
    require_nothing_held();
}

TEST_CASE("a sum over two GPUs whose NCCL link fails is abandoned with NCCL's reason, and the next sum works",
          "[cuda][emulator][faults]") {
    {
        pxtest::Runtime r({PLEXUS_CUDA_PLUGIN_FILE});
        REQUIRE(gpus(r.rt) == 2);
        const int64_t shape[1] = {8};
        Tensor a0, a1;
        REQUIRE(px_tensor_full(r.rt, gpu0, PX_FLOAT32, 1, shape, 1.0, &a0.t) == PX_OK);
        REQUIRE(px_tensor_full(r.rt, gpu1, PX_FLOAT32, 1, shape, 2.0, &a1.t) == PX_OK);
        plexus_emu_inject(PLEXUS_EMU_NCCL_REMOTE_ERROR, "ncclAllReduce", 1);
        px_tensor* both[2] = {a0.t, a1.t};
        REQUIRE(px_all_reduce_sum(both, 2) == PX_OK);  // queued; the link fails as it runs
        REQUIRE(plexus_emu_injected() != nullptr);
        plexus_emu_disarm();
        // Each GPU's next wait reports the sum NCCL gave up on, instead of
        // waiting forever in its kernel; the first finds it, the other has
        // the same sum pending.
        for (px_device gpu : {gpu0, gpu1}) {
            INFO("gpu(" << gpu.index << ")");
            CHECK(px_runtime_synchronize(r.rt, gpu) == PX_ERROR_DEVICE);
            PX_REQUIRE_MENTIONS(px_last_error(), "the all-reduce over gpu(0), gpu(1) was abandoned: NCCL: remote process "
                                                 "exited or there was a network error");
            CHECK(px_runtime_synchronize(r.rt, gpu) == PX_OK);  // reported once
        }
        // Neither GPU is lost: a new sum, over new communicators, is exact.
        Tensor b0, b1;
        REQUIRE(px_tensor_full(r.rt, gpu0, PX_FLOAT32, 1, shape, 1.5, &b0.t) == PX_OK);
        REQUIRE(px_tensor_full(r.rt, gpu1, PX_FLOAT32, 1, shape, 2.25, &b1.t) == PX_OK);
        px_tensor* again[2] = {b0.t, b1.t};
        REQUIRE(px_all_reduce_sum(again, 2) == PX_OK);
        for (px_tensor* t : again) {
            std::vector<float> back(8, 0.0f);
            REQUIRE(px_tensor_to_host(t, back.data(), back.size() * sizeof(float)) == PX_OK);
            CHECK(back == std::vector<float>(8, 3.75f));
        }
    }
    REQUIRE(plexus_emu_revive() == 0);
    require_nothing_held();
}

TEST_CASE("a process group whose NCCL link fails mid-sum reports NCCL's reason on every rank, within its time-out",
          "[cuda][emulator][faults]") {
    {
        pxtest::Runtime r({PLEXUS_CUDA_PLUGIN_FILE});
        REQUIRE(gpus(r.rt) == 2);
        px_group* groups[2] = {nullptr, nullptr};
        join_two_ranks(r.rt, 600.0, groups);  // a time-out far longer than the test: only NCCL's error ends the waits
        const int64_t shape[1] = {8};
        Tensor t0, t1;
        REQUIRE(px_tensor_full(r.rt, gpu0, PX_FLOAT32, 1, shape, 1.0, &t0.t) == PX_OK);
        REQUIRE(px_tensor_full(r.rt, gpu1, PX_FLOAT32, 1, shape, 2.0, &t1.t) == PX_OK);
        // Both parts are queued (the emulator's NCCL does not block there);
        // rank 0's loses its link when it runs.
        REQUIRE(px_group_all_reduce_sum(groups[1], &t1.t, 1) == PX_OK);
        plexus_emu_inject(PLEXUS_EMU_NCCL_REMOTE_ERROR, "ncclAllReduce", 1);
        REQUIRE(px_group_all_reduce_sum(groups[0], &t0.t, 1) == PX_OK);
        REQUIRE(plexus_emu_injected() != nullptr);
        plexus_emu_disarm();
        for (int rank : {0, 1}) {
            INFO("rank " << rank);
            CHECK(px_runtime_synchronize(r.rt, px_device{PX_DEVICE_GPU, rank}) == PX_ERROR_DEVICE);
            const std::string said = px_last_error();
            PX_REQUIRE_MENTIONS(said, "the group's all-reduce failed (rank " + std::to_string(rank) + " of 2)");
            PX_REQUIRE_MENTIONS(said, "remote process exited or there was a network error");
            // The group is done for, and says why; its device is not.
            CHECK(px_group_all_reduce_sum(groups[rank], rank ? &t1.t : &t0.t, 1) == PX_ERROR_DEVICE);
            PX_REQUIRE_MENTIONS(px_last_error(), "cannot be used any more");
            Tensor u;
            REQUIRE(px_tensor_full(r.rt, px_device{PX_DEVICE_GPU, rank}, PX_FLOAT32, 1, shape, 3.0, &u.t) == PX_OK);
            std::vector<float> back(8, 0.0f);
            REQUIRE(px_tensor_to_host(u.t, back.data(), back.size() * sizeof(float)) == PX_OK);
            CHECK(back == std::vector<float>(8, 3.0f));
        }
        px_group_release(groups[0]);
        px_group_release(groups[1]);
    }
    REQUIRE(plexus_emu_revive() == 0);
    require_nothing_held();
}
