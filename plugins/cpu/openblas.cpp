#include "openblas.hpp"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "address_space.hpp"

#ifndef PXCPU_OPENBLAS_FILE
#error "PXCPU_OPENBLAS_FILE: the OpenBLAS library CMake found (plugins/cpu/CMakeLists.txt)"
#endif

namespace pxcpu {
namespace {

constexpr const char* kSoname = "libopenblas.so.0";
constexpr int kMaxThreads = 64;                 // OpenBLAS's MAX_CPU_NUMBER in Debian's builds
constexpr size_t kSpare = size_t(64) << 20;  // a thread's malloc arena (glibc's HEAP_MAX_SIZE)

std::mutex loading;
std::atomic<bool> loaded{false};
OpenBlas table{};

int online_cores() { return int(std::clamp(sysconf(_SC_NPROCESSORS_ONLN), 1L, long(kMaxThreads))); }

int positive_env(const char* name) {
    const char* v = std::getenv(name);
    if (!v) return 0;
    const long n = std::strtol(v, nullptr, 10);
    return n > 0 && n <= 1 << 20 ? int(n) : 0;
}

template <class F>
bool resolve(void* library, const char* file, const char* name, F& out, std::string& why) {
    out = reinterpret_cast<F>(dlsym(library, name));
    if (!out) why = std::string("OpenBLAS (") + file + ") lacks " + name;
    return out != nullptr;
}

}  // namespace

bool open_openblas(const char* soname, const char* file, OpenBlas& out, std::string& why) {
    const int flags = RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE;
    void* library = dlopen(soname, flags | RTLD_NOLOAD);
    if (!library) library = dlopen(file, flags);
    if (!library) {
        const char* e = dlerror();
        const std::string first = e ? e : "no reason given";
        library = dlopen(soname, flags);
        if (!library) {
            why = std::string("cannot load OpenBLAS (") + file + "): " + first;
            return false;
        }
    }
    OpenBlas t{};
    if (!resolve(library, file, "cblas_sgemm", t.sgemm, why) || !resolve(library, file, "cblas_dgemm", t.dgemm, why) ||
        !resolve(library, file, "openblas_set_num_threads", t.set_num_threads, why) ||
        !resolve(library, file, "openblas_get_num_threads", t.get_num_threads, why) ||
        !resolve(library, file, "openblas_get_num_procs", t.get_num_procs, why) ||
        !resolve(library, file, "openblas_get_config", t.get_config, why) ||
        !resolve(library, file, "blas_memory_alloc", t.memory_alloc, why) ||
        !resolve(library, file, "blas_memory_free", t.memory_free, why))
        return false;
    out = t;
    return true;
}

const char* openblas_core_for_this_cpu() {
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                        __builtin_cpu_supports("avx512vl");
    if (!avx512) return nullptr;
    return __builtin_cpu_supports("avx512bf16") ? "Cooperlake" : "SkylakeX";
}

int openblas_load_threads() {
    const int cores = online_cores();
    const int omp = positive_env("OMP_NUM_THREADS");
    // The OpenMP build: OMP_NUM_THREADS, else every core.
    const int openmp_build = omp ? omp : cores;
    // The pthread build: the first of these set, else the cores, never more than the cores.
    int pthread_build = positive_env("OPENBLAS_NUM_THREADS");
    if (!pthread_build) pthread_build = positive_env("GOTO_NUM_THREADS");
    if (!pthread_build) pthread_build = omp;
    pthread_build = pthread_build ? std::min(pthread_build, cores) : cores;
    return std::clamp(std::max(openmp_build, pthread_build), 1, kMaxThreads);
}

bool room_for_openblas_buffers(int count, size_t extra, int& error) {
    std::vector<std::pair<void*, size_t>> mapped;
    error = 0;
    for (int i = extra ? -1 : 0; i < count && !error; ++i) {
        const size_t bytes = i < 0 ? extra : openblas_buffer_bytes;
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            error = errno;
        else
            mapped.emplace_back(p, bytes);
    }
    for (const auto& [p, bytes] : mapped) munmap(p, bytes);
    return error == 0;
}

px_status load_openblas(std::string& why) {
    if (loaded.load(std::memory_order_acquire)) return PX_OK;
    std::lock_guard<std::mutex> guard(loading);
    if (loaded.load(std::memory_order_relaxed)) return PX_OK;
    // Its buffers must fit unless it is loaded already (then they are mapped).
    const bool in_process = dlopen(kSoname, RTLD_NOW | RTLD_NOLOAD) != nullptr;
    if (!in_process) {
        const int threads = openblas_load_threads();
        struct stat file {};
        const size_t own = stat(PXCPU_OPENBLAS_FILE, &file) == 0 ? size_t(file.st_size) : kSpare;
        int error = 0;
        if (!room_for_openblas_buffers(threads, own + kSpare, error)) {
            why = "loading OpenBLAS needs " + mib_text(double(threads * openblas_buffer_bytes + own + kSpare)) +
                  " of address space (a work buffer of " + mib_text(double(openblas_buffer_bytes)) +
                  " for each of its " + std::to_string(threads) + " threads, the library's own " +
                  mib_text(double(own)) + " and " + mib_text(double(kSpare)) +
                  " to spare), and the address space has no room for it (mmap: " + std::strerror(error) + "; " +
                  address_space_text() + "); raise the limit";
            return PX_ERROR_OUT_OF_MEMORY;
        }
    }
    // OpenBLAS reads OPENBLAS_CORETYPE once, as it loads; the environment is
    // the user's again afterwards.
    const char* core = in_process || std::getenv("OPENBLAS_CORETYPE") ? nullptr : openblas_core_for_this_cpu();
    if (core) setenv("OPENBLAS_CORETYPE", core, 0);
    OpenBlas t{};
    const bool opened = open_openblas(kSoname, PXCPU_OPENBLAS_FILE, t, why);
    if (core) unsetenv("OPENBLAS_CORETYPE");
    if (!opened) return PX_ERROR_PLUGIN;
    table = t;
    loaded.store(true, std::memory_order_release);
    return PX_OK;
}

px_status openblas_use_threads(int threads, std::string& why) {
    const int now = openblas().get_num_threads();
    int error = 0;
    if (threads > now && !room_for_openblas_buffers(threads - now, 0, error)) {
        why = "OpenBLAS maps a work buffer of " + mib_text(double(openblas_buffer_bytes)) + " for each of its threads, " +
              std::to_string(threads) + " here where it has " + std::to_string(now) +
              ", and the address space has no room for them (mmap: " + std::strerror(error) + "; " +
              address_space_text() + "); raise the limit, or use fewer threads (OMP_NUM_THREADS)";
        return PX_ERROR_OUT_OF_MEMORY;
    }
    openblas().set_num_threads(threads);
    return PX_OK;
}

const OpenBlas& openblas() {
    if (!loaded.load(std::memory_order_acquire)) {
        std::string why;
        if (load_openblas(why) != PX_OK) throw std::runtime_error(why);
    }
    return table;
}

}  // namespace pxcpu
