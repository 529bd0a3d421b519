// The plugin kit (plexus/plugin_kit.hpp): the boundary guard, error and
// device-info writing within the caller's struct_size, and kernel tables.
#include <catch2/catch.hpp>

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "plexus/plugin_kit.hpp"

namespace kit = plexus::kit;

namespace {
px_plugin_error fresh_error() {
    px_plugin_error e{};
    e.struct_size = sizeof e;
    return e;
}

struct PluginError {
    int code;
};
}  // namespace

TEST_CASE("kit::guard turns every exception into a status and a message", "[host][plugin-kit]") {
    px_plugin_error e = fresh_error();
    CHECK(kit::guard(&e, [] { return PX_OK; }) == PX_OK);
    CHECK(kit::guard(&e, []() -> px_status { throw kit::Refusal(PX_ERROR_SHAPE, "bad shape"); }) == PX_ERROR_SHAPE);
    CHECK(std::string(e.message) == "bad shape");
    CHECK(kit::guard(&e, []() -> px_status { throw std::bad_alloc(); }) == PX_ERROR_OUT_OF_MEMORY);
    CHECK(std::string(e.message) == "out of host memory");
    CHECK(kit::guard(&e, []() -> px_status {
              throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again), "spawn");
          }) == PX_ERROR_OUT_OF_MEMORY);
    CHECK(std::string(e.message).rfind("no thread could be started: spawn", 0) == 0);
    CHECK(kit::guard(&e, []() -> px_status {
              throw std::system_error(std::make_error_code(std::errc::invalid_argument), "other");
          }) == PX_ERROR_INTERNAL);
    CHECK(kit::guard(&e, []() -> px_status { throw std::runtime_error("boom"); }) == PX_ERROR_INTERNAL);
    CHECK(std::string(e.message) == "boom");
    CHECK(kit::guard(&e, []() -> px_status { throw 42; }) == PX_ERROR_INTERNAL);  // not a std::exception
    CHECK(std::string(e.message) == "unknown exception");
}

TEST_CASE("kit::guard lets a plugin map its own exceptions first", "[host][plugin-kit]") {
    px_plugin_error e = fresh_error();
    auto translate = [](px_plugin_error* err) -> px_status {
        try {
            throw;
        } catch (const PluginError& p) {
            return kit::report(err, PX_ERROR_DEVICE, "device error " + std::to_string(p.code));
        }
    };
    CHECK(kit::guard(&e, []() -> px_status { throw PluginError{7}; }, translate) == PX_ERROR_DEVICE);
    CHECK(std::string(e.message) == "device error 7");
    // What the translation does not know goes to the kit's rules.
    CHECK(kit::guard(&e, []() -> px_status { throw std::bad_alloc(); }, translate) == PX_ERROR_OUT_OF_MEMORY);
    CHECK(kit::guard(&e, []() -> px_status { throw 1.5; }, translate) == PX_ERROR_INTERNAL);
}

TEST_CASE("kit::report writes only into a whole px_plugin_error, cut to fit", "[host][plugin-kit]") {
    px_plugin_error e = fresh_error();
    const std::string long_text(size_t(2) * PX_MESSAGE_MAX, 'x');
    CHECK(kit::report(&e, PX_ERROR_DEVICE, long_text) == PX_ERROR_DEVICE);
    CHECK(std::strlen(e.message) == PX_MESSAGE_MAX - 1);
    px_plugin_error old{};
    old.struct_size = sizeof(uint32_t);  // a caller from before messages: left alone
    old.message[0] = 'Z';
    CHECK(kit::report(&old, PX_ERROR_DEVICE, "text") == PX_ERROR_DEVICE);
    CHECK(old.message[0] == 'Z');
    CHECK(kit::report(nullptr, PX_ERROR_SHAPE, "text") == PX_ERROR_SHAPE);
    CHECK(kit::no_device(&e, "cpu", 9) == PX_ERROR_NO_DEVICE);
    CHECK(std::string(e.message) == "cpu plugin: no device 9");
}

TEST_CASE("kit::copy_device_info copies as far as the caller's struct_size reaches", "[host][plugin-kit]") {
    px_device_info mine{};
    mine.struct_size = sizeof mine;
    mine.kind = PX_DEVICE_GPU;
    std::strcpy(mine.name, "test device");
    mine.memory_total = 1000, mine.memory_peak = 77;
    px_plugin_error e = fresh_error();

    px_device_info whole{};
    whole.struct_size = sizeof whole;
    REQUIRE(kit::copy_device_info(mine, &whole, &e) == PX_OK);
    CHECK(std::string(whole.name) == "test device");
    CHECK(whole.memory_peak == 77);

    // An older caller's struct ends after memory_total: nothing past it is written.
    px_device_info older{};
    std::memset(&older, 0xab, sizeof older);
    older.struct_size = uint32_t(offsetof(px_device_info, memory_free));
    REQUIRE(kit::copy_device_info(mine, &older, &e) == PX_OK);
    CHECK(older.struct_size == offsetof(px_device_info, memory_free));
    CHECK(older.memory_total == 1000);
    CHECK(older.memory_free == 0xababababababababull);

    CHECK(kit::copy_device_info(mine, nullptr, &e) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(e.message) == "device_info: info is NULL");
    px_device_info tiny{};
    tiny.struct_size = 2;
    CHECK(kit::copy_device_info(mine, &tiny, &e) == PX_ERROR_INVALID_ARGUMENT);
}

namespace {
int ran = 0;
void run_a(int) { ran = 1; }
void run_b(int) { ran = 2; }
}  // namespace

TEST_CASE("kit::KernelTable offers the rows its lists name, on the dtypes the row and the kernel allow",
          "[host][plugin-kit]") {
    using Runner = void (*)(int);
    const std::vector<kit::Kernel<Runner>> first = {{PX_OP_ADD, run_a}, {PX_OP_EXP, run_a}};
    const std::vector<kit::Kernel<Runner>> second = {{PX_OP_MATMUL, run_b, PX_DTYPES_FLOAT}};
    const kit::KernelTable<Runner> table(first, second);
    CHECK(table.bad_op() == 0);
    CHECK(table.offers(PX_OP_ADD, PX_UINT8));
    CHECK(table.offers(PX_OP_EXP, PX_FLOAT64));
    CHECK_FALSE(table.offers(PX_OP_EXP, PX_INT32));  // the row does not accept it
    CHECK(table.offers(PX_OP_MATMUL, PX_FLOAT32));
    CHECK_FALSE(table.offers(PX_OP_MATMUL, PX_INT64));  // the kernel narrows the row
    CHECK_FALSE(table.offers(PX_OP_SUB, PX_FLOAT32));   // no kernel
    CHECK_FALSE(table.offers(9999, PX_FLOAT32));
    CHECK_FALSE(table.offers(-1, PX_FLOAT32));
    CHECK_FALSE(table.offers(PX_OP_ADD, 77));
    table.runner(PX_OP_MATMUL)(0);
    CHECK(ran == 2);

    const std::vector<kit::Kernel<Runner>> twice = {{PX_OP_SUB, run_a}, {PX_OP_SUB, run_b}, {12345, run_a}};
    CHECK(kit::KernelTable<Runner>(twice).bad_op() == PX_OP_SUB);
    const std::vector<kit::Kernel<Runner>> unknown = {{12, run_a}};
    CHECK(kit::KernelTable<Runner>(unknown).bad_op() == 12);

    // create()'s refusal, worded once for every plugin.
    px_plugin_error err{sizeof(px_plugin_error), {}};
    CHECK(table.refuse_wrong_lists(&err, "cpu") == PX_OK);
    CHECK(std::string(err.message).empty());
    CHECK(kit::KernelTable<Runner>(twice).refuse_wrong_lists(&err, "cpu") == PX_ERROR_INTERNAL);
    CHECK(std::string(err.message) == "cpu plugin: op 2 is listed twice or is not a row of the op table");
    // Op 0 (no row) is named as 0 (it had been "op -1").
    const std::vector<kit::Kernel<Runner>> zero = {{0, run_a}};
    CHECK(kit::KernelTable<Runner>(zero).lists_wrong());
    CHECK(kit::KernelTable<Runner>(zero).refuse_wrong_lists(&err, "acme") == PX_ERROR_INTERNAL);
    CHECK(std::string(err.message) == "acme plugin: op 0 is listed twice or is not a row of the op table");
    CHECK_FALSE(table.lists_wrong());
}
