#include "checkpoint.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace plexus::train {

namespace {
std::string dir_of(const std::string& folder, int n) { return folder + "/checkpoint-" + std::to_string(n); }

// A checkpoint's metrics.csv: one row per epoch before `next_epoch`, in order.
std::vector<EpochFigures> read_history(const std::string& path, int next_epoch) {
    std::vector<EpochFigures> rows = read_csv(path);
    for (size_t i = 0; i < rows.size(); ++i)
        if (rows[i].epoch != int(i))
            throw std::runtime_error(path + ": row " + std::to_string(i + 1) + " is epoch " + std::to_string(rows[i].epoch) +
                                     ", not " + std::to_string(i));
    if (rows.size() != size_t(next_epoch))
        throw std::runtime_error(path + " holds " + std::to_string(rows.size()) + " epochs, not the " +
                                 std::to_string(next_epoch) + " before the checkpoint");
    return rows;
}

const std::string* find(const Settings& s, const std::string& key) {
    for (const auto& [k, v] : s)
        if (k == key) return &v;
    return nullptr;
}

// Why `key` of `then` and `now` differ, or "".
std::string differs(const Settings& then, const Settings& now, const std::string& key, const std::string& value) {
    const std::string* old = find(then, key);
    if (!old) return "the checkpoint does not record " + key;
    if (*old == value) return "";
    if (key == "--data") {  // contents; shown with the paths
        const std::string *old_path = find(then, "data_path"), *path = find(now, "data_path");
        return "the checkpoint was written with --data " + (old_path ? *old_path : "?") + " (" + *old + "), this run has " +
               (path ? *path : "?") + " (" + value + ")";
    }
    return "the checkpoint was written with " + key + " " + *old + ", this run has " + value +
           (key == "--epochs" ? " (its learning-rate schedule spans the run's epochs)" : "");
}

int64_t count_of(const std::string& list) { return 1 + std::count(list.begin(), list.end(), ','); }

// Why the devices of `now` cannot go on from those of `then`, or "": the
// same number per rank and of ranks (each device holds its part of every
// batch and BatchNorm's statistics of its own). A checkpoint from before
// they were recorded says nothing of them.
std::string device_mismatch(const Settings& then, const Settings& now) {
    const std::string *old_devices = find(then, "devices"), *old_ranks = find(then, "ranks");
    const std::string *devices = find(now, "devices"), *ranks = find(now, "ranks");
    if (!old_devices || !old_ranks || !devices || !ranks) return "";
    const std::string why = ": the batch is split over them and each keeps its own BatchNorm statistics";
    if (*old_ranks != *ranks)
        return "the checkpoint was written by " + *old_ranks + (*old_ranks == "1" ? " process" : " ranks") +
               ", this run has " + *ranks + why + "; resume with as many";
    if (count_of(*old_devices) != count_of(*devices))
        return "the checkpoint was written on " + *old_devices + ", this run has " + *devices + why +
               "; resume on as many devices";
    return "";
}

std::string exact(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}
}  // namespace

void write_checkpoint(const std::string& folder, int next_epoch, nn::Block& net, const nn::Trainer& trainer,
                      const Settings& settings, const nn::LossScaler* scaler,
                      const std::vector<EpochFigures>& history) {
    const std::string dir = dir_of(folder, next_epoch);
    std::error_code e;
    std::filesystem::create_directories(dir, e);
    if (e) throw std::runtime_error("cannot create " + dir + ": " + e.message());
    net.save_parameters(dir + "/params");
    trainer.save_states(dir + "/states");
    std::string run;
    for (const auto& [key, value] : settings) run += key + "\t" + value + "\n";
    if (scaler) {
        const nn::LossScaler::State s = scaler->state();
        run += "loss_scale\t" + exact(s.scale) + "\ngood_steps\t" + std::to_string(s.good) + "\nskipped_steps\t" +
               std::to_string(s.skipped) + "\n";
    }
    write_file(dir + "/run.txt", run);
    write_csv(dir + "/metrics.csv", history, true);
    write_file(folder + "/checkpoint.epoch", std::to_string(next_epoch) + "\n");
    std::filesystem::remove_all(dir_of(folder, next_epoch - 1), e);  // the previous one, no longer named
}

Checkpoint read_checkpoint(const std::string& folder) {
    Checkpoint c;
    const std::string epoch_file = folder + "/checkpoint.epoch";
    std::ifstream f(epoch_file);
    long next = -1;
    if (!(f >> next) || next < 1 || next > 100000)
        throw std::runtime_error(epoch_file + " is missing or names no epoch (a run with --out " + folder +
                                 " writes it after each epoch)");
    c.next_epoch = int(next);
    c.dir = dir_of(folder, c.next_epoch);
    std::ifstream run(c.dir + "/run.txt");
    if (!run) throw std::runtime_error(c.dir + "/run.txt is missing");
    nn::LossScaler::State s;
    int scaler_lines = 0;
    for (std::string line; std::getline(run, line);) {
        const size_t tab = line.find('\t');
        if (tab == std::string::npos) throw std::runtime_error(c.dir + "/run.txt: a line without a tab: " + line);
        const std::string key = line.substr(0, tab), value = line.substr(tab + 1);
        try {
            if (key == "loss_scale") s.scale = std::stod(value), ++scaler_lines;
            else if (key == "good_steps") s.good = std::stoll(value), ++scaler_lines;
            else if (key == "skipped_steps") s.skipped = std::stoll(value), ++scaler_lines;
            else c.settings.emplace_back(key, value);
        } catch (const std::exception&) {
            throw std::runtime_error(c.dir + "/run.txt: " + key + " '" + value + "' is not a number");
        }
    }
    if (scaler_lines == 3) c.scaler = s;
    else if (scaler_lines) throw std::runtime_error(c.dir + "/run.txt: the loss scaler's state is incomplete");
    c.history = read_history(c.dir + "/metrics.csv", c.next_epoch);
    return c;
}

std::string resume_mismatch(const Settings& then, const Settings& now) {
    for (const auto& [key, value] : now) {
        if (key == "--epochs" || key.rfind("--", 0) != 0) continue;
        if (std::string why = differs(then, now, key, value); !why.empty()) return why;
    }
    if (std::string why = device_mismatch(then, now); !why.empty()) return why;
    // --epochs matters only through a schedule, which was found equal above.
    const std::string *schedule = find(now, "--lr-schedule"), *epochs = find(now, "--epochs");
    if (schedule && *schedule != "constant" && epochs) return differs(then, now, "--epochs", *epochs);
    return "";
}

}  // namespace plexus::train
