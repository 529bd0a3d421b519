// The fuzz targets' bodies, shared by the libFuzzer executables (PLEXUS_FUZZ,
// clang) and by the regression test that replays the corpus and every crash
// ever found in every build (test_fuzz_seeds.cpp).
//
// The first input byte picks a mode, so that mutations reach past the first
// gate: for parameter files an odd byte reseals the CRC-32 (else almost every
// input dies at the checksum), for IDX files an odd byte gzips the rest
// (else the parser behind zlib is rarely reached). An input that decodes must
// also re-encode to the same bytes: a decoder that accepts and misreads fails.
#pragma once

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "nn/param_file.hpp"
#include "plexus/data.hpp"

namespace plexus::fuzz {

[[noreturn]] inline void invariant_broken(const char* what) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
    std::abort();
}

inline int param_file_input(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    std::vector<unsigned char> bytes(data + 1, data + size);
    if ((data[0] & 1) && bytes.size() >= 4) {
        uint32_t crc = uint32_t(crc32(0L, bytes.data(), uInt(bytes.size() - 4)));
        for (int i = 0; i < 4; ++i) bytes[bytes.size() - 4 + i] = static_cast<unsigned char>(crc >> (8 * i));
    }
    try {
        auto entries = nn::param_file::decode(bytes.data(), bytes.size(), "fuzz input");
        for (const auto& e : entries) {
            uint64_t n = px_dtype_size(e.dtype);
            for (int64_t d : e.shape) n *= uint64_t(d);
            if (n != e.data.size()) invariant_broken("an entry's data size differs from its shape and dtype");
        }
        if (nn::param_file::encode(entries) != bytes) invariant_broken("a decoded file does not re-encode to itself");
    } catch (const InvalidArgumentError&) {
    }
    return 0;
}

// read_idx takes a path, so the input is written to a memory file once per
// run and read through /proc/self/fd: the real code path, gzip included.
inline int idx_input(const uint8_t* data, size_t size) {
    static const int fd = memfd_create("plexus-fuzz-idx", 0);
    if (fd < 0 || size == 0) return 0;
    std::vector<unsigned char> bytes(data + 1, data + size);
    if (data[0] & 1) {
        z_stream z{};
        if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
        std::vector<unsigned char> gz(deflateBound(&z, uLong(bytes.size())) + 32);
        z.next_in = bytes.data(), z.avail_in = uInt(bytes.size());
        z.next_out = gz.data(), z.avail_out = uInt(gz.size());
        int rc = deflate(&z, Z_FINISH);
        gz.resize(z.total_out);
        deflateEnd(&z);
        if (rc != Z_STREAM_END) return 0;
        bytes.swap(gz);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, bytes.data(), bytes.size(), 0) != ssize_t(bytes.size())) return 0;
    try {
        // A 1 MiB cap keeps each run small; the refusal past it is code under test too.
        auto a = data::read_idx("/proc/self/fd/" + std::to_string(fd), uint64_t(1) << 20);
        uint64_t n = 1;
        for (int64_t d : a.dims) n *= uint64_t(d);
        if (a.dims.empty() || n != a.values.size()) invariant_broken("an IDX array's size differs from its dimensions");
    } catch (const InvalidArgumentError&) {
    }
    return 0;
}

// read_npy and read_npz on the input (after its first byte, whose low bit
// picks the reader), through a memory file as idx_input does.
inline int npy_input(const uint8_t* data, size_t size) {
    static const int fd = memfd_create("plexus-fuzz-npy", 0);
    if (fd < 0 || size == 0) return 0;
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data + 1, size - 1, 0) != ssize_t(size - 1)) return 0;
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    auto check = [](const data::Array& a) {
        uint64_t n = px_dtype_size(static_cast<int32_t>(a.dtype));
        for (int64_t d : a.shape) n *= uint64_t(d);
        if (n != a.bytes.size()) invariant_broken("an .npy array's size differs from its shape and dtype");
    };
    try {
        if (data[0] & 1) {
            for (const auto& [name, a] : data::read_npz(path, uint64_t(1) << 20)) check(a);
        } else {
            check(data::read_npy(path, uint64_t(1) << 20));
        }
    } catch (const InvalidArgumentError&) {
    }
    return 0;
}

}  // namespace plexus::fuzz
