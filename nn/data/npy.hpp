// The .npy format, read from a stream: a file (read_npy) or a member of a
// zip archive (read_npz).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "plexus/data.hpp"

namespace plexus::data::detail {

// Where an .npy array's bytes come from.
class ByteSource {
public:
    virtual ~ByteSource() = default;
    // Up to n bytes, fewer only at the end; a read error throws.
    virtual size_t read(uint8_t* dst, size_t n) = 0;
    // The stream's length as its container declares it (a file's size, a
    // zip member's uncompressed size): values are never read past it.
    virtual uint64_t size() const = 0;
};

// The array in `in`. Errors are InvalidArgumentErrors "<where>: <why>";
// values over what `max_bytes` leaves after `earlier` bytes (the arrays an
// .npz held before this one; at most max_bytes) are refused before one is read.
Array parse_npy(ByteSource& in, const std::string& where, uint64_t max_bytes, uint64_t earlier = 0);

}  // namespace plexus::data::detail
