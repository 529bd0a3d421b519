// plexus C++ frontend: typed exceptions for the C API's statuses.
#pragma once

#include <stdexcept>
#include <string>

#include "plexus/plexus.h"

namespace plexus {

class Error : public std::runtime_error {
public:
    Error(px_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
    px_status status() const noexcept { return status_; }

private:
    px_status status_;
};

// Inputs on different devices; the message names both and how to move one.
struct DeviceMismatchError : Error { using Error::Error; };
struct ShapeError : Error { using Error::Error; };
struct DTypeError : Error { using Error::Error; };
struct OutOfMemoryError : Error { using Error::Error; };
// A plugin is missing, failed to load, or lacks an (op, dtype).
struct PluginError : Error { using Error::Error; };
struct UnsupportedError : PluginError { using PluginError::PluginError; };
struct InvalidArgumentError : Error { using Error::Error; };
// Work queued on a device failed; reported at the next wait.
struct DeviceError : Error { using Error::Error; };

[[noreturn]] inline void throw_error(px_status s, const std::string& message) {
    switch (s) {
    case PX_ERROR_DEVICE_MISMATCH: throw DeviceMismatchError(s, message);
    case PX_ERROR_SHAPE: throw ShapeError(s, message);
    case PX_ERROR_DTYPE: throw DTypeError(s, message);
    case PX_ERROR_OUT_OF_MEMORY: throw OutOfMemoryError(s, message);
    case PX_ERROR_UNSUPPORTED: throw UnsupportedError(s, message);
    case PX_ERROR_NO_DEVICE:
    case PX_ERROR_PLUGIN: throw PluginError(s, message);
    case PX_ERROR_INVALID_ARGUMENT:
    case PX_ERROR_INVALID_HANDLE: throw InvalidArgumentError(s, message);
    case PX_ERROR_DEVICE: throw DeviceError(s, message);
    default: throw Error(s, message);
    }
}

// Throws the typed error for a failed C call.
inline void check(px_status s) {
    if (s != PX_OK) throw_error(s, px_last_error());
}

}  // namespace plexus
