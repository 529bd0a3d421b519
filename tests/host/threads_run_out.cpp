// When the system starts no more threads, a runtime does not come up
// quietly without its CPU plugin (issue 37, item 14): px_runtime_create
// fails with PX_ERROR_OUT_OF_MEMORY naming the thread, as it does when
// memory runs out, and succeeds once threads can start again. Tests run as
// root, where RLIMIT_NPROC is not enforced, so this program's own
// pthread_create (which the plugin's std::thread reaches before the C
// library's) refuses with EAGAIN while `refuse_threads` is set.
#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <string>

#include "plexus/plexus.h"

namespace {
std::atomic<bool> refuse_threads{false};
std::atomic<int> refused{0};
}  // namespace

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
    using Real = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
    static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "pthread_create"));
    if (refuse_threads.load()) {
        refused.fetch_add(1);
        return EAGAIN;
    }
    return real(thread, attr, start, arg);
}

int main() {
    const char* paths[] = {PLEXUS_CPU_PLUGIN_FILE};
    px_runtime_options options{sizeof options, paths, 1, 1, 0};
    px_runtime* rt = nullptr;
    refuse_threads.store(true);
    const px_status status = px_runtime_create(&options, &rt);
    refuse_threads.store(false);
    const std::string message = px_last_error();
    int failures = 0;
    if (status != PX_ERROR_OUT_OF_MEMORY || rt != nullptr || refused.load() == 0 ||
        message.find("no thread could be started") == std::string::npos) {
        std::fprintf(stderr, "threads_run_out: create gave %s (%d threads refused): %s\n", px_status_name(status),
                     refused.load(), message.c_str());
        ++failures;
    }
    // Threads again: the same runtime comes up and computes.
    const int64_t n = 3;
    px_tensor* t = nullptr;
    float got[3] = {};
    if (px_runtime_create(&options, &rt) != PX_OK ||
        px_tensor_full(rt, px_device{PX_DEVICE_CPU, 0}, PX_FLOAT32, 1, &n, 2.5, &t) != PX_OK ||
        px_tensor_to_host(t, got, sizeof got) != PX_OK || got[2] != 2.5f) {
        std::fprintf(stderr, "threads_run_out: afterwards: %s\n", px_last_error());
        ++failures;
    }
    px_tensor_release(t);
    if (rt) px_runtime_destroy(rt);
    if (failures == 0) std::printf("threads_run_out: refused with the reason, then computed\n");
    return failures == 0 ? 0 : 1;
}
