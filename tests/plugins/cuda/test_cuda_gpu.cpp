// What only a real GPU can show: the CUDA plugin agrees with the CPU plugin,
// reports failures found on the device at the next wait, survives running
// out of memory, and caches its memory. Skipped (exit 4) without a GPU.
#include <catch2/catch.hpp>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "../../math_accuracy.hpp"
#include "../../support.hpp"
#include "plexus/plugin.h"

using Catch::Matchers::Contains;
using namespace plexus;

namespace {

// max |a - b| / (1 + |b|) over two tensors of the same shape, as float64.
double worst(const Tensor& got, const Tensor& want) {
    auto g = pxtest::values(got.copyto(cpu())), w = pxtest::values(want.copyto(cpu()));
    REQUIRE(g.size() == w.size());
    double m = 0;
    for (size_t i = 0; i < g.size(); ++i) m = std::max(m, std::fabs(g[i] - w[i]) / (1 + std::fabs(w[i])));
    return m;
}

// Joins gpu(0) as rank 0 and gpu(1) as rank 1 of a new process group, each
// from its own thread; false, with the reason, where that cannot be here.
bool join_two_ranks(double timeout, px_group* (&groups)[2]) {
    if (num_gpus() < 2) {
        WARN("skipped: two ranks need two GPUs");
        return false;
    }
    px_group_id id{};
    id.struct_size = sizeof id;
    px_status made = px_group_make_id(runtime(), gpu(0).raw(), &id);
    if (made == PX_ERROR_UNSUPPORTED) {  // no libnccl on this machine
        WARN("skipped: " << px_last_error());
        return false;
    }
    REQUIRE(made == PX_OK);
    px_status joined1 = PX_ERROR_INTERNAL;
    std::thread rank1([&] { joined1 = px_group_join(runtime(), gpu(1).raw(), &id, 1, 2, timeout, &groups[1]); });
    const px_status joined0 = px_group_join(runtime(), gpu(0).raw(), &id, 0, 2, timeout, &groups[0]);
    rank1.join();
    REQUIRE(joined0 == PX_OK);
    REQUIRE(joined1 == PX_OK);
    return true;
}

}  // namespace

TEST_CASE("random numbers, dropout masks and arange are the CPU plugin's, bit for bit", "[cuda][gpu]") {
    for (DType d : {DType::float32, DType::float64}) {
        seed(7);
        // Bounds whose (b - a) * u rounds: a fused multiply-add (nvcc's
        // default) would change the last bit of many float64 draws.
        Tensor on_cpu = random_uniform({4099}, -0.7071067811865476, 0.3183098861837907, cpu(), d);
        seed(7);
        Tensor on_gpu = random_uniform({4099}, -0.7071067811865476, 0.3183098861837907, gpu(0), d);
        CHECK(pxtest::values(on_gpu.copyto(cpu())) == pxtest::values(on_cpu));
        seed(9);
        Tensor n_cpu = random_normal({4099}, 1, 2, cpu(), d);
        seed(9);
        Tensor n_gpu = random_normal({4099}, 1, 2, gpu(0), d);
        CHECK(worst(n_gpu, n_cpu) < (d == DType::float32 ? 1e-6 : 1e-13));  // SLEEF's log and cos (CPU) and CUDA's differ in the last bits
    }
    seed(3);
    Tensor x = ones({1000});
    Tensor dc = dropout(x, 0.3);
    seed(3);
    Tensor dg = dropout(x.copyto(gpu(0)), 0.3);
    CHECK(pxtest::values(dg.copyto(cpu())) == pxtest::values(dc));
    // start + i * step rounds twice on both: 0.1 is not exact.
    CHECK(pxtest::values(arange(0.3, 700.3, 0.1, gpu(0), DType::float64).copyto(cpu())) ==
          pxtest::values(arange(0.3, 700.3, 0.1, cpu(), DType::float64)));
}

TEST_CASE("exp log tanh and sigmoid: float32 correctly rounded as on the CPU plugin", "[cuda][gpu]") {
    // float32 goes through float64 and is rounded once, so it is the correctly
    // rounded value, as the CPU plugin's is, unless the value lies within a
    // float64 ulp of halfway between two floats: 0.5 ulp plus that much.
    const long double float32_bound = 0.5L + 0x1p-20L;
    // float64: CUDA documents 1 ulp for exp, log and tanh (the emulator's
    // glibc tanh is up to 1.83); sigmoid's 1 / (1 + e) adds two roundings.
    auto float64_bound = [](pxtest::MathFn f) { return f == pxtest::MathFn::exp || f == pxtest::MathFn::log ? 1.0L : 2.5L; };
    const std::vector<float> x = pxtest::math_inputs<float>();
    const std::vector<double> xd = pxtest::math_inputs<double>();
    for (pxtest::MathFn f : pxtest::kMathFns) {
        INFO(pxtest::name(f));
        const auto got = pxtest::apply(f, array(x, {}, gpu(0))).copyto(cpu()).to_vector<float>();
        const pxtest::WorstError<float> w = pxtest::worst_error(f, x, got);
        INFO("float32: worst " << double(w.ulps) << " ulp, at x = " << w.at << ": got " << w.got);
        CHECK(got.size() == x.size());
        CHECK(w.ulps <= float32_bound);
        const auto gotd = pxtest::apply(f, array(xd, {}, gpu(0))).copyto(cpu()).to_vector<double>();
        const pxtest::WorstError<double> wd = pxtest::worst_error(f, xd, gotd);
        INFO("float64: worst " << double(wd.ulps) << " ulp, at x = " << wd.at << ": got " << wd.got);
        CHECK(gotd.size() == xd.size());
        CHECK(wd.ulps <= float64_bound(f));
    }
}

TEST_CASE("x ** 2 is x * x bit for bit as on the CPU plugin", "[cuda][gpu]") {
    for (DType d : {DType::float32, DType::float64}) {
        INFO(name(d));
        const std::vector<float> x = pxtest::math_inputs<float>();
        Tensor t = array(x).astype(d);
        const auto squared = pxtest::values(t.copyto(gpu(0)).pow(2.0).copyto(cpu()));
        const auto want = pxtest::values(t * t);  // on cpu(0)
        REQUIRE(squared.size() == want.size());
        size_t differ = 0;
        for (size_t i = 0; i < want.size(); ++i) differ += !pxtest::same_bits(squared[i], want[i]);
        CHECK(differ == 0);
    }
}

TEST_CASE("conv, pooling, products, reductions and transposes agree with the CPU plugin", "[cuda][gpu]") {
    seed(1);
    Tensor x = random_normal({8, 3, 13, 11}), w = random_normal({5, 3, 3, 3});
    Tensor y = conv2d(x, w, 2, 1);
    CHECK(worst(conv2d(x.copyto(gpu(0)), w.copyto(gpu(0)), 2, 1), y) < 1e-5);
    CHECK(worst(max_pool2d(x.copyto(gpu(0)), 3, 2, 1), max_pool2d(x, 3, 2, 1)) == 0);
    CHECK(worst(avg_pool2d(x.copyto(gpu(0)), 2, 2), avg_pool2d(x, 2, 2)) < 1e-6);
    Tensor a = random_normal({300, 200}), b = random_normal({200, 100});
    CHECK(worst(matmul(a.copyto(gpu(0)), b.copyto(gpu(0))), matmul(a, b)) < 1e-5);
    Tensor big = random_uniform({3, 100003});
    CHECK(worst(big.copyto(gpu(0)).sum(), big.sum()) < 1e-6);
    CHECK(worst(big.copyto(gpu(0)).sum(1), big.sum(1)) < 1e-6);
    CHECK(worst(big.copyto(gpu(0)).argmax(1), big.argmax(1)) == 0);
    CHECK(worst(big.copyto(gpu(0)).max(0), big.max(0)) == 0);
    // Transposes by tiles through shared memory (under compute-sanitizer's
    // racecheck in the GPU checks), in each element size.
    Tensor cube = random_uniform({3, 130, 90});
    for (DType d : {DType::float32, DType::float64, DType::uint8}) {
        Tensor c = (cube * 200).astype(d);
        CHECK(worst(c.copyto(gpu(0)).transpose({0, 2, 1}), c.transpose({0, 2, 1})) == 0);
        CHECK(worst(c.copyto(gpu(0)).transpose({2, 1, 0}), c.transpose({2, 1, 0})) == 0);
    }
}

TEST_CASE("integer division by zero is reported at the next wait, naming div", "[cuda][gpu]") {
    Tensor a = array(std::vector<int32_t>{7, 8, 9}, {}, gpu(0));
    Tensor b = array(std::vector<int32_t>{1, 0, 3}, {}, gpu(0));
    Tensor q = a / b;  // queued: returns before the GPU has run it
    CHECK_THROWS_WITH(q.to_vector<int32_t>(), Contains("div failed on CUDA device 0: integer division by zero"));
    // The next failure is reported too: the slot is cleared on the device's
    // stream, in order with the kernels after it.
    Tensor again = b / b;
    CHECK_THROWS_WITH(again.to_vector<int32_t>(), Contains("div failed on CUDA device 0"));
    // A copy to another plugin's device reads the source (a wait): it
    // reports the failure instead of copying, and says so.
    Tensor failed = a / b;
    CHECK_THROWS_WITH(failed.copyto(cpu()), Contains("div failed on CUDA device 0") && Contains("the copy was not made"));
    // Each reported once; the device goes on working.
    CHECK((a + b).to_vector<int32_t>() == std::vector<int32_t>{8, 8, 12});
}

TEST_CASE("a label outside the classes is reported at the next wait", "[cuda][gpu]") {
    Tensor logits = zeros({2, 3}, gpu(0));
    Tensor labels = array(std::vector<int32_t>{0, 5}, {}, gpu(0));
    CHECK_THROWS_WITH(softmax_cross_entropy(logits, labels).to_vector<float>(),
                      Contains("label 5 in row 1 is outside [0, 3)"));
    CHECK(zeros({2}, gpu(0)).to_vector<float>() == std::vector<float>{0, 0});
}

TEST_CASE("out of memory names the figures and leaves the device usable", "[cuda][gpu][exhausts]") {
    const uint64_t total = device_info(gpu(0)).memory_total;
    REQUIRE(total > 0);
    // More than the device has: the host refuses it before asking the plugin.
    CHECK_THROWS_AS(empty({int64_t(total / 4) + 1}, gpu(0)), OutOfMemoryError);
    CHECK_THROWS_WITH(empty({int64_t(total / 4) + 1}, gpu(0)), Contains("bytes in all"));
    // What fits the device but not beside a tensor held: the plugin's own
    // out of memory (the pool emptied, the allocation tried again), with its figures.
    const int64_t most = int64_t(total / 4 * 6 / 10);  // float32 elements: 60% of the memory
    synchronize(gpu(0));
    const uint64_t baseline = device_info(gpu(0)).memory_in_use;
    {
        Tensor held = full({most}, 3.0, gpu(0));
        CHECK_THROWS_AS(empty({most}, gpu(0)), OutOfMemoryError);
        CHECK_THROWS_WITH(empty({most}, gpu(0)), Contains("out of memory: asked for") && Contains(" free of "));
        // 100 more refusals: each leaves the tensor held intact and the device
        // working, and nothing of the failed allocations stays counted.
        int refused = 0, wrong = 0;
        for (int cycle = 0; cycle < 100; ++cycle) {
            try {
                empty({most}, gpu(0));
            } catch (const OutOfMemoryError&) {
                ++refused;
            }
            Tensor small = full({1000}, double(cycle), gpu(0));
            if ((small + held.slice(0, 1000)).sum().item<float>() != 1000.0f * float(cycle + 3)) ++wrong;
        }
        CHECK(refused == 100);
        CHECK(wrong == 0);
        CHECK(held.slice(most - 1, most).item<float>() == 3.0f);
    }
    // Once the tensor held is freed, the same allocation succeeds.
    { Tensor again = empty({most}, gpu(0)); }
    synchronize(gpu(0));
    CHECK(device_info(gpu(0)).memory_in_use == baseline);
    Tensor fine = full({1 << 20}, 2.0, gpu(0));
    CHECK(fine.sum().to_vector<float>()[0] == float(2 << 20));
}

TEST_CASE("freed memory is cached and reused: 100 cycles, no growth", "[cuda][gpu]") {
    synchronize(gpu(0));
    const uint64_t baseline = device_info(gpu(0)).memory_in_use;
    { Tensor warm = full({1 << 22}, 1.0, gpu(0)); }
    synchronize(gpu(0));
    const uint64_t reserved = device_info(gpu(0)).memory_reserved;
    for (int i = 0; i < 100; ++i) {
        Tensor t = full({1 << 22}, double(i), gpu(0));
        Tensor u = t * 2;
        CHECK(device_info(gpu(0)).memory_in_use >= baseline + (uint64_t(2) << 24));
    }
    synchronize(gpu(0));
    CHECK(device_info(gpu(0)).memory_in_use == baseline);
    CHECK(device_info(gpu(0)).memory_reserved <= reserved + (uint64_t(1) << 25));  // two live blocks at most, then reuse
    CHECK(device_info(gpu(0)).memory_peak >= baseline + (uint64_t(2) << 24));
}

TEST_CASE("copies through the staging ring, and between two GPUs", "[cuda][gpu]") {
    const int64_t n = 10'000'003;  // 40 MB: several staging slots, an odd tail
    Tensor host = arange(0, double(n), 1, cpu(), DType::float64);
    Tensor dev = host.copyto(gpu(0));
    CHECK(worst(dev, host) == 0);
    Tensor back = (dev + 1).copyto(cpu());
    CHECK(back.to_vector<double>()[size_t(n - 1)] == double(n));
    if (num_gpus() < 2) return;
    Tensor other = dev.copyto(gpu(1));
    CHECK(other.device() == gpu(1));
    CHECK(worst(other * 2, host * 2) == 0);
}

TEST_CASE("TF32 is used only when the user opts in", "[cuda][gpu]") {
    seed(5);
    Tensor a = random_normal({512, 512}, 0, 1, gpu(0)), b = random_normal({512, 512}, 0, 1, gpu(0));
    Tensor exact = matmul(a.astype(DType::float64), b.astype(DType::float64));
    Tensor full32 = matmul(a, b);
    allow_tf32(true);
    Tensor tf32 = matmul(a, b);
    allow_tf32(false);
    const double e_full = worst(full32, exact), e_tf32 = worst(tf32, exact);
    // A float32 product of 512 terms, summed one after the other, is off by
    // about 2e-5 (OpenBLAS on the CUDA emulator: 2.6e-5); TF32's 10-bit
    // mantissas give about 1e-3, so 1e-4 tells them apart.
    CHECK(e_full < 1e-4);
    CHECK(e_tf32 < 5e-2);   // 10-bit mantissas: about 1e-3 relative per product
    // TF32 exists from Ampere (sm_80) on; the device name says "(sm_XY, ...".
    const std::string name = device_info(gpu(0)).name;
    const auto at = name.find("(sm_");
    if (at != std::string::npos && std::stoi(name.substr(at + 4)) >= 80) CHECK(e_tf32 > e_full);
}

TEST_CASE("a kernel fault is reported at the next wait naming the op, the device is lost and the CPU keeps working",
          "[cuda][gpu][fault]") {
    // The hook is off unless asked for before a plugin context is made, so
    // this test makes its own runtime (the default one exists already), on
    // the plugin's test build: the release plugin has no hook.
    setenv("PLEXUS_CUDA_TEST_HOOKS", "1", 1);
    px_runtime* rt = nullptr;
    const char* const files[] = {PLEXUS_CUDA_TEST_PLUGIN_FILE, PLEXUS_CPU_PLUGIN_FILE};
    const px_runtime_options options{sizeof(px_runtime_options), files, 2, 1, 0};
    REQUIRE(px_runtime_create(&options, &rt) == PX_OK);
    unsetenv("PLEXUS_CUDA_TEST_HOOKS");
    const px_device g0{PX_DEVICE_GPU, 0}, c0{PX_DEVICE_CPU, 0};
    int64_t n = 1000;
    px_tensor *before = nullptr, *after = nullptr, *host = nullptr;
    REQUIRE(px_tensor_full(rt, g0, PX_FLOAT32, 1, &n, 1.0, &before) == PX_OK);
    REQUIRE(px_runtime_synchronize(rt, g0) == PX_OK);
    void* plugin = dlopen(PLEXUS_CUDA_TEST_PLUGIN_FILE, RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(plugin != nullptr);
    auto inject = reinterpret_cast<int (*)(int32_t, int32_t)>(dlsym(plugin, "px_cuda_test_fault"));
    REQUIRE(inject != nullptr);
    REQUIRE(inject(0, PX_OP_ADD) == 0);
    REQUIRE(px_runtime_synchronize(rt, g0) == PX_ERROR_DEVICE);
    const std::string first = px_last_error();
    CHECK_THAT(first, Contains("has failed and stays unusable"));
    CHECK_THAT(first, Contains("last op queued: add"));
    CHECK_THAT(first, Contains("cudaErrorIllegalAddress"));
    // Every later call on it fails at once with the same reason.
    CHECK(px_tensor_full(rt, g0, PX_FLOAT32, 1, &n, 2.0, &after) == PX_ERROR_DEVICE);
    CHECK_THAT(std::string(px_last_error()), Contains("has failed and stays unusable"));
    CHECK(px_tensor_copy_to(before, c0, &host) == PX_ERROR_DEVICE);
    // The CPU is untouched.
    px_tensor* ok = nullptr;
    float total = 0;
    REQUIRE(px_tensor_full(rt, c0, PX_FLOAT32, 1, &n, 1.0, &ok) == PX_OK);
    px_tensor* sum = nullptr;
    REQUIRE(px_reduce(PX_OP_SUM, ok, 1, 0, 0, &sum) == PX_OK);
    REQUIRE(px_tensor_to_host(sum, &total, sizeof total) == PX_OK);
    CHECK(total == 1000.0f);
    for (px_tensor* t : {before, ok, sum}) px_tensor_release(t);
    px_runtime_destroy(rt);
    dlclose(plugin);
}

TEST_CASE("a process group of one on gpu(0): NCCL joins, sums in place, leaves", "[cuda][gpu][group]") {
    // Two ranks need two GPUs (NCCL refuses one GPU twice); one rank still
    // runs every slot: the id, the non-blocking join, the queued all-reduce
    // watched by the wait, and the leave.
    px_group_id id{};
    id.struct_size = sizeof id;
    px_status made = px_group_make_id(runtime(), gpu(0).raw(), &id);
    if (made == PX_ERROR_UNSUPPORTED) {  // no libnccl on this machine
        WARN("skipped: " << px_last_error());
        return;
    }
    REQUIRE(made == PX_OK);
    CHECK(std::string(id.plugin) == "cuda");
    px_group* group = nullptr;
    REQUIRE(px_group_join(runtime(), gpu(0).raw(), &id, 0, 1, 20, &group) == PX_OK);
    Tensor a = arange(0, 1000, 1, gpu(0)), b = full({3, 5}, 2.5, gpu(0), DType::float64);
    px_tensor* both[2] = {a.handle(), b.handle()};
    REQUIRE(px_group_all_reduce_sum(group, both, 2) == PX_OK);
    CHECK(pxtest::values(a.copyto(cpu())) == pxtest::values(arange(0, 1000, 1)));
    CHECK(pxtest::values(b.copyto(cpu()))[14] == 2.5);
    Tensor on_cpu = ones({2});
    px_tensor* wrong = on_cpu.handle();
    CHECK(px_group_all_reduce_sum(group, &wrong, 1) == PX_ERROR_DEVICE_MISMATCH);
    REQUIRE(px_group_release(group) == PX_OK);
    CHECK(pxtest::values((a + 1.0f).copyto(cpu()))[999] == 1000.0);  // the device goes on after leaving
}

TEST_CASE("a process group of two on gpu(0) and gpu(1): each rank sums with the other, one that never comes is given up on",
          "[cuda][gpu][group]") {
    // Two ranks in one process, one thread each, as two processes would be:
    // the NCCL path between GPUs, and the time-out when a rank dies.
    const double timeout = 2;
    px_group* groups[2] = {nullptr, nullptr};
    if (!join_two_ranks(timeout, groups)) return;
    Tensor a = arange(0, 100, 1, gpu(0)), b = full({100}, 1.0, gpu(1));
    px_tensor* ha = a.handle();
    px_tensor* hb = b.handle();
    px_status summed1 = PX_ERROR_INTERNAL;
    std::thread queue1([&] { summed1 = px_group_all_reduce_sum(groups[1], &hb, 1); });
    REQUIRE(px_group_all_reduce_sum(groups[0], &ha, 1) == PX_OK);
    queue1.join();
    REQUIRE(summed1 == PX_OK);
    const auto want = pxtest::values(arange(1, 101, 1));
    CHECK(pxtest::values(a.copyto(cpu())) == want);
    CHECK(pxtest::values(b.copyto(cpu())) == want);
    // Rank 1 never queues the next sum: rank 0's next wait gives up after
    // the time-out, naming why, instead of hanging.
    REQUIRE(px_group_all_reduce_sum(groups[0], &ha, 1) == PX_OK);
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH(a.copyto(cpu()), Contains("waited 2 s for the other 1 process(es)"));
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(waited >= timeout * 0.9);
    CHECK(waited < timeout + 10);
    CHECK(px_group_all_reduce_sum(groups[0], &ha, 1) == PX_ERROR_DEVICE);  // the group is broken for good
    CHECK(std::string(px_last_error()).find("cannot be used any more") != std::string::npos);
    CHECK((ones({2}, gpu(0)) + 1.0f).to_vector<float>() == std::vector<float>{2, 2});  // the device is not
    px_group_release(groups[0]);
    px_group_release(groups[1]);
    CHECK((ones({2}, gpu(1)) + 1.0f).to_vector<float>() == std::vector<float>{2, 2});
}

TEST_CASE("a process group's time-out bounds a wait without progress, not a slow peer", "[cuda][gpu][group]") {
    const double timeout = 2;
    px_group* groups[2] = {nullptr, nullptr};
    if (!join_two_ranks(timeout, groups)) return;
    Tensor a = ones({10}, gpu(0)), b = ones({10}, gpu(1));
    px_tensor* ha = a.handle();
    px_tensor* hb = b.handle();
    // Rank 0 queues three sums at once and waits; rank 1 comes to each 1.2 s
    // late: 3.6 s in all, longer than the time-out, but never 2 s without a
    // sum done, so nothing is given up on.
    int late_failures = 0;
    std::thread slow([&] {
        for (int i = 0; i < 3; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1200));
            if (px_group_all_reduce_sum(groups[1], &hb, 1) != PX_OK) ++late_failures;
        }
    });
    for (int i = 0; i < 3; ++i) REQUIRE(px_group_all_reduce_sum(groups[0], &ha, 1) == PX_OK);
    std::vector<float> got;
    CHECK_NOTHROW(got = a.to_vector<float>());
    slow.join();
    CHECK(late_failures == 0);
    CHECK(got == std::vector<float>(10, 8.0f));  // 1 + 1, 2 + 2, 4 + 4
    CHECK(b.to_vector<float>() == std::vector<float>(10, 8.0f));
    CHECK(px_group_release(groups[0]) == PX_OK);
    CHECK(px_group_release(groups[1]) == PX_OK);
}

TEST_CASE("a forked child of a process that used CUDA gets no GPU and no CUDA call, the plugin loaded again or not",
          "[cuda][gpu][fork]") {
    // This process has used CUDA (gpu(0) above). The plugin opened, used and
    // closed here, as a runtime made and destroyed would: it stays loaded
    // (-z nodelete), so a child that opens it again knows it is a child.
    void* lib = dlopen(PLEXUS_CUDA_TEST_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib);
    auto get = reinterpret_cast<px_plugin_get_api_fn>(dlsym(lib, PX_PLUGIN_ENTRY_SYMBOL));
    REQUIRE(get);
    const px_plugin_api* api = get();
    px_plugin_error err{sizeof(px_plugin_error), {0}};
    px_plugin_context* ctx = nullptr;
    REQUIRE(api->create(&ctx, &err) == PX_OK);
    int32_t gpus = 0;
    REQUIRE(api->device_count(ctx, &gpus, &err) == PX_OK);
    REQUIRE(gpus >= 1);
    api->destroy(ctx);
    dlclose(lib);
    std::fflush(nullptr);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        alarm(20);
        void* again = dlopen(PLEXUS_CUDA_TEST_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL);
        if (!again) _exit(2);
        const px_plugin_api* a = reinterpret_cast<px_plugin_get_api_fn>(dlsym(again, PX_PLUGIN_ENTRY_SYMBOL))();
        px_plugin_error e{sizeof(px_plugin_error), {0}};
        px_plugin_context* c = nullptr;
        int32_t count = -1;
        if (a->create(&c, &e) != PX_OK || a->device_count(c, &count, &e) != PX_OK) _exit(3);
        // (it had seen the GPUs and called CUDA, which does not survive fork)
        _exit(count == 0 && std::string(e.message).find("forked child") != std::string::npos ? 0 : 4);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    INFO("the child's status " << status);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
}
