// plexus-train: seed 002's LeNet (or --net mlp) on Fashion-MNIST, on the best device there
// is (or --device; a list trains data-parallel over those devices), printing
// per-epoch figures as the seed does, and writing metrics.csv, curves.svg and
// the trained parameters to --out. With --distributed (under mpirun) every
// rank trains on its shard of each batch and the gradients are summed over
// the ranks every step; rank 0 prints, plots and saves.
#include <sys/resource.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>

#include "../device_arg.hpp"
#include "checkpoint.hpp"
#include "lenet.hpp"
#include "plexus/mpi.hpp"
#include "ranks.hpp"
#include "report.hpp"
#include "step_trace.hpp"
#include "train_data.hpp"

using namespace plexus;

namespace {

struct Options {
    std::string device;  // "cpu:0,cpu:1": data-parallel over both
    bool device_given = false;  // otherwise try_gpu()
    int epochs = 10;
    int64_t batch_size = 256;
    double lr = 0.1, momentum = 0, wd = 0;
    std::string data = data::default_fashion_mnist_folder();
    std::string out = "plexus-train-out";
    uint64_t seed = 42;
    bool progress = isatty(STDOUT_FILENO) != 0;
    bool distributed = false;
    int64_t max_batches = -1;  // per epoch; -1: all
    const train::Network* net = &train::networks[0];
    DType dtype = DType::float32;  // what the layers compute in (nn::Autocast)
    std::string optimizer = "sgd";
    bool momentum_given = false;
    std::string resume;  // a folder with a checkpoint to go on from
    std::string schedule = "constant";
    std::string trace;  // --trace FILE: steps 2-4 of the first epoch (step_trace.hpp)
};

const char* usage =
    "usage: plexus-train [--device D[,D...]] [--epochs N] [--batch-size N] [--lr X] [--momentum X] [--wd X]\n"
    "                    [--data FOLDER|FILE.npz] [--out FOLDER] [--seed N] [--max-batches N] [--net lenet|mlp|lenet-bn|resnet18]\n"
    "                    [--dtype float32|bfloat16|float16] [--optimizer sgd|nag|adam|adamw|adagrad|rmsprop|adadelta]\n"
    "                    [--resume FOLDER]\n"
    "                    [--lr-schedule constant|cosine|step] [--trace FILE]\n"
    "                    [--no-progress]\n"
    "       mpirun -np N plexus-train --distributed [the same options]\n"
    "Trains seed 002's LeNet on Fashion-MNIST (SGD, lr 0.1, batch 256, 10 epochs by default) on the first GPU,\n"
    "or the CPU when there is none; writes metrics.csv, curves.svg and lenet.params (NET.params) to --out.\n"
    "  --device cpu:0,cpu:1   split every batch over these devices (data parallelism in one process)\n"
    "  --distributed          one process per rank, each on its shard of every batch, gradients summed over\n"
    "                         the ranks (MPI); each rank uses --device, or its local GPU, or the CPU\n"
    "  --data FOLDER|FILE.npz Fashion-MNIST's IDX files in FOLDER (the default: Debian's), or a NumPy .npz with\n"
    "                         x_train, y_train, x_test, y_test: images (N, H, W) or (N, C, H, W), uint8\n"
    "                         (normalized as Fashion-MNIST) or float, labels 0..9\n"
    "  --max-batches N        train on the first N batches of each epoch, and test on the first N batches of\n"
    "                         the test set too (the epoch line says how many test images that was)\n"
    "  --net NAME             the network: seed 002's LeNet (lenet, the default), a 784-1024-1024-10 MLP (mlp)\n"
    "                         d2l's LeNet with BatchNorm (lenet-bn) or ResNet-18 (resnet18); BatchNorm's\n"
    "                         statistics are each device's own, as in d2l\n"
    "  --dtype D              mixed precision: the layers compute in bfloat16 or float16, the parameters,\n"
    "                         gradients and SGD stay float32; float16 scales the loss dynamically\n"
    "  --optimizer NAME       sgd (default), nag (Nesterov momentum), adam, adamw, adagrad, rmsprop or\n"
    "                         adadelta (lr, --wd; --momentum for sgd and nag only)\n"
    "  --lr-schedule S        constant (default); cosine, from --lr down to 0 over the run's updates; step,\n"
    "                         --lr divided by 10 at half and again at three quarters of them\n"
    "  --resume FOLDER        go on from the checkpoint a run left in FOLDER (its --out; after each epoch it\n"
    "                         writes checkpoint-N/ and checkpoint.epoch), with the same options and data, on\n"
    "                         as many devices (and ranks)\n"
    "                         (--epochs may grow without a schedule); the run ends with the parameters of an\n"
    "                         unbroken one, and metrics.csv and curves.svg hold all its epochs. --epochs N,\n"
    "                         the checkpoint's epoch, trains nothing and writes the outputs again; fewer: an error.\n"
    "                         With --distributed the ranks must share FOLDER\n"
    "  --trace FILE           write a trace of steps 2 to 4 of the first epoch (fewer if it is shorter; none\n"
    "                         of one step) to FILE (Chrome trace JSON: ui.perfetto.dev, chrome://tracing), its\n"
    "                         per-op summary beside it (FILE less .json, plus .summary.txt), and print the\n"
    "                         summary; with --distributed, rank 0 traces\n"
    "An epoch's last batch is left out (and the run says so) when it cannot give every device an image (two\n"
    "with --net lenet-bn, whose BatchNorm after a dense layer has no statistics of one image).\n"
    "A test set without images gives no test accuracy: 'n/a' on screen, an empty test_acc in metrics.csv, no\n"
    "test curve in curves.svg. With --distributed every rank must have the same options (but --device, --data\n"
    "and --out), data (sizes and bytes: a copy of its own is fine) and network; otherwise all stop, naming\n"
    "the first difference.\n";

[[noreturn]] void die(const std::string& msg) {
    std::cerr << "plexus-train: " << msg << "\n";
    std::exit(2);
}

// Plain decimal: an optional minus, digits, an optional point and exponent
// ("1e-4"). strtod alone takes "0x10" (16), "inf", "nan" or " 3".
bool plain_decimal(const char* v) {
    const char* digits = v[0] == '-' ? v + 1 : v;
    const bool starts = std::isdigit(static_cast<unsigned char>(digits[0])) || digits[0] == '.';
    return starts && std::strspn(digits, "0123456789.eE+-") == std::strlen(digits);
}

// A number in [lo, hi]; a whole one when `whole` (counts, sizes, seeds).
// Digits alone are read exactly (a seed above 2^53 is not rounded into the
// range); a value too small for a double's normal range is still a value.
double number(const std::string& flag, const char* v, double lo, double hi, bool whole = false) {
    if (!plain_decimal(v)) die(flag + " wants a plain decimal number (digits, '.', an exponent), got '" + v + "'");
    char* end = nullptr;
    errno = 0;
    double x = std::strtod(v, &end);
    const bool overflow = errno == ERANGE && std::isinf(x);
    bool exact = true;
    if (whole && std::strspn(v, "0123456789") == std::strlen(v)) {
        errno = 0;
        const unsigned long long n = std::strtoull(v, nullptr, 10);
        exact = errno == 0 && n <= uint64_t(hi) && double(n) == x;
    }
    if (end == v || *end || overflow || !exact || !(x >= lo && x <= hi) || (whole && x != std::floor(x))) {
        char range[96];
        std::snprintf(range, sizeof range, "%s in [%.17g, %.17g]", whole ? "a whole number" : "a number", lo, hi);
        die(flag + " wants " + range + ", got '" + v + "'");
    }
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
        } else if (a == "--device") {
            o.device = value();
            o.device_given = true;
        }
        else if (a == "--epochs") o.epochs = int(number(a, value(), 1, 100000, true));
        else if (a == "--batch-size") o.batch_size = int64_t(number(a, value(), 1, 1 << 20, true));
        else if (a == "--lr") o.lr = number(a, value(), 0, 1e6);
        else if (a == "--momentum") o.momentum = number(a, value(), 0, 1), o.momentum_given = true;
        else if (a == "--optimizer") {
            o.optimizer = value();
            const std::string known[] = {"sgd", "nag", "adam", "adamw", "adagrad", "rmsprop", "adadelta"};
            if (std::find(std::begin(known), std::end(known), o.optimizer) == std::end(known))
                die("--optimizer wants sgd, nag, adam, adamw, adagrad, rmsprop or adadelta, got '" + o.optimizer + "'");
        }
        else if (a == "--resume") o.resume = value();
        else if (a == "--lr-schedule") {
            o.schedule = value();
            if (o.schedule != "constant" && o.schedule != "cosine" && o.schedule != "step")
                die("--lr-schedule wants constant, cosine or step, got '" + o.schedule + "'");
        }
        else if (a == "--wd") o.wd = number(a, value(), 0, 1e6);
        else if (a == "--data") o.data = value();
        else if (a == "--out") o.out = value();
        else if (a == "--seed") o.seed = uint64_t(number(a, value(), 0, 9007199254740992.0, true));
        else if (a == "--no-progress") o.progress = false;
        else if (a == "--distributed") o.distributed = true;
        else if (a == "--trace") o.trace = value();
        else if (a == "--max-batches") o.max_batches = int64_t(number(a, value(), 1, 1e12, true));
        else if (a == "--net") {
            std::string name = value();
            o.net = nullptr;
            for (const auto& n : train::networks)
                if (name == n.flag) o.net = &n;
            if (!o.net) die("--net wants lenet, mlp, lenet-bn or resnet18, got '" + name + "'");
        }
        else if (a == "--dtype") {
            const std::string name = value();
            if (name == "float32") o.dtype = DType::float32;
            else if (name == "bfloat16") o.dtype = DType::bfloat16;
            else if (name == "float16") o.dtype = DType::float16;
            else die("--dtype wants float32, bfloat16 or float16, got '" + name + "'");
        }
        else die("unknown option '" + a + "'\n" + usage);
    }
    if (o.momentum_given && o.optimizer != "sgd" && o.optimizer != "nag")
        die("--momentum applies to sgd and nag; " + o.optimizer + " keeps its own state");
    // One trace of a runtime at a time: PLEXUS_TRACE's covers the whole run.
    if (const char* env = std::getenv("PLEXUS_TRACE"); env && *env && !o.trace.empty())
        die("--trace and PLEXUS_TRACE=" + std::string(env) +
            " both ask for a trace of this run: give one (PLEXUS_TRACE traces all of it, --trace steps 2 to 4)");
    return o;
}

Device parse_device(const std::string& s, const std::string& list) {
    if (s.empty()) die("--device names no device in '" + list + "': give cpu:N, gpu:N or a plugin's kind, e.g. naive:0");
    std::string why;
    if (auto d = pxtools::parse_device_arg(s, &why)) return *d;
    die("--device: " + why);
}

std::vector<Device> parse_devices(const std::string& list) {
    std::vector<Device> out;
    size_t start = 0;
    for (;;) {
        size_t comma = list.find(',', start);
        Device d = parse_device(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start), list);
        for (Device seen : out)
            if (seen == d) die("--device lists " + d.str() + " twice");
        out.push_back(d);
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

// Makes --out; says whether this run made it (so a failed run removes it again if still empty).
bool make_folder(const std::string& path) {
    std::error_code e;
    const bool made = std::filesystem::create_directories(path, e);
    if (e) die("cannot create the output folder " + path + ": " + e.message());
    return made;
}

// A folder this run made and left empty: gone again (a refused --resume, a missing data set).
void remove_if_made_and_empty(bool made, const std::string& path) {
    std::error_code e;
    if (made && std::filesystem::is_empty(path, e) && !e) std::filesystem::remove(path, e);
}

// Why nothing can be written in `folder` (a probe file made and removed), or "".
std::string writable_folder(const std::string& folder) {
    const std::string probe = folder + "/.plexus-train-write-check";
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) return std::strerror(errno);
    if (fd >= 0) ::close(fd);
    ::unlink(probe.c_str());
    return "";
}

// Why `path` cannot be written, or "": opened without truncating what is
// there; `made` says whether this made it (removed again if nothing is traced).
std::string writable_file(const std::string& path, bool& made) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    made = fd >= 0;
    if (fd < 0 && errno == EEXIST) fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return std::strerror(errno);
    ::close(fd);
    return "";
}

// The ranks of a --distributed run (one rank, doing nothing, otherwise).
struct Ranks {
    std::unique_ptr<train::Ranks> mpi;  // from libplexus-train-mpi, for --distributed only
    int rank = 0, size = 1, local = 0;
    Ranks(bool distributed, int& argc, char**& argv) {
        if (!distributed) return;
        try {
            mpi = train::open_mpi_ranks(argc, argv);
        } catch (const std::exception& e) {
            die(e.what());
        }
        rank = mpi->rank();
        size = mpi->size();
        local = mpi->local_rank();
    }
    // Sums over the ranks.
    void sum(std::vector<double>& v, const char* what) {
        if (mpi) mpi->sum(v, what);
    }
    // Every rank knows `why` (World::disagreement): rank 0 says it, and every
    // rank leaves MPI cleanly and exits 2, as for a bad option.
    [[noreturn]] void stop(const std::string& why) {
        if (rank == 0) std::cerr << "plexus-train: " << why << "\n";
        mpi.reset();  // MPI_Finalize
        std::exit(2);
    }
    [[noreturn]] void fail(const std::string& why) {
        if (mpi && size > 1) mpi->abort("plexus-train: " + why);
        std::cerr << "plexus-train: " << why << "\n";
        std::exit(1);
    }
};

// The options that shape a run's results (what ranks must agree on, and
// what a resumed run must repeat), as (option, value).
train::Settings run_settings(const Options& o) {
    auto g = [](double v) {
        char b[32];
        std::snprintf(b, sizeof b, "%.17g", v);
        return std::string(b);
    };
    return {{"--epochs", std::to_string(o.epochs)},
            {"--batch-size", std::to_string(o.batch_size)},
            {"--max-batches", o.max_batches > 0 ? std::to_string(o.max_batches) : "all"},
            {"--net", o.net->flag},
            {"--optimizer", o.optimizer},
            {"--lr-schedule", o.schedule},
            {"--dtype", name(o.dtype)},
            {"--seed", std::to_string(o.seed)},
            {"--lr", g(o.lr)},
            {"--momentum", g(o.momentum)},
            {"--wd", g(o.wd)}};
}

// Before the first collective: every rank must have the settings, data and
// parameter shapes of rank 0, or the ranks would pass MPI buffers of
// different sizes (heap corruption inside MPI) or train different models.
// Devices and folders may differ between ranks (machines differ); --data is
// compared through what it holds (sizes, and a checksum of its bytes).
void check_ranks_agree(Ranks& ranks, const Options& o, const train::TrainData& sets, nn::Sequential& net,
                       const Device& dev) {
    // Complete the deferred shapes with one zero image (no RNG is drawn
    // in between, so the initial values are those of the first batch's).
    Shape one{1};
    for (int64_t d : sets.image()) one.push_back(d);
    net(full(one, 0.0, dev));
    auto images = [&](bool train) { return std::to_string(sets.count(train)) + " images of " + str(sets.image()); };
    mpi::Facts facts = run_settings(o);
    facts.emplace_back("the training set in --data", images(true));
    facts.emplace_back("the test set in --data", images(false));
    // The same bytes too (a copy of its own is fine): ranks sharding one batch
    // must read one data set, and a resume compares it with the checkpoint's.
    facts.emplace_back("what --data holds", sets.contents());
    for (auto& fact : mpi::parameter_shapes(net.collect_params())) facts.push_back(fact);
    const std::string why = ranks.mpi->disagreement(facts);
    if (!why.empty()) ranks.stop(why);
}

// What memory running out in the host (a std::bad_alloc, which names
// nothing) is reported with: the stage, and the process's address space
// against its limit (ulimit -v), from /proc/self/status.
std::string host_memory_ran_out(const std::string& stage) {
    std::string why = "out of host memory while " + stage;
    auto mib = [](unsigned long long bytes) { return std::to_string(bytes >> 20) + " MiB"; };
    unsigned long long size_kib = 0, peak_kib = 0;
    if (FILE* f = std::fopen("/proc/self/status", "r")) {
        char line[256];
        while (std::fgets(line, sizeof line, f)) {
            if (std::strncmp(line, "VmSize:", 7) == 0) size_kib = std::strtoull(line + 7, nullptr, 10);
            if (std::strncmp(line, "VmPeak:", 7) == 0) peak_kib = std::strtoull(line + 7, nullptr, 10);
        }
        std::fclose(f);
    }
    why += " (address space: " + mib(size_kib << 10) + " mapped, at most " + mib(peak_kib << 10);
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        why += ", of the " + mib(limit.rlim_cur) + " that RLIMIT_AS (ulimit -v) allows)";
    else
        why += "; no address-space limit)";
    return why;
}

// What a checkpoint records: the run's settings, and the data by what it
// holds (ranks may read it from paths of their own, and it may move).
train::Settings checkpoint_settings(const Options& o, const train::TrainData& sets, const std::vector<Device>& devices,
                                    int ranks) {
    train::Settings s = run_settings(o);
    s.emplace_back("--data", sets.contents());
    std::string list;
    for (Device d : devices) list += (list.empty() ? "" : ", ") + d.str();
    s.emplace_back("devices", list);
    s.emplace_back("ranks", std::to_string(ranks));
    std::error_code e;
    std::string path = std::filesystem::absolute(o.data, e).string();
    if (e) path = o.data;
    std::replace_if(path.begin(), path.end(), [](char c) { return c == '\n' || c == '\r'; }, '?');  // run.txt's lines
    s.emplace_back("data_path", path);
    return s;
}

// Where a resumed run goes on from: the checkpoint's epoch and the figures
// of the epochs before it, with the parameters and the trainer's and loss
// scaler's states loaded.
struct Resumed {
    int first_epoch = 0;
    std::vector<train::EpochFigures> history;
};

Resumed resume(const Options& o, const train::Settings& now, Ranks& ranks, nn::Block& net, nn::Trainer& trainer,
               nn::LossScaler* scaler, const std::vector<Device>& devices) {
    const train::Checkpoint c = train::read_checkpoint(o.resume);
    const std::string why = train::resume_mismatch(c.settings, now);
    if (!why.empty()) throw std::runtime_error("--resume " + o.resume + ": " + why);
    // Every rank goes on from the same epoch (the folder must be one they share).
    std::vector<double> epochs{double(c.next_epoch), double(c.next_epoch) * c.next_epoch};
    ranks.sum(epochs, "agreeing on the epoch to resume from");
    if (epochs[0] * epochs[0] != double(ranks.size) * epochs[1])
        throw std::runtime_error("--resume " + o.resume + ": the ranks found checkpoints of different epochs");
    if (o.epochs < c.next_epoch)
        throw std::runtime_error("--resume " + o.resume + ": the checkpoint is at epoch " + std::to_string(c.next_epoch) +
                                 " (" + std::to_string(c.next_epoch) + " epochs trained), past --epochs " +
                                 std::to_string(o.epochs) + ": give --epochs " + std::to_string(c.next_epoch + 1) +
                                 " or more to train on");
    net.load_parameters(c.dir + "/params", devices);
    trainer.load_states(c.dir + "/states");
    if (scaler && c.scaler) scaler->set_state(*c.scaler);
    if (ranks.rank == 0) {
        std::cout << "Resuming from " << c.dir << " at epoch " << c.next_epoch << "\n";
        const auto value = [](const train::Settings& s, const char* key) {
            for (const auto& [k, v] : s)
                if (k == key) return v;
            return std::string();
        };
        if (const std::string then = value(c.settings, "devices"), here = value(now, "devices"); !then.empty() && then != here)
            std::cout << "(the checkpoint was written on " << then << "; this run continues on " << here
                      << ", rounding as they do)\n";
    }
    return {c.next_epoch, c.history};
}

// metrics.csv and curves.svg in --out, of every epoch so far.
void write_reports(const Options& o, const std::vector<train::EpochFigures>& rows, const std::string& title) {
    train::write_csv(o.out + "/metrics.csv", rows);
    train::write_svg(o.out + "/curves.svg", rows, title);
}

// The test accuracy as the epoch line shows it: "n/a" without test images,
// and how many were tested when --max-batches cut the test pass short.
std::string test_accuracy_text(const std::optional<double>& acc, double tested, int64_t test_images) {
    if (!acc) return "n/a (no test images)";
    std::string text = train::fixed(*acc, 3);
    if (tested < double(test_images))
        text += " (on " + std::to_string(int64_t(tested)) + " of " + std::to_string(test_images) + " test images)";
    return text;
}

}  // namespace

int main(int argc, char** argv) {
    Options o = parse(argc, argv);
    Ranks ranks(o.distributed, argc, argv);
    const bool lead = ranks.rank == 0;
    std::string stage = "starting";  // for an error that names nothing (std::bad_alloc)
    bool made_out = false, made_trace = false;
    // After a failure: what this run made and left empty goes again.
    const auto remove_what_was_made = [&] {
        std::error_code e;
        if (made_trace && std::filesystem::is_empty(o.trace, e) && !e) std::filesystem::remove(o.trace, e);
        remove_if_made_and_empty(made_out, o.out);
    };
    try {
        std::vector<Device> devices;
        if (o.device_given) devices = parse_devices(o.device);
        else if (o.distributed) devices = {num_gpus() > 0 ? gpu(ranks.local % num_gpus()) : cpu()};
        else devices = {try_gpu()};
        if (o.distributed && devices.size() > 1) die("--distributed takes one device per rank");
        for (Device d : devices) {  // a clear error now if a device does not exist
            try {
                device_info(d);
            } catch (const plexus::Error& e) {
                if (o.distributed) throw;  // every rank must stop: ranks.fail
                die(std::string("--device: ") + e.what());  // a usage error, as a malformed device is
            }
        }
        // Every device of every rank needs its part of each batch (two rows
        // where BatchNorm follows a dense layer: one row has no batch
        // statistics): a last batch too small for that is left out.
        const int64_t parts = int64_t(devices.size()) * ranks.size, need = parts * o.net->min_rows;
        if (o.batch_size < need)
            die("--batch-size " + std::to_string(o.batch_size) + " is too small to split: " +
                (parts > 1 ? "each of the " + std::to_string(parts) + " devices" : std::string("the device")) +
                " needs " + std::to_string(o.net->min_rows) + (o.net->min_rows > 1 ? " images" : " image") +
                " of every batch" + (o.net->min_rows > 1 ? std::string(" (--net ") + o.net->flag + ": BatchNorm)" : "") +
                "; give --batch-size " + std::to_string(need) + " or more");
        const Device dev = devices[0];
        if (lead) {
            made_out = make_folder(o.out);
            // Now, not after an epoch: the outputs and the trace can be written.
            std::string why = writable_folder(o.out);
            if (!why.empty()) throw std::runtime_error("cannot write in the output folder " + o.out + ": " + why);
            if (!o.trace.empty()) {
                why = writable_file(o.trace, made_trace);
                if (!why.empty()) {
                    remove_if_made_and_empty(made_out, o.out);
                    die("--trace " + o.trace + ": cannot be written: " + why);
                }
            }
        }
        seed(o.seed);
        const bool npz = o.data.size() > 4 && o.data.compare(o.data.size() - 4, 4, ".npz") == 0;
        if (lead) std::cout << "Loading " << (npz ? "" : "Fashion-MNIST from ") << o.data << "\n";
        stage = "loading " + std::string(npz ? "" : "Fashion-MNIST from ") + o.data;
        const train::TrainData sets(o.data);
        if (sets.count(true) == 0)  // thrown, not die(): the other ranks must stop too
            throw std::runtime_error((npz ? o.data + ": x_train" : o.data + "/train-images-idx3-ubyte.gz") +
                                     " has no images: nothing to train on (see --data)");
        const auto train_loader = sets.loader(true, o.batch_size, true, dev, o.seed);
        const auto test_loader = sets.loader(false, o.batch_size, false, dev);
        data::DataLoader& train_data = *train_loader;
        data::DataLoader& test_data = *test_loader;
        if (ranks.size > 1) {
            train_data.shard(ranks.rank, ranks.size);
            test_data.shard(ranks.rank, ranks.size);
        }

        const int64_t last_rows = sets.count(true) % o.batch_size;
        const bool drop_last = last_rows > 0 && last_rows < need;
        const int64_t usable = drop_last ? sets.count(true) / o.batch_size : train_data.num_batches();
        const int64_t per_epoch = o.max_batches > 0 ? std::min(o.max_batches, usable) : usable;
        const auto images = [](int64_t n) { return std::to_string(n) + (n == 1 ? " image" : " images"); };
        const std::string each = parts > 1 ? "each of the " + std::to_string(parts) + " devices" : "the device";
        if (usable == 0)  // (it had trained no step and written NaN figures)
            throw std::runtime_error("--data " + o.data + ": the training set's " + images(sets.count(true)) +
                                     (sets.count(true) == 1 ? " is" : " are") + " too few for a batch that gives " +
                                     each + " " + images(o.net->min_rows) + ": nothing to train on");

        stage = "making the network";
        nn::Sequential net;
        o.net->add(net);
        net.initialize(devices);
        if (ranks.mpi) check_ranks_agree(ranks, o, sets, net, dev);
        std::map<std::string, double> settings{{"learning_rate", o.lr}, {"wd", o.wd}};
        if (o.optimizer == "sgd" || o.optimizer == "nag") settings["momentum"] = o.momentum;
        nn::Trainer trainer(net.collect_params(), o.optimizer, settings);
        {
            // Over every update of the run: the schedule continues where a resumed run stopped.
            const int64_t total = std::max<int64_t>(1, per_epoch * o.epochs);
            if (o.schedule == "cosine")
                trainer.set_lr_scheduler(std::make_shared<nn::CosineScheduler>(total + 1, o.lr, 0.0));
            else if (o.schedule == "step")
                trainer.set_lr_scheduler(std::make_shared<nn::MultiFactorScheduler>(
                    std::vector<int64_t>{std::max<int64_t>(1, total / 2), std::max<int64_t>(2, total * 3 / 4)}, 0.1, o.lr));
        }
        if (ranks.mpi) trainer.set_gradient_hook(ranks.mpi->gradient_reducer(dev));
        // float16's range is narrow: its gradients need the loss scaled.
        std::optional<nn::LossScaler> scaler;
        // GradScaler's 2^16 for a mean loss; backward here sums the batch's losses.
        if (o.dtype == DType::float16) scaler.emplace(std::exp2(std::max(0.0, 16 - std::floor(std::log2(double(o.batch_size))))));
        const train::Settings recorded = checkpoint_settings(o, sets, devices, ranks.size);
        Resumed from;
        if (!o.resume.empty()) {
            stage = "resuming from " + o.resume;
            from = resume(o, recorded, ranks, net, trainer, scaler ? &*scaler : nullptr, devices);
        }
        const int first_epoch = from.first_epoch;
        std::string where = dev.str();
        for (size_t i = 1; i < devices.size(); ++i) where += ", " + devices[i].str();
        if (ranks.size > 1) where = std::to_string(ranks.size) + " ranks (rank 0 on " + where + ")";
        if (lead && drop_last && per_epoch == usable)
            std::cout << "Each epoch leaves out its last batch: its " << images(last_rows) << " cannot give " << each << " "
                      << images(o.net->min_rows) << "\n";
        if (lead && ranks.size > 1) std::cout << "Gradients summed by " << ranks.mpi->reducer() << "\n";
        if (lead)
            std::cout << "Training on " << where << " (" << device_info(dev).name << "): " << sets.count(true)
                      << " images, batch " << o.batch_size << ", " << o.epochs << " epochs, " << o.optimizer << " lr " << o.lr
                      << (o.dtype == DType::float32 ? std::string()
                                                    : std::string(", layers in ") + name(o.dtype) +
                                                          " (float32 parameters" +
                                                          (scaler ? ", dynamic loss scaling)" : ")"))
                      << "\n"
                      << net.describe() << std::endl;  // (a log file sees it before the first epoch ends)

        const std::string title = std::string(o.net->title) + " on " + (npz ? o.data : "Fashion-MNIST") + ", " + where;
        std::vector<train::EpochFigures> rows = from.history;  // the whole run's, a resumed one's too
        train::StepTrace step_trace(lead ? o.trace : std::string(), devices, made_trace);
        for (int epoch = first_epoch; epoch < o.epochs; ++epoch) {
            stage = "training epoch " + std::to_string(epoch);
            if (epoch == first_epoch) step_trace.begin_epoch(per_epoch);
            train::ProgressBar bar(o.progress && lead, per_epoch);
            train::EpochResult r = train::train_epoch(
                net, train_data, trainer, uint64_t(epoch),
                [&](int64_t done, double s) {
                    bar.update(done, s);
                    if (epoch == first_epoch) step_trace.after_step(done);
                },
                per_epoch, devices, o.dtype, scaler ? &*scaler : nullptr);
            bar.finish();
            stage = "writing the trace";
            step_trace.finish();
            stage = "testing after epoch " + std::to_string(epoch);
            auto t0 = std::chrono::steady_clock::now();
            train::Evaluation test = train::evaluate(net, test_data, o.dtype, o.max_batches);
            double test_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            // Figures over every rank: sums of losses, hits and samples.
            std::vector<double> totals{r.loss * double(r.samples), r.accuracy * double(r.samples), double(r.samples),
                                       double(test.correct), double(test.samples)};
            ranks.sum(totals, "summing the epoch's figures over the ranks");
            const double loss = totals[0] / totals[2], acc = totals[1] / totals[2];
            // No test images: no test accuracy (not 0/0).
            const std::optional<double> test_acc =
                totals[4] > 0 ? std::optional<double>(totals[3] / totals[4]) : std::nullopt;
            rows.push_back({epoch, loss, acc, test_acc, r.seconds, test_s});
            if (!lead) continue;
            std::printf("Epoch %d: loss %.3f, train acc %.3f, test acc %s, in %.1f sec", epoch, loss, acc,
                        test_accuracy_text(test_acc, totals[4], sets.count(false)).c_str(), r.seconds);
            if (scaler)
                std::printf(" (loss scale %.17g, %lld steps skipped so far)", scaler->loss_scale(),
                            static_cast<long long>(scaler->skipped_steps()));
            std::printf("\n");
            std::fflush(stdout);
            write_reports(o, rows, title);
            stage = "writing the checkpoint after epoch " + std::to_string(epoch);
            train::write_checkpoint(o.out, epoch + 1, net, trainer, recorded, scaler ? &*scaler : nullptr, rows);
        }
        if (lead && first_epoch == o.epochs) {  // a finished run resumed: its outputs again, from the checkpoint
            std::cout << "Nothing to train: the checkpoint holds all " << o.epochs << " epochs; writing the outputs again\n";
            write_reports(o, rows, title);
        }
        stage = "writing the trace";
        step_trace.finish();  // (says so when no step was traced)
        stage = "saving the parameters";
        // Every path here has written metrics.csv and curves.svg: an epoch, or the branch above.
        if (lead) {
            const std::string params = o.out + "/" + o.net->flag + ".params";
            net.save_parameters(params);
            std::cout << "Wrote " << o.out << "/metrics.csv, " << o.out << "/curves.svg and " << params << "\n";
        }
    } catch (const std::bad_alloc&) {
        remove_what_was_made();
        ranks.fail(host_memory_ran_out(stage));
    } catch (const std::exception& e) {
        remove_what_was_made();
        ranks.fail(e.what());
    }
    return 0;
}
