#include "device_kinds.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <deque>
#include <mutex>

#include "plexus/plexus.h"

namespace px {
namespace {

// Never destroyed: labels are handed out as static storage, and a tensor
// may be named in a message during the exit.
struct Names {
    std::mutex mutex;
    std::deque<std::string> by_number;  // [k]: the name of PX_DEVICE_KIND_NAMED_FIRST + k
};
Names& names() {
    static Names* n = new Names;
    return *n;
}

constexpr const char* kKindCharacters = "abcdefghijklmnopqrstuvwxyz0123456789_-";

// A lower-case letter, then up to PX_DEVICE_KIND_NAME_MAX - 1 of kKindCharacters.
bool is_kind_name(const std::string& s) {
    return !s.empty() && s.size() <= PX_DEVICE_KIND_NAME_MAX && s[0] >= 'a' && s[0] <= 'z' &&
           s.find_first_not_of(kKindCharacters) == std::string::npos;
}

// The named kind called `name`, or 0. Under n.mutex.
int32_t find_named(const Names& n, const std::string& name) {
    for (size_t k = 0; k < n.by_number.size(); ++k)
        if (n.by_number[k] == name) return PX_DEVICE_KIND_NAMED_FIRST + int32_t(k);
    return 0;
}

int32_t builtin_kind(const std::string& name) noexcept {
    for (int32_t k = PX_DEVICE_CPU; k <= PX_DEVICE_ACCELERATOR; ++k)
        if (name == px_device_kind_name(k)) return k;
    return 0;
}

}  // namespace

void lock_kinds_for_fork() { names().mutex.lock(); }
void unlock_kinds_after_fork() { names().mutex.unlock(); }

int32_t named_kind(const std::string& plugin_name, std::string& why) {
    if (builtin_kind(plugin_name)) {
        why = "'" + plugin_name + "' is a built-in device kind";
        return 0;
    }
    if (!is_kind_name(plugin_name)) {
        why = "'" + plugin_name + "' is not a device name (a lower-case letter, then up to " +
              std::to_string(PX_DEVICE_KIND_NAME_MAX - 1) + " of a-z, 0-9, '_' and '-')";
        return 0;
    }
    Names& n = names();
    std::lock_guard<std::mutex> lock(n.mutex);
    if (const int32_t known = find_named(n, plugin_name)) return known;
    n.by_number.push_back(plugin_name);
    return PX_DEVICE_KIND_NAMED_FIRST + int32_t(n.by_number.size() - 1);
}

const char* kind_label(int32_t kind) noexcept {
    if (const char* builtin = px_device_kind_name(kind)) return builtin;
    if (kind < PX_DEVICE_KIND_NAMED_FIRST) return nullptr;
    Names& n = names();
    std::lock_guard<std::mutex> lock(n.mutex);
    const size_t k = size_t(kind - PX_DEVICE_KIND_NAMED_FIRST);
    return k < n.by_number.size() ? n.by_number[k].c_str() : nullptr;
}

ParsedDevice parse_device_text(const std::string& text) {
    ParsedDevice p;
    const size_t end = text.find_first_of(":(");
    p.kind = text.substr(0, end);
    if (!is_kind_name(p.kind)) {
        p.problem = "the kind '" + p.kind + "' is not a device kind's name (a lower-case letter, then up to " +
                    std::to_string(PX_DEVICE_KIND_NAME_MAX - 1) + " of a-z, 0-9, '_' and '-')";
        return p;
    }
    if (end == std::string::npos) return p;
    std::string digits = text.substr(end + 1);
    if (text[end] == '(') {
        if (digits.empty() || digits.back() != ')') {
            p.problem = "'(' without a closing ')' at the end";
            return p;
        }
        digits.pop_back();
    }
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
        p.problem = "the index '" + digits + "' is not a whole number of 0 or more";
        return p;
    }
    const std::string value = digits.substr(std::min(digits.find_first_not_of('0'), digits.size() - 1));
    if (value.size() > 10 || std::stoll(value) > INT32_MAX) {
        p.problem = "the index " + digits + " is above " + std::to_string(INT32_MAX);
        return p;
    }
    p.index = int32_t(std::stoll(value));
    return p;
}

int32_t kind_called(const std::string& name) noexcept {
    if (const int32_t k = builtin_kind(name)) return k;
    Names& n = names();
    std::lock_guard<std::mutex> lock(n.mutex);
    return find_named(n, name);
}

}  // namespace px
