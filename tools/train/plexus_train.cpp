// plexus-train: seed 002's LeNet on Fashion-MNIST, on the best device there
// is (or --device), printing per-epoch figures as the seed does, and writing
// metrics.csv, curves.svg and the trained parameters to --out.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "lenet.hpp"
#include "report.hpp"

using namespace plexus;

namespace {

struct Options {
    std::string device;  // empty: try_gpu()
    int epochs = 10;
    int64_t batch_size = 256;
    double lr = 0.1, momentum = 0, wd = 0;
    std::string data = data::default_fashion_mnist_folder();
    std::string out = "plexus-train-out";
    uint64_t seed = 42;
    bool progress = isatty(STDOUT_FILENO) != 0;
};

const char* usage =
    "usage: plexus-train [--device cpu:0|gpu:0] [--epochs N] [--batch-size N] [--lr X] [--momentum X] [--wd X]\n"
    "                    [--data FOLDER] [--out FOLDER] [--seed N] [--no-progress]\n"
    "Trains seed 002's LeNet on Fashion-MNIST (SGD, lr 0.1, batch 256, 10 epochs by default) on the first GPU,\n"
    "or the CPU when there is none; writes metrics.csv, curves.svg and lenet.params to --out.\n";

[[noreturn]] void die(const std::string& msg) {
    std::cerr << "plexus-train: " << msg << "\n";
    std::exit(2);
}

double number(const std::string& flag, const char* v, double lo, double hi) {
    char* end = nullptr;
    errno = 0;
    double x = std::strtod(v, &end);
    if (end == v || *end || errno || !(x >= lo && x <= hi))
        die(flag + " wants a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + v + "'");
    return x;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) die(a + " needs a value");
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            std::cout << usage;
            std::exit(0);
        } else if (a == "--device") o.device = value();
        else if (a == "--epochs") o.epochs = int(number(a, value(), 1, 100000));
        else if (a == "--batch-size") o.batch_size = int64_t(number(a, value(), 1, 1 << 20));
        else if (a == "--lr") o.lr = number(a, value(), 0, 1e6);
        else if (a == "--momentum") o.momentum = number(a, value(), 0, 1);
        else if (a == "--wd") o.wd = number(a, value(), 0, 1e6);
        else if (a == "--data") o.data = value();
        else if (a == "--out") o.out = value();
        else if (a == "--seed") o.seed = uint64_t(number(a, value(), 0, 9007199254740992.0));
        else if (a == "--no-progress") o.progress = false;
        else die("unknown option '" + a + "'\n" + usage);
    }
    return o;
}

Device parse_device(const std::string& s) {
    std::string kind = s.substr(0, s.find_first_of(":("));
    std::string rest = s.size() > kind.size() ? s.substr(kind.size() + 1) : "0";
    if (!rest.empty() && rest.back() == ')') rest.pop_back();
    char* end = nullptr;
    long idx = std::strtol(rest.c_str(), &end, 10);
    if (rest.empty() || *end || idx < 0) die("--device wants cpu:N or gpu:N, got '" + s + "'");
    if (kind == "cpu") return cpu(int(idx));
    if (kind == "gpu") return gpu(int(idx));
    die("--device wants cpu:N or gpu:N, got '" + s + "'");
}

void make_folder(const std::string& path) {
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
        die("cannot create the output folder " + path + ": " + std::strerror(errno));
}

}  // namespace

int main(int argc, char** argv) {
    Options o = parse(argc, argv);
    try {
        Device dev = o.device.empty() ? try_gpu() : parse_device(o.device);
        device_info(dev);  // a clear error now if the device does not exist
        make_folder(o.out);
        seed(o.seed);
        std::cout << "Loading Fashion-MNIST from " << o.data << "\n";
        data::ImageDataset train_set = data::fashion_mnist(true, o.data), test_set = data::fashion_mnist(false, o.data);
        data::DataLoader train_data(train_set, o.batch_size, true, dev, o.seed);
        data::DataLoader test_data(test_set, o.batch_size, false, dev);

        nn::Sequential net;
        train::add_lenet(net);
        net.initialize(dev);
        nn::Trainer trainer(net.collect_params(), "sgd", {{"learning_rate", o.lr}, {"momentum", o.momentum}, {"wd", o.wd}});
        std::cout << "Training on " << dev << " (" << device_info(dev).name << "): " << train_set.count
                  << " images, batch " << o.batch_size << ", " << o.epochs << " epochs, SGD lr " << o.lr << "\n"
                  << net.describe() << "\n";

        std::vector<train::EpochFigures> rows;
        for (int epoch = 0; epoch < o.epochs; ++epoch) {
            train::ProgressBar bar(o.progress, train_data.num_batches());
            train::EpochResult r = train::train_epoch(net, train_data, trainer, uint64_t(epoch),
                                                      [&](int64_t done, double s) { bar.update(done, s); });
            bar.finish();
            auto t0 = std::chrono::steady_clock::now();
            double test_acc = train::evaluate(net, test_data);
            double test_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            rows.push_back({epoch, r.loss, r.accuracy, test_acc, r.seconds, test_s});
            std::printf("Epoch %d: loss %.3f, train acc %.3f, test acc %.3f, in %.1f sec\n", epoch, r.loss, r.accuracy,
                        test_acc, r.seconds);
            std::fflush(stdout);
            train::write_csv(o.out + "/metrics.csv", rows);
            train::write_svg(o.out + "/curves.svg", rows, "LeNet on Fashion-MNIST, " + dev.str());
        }
        net.save_parameters(o.out + "/lenet.params");
        std::cout << "Wrote " << o.out << "/metrics.csv, " << o.out << "/curves.svg and " << o.out << "/lenet.params\n";
    } catch (const std::exception& e) {
        std::cerr << "plexus-train: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
