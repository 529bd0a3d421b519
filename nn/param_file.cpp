// Parameter files: layout in docs/parameter-file.md.
#include "param_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <algorithm>
#include <functional>
#include <set>

#include "file_size_signal.hpp"
#include "regular_file.hpp"
#include "plexus/plexus.hpp"

namespace plexus::nn::param_file {
namespace {

[[noreturn]] void bad(const std::string& what, const std::string& why) {
    throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, what + ": " + why);
}

void put_u32(std::vector<unsigned char>& b, uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<unsigned char>(v >> (8 * i)));
}
void put_u64(std::vector<unsigned char>& b, uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

// Where the decoder's bytes come from: memory, or a file read through a
// buffer (so a file of many small entries is not a syscall per field).
class Source {
public:
    virtual ~Source() = default;
    // Exactly n bytes from the current position; false where they are not
    // there (a file that shrank while it was read).
    virtual bool read(unsigned char* dst, size_t n) = 0;
};

class MemorySource final : public Source {
public:
    MemorySource(const unsigned char* p, size_t n) : p_(p), left_(n) {}
    bool read(unsigned char* dst, size_t n) override {
        if (n > left_) return false;
        if (n) std::memcpy(dst, p_, n);
        p_ += n, left_ -= n;
        return true;
    }

private:
    const unsigned char* p_;
    size_t left_;
};

class FileSource final : public Source {
public:
    explicit FileSource(int fd) : fd_(fd) {}
    bool read(unsigned char* dst, size_t n) override {
        const size_t buffered = std::min(n, end_ - at_);
        if (buffered) std::memcpy(dst, buf_ + at_, buffered);  // dst may be null for an entry of no bytes
        at_ += buffered, dst += buffered, n -= buffered;
        if (n >= sizeof buf_) return read_fd(dst, n);  // large data straight into place
        while (n) {
            ssize_t got = ::read(fd_, buf_, sizeof buf_);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) return false;
            at_ = std::min(n, size_t(got)), end_ = size_t(got);
            std::memcpy(dst, buf_, at_);
            dst += at_, n -= at_;
        }
        return true;
    }

private:
    bool read_fd(unsigned char* dst, size_t n) {
        while (n) {
            ssize_t got = ::read(fd_, dst, n);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) return false;
            dst += got, n -= size_t(got);
        }
        return true;
    }
    int fd_;
    unsigned char buf_[1 << 16];
    size_t at_ = 0, end_ = 0;
};

// Exactly n bytes from `src`, or an error: the file is shorter than its size
// said when it was opened.
void take_bytes(Source& src, unsigned char* dst, size_t n, const std::string& what, const std::string& field) {
    if (!src.read(dst, n)) bad(what, "the file ended while reading " + field + " (did it change while it was read?)");
}

// Reads little-endian fields of the body (everything before the trailing
// checksum), summing the CRC as it goes and failing with the offset when the
// body runs out, before anything is allocated for a field.
struct Reader {
    Source& src;
    uint64_t size, at = 0;
    const std::string& what;
    uLong crc = crc32(0L, Z_NULL, 0);
    void need(uint64_t n, const std::string& field) const {
        if (n > size - at)
            bad(what, "truncated: " + field + " needs " + std::to_string(n) + " bytes at offset " + std::to_string(at) +
                          ", only " + std::to_string(size - at) + " remain");
    }
    void bytes(unsigned char* dst, size_t n, const std::string& field) {
        need(n, field);
        take_bytes(src, dst, n, what, field);
        if (n) crc = crc32_z(crc, dst, n);  // zlib gives the initial value for a null buffer (an empty entry's data)
        at += n;
    }
    uint64_t uint(int nbytes, const std::string& field) {
        unsigned char b[8];
        bytes(b, size_t(nbytes), field);
        uint64_t v = 0;
        for (int i = 0; i < nbytes; ++i) v |= uint64_t(b[i]) << (8 * i);
        return v;
    }
    // Sums the rest of the body and compares the trailer: false on a mismatch.
    bool checksum_matches() {
        unsigned char chunk[1 << 16];
        while (at < size) bytes(chunk, size_t(std::min<uint64_t>(sizeof chunk, size - at)), "the body");
        unsigned char t[4];
        take_bytes(src, t, 4, what, "the checksum");
        const uint32_t stored = uint32_t(t[0]) | uint32_t(t[1]) << 8 | uint32_t(t[2]) << 16 | uint32_t(t[3]) << 24;
        return stored == uint32_t(crc);
    }
};

std::string errno_text() { return std::strerror(errno); }

// "1 float32, 2 float64, ...": the dtypes this build reads, for messages.
std::string known_dtypes() {
    std::string known;
#define PLEXUS_KNOWN_DTYPE_(dtype, number, name, ...) known += (known.empty() ? "" : ", ") + std::string(#number " " #name);
    PX_DTYPE_TABLE(PLEXUS_KNOWN_DTYPE_)
#undef PLEXUS_KNOWN_DTYPE_
    return known;
}

// The decoder over any source of `size` bytes: entry by entry to `take`.
void decode_from(Source& src, uint64_t size, const std::string& what, const std::function<void(Entry&)>& take) {
    constexpr uint64_t header = 8 + 4 + 4 + 4;  // magic, version, entry count, checksum
    if (size == 0) bad(what, "is empty (0 bytes), not a Plexus parameter file");
    unsigned char head[8];
    const size_t n = size_t(std::min<uint64_t>(size, 8));
    take_bytes(src, head, n, what, "the header");
    if (std::memcmp(head, magic, n) != 0)
        bad(what, n == 8 ? "not a Plexus parameter file (the first 8 bytes are not \"PXPARAMS\")"
                         : "not a Plexus parameter file (its " + std::to_string(n) + " bytes do not begin \"PXPARAMS\")");
    if (size < header)
        bad(what, "truncated: " + std::to_string(size) + " bytes is shorter than the header (" + std::to_string(header) +
                      " bytes)");
    Reader r{src, size - 4, 8, what};
    r.crc = crc32_z(r.crc, head, 8);
    const uint32_t v = uint32_t(r.uint(4, "the version"));
    if (v != version)
        bad(what, "format version " + std::to_string(v) + " is not supported (this build reads version " +
                      std::to_string(version) + ")");
    // The checksum is known only at the end: a problem found before then is
    // reported as damage when the checksum does not match either.
    try {
        const uint64_t count = r.uint(4, "the entry count");
        std::set<std::string> names;
        for (uint64_t i = 0; i < count; ++i) {
            std::string label = "entry " + std::to_string(i);
            Entry e;
            const uint64_t len = r.uint(4, label + "'s name length");
            if (len == 0 || len > max_name)
                bad(what, label + " has a name of " + std::to_string(len) + " bytes (1.." + std::to_string(max_name) + " allowed)");
            r.need(len, label + "'s name");
            e.name.resize(size_t(len));
            r.bytes(reinterpret_cast<unsigned char*>(&e.name[0]), size_t(len), label + "'s name");
            label += " '" + printable(e.name) + "'";
            if (!names.insert(e.name).second) bad(what, label + " appears twice");
            e.dtype = int32_t(r.uint(4, label + "'s dtype"));
            const size_t esize = px_dtype_size(e.dtype);
            if (esize == 0)
                bad(what, label + " has unknown dtype " + std::to_string(e.dtype) +
                              " (a newer Plexus may have written it; this one reads " + known_dtypes() + ")");
            const uint64_t ndim = r.uint(4, label + "'s rank");
            if (ndim > PX_MAX_DIMS)
                bad(what, label + " has rank " + std::to_string(ndim) + " (at most " + std::to_string(PX_MAX_DIMS) + ")");
            uint64_t numel = 1;
            for (uint64_t d = 0; d < ndim; ++d) {
                const uint64_t dim = r.uint(8, label + "'s shape");
                if (dim > uint64_t(INT64_MAX)) bad(what, label + " has a negative dimension");
                if (dim != 0 && numel > UINT64_MAX / dim) bad(what, label + "'s dimensions overflow 64 bits");
                numel *= dim;
                e.shape.push_back(int64_t(dim));
            }
            const uint64_t nbytes = r.uint(8, label + "'s data size");
            if (numel > UINT64_MAX / esize || nbytes != numel * esize)
                bad(what, label + " declares " + std::to_string(nbytes) + " bytes of data; its shape and dtype need " +
                              (numel > UINT64_MAX / esize ? std::string("more than 2^64") : std::to_string(numel * esize)));
            r.need(nbytes, label + "'s data");  // checked against the file before anything is allocated
            e.data.resize(size_t(nbytes));
            r.bytes(e.data.data(), size_t(nbytes), label + "'s data");
            take(e);
        }
        if (r.at != r.size) bad(what, std::to_string(r.size - r.at) + " unexpected bytes after the last entry");
    } catch (const InvalidArgumentError&) {
        bool damaged = false;
        try {
            damaged = !r.checksum_matches();
        } catch (const InvalidArgumentError&) {}  // the file shrank: the first problem stands
        if (damaged) bad(what, "checksum mismatch (the file is damaged or truncated)");
        throw;
    }
    if (!r.checksum_matches()) bad(what, "checksum mismatch (the file is damaged or truncated)");
}

}  // namespace

std::string printable(const std::string& s) {
    static const char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c >= 0x20 && c < 0x7f) out += char(c);
        else out += {'\\', 'x', hex[c >> 4], hex[c & 15]};
    }
    return out;
}

std::vector<unsigned char> encode(const std::vector<Entry>& entries) {
    std::vector<unsigned char> b(magic, magic + 8);
    put_u32(b, version);
    put_u32(b, static_cast<uint32_t>(entries.size()));
    for (const Entry& e : entries) {
        put_u32(b, static_cast<uint32_t>(e.name.size()));
        b.insert(b.end(), e.name.begin(), e.name.end());
        put_u32(b, static_cast<uint32_t>(e.dtype));
        put_u32(b, static_cast<uint32_t>(e.shape.size()));
        for (int64_t d : e.shape) put_u64(b, static_cast<uint64_t>(d));
        put_u64(b, e.data.size());
        b.insert(b.end(), e.data.begin(), e.data.end());
    }
    put_u32(b, static_cast<uint32_t>(crc32_z(0L, b.data(), b.size())));
    return b;
}

std::vector<Entry> decode(const unsigned char* bytes, size_t size, const std::string& what) {
    MemorySource src(bytes, size);
    std::vector<Entry> out;
    decode_from(src, size, what, [&](Entry& e) { out.push_back(std::move(e)); });
    return out;
}

void read_entries(const std::string& path, const std::function<void(Entry&)>& take) {
    struct stat st {};
    std::string why;
    const int fd = px::open_regular(path.c_str(), st, why);
    if (fd < 0) bad(path, why);
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    FileSource src(fd);
    decode_from(src, uint64_t(st.st_size), path, take);
}


void write_atomically(const std::string& path, const std::vector<unsigned char>& bytes) {
    const px::FileSizeSignalHeld no_sigxfsz;
    // One name per save: two threads saving to one path must not write into
    // one temporary file (the last rename would then publish a mix of both).
    static std::atomic<uint64_t> saves{0};
    std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(saves++);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) bad(path, "cannot create " + tmp + ": " + errno_text());
    size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            std::string why = errno_text();
            ::close(fd);
            ::unlink(tmp.c_str());
            bad(path, "writing " + tmp + " failed: " + why);
        }
        done += size_t(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        std::string why = errno_text();
        ::unlink(tmp.c_str());
        bad(path, "flushing " + tmp + " failed: " + why);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        std::string why = errno_text();
        ::unlink(tmp.c_str());
        bad(path, "replacing the file failed: " + why);
    }
}

std::vector<unsigned char> read_file(const std::string& path) {
    struct stat st {};
    std::string why;
    int fd = px::open_regular(path.c_str(), st, why);
    if (fd < 0) bad(path, why);
    std::vector<unsigned char> b(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < b.size()) {
        ssize_t n = ::read(fd, b.data() + done, b.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += size_t(n);
    }
    ::close(fd);
    b.resize(done);
    return b;
}

}  // namespace plexus::nn::param_file
