#include "report.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "file_size_signal.hpp"

namespace plexus::train {
namespace {

const char* const csv_header = "epoch,train_loss,train_acc,test_acc,train_seconds,test_seconds";

}  // namespace

void write_file(const std::string& path, const std::string& text) {
    const px::FileSizeSignalHeld no_sigxfsz;
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno) + " (is the output folder writable?)");
    auto fail = [&](const char* what) {
        const int e = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        throw std::runtime_error(std::string(what) + " " + path + " failed: " + std::strerror(e));
    };
    for (size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail("writing");
        done += size_t(n);
    }
    if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) fail("writing");  // EINVAL: a device that cannot sync
    if (::close(fd) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        throw std::runtime_error("writing " + path + " failed: " + std::strerror(e));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        throw std::runtime_error("cannot replace " + path + ": " + std::strerror(e));
    }
}

std::string fixed(double v, int digits) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", digits, v);
    return b;
}

void write_csv(const std::string& path, const std::vector<EpochFigures>& rows, bool exact) {
    auto f = [exact](double v, int digits) {
        if (!exact) return fixed(v, digits);
        char b[32];
        std::snprintf(b, sizeof b, "%.17g", v);
        return std::string(b);
    };
    std::ostringstream s;
    s << csv_header << "\n";
    for (auto& r : rows)
        s << r.epoch << "," << f(r.train_loss, 6) << "," << f(r.train_acc, 6) << "," << (r.test_acc ? f(*r.test_acc, 6) : "") << ","
          << f(r.seconds, 3) << "," << f(r.test_seconds, 3) << "\n";
    write_file(path, s.str());
}

namespace {
// One of write_csv's rows; false when it is not one.
bool parse_row(const std::string& line, EpochFigures& r) {
    std::istringstream in(line);
    std::string field[6];
    for (int i = 0; i < 6; ++i)
        if (!std::getline(in, field[i], i < 5 ? ',' : '\n')) return false;
    try {
        size_t used = 0;
        auto num = [&](const std::string& f) {
            const double v = std::stod(f, &used);
            if (used != f.size()) throw std::invalid_argument(f);
            return v;
        };
        r.epoch = std::stoi(field[0], &used);
        if (used != field[0].size()) return false;
        r.train_loss = num(field[1]);
        r.train_acc = num(field[2]);
        r.test_acc = field[3].empty() ? std::nullopt : std::optional<double>(num(field[3]));
        r.seconds = num(field[4]);
        r.test_seconds = num(field[5]);
    } catch (const std::exception&) {
        return false;
    }
    return true;
}
}  // namespace

std::vector<EpochFigures> read_csv(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw std::runtime_error(path + " is missing");
    std::string line;
    if (!std::getline(f, line) || line != csv_header)
        throw std::runtime_error(path + ": the first line is not '" + csv_header + "'");
    std::vector<EpochFigures> rows;
    for (int n = 2; std::getline(f, line); ++n) {
        EpochFigures r;
        if (!parse_row(line, r)) throw std::runtime_error(path + ":" + std::to_string(n) + ": not a row of figures: " + line);
        rows.push_back(r);
    }
    return rows;
}

// Loss on the left axis, accuracies (0..1) on the right, epochs along x.
void write_svg(const std::string& path, const std::vector<EpochFigures>& rows, const std::string& title) {
    const double W = 640, H = 400, left = 60, right = 60, top = 40, bottom = 50;
    const double pw = W - left - right, ph = H - top - bottom;
    double max_loss = 0;
    for (auto& r : rows) max_loss = std::max(max_loss, r.train_loss);
    max_loss = max_loss > 0 ? max_loss * 1.1 : 1;
    const double n = std::max<double>(1, double(rows.size()) - 1);
    auto x = [&](size_t i) { return left + pw * (rows.size() == 1 ? 0.5 : double(i) / n); };
    auto y_loss = [&](double v) { return top + ph * (1 - v / max_loss); };
    auto y_acc = [&](double v) { return top + ph * (1 - v); };
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << W / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << title << "</text>\n"
      << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << pw << "\" height=\"" << ph
      << "\" fill=\"none\" stroke=\"#444\"/>\n";
    for (int t = 0; t <= 5; ++t) {  // grid and both axes' labels
        double f = t / 5.0, yy = top + ph * (1 - f);
        s << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << yy << "\" y2=\"" << yy
          << "\" stroke=\"#ddd\"/>\n"
          << "<text x=\"" << left - 6 << "\" y=\"" << yy + 4 << "\" text-anchor=\"end\">" << fixed(max_loss * f, 2) << "</text>\n"
          << "<text x=\"" << left + pw + 6 << "\" y=\"" << yy + 4 << "\">" << fixed(f, 1) << "</text>\n";
    }
    for (size_t i = 0; i < rows.size(); ++i)
        s << "<text x=\"" << x(i) << "\" y=\"" << top + ph + 18 << "\" text-anchor=\"middle\">" << rows[i].epoch << "</text>\n";
    s << "<text x=\"" << left + pw / 2 << "\" y=\"" << H - 12 << "\" text-anchor=\"middle\">epoch</text>\n"
      << "<text x=\"16\" y=\"" << top + ph / 2 << "\" transform=\"rotate(-90 16 " << top + ph / 2
      << ")\" text-anchor=\"middle\">train loss</text>\n"
      << "<text x=\"" << W - 14 << "\" y=\"" << top + ph / 2 << "\" transform=\"rotate(90 " << W - 14 << " "
      << top + ph / 2 << ")\" text-anchor=\"middle\">accuracy</text>\n";
    using Get = std::optional<double> (*)(const EpochFigures&);
    struct Curve { const char* name; const char* color; Get get; bool loss; };
    const Curve curves[] = {
        {"train loss", "#d62728", [](const EpochFigures& r) { return std::optional<double>(r.train_loss); }, true},
        {"train acc", "#1f77b4", [](const EpochFigures& r) { return std::optional<double>(r.train_acc); }, false},
        {"test acc", "#2ca02c", [](const EpochFigures& r) { return r.test_acc; }, false},
    };
    int k = 0;
    for (const Curve& c : curves) {
        // A curve without values (no test images) is left out, legend included.
        if (std::none_of(rows.begin(), rows.end(), [&](const EpochFigures& r) { return c.get(r).has_value(); })) continue;
        s << "<polyline fill=\"none\" stroke=\"" << c.color << "\" stroke-width=\"2\" points=\"";
        for (size_t i = 0; i < rows.size(); ++i) {
            if (auto v = c.get(rows[i])) s << x(i) << "," << (c.loss ? y_loss(*v) : y_acc(*v)) << " ";
        }
        s << "\"/>\n";
        for (size_t i = 0; i < rows.size(); ++i) {
            auto got = c.get(rows[i]);
            if (!got) continue;
            double v = *got;
            s << "<circle cx=\"" << x(i) << "\" cy=\"" << (c.loss ? y_loss(v) : y_acc(v)) << "\" r=\"2.5\" fill=\""
              << c.color << "\"/>\n";
        }
        double ly = top + 14 + 16 * k++;
        s << "<line x1=\"" << left + 10 << "\" x2=\"" << left + 30 << "\" y1=\"" << ly << "\" y2=\"" << ly
          << "\" stroke=\"" << c.color << "\" stroke-width=\"2\"/>\n"
          << "<text x=\"" << left + 36 << "\" y=\"" << ly + 4 << "\">" << c.name << "</text>\n";
    }
    s << "</svg>\n";
    write_file(path, s.str());
}

void ProgressBar::update(int64_t done, double seconds) {
    if (!enabled_ || total_ <= 0) return;
    const int width = 30;
    int filled = int(width * done / total_);
    if (filled == last_width_ && done != total_) return;
    last_width_ = filled;
    std::string bar(size_t(filled), '#');
    bar.resize(width, '.');
    std::fprintf(stdout, "\r  [%s] %lld/%lld batches, %.1f s", bar.c_str(), (long long)done, (long long)total_, seconds);
    std::fflush(stdout);
}

void ProgressBar::finish() {
    if (!enabled_) return;
    std::fprintf(stdout, "\r%*s\r", 70, "");
    std::fflush(stdout);
}

}  // namespace plexus::train
