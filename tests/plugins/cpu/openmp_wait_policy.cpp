// The wait policy libgomp runs with once the CPU plugin has loaded it
// (plugins/cpu/openmp_policy.c, issue 37, item 17): the plugin's bounded
// spin when the user chose nothing, the user's OMP_WAIT_POLICY or
// GOMP_SPINCOUNT otherwise. libgomp reads its environment once, as it
// loads, so what counts is what libgomp itself reports: omp_display_env's
// verbose listing, read back from this process's error output. This program
// links neither libgomp nor the plugin: the plugin brings libgomp in when a
// runtime is made. Usage: plexus-openmp-wait-policy 'WANTED LINE'... (each
// must appear in the listing); exit 0 when all do.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "plexus/plexus.hpp"

namespace {

int check(int argc, char** argv) {
    if (dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD)) {
        std::fprintf(stderr, "libgomp was loaded before the plugin: this test proves nothing\n");
        return 2;
    }
    const std::vector<float> v = (plexus::ones({1 << 16}) * 3.0).to_vector<float>();  // the CPU plugin computes
    void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
    auto display = gomp ? reinterpret_cast<void (*)(int)>(dlsym(gomp, "omp_display_env")) : nullptr;
    if (v.back() != 3.0f || !display) {
        std::fprintf(stderr, "the plugin did not compute, or libgomp is not loaded: %s\n", dlerror());
        return 1;
    }
    // The listing goes to stderr: into a file for the time of the call.
    char path[] = "/tmp/plexus-omp-env-XXXXXX";
    const int fd = mkstemp(path);
    const int saved = dup(STDERR_FILENO);
    if (fd < 0 || saved < 0 || dup2(fd, STDERR_FILENO) < 0) return 2;
    display(1);
    std::fflush(stderr);
    dup2(saved, STDERR_FILENO);
    std::string listing;
    char buf[4096];
    lseek(fd, 0, SEEK_SET);
    for (ssize_t got; (got = read(fd, buf, sizeof buf)) > 0;) listing.append(buf, size_t(got));
    close(fd);
    unlink(path);

    void* lib = dlopen("libplexus-cpu-openmp-policy.so", RTLD_NOW | RTLD_NOLOAD);
    auto policy = lib ? reinterpret_cast<const char* (*)()>(dlsym(lib, "pxcpu_openmp_wait_policy")) : nullptr;
    std::printf("policy: %s\n", policy ? policy() : "(the policy library is not loaded)");
    int failures = 0;
    for (int i = 1; i < argc; ++i) {
        const bool found = listing.find(argv[i]) != std::string::npos ||
                           (policy && std::string(policy()).find(argv[i]) != std::string::npos);
        std::printf("%s: %s\n", found ? "ok  " : "FAIL", argv[i]);
        failures += found ? 0 : 1;
    }
    if (failures) std::printf("libgomp's listing:\n%s", listing.c_str());
    return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return check(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
