// The trace (px_trace_begin / px_trace_end, PLEXUS_TRACE): a training step
// of a small linear classifier, issued op by op through the C API on two
// devices of one plugin, must come out as Chrome trace JSON holding every op
// and copy it issued, the host's calls nested in their region and each
// device's runs in order, never overlapping, each after the call that queued
// it. Run on the CPU plugin and on the CUDA emulator's GPUs
// (PLEXUS_TRACE_TEST_PLUGIN names a GPU plugin's file).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "json_reader.hpp"
#include "plexus/plexus.h"

namespace {

using pxtest::JsonReader;
using pxtest::JsonValue;

std::string plugin_file() {
    const char* p = std::getenv("PLEXUS_TRACE_TEST_PLUGIN");
    return p && *p ? p : PLEXUS_CPU_PLUGIN_FILE;
}

// cpu(i), or gpu(i) of the plugin PLEXUS_TRACE_TEST_PLUGIN names (the emulator's).
px_device device(int index) {
    const char* p = std::getenv("PLEXUS_TRACE_TEST_PLUGIN");
    return px_device{p && *p ? PX_DEVICE_GPU : PX_DEVICE_CPU, index};
}

px_runtime* make_runtime() {
    const std::string file = plugin_file();
    const char* paths[] = {file.c_str()};
    px_runtime_options o{};
    o.struct_size = sizeof o;
    o.plugin_paths = paths;
    o.num_plugin_paths = 1;
    o.only_given_paths = 1;
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(&o, &rt) == PX_OK);
    int32_t n = 0;
    REQUIRE(px_runtime_device_count(rt, device(0).kind, &n) == PX_OK);
    REQUIRE(n >= 2);  // PLEXUS_CPU_DEVICES=2, or the emulator's two GPUs
    return rt;
}

std::string temp_path(const char* name) { return "/tmp/plexus-trace-test-" + std::to_string(getpid()) + "-" + name; }

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

px_tensor* upload(px_runtime* rt, px_dtype dtype, std::vector<int64_t> shape, const void* data, uint64_t bytes) {
    px_tensor* t = nullptr;
    REQUIRE(px_tensor_from_host(rt, device(0), dtype, int32_t(shape.size()), shape.data(), data, bytes, &t) == PX_OK);
    return t;
}

// A 512 x 512 matrix of 0.5 on device 0 and `count` products of it queued
// there (about 0.27 GFLOP each, still running when this returns), released
// at the end.
constexpr int64_t kSide = 512;
struct QueuedProducts {
    px_runtime* rt;
    px_tensor* a = nullptr;
    std::vector<px_tensor*> products;
    QueuedProducts(px_runtime* runtime, int count) : rt(runtime), products(size_t(count), nullptr) {
        const std::vector<float> values(size_t(kSide * kSide), 0.5f);
        a = upload(rt, PX_FLOAT32, {kSide, kSide}, values.data(), values.size() * 4);
        for (px_tensor*& p : products) REQUIRE(px_gemm(a, a, 0, 0, &p) == PX_OK);
    }
    ~QueuedProducts() {
        for (px_tensor* p : products) px_tensor_release(p);
        px_tensor_release(a);
    }
};

// One SGD step of logits = x w + b with a softmax cross-entropy loss, then
// the loss read back and w copied to the second device and added there:
// `ops` gets the op calls it makes, in order, `copies` how many copies.
// Returns w after the step.
std::vector<float> linear_step(px_runtime* rt, std::vector<std::string>& ops, int& copies) {
    std::vector<float> xs(32), ws(12, 0.25f), bs(3, 0.0f);  // x (8,4), w (4,3), b (3)
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = float(i % 7) / 7.0f - 0.5f;
    const int32_t labels[8] = {0, 1, 2, 0, 1, 2, 0, 1};
    px_tensor* x = upload(rt, PX_FLOAT32, {8, 4}, xs.data(), xs.size() * 4);
    px_tensor* w = upload(rt, PX_FLOAT32, {4, 3}, ws.data(), ws.size() * 4);
    px_tensor* b = upload(rt, PX_FLOAT32, {3}, bs.data(), bs.size() * 4);
    px_tensor* y = upload(rt, PX_INT32, {8}, labels, sizeof labels);
    copies = 4;
    REQUIRE(px_trace_region_begin(rt, "step") == PX_OK);
    px_tensor *xw = nullptr, *logits = nullptr, *loss = nullptr, *ones = nullptr, *dlogits = nullptr, *dw = nullptr,
              *db = nullptr, *total = nullptr;
    int64_t n = 8;
    REQUIRE(px_gemm(x, w, 0, 0, &xw) == PX_OK);
    REQUIRE(px_bias_add(xw, b, &logits) == PX_OK);
    REQUIRE(px_softmax_cross_entropy(logits, y, &loss) == PX_OK);
    REQUIRE(px_tensor_full(rt, device(0), PX_FLOAT32, 1, &n, 1.0, &ones) == PX_OK);
    REQUIRE(px_softmax_cross_entropy_backward(logits, y, ones, &dlogits) == PX_OK);
    REQUIRE(px_gemm(x, dlogits, 1, 0, &dw) == PX_OK);
    REQUIRE(px_bias_grad(dlogits, &db) == PX_OK);
    REQUIRE(px_sgd_update(w, dw, nullptr, 0.1, 0, 0, 1.0 / 8) == PX_OK);
    REQUIRE(px_sgd_update(b, db, nullptr, 0.1, 0, 0, 1.0 / 8) == PX_OK);
    REQUIRE(px_reduce(PX_OP_SUM, loss, 1, 0, 0, &total) == PX_OK);
    ops = {"gemm", "bias_add", "softmax_cross_entropy", "fill", "softmax_cross_entropy_backward", "gemm",
           "bias_grad", "sgd_update", "sgd_update", "sum"};
    float loss_value = 0;
    REQUIRE(px_tensor_to_host(total, &loss_value, sizeof loss_value) == PX_OK);
    ++copies;
    REQUIRE(px_trace_region_end(rt) == PX_OK);
    px_tensor *w1 = nullptr, *twice = nullptr;
    REQUIRE(px_tensor_copy_to(w, device(1), &w1) == PX_OK);
    ++copies;
    REQUIRE(px_binary(PX_OP_ADD, w1, w1, &twice) == PX_OK);
    ops.push_back("add");
    std::vector<float> out(12);
    REQUIRE(px_tensor_to_host(w, out.data(), out.size() * 4) == PX_OK);
    ++copies;
    for (px_tensor* t : {x, w, b, y, xw, logits, loss, ones, dlogits, dw, db, total, w1, twice}) px_tensor_release(t);
    return out;
}

struct Event {
    std::string ph, cat, name;
    int pid = 0, tid = 0;
    double ts = 0, dur = 0;
    const JsonValue* args = nullptr;
};

std::vector<Event> complete_events(const JsonValue& trace) {
    std::vector<Event> out;
    for (const JsonValue& e : trace.at("traceEvents").items) {
        if (e.at("ph").s != "X") continue;
        Event v;
        v.ph = e.at("ph").s;
        v.cat = e.at("cat").s;
        v.name = e.at("name").s;
        v.pid = int(e.at("pid").n);
        v.tid = int(e.at("tid").n);
        v.ts = e.at("ts").n;
        v.dur = e.at("dur").n;
        v.args = &e.at("args");
        CHECK(v.dur >= 0);
        out.push_back(v);
    }
    return out;
}

// Spans of one host thread either hold one another or do not meet.
void check_nested(std::vector<Event> spans) {
    std::sort(spans.begin(), spans.end(), [](const Event& a, const Event& b) {
        return a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur;
    });
    std::vector<double> open_ends;
    for (const Event& e : spans) {
        while (!open_ends.empty() && open_ends.back() <= e.ts) open_ends.pop_back();
        INFO(e.name << " at " << e.ts);
        if (!open_ends.empty()) CHECK(e.ts + e.dur <= open_ends.back() + 0.002);
        open_ends.push_back(e.ts + e.dur);
    }
}

}  // namespace

TEST_CASE("a traced step holds every op and copy issued, nested on the host and in order on each device", "[trace]") {
    px_runtime* rt = make_runtime();
    std::vector<std::string> ops;
    int copies = 0;
    const std::vector<float> untraced = linear_step(rt, ops, copies);
    const std::string path = temp_path("step.json");
    REQUIRE(px_trace_begin(rt, path.c_str()) == PX_OK);
    const std::vector<float> traced = linear_step(rt, ops, copies);
    REQUIRE(px_trace_end(rt) == PX_OK);
    CHECK(traced == untraced);  // a trace never changes results
    const JsonValue trace = JsonReader::parse(read_file(path));
    const std::vector<Event> events = complete_events(trace);

    std::vector<std::string> host_ops;
    std::map<uint64_t, double> queued_by_id;
    int host_copies = 0;
    const Event* region = nullptr;
    for (const Event& e : events) {
        if (e.pid != 0) continue;
        if (e.cat == "op") {
            host_ops.push_back(e.name);
            queued_by_id[uint64_t(e.args->at("id").n)] = e.ts;
        }
        host_copies += e.cat == "copy";
        if (e.cat == "region") region = &e;
    }
    CHECK(host_ops == ops);  // every op of the step, in the order issued
    CHECK(host_copies == copies);
    REQUIRE(region);
    CHECK(region->name == "step");
    int in_region = 0;
    for (const Event& e : events)
        if (e.pid == 0 && e.cat == "op" && e.ts >= region->ts && e.ts + e.dur <= region->ts + region->dur + 0.002) ++in_region;
    CHECK(in_region == 10);  // the step's ops, not the add after it
    std::map<int, std::vector<Event>> by_thread;
    for (const Event& e : events)
        if (e.pid == 0) by_thread[e.tid].push_back(e);
    for (auto& [tid, spans] : by_thread) check_nested(spans);

    // Each device: its runs in the order they ran, one after another, each
    // after its call queued it; every op call ran once.
    std::map<uint64_t, int> runs_by_id;
    std::map<int, int> runs_per_device;
    std::map<int, std::vector<Event>> by_device;
    for (const Event& e : events)
        if (e.pid > 0) by_device[e.pid].push_back(e);
    for (auto& [pid, runs] : by_device) {
        for (size_t i = 0; i < runs.size(); ++i) {
            const Event& r = runs[i];
            CHECK(r.cat == "run");
            if (i > 0) CHECK(runs[i - 1].ts + runs[i - 1].dur <= r.ts + 0.002);
            if (r.name != "copy" || r.args->has("id")) {
                const uint64_t id = uint64_t(r.args->at("id").n);
                ++runs_by_id[id];
                REQUIRE(queued_by_id.count(id));
                CHECK(r.args->at("queued_us").n <= r.ts);
                CHECK(queued_by_id[id] <= r.ts);
            }
            ++runs_per_device[pid];
        }
    }
    CHECK(runs_by_id.size() == queued_by_id.size());
    for (const auto& [id, n] : runs_by_id) CHECK(n == 1);
    CHECK(runs_per_device[1] >= 10 + 5);  // the step's ops and its uploads and download
    CHECK(runs_per_device[2] >= 2);       // the copy to the second device and the add

    // The summary beside it: a row per op, the longest first.
    const std::string summary = read_file(temp_path("step.summary.txt"));
    INFO(summary);
    CHECK(summary.find("Plexus trace: ") == 0);
    for (const char* op : {"gemm", "sgd_update", "softmax_cross_entropy_backward", "transfer", "add"})
        CHECK(summary.find(std::string("  ") + op + "\n") != std::string::npos);
    // Transfers between host and devices are not the copy op's row (one "copy" row had held both).
    CHECK(summary.find("  copy\n") == std::string::npos);
    std::remove(path.c_str());
    std::remove(temp_path("step.summary.txt").c_str());
    px_runtime_destroy(rt);
}

TEST_CASE("work queued before the trace began is not in it, and a relative path is the folder current at its beginning",
          "[trace]") {
    px_runtime* rt = make_runtime();
    auto queued = std::make_unique<QueuedProducts>(rt, 8);  // about 2 GFLOP, still running
    px_tensor* a = queued->a;
    const std::vector<float> early(1000, 1.0f), late(3000, 2.0f);
    px_tensor* queued_before = upload(rt, PX_FLOAT32, {1000}, early.data(), early.size() * 4);  // behind the gemms
    char cwd[4096];
    REQUIRE(getcwd(cwd, sizeof cwd));
    const std::string folder = temp_path("folder");
    REQUIRE(system(("mkdir -p " + folder).c_str()) == 0);
    REQUIRE(chdir(folder.c_str()) == 0);
    REQUIRE(px_trace_begin(rt, "relative.json") == PX_OK);
    REQUIRE(chdir(cwd) == 0);
    px_tensor *product = nullptr, *sum = nullptr;
    REQUIRE(px_gemm(a, a, 0, 0, &product) == PX_OK);
    px_tensor* queued_behind = upload(rt, PX_FLOAT32, {3000}, late.data(), late.size() * 4);  // runs after the gemm
    REQUIRE(px_binary(PX_OP_ADD, a, a, &sum) == PX_OK);
    std::vector<float> back(size_t(kSide * kSide));
    REQUIRE(px_tensor_to_host(sum, back.data(), back.size() * 4) == PX_OK);
    REQUIRE(px_trace_end(rt) == PX_OK);
    CHECK_FALSE(exists("relative.json"));
    const std::string path = folder + "/relative.json";
    const JsonValue trace = JsonReader::parse(read_file(path));
    std::map<std::string, int> calls, runs;
    std::vector<double> copied;  // the bytes of each copy that ran on device 0
    double first_call_us = 1e300;
    for (const Event& e : complete_events(trace)) {
        if (e.pid == 0 && (e.cat == "op" || e.cat == "copy")) ++calls[e.name], first_call_us = std::min(first_call_us, e.ts);
        if (e.pid != 1) continue;
        ++runs[e.name];
        if (e.name == "copy") copied.push_back(e.args->at("bytes").n);
    }
    CHECK(calls["gemm"] == 1);
    CHECK(runs["gemm"] == 1);  // not the 8 queued before the trace began
    // Nor their time: the trace starts once begin's wait for them is over (it
    // had started before, so its first call came the gemms' run time late).
    CHECK(first_call_us < 5000);
    CHECK(runs["add"] == 1);
    CHECK(calls["copy"] == 2);
    // The upload queued behind the traced gemm and the download, not the upload queued before.
    CHECK(copied == std::vector<double>{3000 * 4, double(kSide * kSide * 4)});
    const std::string summary = read_file(folder + "/relative.summary.txt");
    INFO(summary);
    CHECK(summary.find("  add\n") != std::string::npos);
    queued.reset();
    for (px_tensor* t : {queued_before, product, queued_behind, sum}) px_tensor_release(t);
    std::remove(path.c_str());
    std::remove((folder + "/relative.summary.txt").c_str());
    rmdir(folder.c_str());
    px_runtime_destroy(rt);
}

TEST_CASE("a device failure the trace's end waits past is kept for the application's next wait", "[trace]") {
    px_runtime* rt = make_runtime();
    const std::vector<int32_t> ones{1, 2, 3}, zeros{1, 0, 3};
    px_tensor* a = upload(rt, PX_INT32, {3}, ones.data(), 12);
    px_tensor* b = upload(rt, PX_INT32, {3}, zeros.data(), 12);
    const std::string path = temp_path("failure.json");
    REQUIRE(px_trace_begin(rt, path.c_str()) == PX_OK);
    px_tensor* q = nullptr;
    REQUIRE(px_binary(PX_OP_DIV, a, b, &q) == PX_OK);  // fails on the device: an integer division by zero
    // Tracing never changes results: the end succeeds (it had reported the
    // failure as its own and used it up, so the quotient read as if whole).
    CHECK(px_trace_end(rt) == PX_OK);
    std::vector<int32_t> back(3);
    CHECK(px_tensor_to_host(q, back.data(), 12) == PX_ERROR_DEVICE);
    CHECK(std::string(px_last_error()).find("div") != std::string::npos);
    CHECK(px_tensor_to_host(q, back.data(), 12) == PX_OK);  // reported once
    // A copy to another device reports it too (it had copied the output as if whole).
    REQUIRE(px_trace_begin(rt, path.c_str()) == PX_OK);
    px_tensor *q2 = nullptr, *moved = nullptr, *q3 = nullptr;
    REQUIRE(px_binary(PX_OP_DIV, a, b, &q2) == PX_OK);
    CHECK(px_trace_end(rt) == PX_OK);
    CHECK(px_tensor_copy_to(q2, device(1), &moved) == PX_ERROR_DEVICE);
    CHECK(std::string(px_last_error()).find("the copy was not made") != std::string::npos);
    CHECK(moved == nullptr);
    // And a wait reports it once the work queued since has run, naming a later failure after it.
    REQUIRE(px_trace_begin(rt, path.c_str()) == PX_OK);
    REQUIRE(px_binary(PX_OP_DIV, a, b, &q3) == PX_OK);
    CHECK(px_trace_end(rt) == PX_OK);
    px_tensor* q4 = nullptr;
    REQUIRE(px_binary(PX_OP_DIV, b, b, &q4) == PX_OK);  // fails too, after the trace
    CHECK(px_runtime_synchronize(rt, device(0)) == PX_ERROR_DEVICE);
    const std::string said = px_last_error();
    CHECK(said.find("then, since: ") != std::string::npos);
    CHECK(px_runtime_synchronize(rt, device(0)) == PX_OK);
    for (px_tensor* t : {a, b, q, q2, q3, q4}) px_tensor_release(t);
    std::remove(path.c_str());
    std::remove(temp_path("failure.summary.txt").c_str());
    px_runtime_destroy(rt);
}

// Work that keeps device 0 busy for a while (about 4 GFLOP), then an
// integer division by zero that fails on the device behind it.
struct BusyThenFailing {
    QueuedProducts busy;
    std::vector<px_tensor*> tensors;
    explicit BusyThenFailing(px_runtime* rt) : busy(rt, 16) {
        const std::vector<int32_t> ones{1, 2, 3}, zeros{1, 0, 3};
        px_tensor* p = upload(rt, PX_INT32, {3}, ones.data(), 12);
        px_tensor* q = upload(rt, PX_INT32, {3}, zeros.data(), 12);
        px_tensor* quotient = nullptr;
        REQUIRE(px_binary(PX_OP_DIV, p, q, &quotient) == PX_OK);
        tensors = {p, q, quotient};
    }
    ~BusyThenFailing() {
        for (px_tensor* t : tensors) px_tensor_release(t);
    }
};

// Whether the calling thread's last error is the division's failure (not a
// timed wait giving up).
bool division_failed(px_status st) {
    return st == PX_ERROR_DEVICE && std::string(px_last_error()).find("div") != std::string::npos;
}

TEST_CASE("a device failure that concurrent waits share is reported to exactly one of them", "[trace]") {
    px_runtime* rt = make_runtime();
    for (int round = 0; round < 3; ++round) {
        BusyThenFailing work(rt);
        std::atomic<int> reported{0}, other{0};
        std::vector<std::thread> waiters;
        for (int k = 0; k < 4; ++k)
            waiters.emplace_back([&] {
                const px_status st = px_runtime_synchronize_timeout(rt, device(0), 60.0);
                if (division_failed(st)) ++reported;
                else if (st != PX_OK) ++other;
            });
        for (std::thread& t : waiters) t.join();
        // The waiters that joined one pending wait had each reported its failure.
        CHECK(reported == 1);
        CHECK(other == 0);
        CHECK(px_runtime_synchronize(rt, device(0)) == PX_OK);
    }
    px_runtime_destroy(rt);
}

TEST_CASE("a failure the trace's end keeps is reported once beside a thread polling with timed waits", "[trace]") {
    px_runtime* rt = make_runtime();
    const std::string path = temp_path("polled.json");
    for (int round = 0; round < 10; ++round) {
        REQUIRE(px_trace_begin(rt, path.c_str()) == PX_OK);
        BusyThenFailing work(rt);
        std::atomic<bool> ended{false};
        std::atomic<int> reported{0};
        std::thread poller([&] {
            // Polls until a wait after the trace's end comes back whole.
            for (;;) {
                const bool after_end = ended;
                const px_status st = px_runtime_synchronize_timeout(rt, device(0), 0.001);
                if (division_failed(st)) ++reported;
                if (st == PX_OK && after_end) return;
            }
        });
        CHECK(px_trace_end(rt) == PX_OK);
        ended = true;
        poller.join();
        if (division_failed(px_runtime_synchronize(rt, device(0)))) ++reported;
        // A timed wait's new pending wait had dropped the kept failure: none reported it.
        CHECK(reported == 1);
    }
    std::remove(path.c_str());
    std::remove(temp_path("polled.summary.txt").c_str());
    px_runtime_destroy(rt);
}

TEST_CASE("a call another thread queues during the trace's beginning is in the trace at a time after its start",
          "[trace]") {
    px_runtime* rt = make_runtime();
    auto queued = std::make_unique<QueuedProducts>(rt, 48);  // begin waits for them
    px_tensor* a = queued->a;
    const std::string path = temp_path("during.json");
    std::thread beginning([&] { CHECK(px_trace_begin(rt, path.c_str()) == PX_OK); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // into that wait
    px_tensor* sum = nullptr;
    REQUIRE(px_binary(PX_OP_ADD, a, a, &sum) == PX_OK);
    beginning.join();
    REQUIRE(px_runtime_synchronize(rt, device(0)) == PX_OK);
    REQUIRE(px_trace_end(rt) == PX_OK);
    int adds = 0;
    for (const Event& e : complete_events(JsonReader::parse(read_file(path)))) {
        INFO(e.cat << " " << e.name << " at " << e.ts);
        CHECK(e.ts >= 0);  // the add's call had come before the start the trace's wait had moved on
        adds += e.pid == 0 && e.name == "add";
    }
    CHECK(adds == 1);
    queued.reset();
    px_tensor_release(sum);
    std::remove(path.c_str());
    std::remove(temp_path("during.summary.txt").c_str());
    px_runtime_destroy(rt);
}

TEST_CASE("without a trace nothing is written, and regions are no-ops", "[trace]") {
    px_runtime* rt = make_runtime();
    REQUIRE(px_trace_region_begin(rt, "untraced") == PX_OK);
    std::vector<std::string> ops;
    int copies = 0;
    linear_step(rt, ops, copies);
    REQUIRE(px_trace_region_end(rt) == PX_OK);
    CHECK(px_trace_end(rt) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(px_last_error()).find("no trace of this runtime is running") != std::string::npos);
    const std::string path = temp_path("never.json");
    CHECK_FALSE(exists(path));
    px_runtime_destroy(rt);
}

TEST_CASE("a trace that cannot be written is an error naming the path", "[trace]") {
    px_runtime* rt = make_runtime();
    CHECK(px_trace_begin(rt, "/nonexistent-folder/trace.json") == PX_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(px_last_error()).find("cannot write the trace to '/nonexistent-folder/trace.json': No such file or directory") !=
          std::string::npos);
    {  // A relative path where the current folder is gone: nothing to resolve it against.
        char cwd[4096];
        REQUIRE(getcwd(cwd, sizeof cwd));
        const std::string gone = temp_path("gone");
        REQUIRE(mkdir(gone.c_str(), 0700) == 0);
        REQUIRE(chdir(gone.c_str()) == 0);
        REQUIRE(rmdir(gone.c_str()) == 0);
        CHECK(px_trace_begin(rt, "relative.json") == PX_ERROR_INVALID_ARGUMENT);
        REQUIRE(chdir(cwd) == 0);
        CHECK(std::string(px_last_error()).find("cannot write the trace to 'relative.json'") != std::string::npos);
    }
    CHECK(px_trace_begin(rt, "") == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_trace_begin(rt, nullptr) == PX_ERROR_INVALID_ARGUMENT);
    const std::string path = temp_path("twice.json");
    REQUIRE(px_trace_begin(rt, path.c_str()) == PX_OK);
    CHECK(px_trace_begin(rt, path.c_str()) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(px_last_error()).find("already running") != std::string::npos);
    REQUIRE(px_trace_end(rt) == PX_OK);
    CHECK(JsonReader::parse(read_file(path)).at("traceEvents").kind == JsonValue::array);  // empty, still a trace
    std::remove(path.c_str());
    std::remove(temp_path("twice.summary.txt").c_str());
    px_runtime_destroy(rt);
}

TEST_CASE("PLEXUS_TRACE traces the first runtime until it is destroyed", "[trace]") {
    const std::string path = temp_path("env.json");
    setenv("PLEXUS_TRACE", path.c_str(), 1);
    px_runtime* rt = make_runtime();
    unsetenv("PLEXUS_TRACE");
    std::vector<std::string> ops;
    int copies = 0;
    linear_step(rt, ops, copies);
    CHECK(read_file(path).empty());  // written when the runtime goes
    CHECK(px_trace_begin(rt, temp_path("inner.json").c_str()) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(px_last_error()).find("PLEXUS_TRACE started it, and it runs until the runtime ends") !=
          std::string::npos);  // not "end it first (px_trace_end)", which a Python user has no way to
    px_runtime_destroy(rt);
    const JsonValue trace = JsonReader::parse(read_file(path));
    int op_calls = 0;
    for (const Event& e : complete_events(trace)) op_calls += e.pid == 0 && e.cat == "op";
    CHECK(op_calls == int(ops.size()));
    std::remove(path.c_str());
    std::remove(temp_path("env.summary.txt").c_str());
}

TEST_CASE("PLEXUS_TRACE naming a path that cannot be written fails the runtime, naming it", "[trace]") {
    setenv("PLEXUS_TRACE", "/nonexistent-folder/env.json", 1);
    const std::string file = plugin_file();
    const char* paths[] = {file.c_str()};
    px_runtime_options o{sizeof o, paths, 1, 1, 0};
    px_runtime* rt = nullptr;
    CHECK(px_runtime_create(&o, &rt) == PX_ERROR_INVALID_ARGUMENT);
    unsetenv("PLEXUS_TRACE");
    CHECK(std::string(px_last_error()).find("PLEXUS_TRACE: cannot write the trace to '/nonexistent-folder/env.json'") !=
          std::string::npos);
}
