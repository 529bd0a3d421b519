// Parameter files: layout in docs/parameter-file.md.
#include "param_file.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <set>

#include "../regular_file.hpp"
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

// Reads little-endian fields, failing with the offset when the bytes run out.
struct Reader {
    const unsigned char* p;
    size_t size, at = 0;
    const std::string& what;
    void need(size_t n, const std::string& field) {
        if (n > size - at)
            bad(what, "truncated: " + field + " needs " + std::to_string(n) + " bytes at offset " + std::to_string(at) +
                          ", only " + std::to_string(size - at) + " remain");
    }
    uint64_t uint(int bytes, const std::string& field) {
        need(size_t(bytes), field);
        uint64_t v = 0;
        for (int i = 0; i < bytes; ++i) v |= uint64_t(p[at + i]) << (8 * i);
        at += size_t(bytes);
        return v;
    }
};

std::string errno_text() { return std::strerror(errno); }

}  // namespace

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
    put_u32(b, static_cast<uint32_t>(crc32(0L, b.data(), static_cast<uInt>(b.size()))));
    return b;
}

std::vector<Entry> decode(const unsigned char* bytes, size_t size, const std::string& what) {
    if (size < 20 || std::memcmp(bytes, magic, 8) != 0) {
        if (size >= 8 && std::memcmp(bytes, magic, 8) == 0) bad(what, "truncated: " + std::to_string(size) + " bytes is shorter than the header");
        bad(what, "not a Plexus parameter file (the first 8 bytes are not \"PXPARAMS\")");
    }
    Reader r{bytes, size - 4, 8, what};
    uint32_t v = uint32_t(r.uint(4, "the version"));
    if (v != version)
        bad(what, "format version " + std::to_string(v) + " is not supported (this build reads version " +
                      std::to_string(version) + ")");
    uint32_t stored = 0;
    for (int i = 0; i < 4; ++i) stored |= uint32_t(bytes[size - 4 + i]) << (8 * i);
    uint32_t actual = static_cast<uint32_t>(crc32(0L, bytes, static_cast<uInt>(size - 4)));
    if (stored != actual) bad(what, "checksum mismatch (the file is damaged or truncated)");
    uint64_t count = r.uint(4, "the entry count");
    std::vector<Entry> out;
    std::set<std::string> names;
    for (uint64_t i = 0; i < count; ++i) {
        std::string label = "entry " + std::to_string(i);
        Entry e;
        uint64_t len = r.uint(4, label + "'s name length");
        if (len == 0 || len > max_name) bad(what, label + " has a name of " + std::to_string(len) + " bytes (1.." + std::to_string(max_name) + " allowed)");
        r.need(size_t(len), label + "'s name");
        e.name.assign(reinterpret_cast<const char*>(r.p + r.at), size_t(len));
        r.at += size_t(len);
        label += " '" + e.name + "'";
        if (!names.insert(e.name).second) bad(what, label + " appears twice");
        e.dtype = int32_t(r.uint(4, label + "'s dtype"));
        size_t esize = px_dtype_size(e.dtype);
        if (esize == 0) bad(what, label + " has unknown dtype " + std::to_string(e.dtype));
        uint64_t ndim = r.uint(4, label + "'s rank");
        if (ndim > PX_MAX_DIMS) bad(what, label + " has rank " + std::to_string(ndim) + " (at most " + std::to_string(PX_MAX_DIMS) + ")");
        uint64_t numel = 1;
        for (uint64_t d = 0; d < ndim; ++d) {
            uint64_t dim = r.uint(8, label + "'s shape");
            if (dim > uint64_t(INT64_MAX)) bad(what, label + " has a negative dimension");
            if (dim != 0 && numel > UINT64_MAX / dim) bad(what, label + "'s dimensions overflow 64 bits");
            numel *= dim;
            e.shape.push_back(int64_t(dim));
        }
        uint64_t nbytes = r.uint(8, label + "'s data size");
        if (numel > UINT64_MAX / esize || nbytes != numel * esize)
            bad(what, label + " declares " + std::to_string(nbytes) + " bytes of data; its shape and dtype need " +
                          (numel > UINT64_MAX / esize ? std::string("more than 2^64") : std::to_string(numel * esize)));
        r.need(size_t(nbytes), label + "'s data");  // checked against the file before anything is allocated
        e.data.assign(r.p + r.at, r.p + r.at + nbytes);
        r.at += size_t(nbytes);
        out.push_back(std::move(e));
    }
    if (r.at != r.size) bad(what, std::to_string(r.size - r.at) + " unexpected bytes after the last entry");
    return out;
}

namespace {
// Past RLIMIT_FSIZE (ulimit -f) a write raises SIGXFSZ, which by default
// ends the process and leaves the temporary file. While this is alive the
// signal is blocked on this thread, so the write fails with EFBIG instead;
// a SIGXFSZ the write raised is taken off the thread before the mask is restored.
class FileSizeSignalHeld {
public:
    FileSizeSignalHeld() {
        sigemptyset(&xfsz_);
        sigaddset(&xfsz_, SIGXFSZ);
        pthread_sigmask(SIG_BLOCK, &xfsz_, &old_);
        sigset_t pending;
        sigpending(&pending);
        was_pending_ = sigismember(&pending, SIGXFSZ) == 1;
    }
    ~FileSizeSignalHeld() {
        if (!was_pending_ && !sigismember(&old_, SIGXFSZ)) {
            const timespec now{0, 0};
            while (sigtimedwait(&xfsz_, nullptr, &now) == SIGXFSZ) {}
        }
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    FileSizeSignalHeld(const FileSizeSignalHeld&) = delete;
    FileSizeSignalHeld& operator=(const FileSizeSignalHeld&) = delete;

private:
    sigset_t xfsz_, old_;
    bool was_pending_ = false;
};
}  // namespace

void write_atomically(const std::string& path, const std::vector<unsigned char>& bytes) {
    const FileSizeSignalHeld no_sigxfsz;
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
