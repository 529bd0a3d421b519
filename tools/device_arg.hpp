// A device named on a command line or in the environment: "cpu:N",
// "gpu(N)", "accel:N", or a bare kind (index 0). Checked in full, so
// "cpu:x", "cpu:1)" or "tpu:0" is refused instead of running somewhere the
// user did not ask for. Shared by the tools and the test suites.
#pragma once

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <optional>
#include <string>

#include "plexus/plexus.hpp"

namespace pxtools {

inline std::optional<plexus::Device> parse_device_arg(const std::string& s) {
    const std::string kind = s.substr(0, s.find_first_of(":("));
    std::string rest = s.size() > kind.size() ? s.substr(kind.size() + 1) : "0";
    if (s.size() > kind.size() && s[kind.size()] == '(') {
        if (rest.empty() || rest.back() != ')') return std::nullopt;
        rest.pop_back();
    }
    if (rest.empty() || rest[0] < '0' || rest[0] > '9') return std::nullopt;  // no sign, no space
    char* end = nullptr;
    errno = 0;
    const long idx = std::strtol(rest.c_str(), &end, 10);
    if (*end || errno || idx > INT_MAX) return std::nullopt;
    for (int k = PX_DEVICE_CPU; k <= PX_DEVICE_ACCELERATOR; ++k)
        if (kind == px_device_kind_name(k)) return plexus::Device{static_cast<px_device_kind>(k), int(idx)};
    return std::nullopt;
}

}  // namespace pxtools
