#include "address_space.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace pxcpu {
namespace {

// Bytes of address space the process has mapped (/proc/self/statm's first figure), or -1.
double mapped_bytes() {
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f) return -1;
    char line[128];
    const bool read = std::fgets(line, sizeof line, f) != nullptr;
    std::fclose(f);
    return read ? double(std::strtoull(line, nullptr, 10)) * double(sysconf(_SC_PAGESIZE)) : -1;
}

}  // namespace

std::string mib_text(double bytes) {
    char b[32];
    std::snprintf(b, sizeof b, "%.0f MiB", bytes / double(1 << 20));
    return b;
}

std::string address_space_text() {
    const double mapped = mapped_bytes();
    std::string text = mapped >= 0 ? mib_text(mapped) + " mapped" : "the mapped size unknown";
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        return text + " of the " + mib_text(double(limit.rlim_cur)) + " that RLIMIT_AS (ulimit -v) allows";
    return text + ", with no address-space limit: the system refused it";
}

}  // namespace pxcpu
