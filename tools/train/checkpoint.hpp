// plexus-train's checkpoints: after each epoch FOLDER/checkpoint-N/ holds
// the parameters, the trainer's state (with the random stream) and run.txt
// (the run's settings and the loss scaler's state); FOLDER/checkpoint.epoch
// names N, the epoch to go on from, and is replaced last, by a rename, so a
// run killed while writing leaves the previous checkpoint whole.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plexus/nn.hpp"

namespace plexus::train {

// (option, value) pairs, as "--lr", "0.1".
using Settings = std::vector<std::pair<std::string, std::string>>;

void write_checkpoint(const std::string& folder, int next_epoch, nn::Block& net, const nn::Trainer& trainer,
                      const Settings& settings, const nn::LossScaler* scaler);

struct Checkpoint {
    int next_epoch = 0;
    std::string dir;  // FOLDER/checkpoint-N: params and states inside
    Settings settings;
    std::optional<nn::LossScaler::State> scaler;
};
// Throws std::runtime_error naming the file and what is wrong.
Checkpoint read_checkpoint(const std::string& folder);

// Why a run with `now` cannot go on from a checkpoint written with `then`
// (the first setting that differs), or "". --epochs may grow unless the
// learning rate follows a schedule over the run's length.
std::string resume_mismatch(const Settings& then, const Settings& now);

}  // namespace plexus::train
