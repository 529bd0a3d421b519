#include "elf_check.hpp"

#include <elf.h>

#include <vector>

#include "error.hpp"
#include "regular_file.hpp"

namespace px {
namespace {

// Reads exactly n bytes at `at`, or false.
bool read_at(int fd, void* dst, size_t n, uint64_t at) {
    auto* p = static_cast<unsigned char*>(dst);
    while (n > 0) {
        ssize_t got = ::pread(fd, p, n, static_cast<off_t>(at));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        p += got, n -= size_t(got), at += uint64_t(got);
    }
    return true;
}

// Whether [offset, offset + count * each) lies within `size` bytes.
bool within(uint64_t offset, uint64_t count, uint64_t each, uint64_t size) {
    uint64_t bytes, end;
    return !__builtin_mul_overflow(count, each, &bytes) && !__builtin_add_overflow(offset, bytes, &end) && end <= size;
}

std::string check_elf(int fd, uint64_t size) {
    Elf64_Ehdr h;
    if (size < sizeof h || !read_at(fd, &h, sizeof h, 0))
        return cat("not a shared library: ", size, " bytes, shorter than an ELF header (", sizeof h,
                   " bytes); the file may be truncated");
    if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) return "not a shared library: no ELF magic";
    if (h.e_ident[EI_CLASS] != ELFCLASS64) return "not a 64-bit ELF file";
    const std::string cut = cat(", past the end of the file (", size, " bytes); the file may be truncated");
    if (h.e_phentsize != sizeof(Elf64_Phdr)) return cat("its program headers are ", h.e_phentsize, " bytes each, not ", sizeof(Elf64_Phdr));
    if (!within(h.e_phoff, h.e_phnum, sizeof(Elf64_Phdr), size))
        return cat("its program header table (", h.e_phnum, " entries at byte ", h.e_phoff, ") runs", cut);
    if (h.e_shnum > 0 && !within(h.e_shoff, h.e_shnum, h.e_shentsize, size))
        return cat("its section header table (", h.e_shnum, " entries at byte ", h.e_shoff, ") runs", cut);
    std::vector<Elf64_Phdr> ph(h.e_phnum);
    if (!ph.empty() && !read_at(fd, ph.data(), ph.size() * sizeof(Elf64_Phdr), h.e_phoff))
        return "its program headers cannot be read";
    for (size_t i = 0; i < ph.size(); ++i) {
        if (ph[i].p_type == PT_LOAD && !within(ph[i].p_offset, ph[i].p_filesz, 1, size))
            return cat("its loadable segment ", i, " (", ph[i].p_filesz, " bytes at byte ", ph[i].p_offset, ") runs", cut);
    }
    return "";
}

}  // namespace

std::string check_plugin_file(const std::string& path) {
    struct stat st {};
    std::string why;
    const int fd = open_regular(path.c_str(), st, why);
    if (fd < 0) return why;
    why = check_elf(fd, static_cast<uint64_t>(st.st_size));
    ::close(fd);
    return why;
}

}  // namespace px
