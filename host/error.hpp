// Errors inside libplexus: a Failure carries a px_status and a message; the
// C API boundary (guard) turns it into a status plus the thread's last error.
#pragma once

#include <exception>
#include <new>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "plexus/types.h"

namespace px {

struct Failure : std::exception {
    px_status status;
    std::string message;
    Failure(px_status s, std::string m) : status(s), message(std::move(m)) {}
    const char* what() const noexcept override { return message.c_str(); }
};

// A stream swallows what its buffer throws (it only sets badbit), which would
// turn a host out of memory into a cut-short message; here it is thrown on.
template <class... Args>
std::string cat(Args&&... args) {
    std::ostringstream os;
    os.exceptions(std::ios::badbit);
    (os << ... << std::forward<Args>(args));
    return os.str();
}

template <class... Args>
[[noreturn]] void fail(px_status status, Args&&... args) {
    throw Failure(status, cat(std::forward<Args>(args)...));
}

// Never throws: with no memory left for the text, a short fixed one is kept.
void set_last_error(px_status status, const char* function, std::string_view message) noexcept;
// A call that succeeded: the thread's last error becomes PX_OK and "".
void clear_last_error() noexcept;

// Runs `body` for the C API function `function`; nothing escapes it.
template <class F>
px_status guard(const char* function, F&& body) noexcept {
    try {
        body();
        clear_last_error();
        return PX_OK;
    } catch (const Failure& f) {
        set_last_error(f.status, function, f.message);
        return f.status;
    } catch (const std::bad_alloc&) {
        set_last_error(PX_ERROR_OUT_OF_MEMORY, function, "out of host memory");
        return PX_ERROR_OUT_OF_MEMORY;
    } catch (const std::exception& e) {
        set_last_error(PX_ERROR_INTERNAL, function, cat("internal error: ", e.what()));
        return PX_ERROR_INTERNAL;
    } catch (...) {
        set_last_error(PX_ERROR_INTERNAL, function, "internal error: unknown exception");
        return PX_ERROR_INTERNAL;
    }
}

// Out-pointers must not be NULL.
template <class T>
T* need_out(T* out, const char* name = "out") {
    if (!out) fail(PX_ERROR_INVALID_ARGUMENT, "'", name, "' is NULL");
    return out;
}

}  // namespace px
