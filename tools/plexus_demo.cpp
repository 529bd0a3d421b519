// plexus-demo: the seeds' GPU walkthrough on the best device there is
// (gpu(0) when a GPU plugin has one, otherwise the CPU).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "plexus/plexus.hpp"

using namespace plexus;

int main(int argc, char** argv) try {
    if (argc > 1) {  // it takes none: say so rather than run as if it had understood
        const std::string a = argv[1];
        const bool help = a == "--help" || a == "-h";
        std::fprintf(help ? stdout : stderr,
                     "%splexus-demo takes no arguments: it walks through the seeds' devices, tensors and copies on "
                     "the devices there are\n",
                     help ? "" : ("plexus-demo: unknown argument '" + a + "'\n").c_str());
        return help ? 0 : 2;
    }
    Device dev = try_gpu();
    Device dev1 = num_gpus() >= 2 ? gpu(1) : dev;
    std::cout << "devices: cpu(), gpu(), gpu(1) print as " << cpu() << ", " << gpu() << ", " << gpu(1) << "\n";
    std::cout << "num_gpus() = " << num_gpus() << ", try_gpu() = " << try_gpu() << ", try_gpu(10) = " << try_gpu(10)
              << "\n\n";

    Tensor x = array({1, 2, 3});
    std::cout << "x = array({1, 2, 3})\n" << x << "\nx.device() = " << x.device() << "\n\n";
    Tensor a = array({1, 2, 3}, dev);
    std::cout << "a = array({1, 2, 3}, " << dev << ")\n" << a << "\n\n";
    Tensor b = random_uniform({2, 3}, 0, 1, dev1);
    std::cout << "b = random_uniform({2, 3}, 0, 1, " << dev1 << ")\n" << b << "\n\n";
    Tensor y = x.copyto(dev);
    Tensor z = x.as_in_context(dev);
    std::cout << "y = x.copyto(" << dev << ")\n" << y << "\n";
    std::cout << "y.as_in_context(" << dev << ").is(y) = " << std::boolalpha << y.as_in_context(dev).is(y) << "\n";
    std::cout << "y.copyto(" << dev << ").is(y) = " << y.copyto(dev).is(y) << "\n\n";
    std::cout << "(z + 2).exp() * y\n" << (z + 2).exp() * y << "\n\n";
    try {
        Tensor sum = x + y;
        std::cout << "x + y (x and y are both on " << dev << ", so nothing needs moving)\n" << sum << "\n\n";
    } catch (const DeviceMismatchError& e) {
        std::cout << "x + y with x on cpu(0) and y on " << dev << ":\n  " << e.what() << "\n\n";
    }

    // Seed 003's exercise: a large and a small matrix product.
    for (int64_t n : {64, 1024}) {
        Tensor m = random_normal({n, n}, 0, 1, dev);
        synchronize(dev);
        auto t0 = std::chrono::steady_clock::now();
        Tensor p = matmul(m, m);
        synchronize(dev);
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::cout << n << "x" << n << " matrix product on " << dev << ": " << s * 1e3 << " ms ("
                  << 2.0 * double(n * n * n) / s / 1e9 << " GFLOP/s)\n";
    }
    auto info = device_info(dev);
    std::cout << "\n" << dev << " (" << info.name << "): " << info.memory_in_use / (1 << 20) << " MiB in use, peak "
              << info.memory_peak / (1 << 20) << " MiB\n";
    return 0;
} catch (const plexus::Error& e) {
    std::cerr << "plexus-demo: " << e.what() << "\n";
    return 1;
}
