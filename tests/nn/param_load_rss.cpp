// plexus-param-load-rss save|load FILE: `save` writes the parameters of a
// 64 MiB network (8 Dense layers of 2048 x 1024 float32) to FILE; `load`
// builds and initializes the same network, then loads FILE, waits for the
// work the load queued, and prints "<peak growth KiB> <file KiB> <device peak
// growth KiB>": the resident-memory peak during the load above the resident
// memory before it (the peak is reset first through /proc/self/clear_refs),
// and cpu(0)'s memory_peak above its memory_in_use before it. The network's
// own new parameters and gradients are in both: 2x the file's values
// whatever the loader does.
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "plexus/nn.hpp"

namespace {

long status_kib(const char* field) {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
    return -1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 || (std::strcmp(argv[1], "save") && std::strcmp(argv[1], "load"))) {
        std::fprintf(stderr, "usage: plexus-param-load-rss save|load FILE\n");
        return 2;
    }
    using namespace plexus;
    nn::Sequential net;
    for (int i = 0; i < 8; ++i) net.add(nn::Dense(1024, "", 2048));
    net.initialize(cpu());
    if (!std::strcmp(argv[1], "save")) {
        net.save_parameters(argv[2]);
        return 0;
    }
    struct stat st {};
    if (::stat(argv[2], &st) != 0) return 2;
    synchronize_all();
    const uint64_t device_before = device_info(cpu()).memory_in_use;
    std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
    const long before = status_kib("VmRSS:");
    net.load_parameters(argv[2]);
    synchronize_all();
    const long peak = status_kib("VmHWM:");
    if (before < 0 || peak < 0) return 3;
    const uint64_t device_peak = device_info(cpu()).memory_peak;
    std::printf("%ld %ld %ld\n", peak - before, long(st.st_size / 1024), long((device_peak - device_before) / 1024));
    return 0;
}
