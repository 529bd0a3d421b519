// The address space running out as the CPU plugin starts a matrix product
// (issue 37, item 10): OpenBLAS's allocator retried forever when it could
// not map its 128 MiB work buffer (plexus-train spun under `ulimit -v
// 600000`). Now the product fails with PX_ERROR_OUT_OF_MEMORY at the wait,
// naming the op and the figures; the device computes other ops meanwhile,
// and the same product is right once the room is back.
//
// In forked children, under an alarm that turns a hang into a failure: the
// device's thread and its OpenMP team are started by an elementwise op, then
// the soft RLIMIT_AS is set to what the process maps plus 48 MiB (room for
// small tensors, not for a buffer), then a product is asked for. A second
// child lowers the limit before the team has started. Exit 0 when every
// step holds. Not run in sanitizer builds (tests/CMakeLists.txt):
// their shadow memory needs more address space than a limit leaves.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "plexus/plexus.hpp"

using namespace plexus;

namespace {

constexpr int n = 256;

unsigned long long mapped_bytes() {
    unsigned long long pages = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        char line[128];
        if (std::fgets(line, sizeof line, f)) pages = std::strtoull(line, nullptr, 10);
        std::fclose(f);
    }
    return pages * static_cast<unsigned long long>(sysconf(_SC_PAGESIZE));
}

// Lowers the soft RLIMIT_AS to what the process maps plus `room` bytes;
// `old` (when given) gets the limit before. False, said, when refused.
bool leave_room(unsigned long long room, rlimit* old = nullptr) {
    rlimit limit{};
    getrlimit(RLIMIT_AS, &limit);
    if (old) *old = limit;
    limit.rlim_cur = mapped_bytes() + room;
    if (setrlimit(RLIMIT_AS, &limit) == 0) return true;
    std::perror("setrlimit");
    return false;
}

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

// 0 when every step holds; says which did not otherwise.
int product_refused() {
    const Device dev = cpu(0);
    Tensor a = random_uniform({n, n}, -1, 1, dev);
    const std::vector<float> av = a.to_vector<float>();
    (a * 2.0 + 1.0).exp().to_vector<float>();  // the worker and its OpenMP team start, under no limit

    rlimit old{};
    if (!leave_room(48ull << 20, &old)) return 2;
    int failures = 0;
    try {
        matmul(a, a).to_vector<float>();
        std::fprintf(stderr, "  the product ran with no room for OpenBLAS's buffer: did the limit not hold?\n");
        ++failures;
    } catch (const OutOfMemoryError& e) {
        const std::string m = e.what();
        std::fprintf(stderr, "  refused: %s\n", m.c_str());
        if (!(has(m, "gemm failed on cpu(0)") || has(m, "matmul failed on cpu(0)")) ||
            !has(m, "OpenBLAS needs a work buffer of 128 MiB") || !has(m, "MiB mapped of the ") ||
            !has(m, "that RLIMIT_AS (ulimit -v) allows")) {
            std::fprintf(stderr, "  the message lacks the op or the figures\n");
            ++failures;
        }
    }
    // Under the limit still: an op that needs no buffer is computed, right.
    const std::vector<float> twice = (a * 2.0).to_vector<float>();
    for (int i = 0; i < n * n; ++i) {
        if (twice[size_t(i)] != av[size_t(i)] * 2) {
            std::fprintf(stderr, "  a * 2 is wrong at %d after the refusal\n", i);
            ++failures;
            break;
        }
    }
    // The room back: the same product, right.
    setrlimit(RLIMIT_AS, &old);
    const std::vector<float> p = matmul(a, a).to_vector<float>();
    for (int i : {0, 1, n + 3, n * n - 1}) {
        const size_t r = size_t(i / n), c = size_t(i % n);
        double want = 0;
        for (size_t k = 0; k < size_t(n); ++k) want += double(av[r * n + k]) * av[k * n + c];
        if (std::fabs(p[size_t(i)] - want) > 1e-3) {
            std::fprintf(stderr, "  the product after the room came back is %g at %d, not %g\n", p[size_t(i)], i, want);
            ++failures;
        }
    }
    return failures == 0 ? 0 : 1;
}

// A tensor larger than the room left: the system refuses the block, and the
// error says so with the figures, not only the machine's free memory (which
// is plenty). Then a tensor that fits is made.
int tensor_refused() {
    const Device dev = cpu(0);
    full({4}, 1.0, dev).to_vector<float>();
    if (!leave_room(48ull << 20)) return 2;
    int failures = 0;
    try {
        full({64 << 18}, 1.0, dev).to_vector<float>();  // 64 MiB
        std::fprintf(stderr, "  a 64 MiB tensor was made: did the limit not hold?\n");
        ++failures;
    } catch (const OutOfMemoryError& e) {
        const std::string m = e.what();
        std::fprintf(stderr, "  refused: %s\n", m.c_str());
        if (!has(m, "out of memory on cpu(0)") || !has(m, "the system refused the block (") ||
            !has(m, "MiB mapped of the ") || !has(m, "that RLIMIT_AS (ulimit -v) allows")) {
            std::fprintf(stderr, "  the message lacks the figures\n");
            ++failures;
        }
    }
    const std::vector<float> small = full({1 << 18}, 3.0, dev).to_vector<float>();  // 1 MiB
    if (small.front() != 3.0f || small.back() != 3.0f) {
        std::fprintf(stderr, "  a tensor that fits is wrong after the refusal\n");
        ++failures;
    }
    return failures == 0 ? 0 : 1;
}

// The limit set before the device's OpenMP team has started: libgomp cannot
// start its threads and ends the process with exit(1) from the device's
// worker, whose own queue the exit drain then waited for, forever. Exits
// (with libgomp's status and message) instead.
int team_cannot_start() {
    const Device dev = cpu(0);
    Tensor small = full({4}, 1.0, dev);  // the runtime and the device's worker, no team yet
    small.to_vector<float>();
    // glibc keeps the stack of the thread the runtime loaded its plugins on
    // for the next thread: a parked thread takes it, so the team needs new ones.
    std::thread([] { ::pause(); }).detach();
    if (!leave_room(6ull << 20)) return 2;  // a tensor of 1 MiB, not a thread's 8 MiB stack
    (random_uniform({512, 512}, -1, 1, dev) * 2.0).exp().to_vector<float>();
    std::fprintf(stderr, "  the op ran: did OpenMP start its threads under the limit?\n");
    return 3;
}

int failures = 0;

// Runs `body` in a child, its error output in a file, under a 60 s alarm;
// it must exit with `want` and write `says`.
void in_child(const char* name, int (*body)(), int want, const char* says) {
    char path[] = "/tmp/plexus-address-space-XXXXXX";
    const int fd = mkstemp(path);
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0 || fd < 0) {
        std::perror("fork or mkstemp");
        std::exit(2);
    }
    if (pid == 0) {
        dup2(fd, STDERR_FILENO);
        alarm(60);
        int code = 1;
        try {
            code = body();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "  unexpected: %s\n", e.what());
        }
        std::fflush(nullptr);
        _exit(code);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    std::string err;
    char buf[4096];
    ssize_t got = 0;
    lseek(fd, 0, SEEK_SET);
    while ((got = read(fd, buf, sizeof buf)) > 0) err.append(buf, size_t(got));
    close(fd);
    unlink(path);
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == want && has(err, says);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) err += "  hung for 60 s\n";
    std::printf("%s: %s\n%s", ok ? "ok  " : "FAIL", name, err.c_str());
    if (!ok)
        std::printf("  wanted exit %d and '%s'; got %s %d\n", want, says, WIFEXITED(status) ? "exit" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    failures += ok ? 0 : 1;
}

}  // namespace

int main() {
    in_child("a matrix product with no room for OpenBLAS's buffer is an out-of-memory error", product_refused, 0, "");
    in_child("a tensor with no room in the address space is an out-of-memory error with the figures", tensor_refused,
             0, "");
    in_child("OpenMP unable to start a thread ends the process instead of hanging at exit", team_cannot_start, 1,
             "libgomp: Thread creation failed");
    return failures == 0 ? 0 : 1;
}
