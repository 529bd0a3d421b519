// Writing the small files the data readers' tests read: bytes as given, and
// .npy files from a header written by hand.
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../support.hpp"

namespace pxtest {

using Bytes = std::vector<unsigned char>;

inline void write_file(const std::string& path, const Bytes& b) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    if (!b.empty()) REQUIRE(std::fwrite(b.data(), 1, b.size(), f) == b.size());
    std::fclose(f);
}

inline void write_text(const std::string& path, const std::string& text) { write_file(path, Bytes(text.begin(), text.end())); }

// The bytes of a C++ value, as this (little-endian) machine holds them.
template <class T>
Bytes bytes_of(const std::vector<T>& v) {
    Bytes b(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
    return b;
}

// An .npy file: magic, version, header length (2 bytes in 1.0, 4 after),
// the header as given (padded as NumPy pads it), then `values`.
inline Bytes npy(const std::string& header, const Bytes& values, int major = 1, int minor = 0) {
    const size_t len_bytes = major == 1 ? 2 : 4;
    std::string h = header;
    while ((10 + len_bytes - 2 + h.size() + 1) % 64 != 0) h += ' ';
    h += '\n';
    Bytes b{0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<unsigned char>(major), static_cast<unsigned char>(minor)};
    for (size_t i = 0; i < len_bytes; ++i) b.push_back(static_cast<unsigned char>(h.size() >> (8 * i)));
    b.insert(b.end(), h.begin(), h.end());
    b.insert(b.end(), values.begin(), values.end());
    return b;
}

// NumPy's header for a dtype code and shape text, such as ("<f4", "(2, 3)").
inline std::string npy_header(const std::string& descr, const std::string& shape, bool fortran = false) {
    return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
}

}  // namespace pxtest
