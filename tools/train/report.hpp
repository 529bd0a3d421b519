// plexus-train's outputs: the per-epoch CSV, the SVG plot of the curves,
// and the progress bar shown while an epoch runs on a terminal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace plexus::train {

struct EpochFigures {
    int epoch = 0;
    double train_loss = 0, train_acc = 0;
    std::optional<double> test_acc;  // none without test images
    double seconds = 0, test_seconds = 0;
};

// Writes `text` to path.tmp, then renames it over `path`, so a reader never
// sees half a file. Throws std::runtime_error with the system's reason (a
// full disk; a file size limit: SIGXFSZ is held, so the write says EFBIG),
// the temporary file removed.
void write_file(const std::string& path, const std::string& text);

// `v` with `digits` decimals ("0.853").
std::string fixed(double v, int digits);

// Throw std::runtime_error naming the file and the system's reason when it
// cannot be written. Without a test accuracy, metrics.csv leaves its
// test_acc field empty and the SVG draws no test curve.
// `exact` writes every digit (a checkpoint's copy, from which a resumed run
// draws the curves an unbroken run draws).
void write_csv(const std::string& path, const std::vector<EpochFigures>& rows, bool exact = false);
void write_svg(const std::string& path, const std::vector<EpochFigures>& rows, const std::string& title);
// The rows of a file write_csv wrote (a checkpoint's history); throws
// std::runtime_error naming the file and line that does not parse.
std::vector<EpochFigures> read_csv(const std::string& path);

// A one-line bar redrawn in place; silent unless enabled.
class ProgressBar {
public:
    ProgressBar(bool enabled, int64_t total) : enabled_(enabled), total_(total) {}
    void update(int64_t done, double seconds);
    void finish();

private:
    bool enabled_;
    int64_t total_;
    int last_width_ = -1;
};

}  // namespace plexus::train
