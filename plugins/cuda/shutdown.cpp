#include "shutdown.hpp"

#include <atomic>
#include <cstdlib>

#include "plexus/plugin_kit.hpp"

namespace pxcuda {
namespace {

// Trivially destructible: readable at any point of the exit.
std::atomic<bool> g_shut_down{false};
std::atomic<bool> g_watching{false};
std::atomic<bool> g_used{false};
std::atomic<uint64_t> g_used_in{0};  // the fork generation CUDA was first used in (plugin_kit.hpp)

constexpr const char* kShutDown =
    "cuda plugin: CUDA has shut down because the process is exiting; GPU work cannot run from a static "
    "destructor (release GPU tensors and runtimes before main returns)";
constexpr const char* kForkedChild =
    "cuda plugin: this process is a forked child of one that used CUDA, which does not survive fork(); the "
    "child cannot use the GPUs. Start worker processes with fork+exec (posix_spawn, Python multiprocessing's "
    "'spawn'), or fork before the first use of CUDA";


void on_exit() { g_shut_down.store(true); }

}  // namespace

void watch_for_exit() noexcept {
    if (!g_used.load()) {
        g_used_in.store(plexus::kit::fork_generation());
        g_used.store(true);
    }
    if (g_watching.exchange(true)) return;
    // In a shared library, atexit registers with the library's handle: the
    // handler also runs if the plugin is unloaded first, which is harmless.
    if (std::atexit(on_exit) != 0) g_watching.store(false);
}

bool forked_since_cuda() noexcept { return g_used.load() && g_used_in.load() != plexus::kit::fork_generation(); }

bool cuda_unusable() noexcept { return g_shut_down.load() || forked_since_cuda(); }

const char* cuda_unusable_reason() noexcept { return g_shut_down.load() ? kShutDown : kForkedChild; }

bool shut_down_by(cudaError_t e) noexcept {
    if (e != cudaErrorCudartUnloading) return false;
    g_shut_down.store(true);
    return true;
}

}  // namespace pxcuda
