// Past RLIMIT_FSIZE (ulimit -f) a write raises SIGXFSZ, which by default
// ends the process and leaves a half-written temporary file. While a
// FileSizeSignalHeld is alive the signal is blocked on this thread, so the
// write fails with EFBIG instead (an error with the reason); a SIGXFSZ the
// write raised is taken off the thread before the mask is restored.
// Internal to Plexus's libraries and tools (not installed).
#pragma once

#include <pthread.h>
#include <signal.h>

#include <ctime>

namespace px {

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

}  // namespace px
