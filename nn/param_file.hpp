// The parameter file format (docs/parameter-file.md): encoding, and a
// decoder that checks every length against the bytes it was given, so a
// hostile file can cost no more memory than its own size.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace plexus {
class Tensor;
}

namespace plexus::nn::param_file {

constexpr char magic[8] = {'P', 'X', 'P', 'A', 'R', 'A', 'M', 'S'};
constexpr uint32_t version = 1;
constexpr uint32_t max_name = 1024;

struct Entry {
    std::string name;
    int32_t dtype = 0;             // px_dtype
    std::vector<int64_t> shape;
    std::vector<unsigned char> data;  // little-endian values, numel * dtype size bytes
};

std::vector<unsigned char> encode(const std::vector<Entry>& entries);
// An entry of `t`'s values, read back from its device (save_load.cpp).
Entry entry_of(const std::string& name, const plexus::Tensor& t);
// A CPU tensor of an entry's values (save_load.cpp).
plexus::Tensor tensor_of(const Entry& e);
// Throws plexus::Error (PX_ERROR_INVALID_ARGUMENT) naming `what` (the file)
// and the first problem found.
std::vector<Entry> decode(const unsigned char* bytes, size_t size, const std::string& what);
// Decodes the file at `path` as it reads it, handing each entry to `take`
// (its data is freed when `take` returns, so a load holds one entry's bytes
// beside what it keeps). The checksum is checked last: an entry taken is not
// known good until this returns. Errors as decode's.
void read_entries(const std::string& path, const std::function<void(Entry&)>& take);
// `s` for a message: bytes outside printable ASCII as \xNN, '\' as "\\",
// so a name from a file cannot put control characters into error text.
std::string printable(const std::string& s);

// Writes `bytes` to `path` through a temporary file in the same folder and a
// rename, so the old file stays whole until the new one is complete.
void write_atomically(const std::string& path, const std::vector<unsigned char>& bytes);
std::vector<unsigned char> read_file(const std::string& path);

}  // namespace plexus::nn::param_file
