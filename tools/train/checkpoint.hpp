// plexus-train's checkpoints: after each epoch FOLDER/checkpoint-N/ holds
// the parameters, the trainer's state (with the random stream), run.txt
// (the run's settings and the loss scaler's state) and metrics.csv (the
// figures of epochs 0 to N-1, so a resumed run's outputs hold the whole
// run, whatever its --out); FOLDER/checkpoint.epoch
// names N, the epoch to go on from, and is replaced last, by a rename, so a
// run killed while writing leaves the previous checkpoint whole.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plexus/nn.hpp"
#include "report.hpp"

namespace plexus::train {

// (option, value) pairs, as "--lr", "0.1"; a key without "--" (data_path)
// is shown in messages, never compared.
using Settings = std::vector<std::pair<std::string, std::string>>;

void write_checkpoint(const std::string& folder, int next_epoch, nn::Block& net, const nn::Trainer& trainer,
                      const Settings& settings, const nn::LossScaler* scaler,
                      const std::vector<EpochFigures>& history);

struct Checkpoint {
    int next_epoch = 0;
    std::string dir;  // FOLDER/checkpoint-N: params and states inside
    Settings settings;
    std::optional<nn::LossScaler::State> scaler;
    std::vector<EpochFigures> history;  // epochs 0 to next_epoch - 1
};
// Throws std::runtime_error naming the file and what is wrong.
Checkpoint read_checkpoint(const std::string& folder);

// Why a run with `now` cannot go on from a checkpoint written with `then`
// (the first setting that differs), or "". The devices ("devices": rank
// 0's list, "ranks": how many) must be as many, per rank and of ranks;
// others of that number go on. --epochs may grow unless the
// learning rate follows a schedule over the run's length; it is compared
// last, so a different --lr-schedule is named as such. --data is compared
// by what it holds (sizes and a checksum), and named with both paths.
std::string resume_mismatch(const Settings& then, const Settings& now);

}  // namespace plexus::train
