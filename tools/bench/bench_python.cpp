#include "bench_python.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_util.hpp"

namespace pxbench {

namespace {

// The folder of this executable, where plexus-train lies beside it.
std::string own_folder() {
    char path[4096];
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) return ".";
    const std::string exe(path, static_cast<size_t>(n));
    return exe.substr(0, exe.rfind('/'));
}

std::string quoted(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// "ROW\tfigure\tvalue\tunit\tbaseline\tbaseline value\ttarget" -> a Row.
bool parse_row(std::string line, Row& r) {
    if (line.rfind("ROW\t", 0) != 0) return false;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    std::string field[7];
    size_t start = 0;
    for (int i = 0; i < 7; ++i) {
        const size_t tab = line.find('\t', start);
        if ((tab == std::string::npos) != (i == 6)) return false;
        field[i] = line.substr(start, tab == std::string::npos ? std::string::npos : tab - start);
        start = tab + 1;
    }
    r = Row{field[1], field[3], std::strtod(field[2].c_str(), nullptr), std::strtod(field[5].c_str(), nullptr),
            field[4], field[6]};
    return true;
}

}  // namespace

bool bench_python(bool quick, bool json) {
#ifndef PLEXUS_PYTHON_BENCH_SCRIPT
    (void)quick;
    if (!json) std::printf("(python: the Python package was not built, so its figures are not measured)\n");
    return true;
#else
    const char* python = std::getenv("PLEXUS_PYTHON");
    const std::string cmd = std::string("PYTHONPATH=") + quoted(PLEXUS_PYTHON_PACKAGE_DIR) + " " +
                            quoted(python && *python ? python : PLEXUS_PYTHON_INTERPRETER) + " " +
                            quoted(PLEXUS_PYTHON_BENCH_SCRIPT) + " --rows --plexus-train " +
                            quoted(own_folder() + "/plexus-train") + (quick ? " --skip-training" : "");
    std::FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) {
        std::fprintf(stderr, "plexus-bench: cannot run %s\n", cmd.c_str());
        return false;
    }
    char buf[1024];
    int figures = 0;
    Row r;
    while (std::fgets(buf, sizeof buf, p))
        if (parse_row(buf, r)) report(r, json), ++figures;
    const int status = ::pclose(p);
    if (status == 0 && figures > 0) return true;
    const std::string how = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                              : "killed by signal " + std::to_string(WTERMSIG(status));
    std::fprintf(stderr, "plexus-bench: the python group failed (%s, %d figures): %s\n", how.c_str(), figures,
                 cmd.c_str());
    return false;
#endif
}

}  // namespace pxbench
