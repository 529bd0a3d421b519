// Opening a file that must be a regular one (a plugin, a parameter file, a
// data file). A plain open() of a FIFO blocks until a writer comes, and a
// device or socket never ends; so the open does not block, and anything but
// a regular file is refused with what it is.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace px {

// "a FIFO", "a folder", ... for messages.
inline const char* file_kind(mode_t mode) {
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    return "not a file";
}

// A read-only descriptor of the regular file at `path` (filling `st`), or -1
// with `why` saying what was wrong ("cannot open: ...", "not a regular file
// (a FIFO)").
inline int open_regular(const char* path, struct stat& st, std::string& why) {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        const int err = errno;
        if (::stat(path, &st) == 0 && !S_ISREG(st.st_mode))  // a socket cannot be opened at all
            why = std::string("not a regular file (") + file_kind(st.st_mode) + ")";
        else
            why = std::string("cannot open: ") + std::strerror(err);
        return -1;
    }
    if (::fstat(fd, &st) != 0) {
        why = std::string("cannot stat: ") + std::strerror(errno);
        ::close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        why = std::string("not a regular file (") + file_kind(st.st_mode) + ")";
        ::close(fd);
        return -1;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // reads of a regular file wait as usual
    return fd;
}

}  // namespace px
