// A device named on a command line or in the environment: "cpu:N",
// "gpu(N)", "naive:0" (a kind a plugin names), or a kind alone (index 0),
// read by px_runtime_parse_device in the default runtime. Checked in full,
// so "cpu:x", "cpu:1)" or "tpu:0" is refused instead of running somewhere
// the user did not ask for. Shared by the tools and the test suites.
#pragma once

#include <optional>
#include <string>

#include "plexus/plexus.hpp"

namespace pxtools {

// The device, or nullopt with the reason in `why` and its status in `status`
// (when given; PX_ERROR_NO_DEVICE for a device no plugin gives). accel:i
// comes back by the device's own name (naive(0)), as its tensors report it,
// so that a device given twice under two names is one device. A runtime
// that cannot be made is thrown as itself (plexus::Error), not taken for a
// bad device name.
inline std::optional<plexus::Device> parse_device_arg(const std::string& s, std::string* why = nullptr,
                                                      px_status* status = nullptr) {
    plexus::runtime();
    try {
        const plexus::Device d = plexus::parse_device(s);
        return d.kind == PX_DEVICE_ACCELERATOR ? plexus::resolve(d) : d;
    } catch (const plexus::Error& e) {
        if (why) *why = e.what();
        if (status) *status = e.status();
        return std::nullopt;
    }
}

}  // namespace pxtools
