// The CPU plugin's memory from the system (host_blocks.cpp) and its tensors'
// caching allocator (allocator.cpp), compiled into this test: blocks of
// 2 MiB and more start on a 2 MiB boundary and carry the huge-page advice,
// smaller ones are 64-byte aligned, and the figures count size classes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "allocator.hpp"
#include "host_blocks.hpp"

namespace {

constexpr size_t MiB = size_t(1) << 20;

bool aligned(const void* p, size_t to) { return reinterpret_cast<uintptr_t>(p) % to == 0; }

// The VmFlags of the mapping that holds `p` (/proc/self/smaps), or "" when
// none does; "hg" among them is MADV_HUGEPAGE's advice.
std::string vm_flags_at(const void* p) {
    const auto at = reinterpret_cast<uintptr_t>(p);
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    while (std::getline(smaps, line)) {
        unsigned long long lo = 0, hi = 0;
        char dash = 0;
        std::istringstream head(line);
        if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
            inside = lo <= at && at < hi;  // a mapping's first line: "lo-hi perms ..."
        } else if (inside && line.rfind("VmFlags:", 0) == 0) {
            return line.substr(8) + " ";
        }
    }
    return "";
}

// Whether this kernel has transparent huge pages at all (MADV_HUGEPAGE is
// refused without them).
bool kernel_has_huge_pages() {
    std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
    return setting.good();
}

}  // namespace

TEST_CASE("a host block of 2 MiB or more starts on a 2 MiB boundary advised to huge pages", "[host][memory]") {
    for (size_t bytes : {2 * MiB, 3 * MiB + 64, 64 * MiB}) {
        INFO(bytes << " bytes");
        void* p = pxcpu::allocate_host_block(bytes);
        REQUIRE(p != nullptr);
        CHECK(aligned(p, pxcpu::huge_page_bytes));
        std::memset(p, 0x5a, bytes);  // all of it is writable
        if (kernel_has_huge_pages()) {
            const std::string flags = vm_flags_at(p);
            INFO("VmFlags:" << flags);
            CHECK(flags.find(" hg ") != std::string::npos);
        } else {
            WARN("this kernel has no transparent huge pages: the advice is not checked");
        }
        std::free(p);
    }
}

TEST_CASE("a host block under 2 MiB is 64-byte aligned and not advised", "[host][memory]") {
    for (size_t bytes : {size_t(64), size_t(4096), MiB, 2 * MiB - 64}) {
        INFO(bytes << " bytes");
        void* p = pxcpu::allocate_host_block(bytes);
        REQUIRE(p != nullptr);
        CHECK(aligned(p, 64));
        std::memset(p, 0x5a, bytes);
        if (bytes >= MiB) CHECK(vm_flags_at(p).find(" hg ") == std::string::npos);
        std::free(p);
    }
}

TEST_CASE("a host block the system cannot give is nullptr", "[host][memory]") {
    CHECK(pxcpu::allocate_host_block(SIZE_MAX - 63) == nullptr);
    CHECK(pxcpu::allocate_host_block(SIZE_MAX / 2) == nullptr);
}

TEST_CASE("the CPU allocator's tensors of 2 MiB or more start on a 2 MiB boundary and are cached", "[host][memory]") {
    pxcpu::Allocator allocator(0, 0);
    std::string why;
    px_plugin_buffer* big = allocator.allocate(3 * MiB + 1, why);  // class: 4 MiB
    REQUIRE(big != nullptr);
    CHECK(aligned(big->data, pxcpu::huge_page_bytes));
    CHECK(big->bytes == 3 * MiB + 1);
    CHECK(big->class_size == 4 * MiB);
    CHECK(allocator.figures().in_use == 4 * MiB);
    px_plugin_buffer* small = allocator.allocate(1000, why);  // class: 1 KiB
    REQUIRE(small != nullptr);
    CHECK(aligned(small->data, 64));
    CHECK(allocator.figures().in_use == 4 * MiB + 1024);
    char* const first = big->data;
    allocator.release(big);
    allocator.release(small);
    CHECK(allocator.figures().in_use == 0);
    CHECK(allocator.figures().reserved == 4 * MiB + 1024);
    px_plugin_buffer* again = allocator.allocate(4 * MiB, why);  // the same class: the cached block
    REQUIRE(again != nullptr);
    CHECK(again->data == first);
    allocator.release(again);
    allocator.trim();
    CHECK(allocator.figures().reserved == 0);
}
