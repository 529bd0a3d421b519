#include "error.hpp"

#include <cstdio>

#include "plexus/plexus.h"

namespace px {
namespace {
// The thread's message. Its destructor runs when the thread ends, and for
// the main thread at exit() before the static destructors, which may still
// call the C API (and fail): from then on the trivially destructible
// t_short below holds the message.
thread_local bool t_message_gone = false;
struct Message {
    std::string text;
    Message() = default;
    Message(const Message&) = delete;
    Message& operator=(const Message&) = delete;
    ~Message() { t_message_gone = true; }
};
thread_local Message t_message;
thread_local px_status t_status = PX_OK;
// What px_last_error gives when t_message could not be grown or is gone.
thread_local char t_short[1024];
thread_local bool t_short_in_use = false;
}  // namespace

void set_last_error(px_status status, const char* function, std::string_view message) noexcept {
    t_status = status;
    if (t_message_gone) {
        std::snprintf(t_short, sizeof t_short, "%s: %.*s", function, static_cast<int>(message.size()), message.data());
        t_short_in_use = true;
        return;
    }
    try {
        t_message.text.assign(function).append(": ").append(message);
        t_short_in_use = false;
    } catch (const std::bad_alloc&) {  // called while handling an error: it must not throw
        std::snprintf(t_short, sizeof t_short, "%s: %s (out of host memory for the whole message)", function,
                      px_status_name(status));
        t_short_in_use = true;
    }
}

void clear_last_error() noexcept {
    t_status = PX_OK;
    t_short_in_use = false;
    if (!t_message_gone) t_message.text.clear();  // keeps its capacity: no allocation
}

}  // namespace px

extern "C" const char* px_last_error(void) {
    if (px::t_short_in_use) return px::t_short;
    return px::t_message_gone ? "" : px::t_message.text.c_str();
}
extern "C" px_status px_last_status(void) { return px::t_status; }

extern "C" const char* px_status_name(px_status status) {
    switch (status) {
    case PX_OK: return "PX_OK";
    case PX_ERROR_INVALID_ARGUMENT: return "PX_ERROR_INVALID_ARGUMENT";
    case PX_ERROR_INVALID_HANDLE: return "PX_ERROR_INVALID_HANDLE";
    case PX_ERROR_DEVICE_MISMATCH: return "PX_ERROR_DEVICE_MISMATCH";
    case PX_ERROR_SHAPE: return "PX_ERROR_SHAPE";
    case PX_ERROR_DTYPE: return "PX_ERROR_DTYPE";
    case PX_ERROR_OUT_OF_MEMORY: return "PX_ERROR_OUT_OF_MEMORY";
    case PX_ERROR_UNSUPPORTED: return "PX_ERROR_UNSUPPORTED";
    case PX_ERROR_NO_DEVICE: return "PX_ERROR_NO_DEVICE";
    case PX_ERROR_PLUGIN: return "PX_ERROR_PLUGIN";
    case PX_ERROR_DEVICE: return "PX_ERROR_DEVICE";
    case PX_ERROR_INTERNAL: return "PX_ERROR_INTERNAL";
    }
    return "unknown status";
}
