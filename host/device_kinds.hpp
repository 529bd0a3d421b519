// Device kinds that plugins name. A plugin whose devices are accelerators
// (PX_DEVICE_ACCELERATOR) names them by its own name, naive(0), when that
// name can be a device's; they answer to accel(i) as well. The numbers are
// the process's (the same in every runtime), given from
// PX_DEVICE_KIND_NAMED_FIRST in the order the names are first loaded, and
// never reused.
#pragma once

#include <cstdint>
#include <string>

namespace px {

// The kind named `plugin_name`, numbered at its first load; 0 when the name
// cannot name devices, and then `why` says why.
int32_t named_kind(const std::string& plugin_name, std::string& why);
// "cpu", "gpu", "accel" or a plugin's name; nullptr for a number that is no
// kind. Static storage.
const char* kind_label(int32_t kind) noexcept;
// The kind called `name`, built in or named; 0 when there is none.
int32_t kind_called(const std::string& name) noexcept;

// "naive:0", "naive(0)" or "naive" taken apart, checked in full ("cpu:x",
// "cpu:1)", "cpu:-1" have a problem); the kind is not looked up.
struct ParsedDevice {
    std::string kind;
    int32_t index = 0;
    std::string problem;  // empty when well formed
};
ParsedDevice parse_device_text(const std::string& text);

// Held across fork() (fork.cpp), so that a child's copy of the names is whole.
void lock_kinds_for_fork();
void unlock_kinds_after_fork();  // in the parent and the child, by the thread that forked

}  // namespace px
