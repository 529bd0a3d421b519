// plexus nn: learning-rate schedules, as Gluon's lr_scheduler and d2l's
// (chapter "Learning Rate Scheduling"): the rate for each update, numbered
// as Gluon's optimizer numbers them (the trainer's first update asks for 1),
// so a schedule called directly gives the values of MXNet's, plotted as d2l
// plots them; with an optional linear warm-up from `warmup_begin_lr`.
//
//   nn::CosineScheduler cosine(/*max_update=*/1000, /*base_lr=*/0.1, /*final_lr=*/0.001, /*warmup_steps=*/50);
//   trainer.set_lr_scheduler(std::make_shared<nn::CosineScheduler>(cosine));
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "plexus/cpp/errors.hpp"

namespace plexus::nn {

class LRScheduler {
public:
    virtual ~LRScheduler() = default;
    // The learning rate of update `num_update` (1 for the first; 0 gives the
    // starting rate).
    double operator()(int64_t num_update) const {
        require("LRScheduler", num_update >= 0, "the update number " + std::to_string(num_update) + " is negative");
        if (num_update < warmup_steps_)
            return warmup_begin_lr_ + (base_lr_ - warmup_begin_lr_) * double(num_update) / double(warmup_steps_);
        return after_warmup(num_update);
    }
    double base_lr() const { return base_lr_; }
    // As MXNet's Trainer does when given both a learning_rate and a schedule.
    void set_base_lr(double base_lr) {
        require("LRScheduler", std::isfinite(base_lr) && base_lr >= warmup_begin_lr_,
                "base_lr must be finite and >= warmup_begin_lr");
        base_lr_ = base_lr;
    }

protected:
    LRScheduler(const char* kind, double base_lr, int64_t warmup_steps, double warmup_begin_lr)
        : base_lr_(base_lr), warmup_begin_lr_(warmup_begin_lr), warmup_steps_(warmup_steps) {
        require(kind, std::isfinite(base_lr) && base_lr >= 0, "base_lr must be finite and >= 0");
        require(kind, warmup_steps >= 0, "warmup_steps must be >= 0");
        require(kind, std::isfinite(warmup_begin_lr) && warmup_begin_lr >= 0 && warmup_begin_lr <= base_lr,
                "warmup_begin_lr must be in [0, base_lr]");
    }
    virtual double after_warmup(int64_t num_update) const = 0;
    static void require(const char* kind, bool ok, const std::string& what) {
        if (!ok) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, std::string(kind) + ": " + what);
    }

    double base_lr_, warmup_begin_lr_;
    int64_t warmup_steps_;
};

// base_lr times factor once for every `step` updates completed before this
// one (MXNet's rule: the rate changes after updates step, 2*step, ...),
// never below stop_factor_lr.
class FactorScheduler : public LRScheduler {
public:
    FactorScheduler(int64_t step, double factor, double base_lr, double stop_factor_lr = 1e-8,
                    int64_t warmup_steps = 0, double warmup_begin_lr = 0)
        : LRScheduler("FactorScheduler", base_lr, warmup_steps, warmup_begin_lr), step_(step), factor_(factor),
          stop_(stop_factor_lr) {
        require("FactorScheduler", step >= 1, "step must be >= 1");
        require("FactorScheduler", factor > 0 && factor <= 1, "factor must be in (0, 1]");
        require("FactorScheduler", std::isfinite(stop_factor_lr) && stop_factor_lr >= 0, "stop_factor_lr must be >= 0");
    }

private:
    double after_warmup(int64_t n) const override {
        const int64_t steps_done = n > 0 ? (n - 1) / step_ : 0;  // whole steps before this update
        return std::max(stop_, base_lr_ * std::pow(factor_, double(steps_done)));
    }
    int64_t step_;
    double factor_, stop_;
};

// base_lr times factor once for each of `steps` (increasing) the update has passed.
class MultiFactorScheduler : public LRScheduler {
public:
    MultiFactorScheduler(std::vector<int64_t> steps, double factor, double base_lr, int64_t warmup_steps = 0,
                         double warmup_begin_lr = 0)
        : LRScheduler("MultiFactorScheduler", base_lr, warmup_steps, warmup_begin_lr), steps_(std::move(steps)),
          factor_(factor) {
        require("MultiFactorScheduler", factor > 0 && factor <= 1, "factor must be in (0, 1]");
        for (size_t i = 0; i < steps_.size(); ++i)
            require("MultiFactorScheduler", steps_[i] >= 1 && (i == 0 || steps_[i] > steps_[i - 1]),
                    "steps must be >= 1 and increasing");
    }

private:
    double after_warmup(int64_t n) const override {
        double lr = base_lr_;
        for (int64_t s : steps_)
            if (n > s) lr *= factor_;
        return lr;
    }
    std::vector<int64_t> steps_;
    double factor_;
};

// From base_lr down to final_lr along half a cosine over the updates after
// the warm-up, up to max_update; final_lr after it.
class CosineScheduler : public LRScheduler {
public:
    CosineScheduler(int64_t max_update, double base_lr, double final_lr = 0, int64_t warmup_steps = 0,
                    double warmup_begin_lr = 0)
        : LRScheduler("CosineScheduler", base_lr, warmup_steps, warmup_begin_lr), max_update_(max_update),
          final_lr_(final_lr) {
        require("CosineScheduler", max_update > warmup_steps, "max_update must be above warmup_steps");
        require("CosineScheduler", std::isfinite(final_lr) && final_lr >= 0 && final_lr <= base_lr,
                "final_lr must be in [0, base_lr]");
    }

private:
    double after_warmup(int64_t n) const override {
        if (n >= max_update_) return final_lr_;
        const double pi = 3.14159265358979323846;
        const double t = double(n - warmup_steps_) / double(max_update_ - warmup_steps_);
        return final_lr_ + (base_lr_ - final_lr_) * (1 + std::cos(pi * t)) / 2;
    }
    int64_t max_update_;
    double final_lr_;
};

}  // namespace plexus::nn
