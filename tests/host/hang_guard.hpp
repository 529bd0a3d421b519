// Ends the test process with a message when a call blocks longer than it
// may (a FIFO opened for reading waits for a writer forever): a failure
// that says what hung, instead of a test run that never ends.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <cstring>

namespace pxtest {

class HangGuard {
public:
    HangGuard(unsigned seconds, const char* what) {
        what_ = what;
        signal(SIGALRM, &HangGuard::expired);
        alarm(seconds);
    }
    ~HangGuard() { alarm(0); }
    HangGuard(const HangGuard&) = delete;
    HangGuard& operator=(const HangGuard&) = delete;

private:
    static inline const char* what_ = "";
    static void expired(int) {
        const char* head = "\nHUNG (killed by the test's timeout): ";
        ssize_t ignored = write(2, head, std::strlen(head));
        ignored = write(2, what_, std::strlen(what_));
        ignored = write(2, "\n", 1);
        static_cast<void>(ignored);
        _exit(3);
    }
};

}  // namespace pxtest
