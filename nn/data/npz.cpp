// NumPy's .npz format: a zip archive (libzip) with one .npy file per array,
// stored (np.savez) or deflated (np.savez_compressed), Zip64 headers
// included (NumPy writes them).
#include <unistd.h>
#include <zip.h>

#include <memory>

#include "file_errors.hpp"
#include "npy.hpp"

namespace plexus::data {
namespace {

struct ZipCloser {
    void operator()(zip_t* z) const { zip_discard(z); }  // read-only: nothing to write back
};
using Zip = std::unique_ptr<zip_t, ZipCloser>;

struct MemberCloser {
    void operator()(zip_file_t* f) const { zip_fclose(f); }
};

std::string zip_error_text(int code) {
    zip_error_t e;
    zip_error_init_with_code(&e, code);
    std::string text = zip_error_strerror(&e);
    zip_error_fini(&e);
    return text;
}

Zip open_zip(const std::string& path) {
    struct stat st {};
    const int fd = detail::open_data_file(path, st);
    int code = 0;
    zip_t* z = zip_fdopen(fd, ZIP_CHECKCONS, &code);  // owns fd from here on, when it succeeds
    if (!z) {
        ::close(fd);
        detail::bad(path, code == ZIP_ER_NOZIP ? "not an .npz file (not a zip archive)"
                                               : "cannot read it as an .npz file (a zip archive): " + zip_error_text(code));
    }
    return Zip(z);
}

// One member, inflated as it is read, never past the size the archive
// declares for it (a member that inflates to more is an error).
class MemberSource : public detail::ByteSource {
public:
    MemberSource(zip_t* z, zip_uint64_t index, uint64_t size, const std::string& where) : size_(size), where_(where) {
        file_.reset(zip_fopen_index(z, index, 0));
        if (!file_) detail::bad(where, std::string("cannot open: ") + zip_strerror(z));
    }
    size_t read(uint8_t* dst, size_t n) override {
        size_t done = 0;
        while (done < n) {
            const zip_int64_t got = zip_fread(file_.get(), dst + done, n - done);
            if (got < 0) detail::bad(where_, std::string("corrupt member: ") + zip_file_strerror(file_.get()));
            if (got == 0) break;
            done += size_t(got);
        }
        return done;
    }
    uint64_t size() const override { return size_; }

private:
    std::unique_ptr<zip_file_t, MemberCloser> file_;
    uint64_t size_;
    const std::string& where_;
};

// The array of member `index`, within what `max_bytes` leaves after `earlier`
// bytes of values (the arrays read before it).
Array read_member(zip_t* z, zip_uint64_t index, const std::string& path, uint64_t max_bytes, uint64_t earlier = 0) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z, index, 0, &st) != 0) detail::bad(path, std::string("cannot read the directory: ") + zip_strerror(z));
    const std::string where = path + ": member '" + st.name + "'";
    if (!(st.valid & ZIP_STAT_SIZE)) detail::bad(where, "the archive does not declare its size");
    MemberSource in(z, index, st.size, where);
    return detail::parse_npy(in, where, max_bytes, earlier);
}

// Member `index`'s name, less ".npy" for an array ("x" for "x.npy").
std::string member_key(zip_t* z, zip_uint64_t index, const std::string& path, bool* is_array = nullptr) {
    const char* member = zip_get_name(z, index, 0);
    if (!member) detail::bad(path, std::string("cannot read the directory: ") + zip_strerror(z));
    const std::string m = member;
    const std::string suffix = ".npy";
    const bool npy = m.size() > suffix.size() && m.compare(m.size() - suffix.size(), suffix.size(), suffix) == 0;
    if (is_array) *is_array = npy;
    return npy ? m.substr(0, m.size() - suffix.size()) : m;
}

// The array name of member `index`, or an error: NumPy's arrays are every
// member of an .npz.
std::string array_name(zip_t* z, zip_uint64_t index, const std::string& path) {
    bool npy = false;
    std::string key = member_key(z, index, path, &npy);
    if (!npy) detail::bad(path, "member '" + key + "' is not an .npy array (an .npz holds only those)");
    return key;
}

}  // namespace

std::map<std::string, Array> read_npz(const std::string& path, uint64_t max_bytes) {
    Zip z = open_zip(path);
    const zip_int64_t n = zip_get_num_entries(z.get(), 0);
    std::map<std::string, Array> out;
    uint64_t used = 0;
    for (zip_int64_t i = 0; i < n; ++i) {
        const std::string name = array_name(z.get(), zip_uint64_t(i), path);
        if (out.count(name)) detail::bad(path, "holds two arrays named '" + name + "'");
        Array a = read_member(z.get(), zip_uint64_t(i), path, max_bytes, used);
        used += a.bytes.size();
        out.emplace(name, std::move(a));
    }
    return out;
}

Array read_npz(const std::string& path, const std::string& name, uint64_t max_bytes) {
    Zip z = open_zip(path);
    const zip_int64_t i = zip_name_locate(z.get(), (name + ".npy").c_str(), 0);
    if (i < 0) {
        std::string arrays, others;  // what could be asked for, and the rest
        const zip_int64_t n = zip_get_num_entries(z.get(), 0);
        for (zip_int64_t k = 0; k < n; ++k) {
            bool npy = false;
            const std::string key = member_key(z.get(), zip_uint64_t(k), path, &npy);
            std::string& list = npy ? arrays : others;
            list += (list.empty() ? "" : ", ") + key;
        }
        detail::bad(path, "has no array '" + name + "' (its arrays: " + (arrays.empty() ? "none" : arrays) +
                              (others.empty() ? "" : "; other members: " + others) + ")");
    }
    return read_member(z.get(), zip_uint64_t(i), path, max_bytes);
}

}  // namespace plexus::data
