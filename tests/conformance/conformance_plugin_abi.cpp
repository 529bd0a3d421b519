// Conformance at the plugin boundary: the plugin that provides the device
// under test, opened again with dlopen and called through its table as any
// host would: the table, NULL and out-of-range arguments, messages that
// respect err->struct_size, memory figures and out-of-memory, and the
// optional all-reduce and process groups.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "conformance.hpp"
#include "opened_plugin.hpp"
#include "plexus/op_check.h"
#include "plexus/op_rows.h"

using namespace plexus;
using pxconf::Opened;
using pxconf::vector_desc;

// `call` must fail and leave a message in p.err.
#define PX_REFUSED(p, call)           \
    do {                              \
        REQUIRE((call) != PX_OK);     \
        (p).require_message();        \
    } while (0)

TEST_CASE("the table: versions, name and every ABI 1.0 slot", "[conformance][abi][R1]") {
    Opened p;
    REQUIRE(p.api->struct_size >= offsetof(px_plugin_api, synchronize) + sizeof p.api->synchronize);
    REQUIRE(p.api->abi_major == PX_PLUGIN_ABI_MAJOR);
    REQUIRE(p.api->name);
    REQUIRE(std::strlen(p.api->name) > 0);
    REQUIRE(p.api->version);
    REQUIRE(p.api->create);
    REQUIRE(p.api->destroy);
    REQUIRE(p.api->device_count);
    REQUIRE(p.api->device_info);
    REQUIRE(p.api->supports);
    REQUIRE(p.api->buffer_alloc);
    REQUIRE(p.api->buffer_free);
    REQUIRE(p.api->copy_from_host);
    REQUIRE(p.api->copy_to_host);
    REQUIRE(p.api->copy_device);
    REQUIRE(p.api->execute);
    REQUIRE(p.api->synchronize);
}

TEST_CASE("NULL and out-of-range arguments are refused with a message", "[conformance][abi][R2]") {
    Opened p;
    int32_t count = 0;
    REQUIRE(p.api->device_count(p.ctx, &count, &p.err) == PX_OK);
    REQUIRE(count > p.device);
    px_device_info info{};
    info.struct_size = sizeof info;
    px_plugin_buffer* buf = nullptr;

    PX_REFUSED(p, p.api->create(nullptr, &p.err));
    PX_REFUSED(p, p.api->device_count(p.ctx, nullptr, &p.err));
    for (int32_t bad : {-1, count, 1 << 30}) {
        INFO("device index " << bad);
        PX_REFUSED(p, p.api->device_info(p.ctx, bad, &info, &p.err));
        PX_REFUSED(p, p.api->buffer_alloc(p.ctx, bad, 16, &buf, &p.err));
        PX_REFUSED(p, p.api->synchronize(p.ctx, bad, &p.err));
        REQUIRE(p.api->supports(p.ctx, bad, PX_OP_ADD, PX_FLOAT32) == 0);
    }
    PX_REFUSED(p, p.api->device_info(p.ctx, p.device, nullptr, &p.err));
    PX_REFUSED(p, p.api->buffer_alloc(p.ctx, p.device, 16, nullptr, &p.err));
    PX_REFUSED(p, p.api->buffer_free(p.ctx, nullptr, &p.err));
    PX_REFUSED(p, p.api->execute(p.ctx, nullptr, &p.err));
    // Unknown ops and dtypes are never supported.
    REQUIRE(p.api->supports(p.ctx, p.device, 9999, PX_FLOAT32) == 0);
    REQUIRE(p.api->supports(p.ctx, p.device, -1, PX_FLOAT32) == 0);
    REQUIRE(p.api->supports(p.ctx, p.device, PX_OP_ADD, 99) == 0);

    // Copies: NULL host pointers and ranges past the buffer.
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, 16, &buf, &p.err) == PX_OK);
    char host[32] = {0};
    PX_REFUSED(p, p.api->copy_from_host(p.ctx, buf, 0, nullptr, 16, &p.err));
    PX_REFUSED(p, p.api->copy_from_host(p.ctx, buf, 8, host, 16, &p.err));
    PX_REFUSED(p, p.api->copy_from_host(p.ctx, buf, UINT64_MAX, host, 2, &p.err));
    PX_REFUSED(p, p.api->copy_to_host(p.ctx, buf, 0, nullptr, 16, &p.err));
    PX_REFUSED(p, p.api->copy_to_host(p.ctx, buf, 1, host, 16, &p.err));
    PX_REFUSED(p, p.api->copy_device(p.ctx, buf, 0, nullptr, 0, 16, &p.err));
    PX_REFUSED(p, p.api->copy_device(p.ctx, buf, 0, buf, 4, 16, &p.err));
    // A caller's error struct too old to hold a message is left alone, and
    // a NULL one is no crash.
    // Every entry point's refusal, not device_info's alone (a plugin writing
    // through any other had passed).
    px_plugin_error tiny{sizeof(uint32_t), {0}};
    const auto untouched = [&](const char* call, px_status status) {
        INFO(call << " with an error struct of 4 bytes");
        REQUIRE(status != PX_OK);
        for (char c : tiny.message) REQUIRE(c == 'Z');
    };
    std::memset(tiny.message, 'Z', sizeof tiny.message);
    untouched("device_info", p.api->device_info(p.ctx, -1, &info, &tiny));
    px_plugin_buffer* unused = nullptr;
    untouched("buffer_alloc", p.api->buffer_alloc(p.ctx, -1, 16, &unused, &tiny));
    untouched("synchronize", p.api->synchronize(p.ctx, -1, &tiny));
    untouched("copy_from_host", p.api->copy_from_host(p.ctx, buf, 8, host, 16, &tiny));
    untouched("copy_to_host", p.api->copy_to_host(p.ctx, buf, 1, host, 16, &tiny));
    untouched("copy_device", p.api->copy_device(p.ctx, buf, 0, buf, 4, 16, &tiny));
    untouched("execute", p.api->execute(p.ctx, nullptr, &tiny));
    REQUIRE(p.api->device_info(p.ctx, -1, &info, nullptr) != PX_OK);
    REQUIRE(p.api->buffer_free(p.ctx, buf, &p.err) == PX_OK);
    REQUIRE(p.api->synchronize(p.ctx, p.device, &p.err) == PX_OK);
}

// Each assertion is filed under the clause it checks: a device's own
// figures (R4) or what two contexts share (R3), not both.
TEST_CASE("contexts are independent and devices describe themselves", "[conformance][abi][R3][R4]") {
    Opened a, b;
    px_device_info info{};
    info.struct_size = sizeof info;
    const auto figures_hold = [&info] {
        const pxconf::Clause r4("R4");
        REQUIRE(info.memory_free <= info.memory_total);
        REQUIRE(info.memory_in_use <= info.memory_reserved);
        REQUIRE(info.memory_in_use <= info.memory_peak);
    };
    uint64_t base = 0;
    {
        const pxconf::Clause r4("R4");
        REQUIRE(a.api->device_info(a.ctx, a.device, &info, &a.err) == PX_OK);
        REQUIRE(px_device_kind_name(info.kind));
        REQUIRE(std::memchr(info.name, 0, sizeof info.name));
        REQUIRE(std::strlen(info.name) > 0);
        REQUIRE(info.memory_total > 0);
        figures_hold();
        base = info.memory_in_use;
    }
    // A buffer of one context is in use there, not in the other.
    px_plugin_buffer* buf = nullptr;
    REQUIRE(a.api->buffer_alloc(a.ctx, a.device, 1 << 20, &buf, &a.err) == PX_OK);
    {
        const pxconf::Clause r4("R4");
        REQUIRE(a.api->device_info(a.ctx, a.device, &info, &a.err) == PX_OK);
        REQUIRE(info.memory_in_use >= base + (1 << 20));
        figures_hold();
    }
    px_device_info other{};
    other.struct_size = sizeof other;
    const pxconf::Clause r3("R3");
    REQUIRE(b.api->device_info(b.ctx, b.device, &other, &b.err) == PX_OK);
    REQUIRE(other.memory_in_use < (1 << 20));
    REQUIRE(a.api->buffer_free(a.ctx, buf, &a.err) == PX_OK);
    REQUIRE(a.api->synchronize(a.ctx, a.device, &a.err) == PX_OK);
    REQUIRE(a.api->device_info(a.ctx, a.device, &info, &a.err) == PX_OK);
    REQUIRE(info.memory_in_use == base);
}

TEST_CASE("device_info fills an older, smaller px_device_info as far as its struct_size reaches", "[conformance][abi][R4]") {
    // plugin.h: a callee writes into a caller's struct only as far as the
    // caller's struct_size reaches, and such a caller is served, not refused.
    Opened p;
    px_device_info older;
    std::memset(&older, 0x5a, sizeof older);
    older.struct_size = uint32_t(offsetof(px_device_info, memory_free));  // a caller that knows memory_total last
    REQUIRE(p.api->device_info(p.ctx, p.device, &older, &p.err) == PX_OK);
    REQUIRE(older.struct_size == offsetof(px_device_info, memory_free));
    REQUIRE(px_device_kind_name(older.kind));
    REQUIRE(older.memory_total > 0);
    REQUIRE(older.memory_free == 0x5a5a5a5a5a5a5a5aull);  // past the caller's struct: untouched
    REQUIRE(older.memory_peak == 0x5a5a5a5a5a5a5a5aull);
}

TEST_CASE("buffers: zero bytes, out of memory is an error, and the device stays usable", "[conformance][abi][R6]") {
    Opened p;
    px_plugin_buffer *empty = nullptr, *huge = nullptr, *small = nullptr;
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, 0, &empty, &p.err) == PX_OK);
    REQUIRE(empty);
    px_device_info info{};
    info.struct_size = sizeof info;
    REQUIRE(p.api->device_info(p.ctx, p.device, &info, &p.err) == PX_OK);
    // Just over what it says it has (no wrap to 0 bytes for a device claiming UINT64_MAX), and far beyond.
    const uint64_t over = info.memory_total == UINT64_MAX ? UINT64_MAX : info.memory_total + 1;
    for (uint64_t bytes : {over, uint64_t(1) << 62, UINT64_MAX}) {
        INFO("asking for " << bytes << " bytes");
        REQUIRE(p.api->buffer_alloc(p.ctx, p.device, bytes, &huge, &p.err) == PX_ERROR_OUT_OF_MEMORY);
        REQUIRE(huge == nullptr);
        p.require_message();
    }
    const float v[4] = {1, 2, 3, 4};
    float back[4] = {0};
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, sizeof v, &small, &p.err) == PX_OK);
    REQUIRE(p.api->copy_from_host(p.ctx, small, 0, v, sizeof v, &p.err) == PX_OK);
    REQUIRE(p.api->copy_to_host(p.ctx, small, 0, back, sizeof back, &p.err) == PX_OK);
    REQUIRE(std::memcmp(v, back, sizeof v) == 0);
    REQUIRE(p.api->buffer_free(p.ctx, small, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_free(p.ctx, empty, &p.err) == PX_OK);
    REQUIRE(p.api->synchronize(p.ctx, p.device, &p.err) == PX_OK);
}

TEST_CASE("an op the plugin does not support is refused by the plugin too", "[conformance][abi][R5]") {
    Opened p;
    px_plugin_buffer* buf = nullptr;
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, 16, &buf, &p.err) == PX_OK);
    px_tensor_desc out{};
    out.struct_size = sizeof out;
    out.dtype = PX_FLOAT32;
    out.buffer = buf;
    out.ndim = 1;
    out.shape[0] = 4;
    out.strides[0] = 1;
    px_op_call call{sizeof(px_op_call), 9999, p.device, 0, nullptr, 1, &out, nullptr};
    REQUIRE(p.api->execute(p.ctx, &call, &p.err) == PX_ERROR_UNSUPPORTED);
    p.require_message();
    REQUIRE(p.api->buffer_free(p.ctx, buf, &p.err) == PX_OK);
    REQUIRE(p.api->synchronize(p.ctx, p.device, &p.err) == PX_OK);
}

TEST_CASE("copy_device within one device, at offsets", "[conformance][abi][R7]") {
    Opened p;
    const float v[6] = {1, 2, 3, 4, 5, 6};
    px_plugin_buffer *a = nullptr, *b = nullptr;
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, sizeof v, &a, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, sizeof v, &b, &p.err) == PX_OK);
    REQUIRE(p.api->copy_from_host(p.ctx, a, 0, v, sizeof v, &p.err) == PX_OK);
    const float zero[6] = {0, 0, 0, 0, 0, 0};
    REQUIRE(p.api->copy_from_host(p.ctx, b, 0, zero, sizeof zero, &p.err) == PX_OK);
    // Values 2..4 of a to places 3..5 of b, queued: reading waits for it.
    REQUIRE(p.api->copy_device(p.ctx, a, sizeof(float), b, 3 * sizeof(float), 3 * sizeof(float), &p.err) == PX_OK);
    float got[6];
    REQUIRE(p.api->copy_to_host(p.ctx, b, 0, got, sizeof got, &p.err) == PX_OK);
    const float want[6] = {0, 0, 0, 2, 3, 4};
    REQUIRE(std::memcmp(got, want, sizeof got) == 0);
    REQUIRE(p.api->copy_device(p.ctx, a, 0, b, 0, 0, &p.err) == PX_OK);  // nothing to copy
    REQUIRE(p.api->buffer_free(p.ctx, a, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_free(p.ctx, b, &p.err) == PX_OK);
    REQUIRE(p.api->synchronize(p.ctx, p.device, &p.err) == PX_OK);
}

// R7 across devices, at the boundary (the host's two-device checks need
// ops a small plugin may not have): a plugin with two devices copies
// between them at offsets, after the work queued on both, either way.
TEST_CASE("copy_device between two devices of the plugin, at offsets, after both devices' work",
          "[conformance][abi][R7]") {
    Opened p;
    int32_t count = 0;
    REQUIRE(p.api->device_count(p.ctx, &count, &p.err) == PX_OK);
    if (count < 2) return;  // one device: nothing to cross
    const int32_t other = p.device == 0 ? 1 : 0;
    const float v[6] = {1, 2, 3, 4, 5, 6}, zero[6] = {0, 0, 0, 0, 0, 0};
    px_plugin_buffer *a = nullptr, *b = nullptr;
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, sizeof v, &a, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_alloc(p.ctx, other, sizeof v, &b, &p.err) == PX_OK);
    REQUIRE(p.api->copy_from_host(p.ctx, a, 0, v, sizeof v, &p.err) == PX_OK);       // queued on one device
    REQUIRE(p.api->copy_from_host(p.ctx, b, 0, zero, sizeof zero, &p.err) == PX_OK); // and on the other
    REQUIRE(p.api->copy_device(p.ctx, a, sizeof(float), b, 3 * sizeof(float), 3 * sizeof(float), &p.err) == PX_OK);
    float got[6];
    REQUIRE(p.api->copy_to_host(p.ctx, b, 0, got, sizeof got, &p.err) == PX_OK);
    const float there[6] = {0, 0, 0, 2, 3, 4};
    REQUIRE(std::memcmp(got, there, sizeof got) == 0);  // a copy that copies nothing had passed every check
    REQUIRE(p.api->copy_device(p.ctx, b, 3 * sizeof(float), a, 0, 2 * sizeof(float), &p.err) == PX_OK);  // back
    REQUIRE(p.api->copy_to_host(p.ctx, a, 0, got, sizeof got, &p.err) == PX_OK);
    const float back[6] = {2, 3, 3, 4, 5, 6};
    REQUIRE(std::memcmp(got, back, sizeof got) == 0);
    REQUIRE(p.api->buffer_free(p.ctx, a, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_free(p.ctx, b, &p.err) == PX_OK);
    REQUIRE(p.api->synchronize(p.ctx, p.device, &p.err) == PX_OK);
    REQUIRE(p.api->synchronize(p.ctx, other, &p.err) == PX_OK);
}

// R3: a forked child has only the thread that forked; a plugin's own threads,
// and any lock one of them held, stayed in the parent. The parent's context
// must answer every call in the child (refusing the work, or doing it) and
// never wait for what it does not have, up to destroy.
TEST_CASE("in a forked child the parent's context answers every call and never hangs", "[conformance][abi][R3]") {
    Opened p;
    std::vector<float> values(1 << 18, 1.0f);
    const uint64_t bytes = values.size() * sizeof(float);
    px_plugin_buffer *a = nullptr, *b = nullptr;
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, bytes, &a, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, bytes, &b, &p.err) == PX_OK);
    REQUIRE(p.api->copy_from_host(p.ctx, a, 0, values.data(), bytes, &p.err) == PX_OK);
    REQUIRE(p.api->copy_device(p.ctx, a, 0, b, 0, bytes, &p.err) == PX_OK);  // queued work at the fork
    std::fflush(nullptr);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {  // each call may fail; each must return
        alarm(20);
        px_plugin_error e{sizeof(px_plugin_error), {0}};
        float got[4];
        px_plugin_buffer* c = nullptr;
        px_device_info info{};
        info.struct_size = sizeof info;
        p.api->synchronize(p.ctx, p.device, &e);
        p.api->copy_to_host(p.ctx, b, 0, got, sizeof got, &e);
        p.api->copy_from_host(p.ctx, a, 0, got, sizeof got, &e);
        p.api->copy_device(p.ctx, a, 0, b, 0, sizeof got, &e);
        const px_tensor_desc in = vector_desc(a, PX_FLOAT32, 4), out = vector_desc(b, PX_FLOAT32, 4);
        const px_op_call copy{sizeof(px_op_call), PX_OP_COPY, p.device, 1, &in, 1, &out, nullptr};
        p.api->execute(p.ctx, &copy, &e);  // an op on the parent's device
        p.api->synchronize(p.ctx, p.device, &e);
        if (p.api->trace_enable) {  // ABI 1.8's slots, when offered
            p.api->trace_enable(p.ctx, p.device, 1, &e);
            px_trace_span spans[4] = {};
            for (px_trace_span& s : spans) s.struct_size = sizeof s;
            int32_t taken = 0;
            p.api->trace_take(p.ctx, p.device, spans, 4, &taken, &e);
        }
        p.api->device_info(p.ctx, p.device, &info, &e);
        if (p.api->buffer_alloc(p.ctx, p.device, 64, &c, &e) == PX_OK) p.api->buffer_free(p.ctx, c, &e);
        p.api->buffer_free(p.ctx, a, &e);
        try {
            p.api->destroy(p.ctx);
        } catch (const pxconf::Escaped&) {  // not this check's to file: every check's ~Opened meets it
            _exit(3);
        }
        _exit(0);
    }
    int status = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (waitpid(pid, &status, WNOHANG) != pid) {
        if (std::chrono::steady_clock::now() > until) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    INFO("the child " << (WIFSIGNALED(status) ? "was ended by signal " + std::to_string(WTERMSIG(status)) +
                                                     " (SIGALRM or SIGKILL: it hung)"
                                               : "exited with " + std::to_string(WEXITSTATUS(status))));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
        PX_FAIL_CHECK_UNDER("R2", pxconf::kDestroyThrew, "in the forked child, destroy() let a C++ exception escape");
    else
        CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    REQUIRE(p.api->synchronize(p.ctx, p.device, &p.err) == PX_OK);  // the parent's context goes on
    REQUIRE(p.api->buffer_free(p.ctx, a, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_free(p.ctx, b, &p.err) == PX_OK);
}

// Called directly, as the host never calls it (the frontend's arange is
// 1-D and in range): a 2-D output is filled in row-major order and nothing
// after it is written, and values out of the dtype's range saturate as a
// cast's do (a plain conversion is undefined there).
TEST_CASE("arange fills a contiguous output of any rank and converts as a cast does", "[conformance][abi][R14]") {
    PX_NEEDS({PX_OP_ARANGE, DType::int32}, {PX_OP_ARANGE, DType::uint8});
    Opened p;
    px_plugin_buffer* buf = nullptr;
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, 64, &buf, &p.err) == PX_OK);
    const std::vector<unsigned char> sentinel(64, 0x5A);
    REQUIRE(p.api->copy_from_host(p.ctx, buf, 0, sentinel.data(), 64, &p.err) == PX_OK);
    auto arange = [&](px_tensor_desc out, double start, double step) {
        const px_arange_attrs attrs{sizeof attrs, start, step};
        const px_op_call call{sizeof call, PX_OP_ARANGE, p.device, 0, nullptr, 1, &out, &attrs};
        const px_status executed = p.api->execute(p.ctx, &call, &p.err);
        INFO(p.said());
        REQUIRE(executed == PX_OK);
        REQUIRE(p.api->synchronize(p.ctx, p.device, &p.err) == PX_OK);
    };
    px_tensor_desc grid = vector_desc(buf, PX_INT32, 6);
    grid.ndim = 2;
    grid.shape[0] = 2, grid.shape[1] = 3;
    grid.strides[0] = 3, grid.strides[1] = 1;
    arange(grid, 2147483645.0, 1.0);
    std::vector<unsigned char> got(64);
    REQUIRE(p.api->copy_to_host(p.ctx, buf, 0, got.data(), 64, &p.err) == PX_OK);
    int32_t values[6];
    std::memcpy(values, got.data(), sizeof values);
    CHECK(std::vector<int32_t>(values, values + 6) ==
          std::vector<int32_t>{2147483645, 2147483646, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX});
    CHECK(std::vector<unsigned char>(got.begin() + 24, got.end()) == std::vector<unsigned char>(40, 0x5A));
    px_tensor_desc bytes = vector_desc(buf, PX_UINT8, 4);
    bytes.offset = 32;
    arange(bytes, -3.0, 100.0);
    REQUIRE(p.api->copy_to_host(p.ctx, buf, 0, got.data(), 64, &p.err) == PX_OK);
    CHECK(std::vector<unsigned char>(got.begin() + 32, got.begin() + 36) == std::vector<unsigned char>{0, 97, 197, 255});
    CHECK(std::vector<unsigned char>(got.begin() + 36, got.end()) == std::vector<unsigned char>(28, 0x5A));
    REQUIRE(p.api->buffer_free(p.ctx, buf, &p.err) == PX_OK);
}

// COPY is mandatory (R5): the host copies with it within a device (copyto
// on the same device, transposes, stepped slices, concat), so a device
// without it cannot hold the seeds' semantics. Its absence fails here,
// once; the checks below that call it directly are then skipped.
TEST_CASE("copy is offered on every dtype", "[conformance][abi][R5]") {
    std::string missing;
    const int32_t minor = int32_t(pxconf::plugin_abi_minor());  // a dtype newer than the plugin is not required
    for (int32_t d = 1; d < 16; ++d)
        if (px_op_accepts(PX_OP_COPY, d) && px_dtype_abi_minor(d) <= minor && !pxconf::device_has(PX_OP_COPY, DType(d)))
            missing += std::string(missing.empty() ? "" : ", ") + px_dtype_name(d);
    INFO("supports() turns down copy on " << missing << "; copy is mandatory on every dtype");
    REQUIRE(missing.empty());
}

// Malformed calls are R2's; an op refused on a dtype supports() turns down, R5's.
TEST_CASE("execute refuses malformed operands and what it does not implement", "[conformance][abi][R2][R5]") {
    PX_NEEDS({PX_OP_COPY, DType::float32});
    Opened p;
    std::optional<pxconf::Clause> clause(std::in_place, "R2");
    px_plugin_buffer* buf = nullptr;
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, 16, &buf, &p.err) == PX_OK);
    const px_tensor_desc good = vector_desc(buf, PX_FLOAT32, 4);
    auto copy_with = [&](px_tensor_desc in, px_tensor_desc out) {
        px_op_call call{sizeof(px_op_call), PX_OP_COPY, p.device, 1, &in, 1, &out, nullptr};
        return p.api->execute(p.ctx, &call, &p.err);
    };
    px_tensor_desc no_size = good, no_buffer = good, deep = good;
    no_size.struct_size = 0;
    no_buffer.buffer = nullptr;
    deep.ndim = PX_MAX_DIMS + 1;
    for (const px_tensor_desc& bad : {no_size, no_buffer, deep}) {
        INFO("struct_size " << bad.struct_size << ", buffer " << bad.buffer << ", ndim " << bad.ndim);
        REQUIRE(copy_with(bad, good) == PX_ERROR_INVALID_ARGUMENT);
        p.require_message();
        REQUIRE(copy_with(good, bad) == PX_ERROR_INVALID_ARGUMENT);
        p.require_message();
    }
    // A dtype no ABI defines: refused, with a message, never read as a name.
    px_tensor_desc unknown = vector_desc(buf, 99, 2);
    REQUIRE(copy_with(unknown, unknown) == PX_ERROR_UNSUPPORTED);
    p.require_message();
    // A known op on a dtype the plugin says it lacks: refused by execute too.
    clause.reset();
    clause.emplace("R5");
    int32_t op = 0, dtype = 0;
    for (int32_t o : {PX_OP_EXP, PX_OP_LOG, PX_OP_SQRT, PX_OP_SIGMOID, PX_OP_TANH})
        for (int32_t d : {PX_UINT8, PX_INT32, PX_INT64})
            if (!op && !p.api->supports(p.ctx, p.device, o, d)) op = o, dtype = d;
    if (op) {
        INFO(px_op_name(op) << " on " << px_dtype_name(dtype));
        px_tensor_desc in = vector_desc(buf, dtype, 2);  // 16 bytes hold two of any dtype
        px_tensor_desc out = in;
        px_op_call call{sizeof(px_op_call), op, p.device, 1, &in, 1, &out, nullptr};
        REQUIRE(p.api->execute(p.ctx, &call, &p.err) == PX_ERROR_UNSUPPORTED);
        p.require_message();
    }
    clause.reset();
    REQUIRE(p.api->buffer_free(p.ctx, buf, &p.err) == PX_OK);
    REQUIRE(p.api->synchronize(p.ctx, p.device, &p.err) == PX_OK);
}

// What another host than Plexus's might send: every form px_op_call_check
// refuses, refused by the plugin with its status and reason, and nothing of
// it run (the output buffer keeps its bytes).
TEST_CASE("execute refuses operands outside their buffer or device, and calls of the wrong form",
          "[conformance][abi][R2]") {
    PX_NEEDS({PX_OP_COPY, DType::float32});
    Opened p;
    int32_t count = 0;
    REQUIRE(p.api->device_count(p.ctx, &count, &p.err) == PX_OK);
    px_plugin_buffer *src = nullptr, *dst = nullptr;
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, 16, &src, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, 16, &dst, &p.err) == PX_OK);
    const float ones[4] = {1, 1, 1, 1}, marks[4] = {7, 7, 7, 7};
    REQUIRE(p.api->copy_from_host(p.ctx, src, 0, ones, sizeof ones, &p.err) == PX_OK);
    REQUIRE(p.api->copy_from_host(p.ctx, dst, 0, marks, sizeof marks, &p.err) == PX_OK);
    const px_tensor_desc good = vector_desc(src, PX_FLOAT32, 4), out = vector_desc(dst, PX_FLOAT32, 4);
    // Refused with `status` and a message; `why` (px_op_call_check's
    // wording) is shown when it is not: the words are the plugin's own (R2).
    auto refused = [&](px_op_call call, px_status status, const std::string& why) {
        INFO(px_op_name(call.op) << " with " << call.num_inputs << " inputs and " << call.num_outputs
                                 << " outputs should be refused (" << why << ")");
        const px_status got = p.api->execute(p.ctx, &call, &p.err);
        INFO("the plugin said " << got << ": " << p.said());
        REQUIRE(got == status);
        p.require_message();
    };
    auto copy_of = [&](const px_tensor_desc& in) {
        return px_op_call{sizeof(px_op_call), PX_OP_COPY, p.device, 1, &in, 1, &out, nullptr};
    };

    SECTION("operands that reach past their buffer, or whose extent cannot be formed") {
        px_tensor_desc longer = vector_desc(src, PX_FLOAT32, 5), shifted = good, strided = good, wide = good;
        shifted.offset = 4;                          // elements at bytes 4..20 of 16
        strided.shape[0] = 3, strided.strides[0] = 2;  // elements 0, 2, 4: bytes up to 20
        wide.dtype = PX_FLOAT64;                     // 4 doubles in 16 bytes
        for (const px_tensor_desc& in : {longer, shifted, strided, wide}) refused(copy_of(in), PX_ERROR_INVALID_ARGUMENT, "past the end of its buffer");
        px_tensor_desc negative = good, backwards = good, huge = good;
        negative.shape[0] = -1;
        backwards.strides[0] = -1;
        huge.ndim = 2, huge.shape[0] = 2, huge.shape[1] = 2, huge.strides[0] = INT64_MAX, huge.strides[1] = INT64_MAX;
        for (const px_tensor_desc& in : {negative, backwards, huge}) refused(copy_of(in), PX_ERROR_INVALID_ARGUMENT, "negative, or its extent overflows");
        px_tensor_desc far = good, odd = good;
        far.offset = UINT64_MAX - 11;  // whole elements from the start, but 16 bytes from there overflow
        refused(copy_of(far), PX_ERROR_INVALID_ARGUMENT, "negative, or its extent overflows");
        odd.ndim = 0, odd.offset = 2;  // one float32 at byte 2: inside the buffer, but not where an element can be
        refused(copy_of(odd), PX_ERROR_INVALID_ARGUMENT, "input 0: its offset is not a multiple of its element size");
        // The output is checked as the inputs are.
        px_tensor_desc unknown = out;
        unknown.dtype = 99;
        px_op_call call = copy_of(good);
        call.outputs = &unknown;
        refused(call, PX_ERROR_UNSUPPORTED, "output 0: its dtype is not one this ABI defines");
    }
    SECTION("an operand in another device's buffer") {
        if (count < 2) {
            WARN("the plugin has one device here: no other device's buffer to send");
        } else {
            px_plugin_buffer* other = nullptr;
            const int32_t elsewhere = p.device == 0 ? 1 : 0;
            REQUIRE(p.api->buffer_alloc(p.ctx, elsewhere, 16, &other, &p.err) == PX_OK);
            refused(copy_of(vector_desc(other, PX_FLOAT32, 4)), PX_ERROR_INVALID_ARGUMENT,
                    "input 0: its buffer belongs to another device");
            REQUIRE(p.api->buffer_free(p.ctx, other, &p.err) == PX_OK);
        }
    }
    SECTION("operand counts outside the op's, an unknown op, a device the plugin lacks") {
        const px_tensor_desc three[3] = {good, good, good};
        const px_tensor_desc outs[2] = {out, out};
        const px_sgd_attrs sgd{sizeof(px_sgd_attrs), 0.1, 0.9, 0, 1};
        refused({sizeof(px_op_call), PX_OP_MATMUL, p.device, 1, three, 1, &out, nullptr}, PX_ERROR_INVALID_ARGUMENT,
                "matmul: bad operand counts");
        refused({sizeof(px_op_call), PX_OP_WHERE, p.device, 2, three, 1, &out, nullptr}, PX_ERROR_INVALID_ARGUMENT,
                "where: bad operand counts");
        refused({sizeof(px_op_call), PX_OP_EXP, p.device, 0, nullptr, 1, &out, nullptr}, PX_ERROR_INVALID_ARGUMENT,
                "exp: bad operand counts");
        // With momentum SGD has three inputs and two outputs; one of each count is not a form.
        refused({sizeof(px_op_call), PX_OP_SGD_UPDATE, p.device, 3, three, 1, outs, &sgd}, PX_ERROR_INVALID_ARGUMENT,
                "sgd_update: bad operand counts");
        refused({sizeof(px_op_call), PX_OP_SGD_UPDATE, p.device, 2, three, 2, outs, &sgd}, PX_ERROR_INVALID_ARGUMENT,
                "sgd_update: bad operand counts");
        refused({sizeof(px_op_call), 99, p.device, 1, three, 1, &out, nullptr}, PX_ERROR_UNSUPPORTED, "unknown op 99");
        refused({sizeof(px_op_call), PX_OP_COPY, count, 1, three, 1, &out, nullptr}, PX_ERROR_NO_DEVICE,
                "no device " + std::to_string(count));
        refused({sizeof(px_op_call), PX_OP_COPY, -1, 1, three, 1, &out, nullptr}, PX_ERROR_NO_DEVICE, "no device -1");
    }
    // Nothing refused ran, and the operands still work.
    float got[4] = {0, 0, 0, 0};
    REQUIRE(p.api->copy_to_host(p.ctx, dst, 0, got, sizeof got, &p.err) == PX_OK);
    for (float v : got) REQUIRE(v == 7);
    px_op_call copy = copy_of(good);
    REQUIRE(p.api->execute(p.ctx, &copy, &p.err) == PX_OK);
    REQUIRE(p.api->copy_to_host(p.ctx, dst, 0, got, sizeof got, &p.err) == PX_OK);
    for (float v : got) REQUIRE(v == 1);
    REQUIRE(p.api->buffer_free(p.ctx, src, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_free(p.ctx, dst, &p.err) == PX_OK);
    REQUIRE(p.api->synchronize(p.ctx, p.device, &p.err) == PX_OK);
}

namespace {

// Integers (exact in every summation order) as `T`. Returns false when the
// plugin says it cannot sum over these devices here (PX_ERROR_UNSUPPORTED with
// the reason, e.g. the CUDA plugin without libnccl): R16 lets it, and the
// host then sums through copies.
template <class T>
bool check_all_reduce(Opened& p, int32_t dtype, int32_t count) {
    constexpr int64_t n = 1000;
    std::vector<px_plugin_buffer*> bufs(count);
    std::vector<px_tensor_desc> descs;
    std::vector<int32_t> devices;
    for (int32_t dev = 0; dev < count; ++dev) {
        std::vector<T> v(n);
        for (int64_t k = 0; k < n; ++k) v[k] = T((k % 17) * (dev + 1) - 3);
        REQUIRE(p.api->buffer_alloc(p.ctx, dev, n * sizeof(T), &bufs[dev], &p.err) == PX_OK);
        REQUIRE(p.api->copy_from_host(p.ctx, bufs[dev], 0, v.data(), n * sizeof(T), &p.err) == PX_OK);
        descs.push_back(vector_desc(bufs[dev], dtype, n));
        devices.push_back(dev);
    }
    px_collective_call call{sizeof call, PX_COLLECTIVE_SUM, count, devices.data(), descs.data()};
    const px_status summed = p.api->all_reduce(p.ctx, &call, &p.err);
    if (summed == PX_ERROR_UNSUPPORTED) {
        p.require_message();
        for (px_plugin_buffer* b : bufs) REQUIRE(p.api->buffer_free(p.ctx, b, &p.err) == PX_OK);
        return false;
    }
    REQUIRE(summed == PX_OK);
    for (int32_t dev = 0; dev < count; ++dev) {
        std::vector<T> got(n);
        REQUIRE(p.api->copy_to_host(p.ctx, bufs[dev], 0, got.data(), n * sizeof(T), &p.err) == PX_OK);
        for (int64_t k = 0; k < n; ++k) {
            T want = 0;
            for (int32_t d = 0; d < count; ++d) want += T((k % 17) * (d + 1) - 3);
            INFO("device " << dev << ", element " << k);
            REQUIRE(got[k] == want);
        }
        REQUIRE(p.api->buffer_free(p.ctx, bufs[dev], &p.err) == PX_OK);
    }
    return true;
}

}  // namespace

TEST_CASE("all_reduce, when offered: every device ends with the sum, bad calls are refused",
          "[conformance][abi][R16]") {
    Opened p;
    if (p.api->struct_size < offsetof(px_plugin_api, all_reduce) + sizeof p.api->all_reduce || !p.api->all_reduce) {
        pxconf::record().skipped = "the plugin has no all_reduce (optional; the host falls back to copies)";
        return;
    }
    int32_t count = 0;
    REQUIRE(p.api->device_count(p.ctx, &count, &p.err) == PX_OK);
    REQUIRE(count >= 1);
    std::string cannot;  // why the plugin cannot sum over every device here, if it cannot
    if (check_all_reduce<float>(p, PX_FLOAT32, count)) {
        REQUIRE(check_all_reduce<double>(p, PX_FLOAT64, count));
        REQUIRE(check_all_reduce<int32_t>(p, PX_INT32, count));
        REQUIRE(check_all_reduce<int64_t>(p, PX_INT64, count));
    } else {
        cannot = p.said();
    }

    px_plugin_buffer* buf = nullptr;
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, 64, &buf, &p.err) == PX_OK);
    px_tensor_desc two[2] = {vector_desc(buf, PX_FLOAT32, 4), vector_desc(buf, PX_FLOAT32, 4)};
    int32_t devs[2] = {p.device, p.device};
    px_collective_call call{sizeof call, PX_COLLECTIVE_SUM, 1, devs, two};
    PX_REFUSED(p, p.api->all_reduce(p.ctx, nullptr, &p.err));
    call.op = 99;  // no such collective
    PX_REFUSED(p, p.api->all_reduce(p.ctx, &call, &p.err));
    call.op = PX_COLLECTIVE_SUM;
    call.count = 0;
    PX_REFUSED(p, p.api->all_reduce(p.ctx, &call, &p.err));
    call.count = 2;  // the same device twice (or more devices than there are)
    PX_REFUSED(p, p.api->all_reduce(p.ctx, &call, &p.err));
    call.count = 1;
    devs[0] = count;  // out of range
    PX_REFUSED(p, p.api->all_reduce(p.ctx, &call, &p.err));
    devs[0] = p.device;
    two[0].dtype = PX_UINT8;
    PX_REFUSED(p, p.api->all_reduce(p.ctx, &call, &p.err));
    two[0] = vector_desc(buf, PX_FLOAT32, 1000);  // past the end of the buffer
    PX_REFUSED(p, p.api->all_reduce(p.ctx, &call, &p.err));
    two[0] = vector_desc(buf, PX_FLOAT32, 4);
    two[0].strides[0] = 2;  // not contiguous
    PX_REFUSED(p, p.api->all_reduce(p.ctx, &call, &p.err));
    two[0].strides[0] = 1;
    if (count >= 2) {
        devs[0] = (p.device + 1) % count;  // a device the buffer is not on
        PX_REFUSED(p, p.api->all_reduce(p.ctx, &call, &p.err));
        devs[0] = p.device;
    }
    REQUIRE(p.api->all_reduce(p.ctx, &call, &p.err) == PX_OK);  // one device: its own sum, always possible
    REQUIRE(p.api->buffer_free(p.ctx, buf, &p.err) == PX_OK);
    REQUIRE(p.api->synchronize(p.ctx, p.device, &p.err) == PX_OK);
    if (!cannot.empty())
        pxconf::record().skipped = "the plugin refused to sum over its " + std::to_string(count) +
                                   " device(s) here (PX_ERROR_UNSUPPORTED; the host sums through copies): " + cannot;
}

TEST_CASE("process groups, when offered: a group of one joins, sums to itself, refuses bad calls, leaves",
          "[conformance][abi][R17]") {
    Opened p;
    const bool covered = p.api->struct_size >= offsetof(px_plugin_api, group_leave) + sizeof p.api->group_leave;
    const int offered = covered ? !!p.api->group_make_id + !!p.api->group_join + !!p.api->group_all_reduce +
                                      !!p.api->group_leave
                                : 0;
    if (offered == 0) {
        pxconf::record().skipped = "the plugin has no process groups (optional; libplexus-mpi sums through MPI)";
        return;
    }
    INFO("the four group slots come together");
    REQUIRE(offered == 4);
    px_group_id id{};
    id.struct_size = sizeof id;
    px_status made = p.api->group_make_id(p.ctx, p.device, &id, &p.err);
    if (made == PX_ERROR_UNSUPPORTED) {
        p.require_message();
        pxconf::record().skipped = std::string("the plugin cannot make groups here: ") + p.said();
        return;
    }
    REQUIRE(made == PX_OK);
    px_plugin_group* group = nullptr;
    REQUIRE(p.api->group_join(p.ctx, p.device, &id, 0, 1, 20, &group, &p.err) == PX_OK);
    REQUIRE(group);

    // One process: every tensor keeps its values, in each summed dtype.
    px_plugin_buffer *f = nullptr, *i = nullptr;
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, 16, &f, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, 16, &i, &p.err) == PX_OK);
    const float fv[4] = {1.5f, -2, 0, 1e30f};
    const int64_t iv[2] = {(int64_t(1) << 62) + 1, -7};
    REQUIRE(p.api->copy_from_host(p.ctx, f, 0, fv, sizeof fv, &p.err) == PX_OK);
    REQUIRE(p.api->copy_from_host(p.ctx, i, 0, iv, sizeof iv, &p.err) == PX_OK);
    px_tensor_desc both[2] = {vector_desc(f, PX_FLOAT32, 4), vector_desc(i, PX_INT64, 2)};
    px_group_call call{sizeof call, PX_COLLECTIVE_SUM, 2, both};
    REQUIRE(p.api->group_all_reduce(p.ctx, group, &call, &p.err) == PX_OK);
    REQUIRE(p.api->synchronize(p.ctx, p.device, &p.err) == PX_OK);
    float fo[4];
    int64_t io[2];
    REQUIRE(p.api->copy_to_host(p.ctx, f, 0, fo, sizeof fo, &p.err) == PX_OK);
    REQUIRE(p.api->copy_to_host(p.ctx, i, 0, io, sizeof io, &p.err) == PX_OK);
    CHECK(std::memcmp(fo, fv, sizeof fv) == 0);
    CHECK(std::memcmp(io, iv, sizeof iv) == 0);

    PX_REFUSED(p, p.api->group_all_reduce(p.ctx, group, nullptr, &p.err));
    call.op = 99;
    PX_REFUSED(p, p.api->group_all_reduce(p.ctx, group, &call, &p.err));
    call.op = PX_COLLECTIVE_SUM;
    call.count = 0;
    PX_REFUSED(p, p.api->group_all_reduce(p.ctx, group, &call, &p.err));
    call.count = 1;
    both[0].dtype = PX_UINT8;
    PX_REFUSED(p, p.api->group_all_reduce(p.ctx, group, &call, &p.err));
    both[0] = vector_desc(f, PX_FLOAT32, 4);
    both[0].strides[0] = 2;  // not contiguous
    PX_REFUSED(p, p.api->group_all_reduce(p.ctx, group, &call, &p.err));
    p.api->group_leave(p.ctx, group);
    REQUIRE(p.api->synchronize(p.ctx, p.device, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_free(p.ctx, f, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_free(p.ctx, i, &p.err) == PX_OK);
}
