// Writes a small Fashion-MNIST look-alike for plexus-train's tests:
//   plexus-make-idx FOLDER TRAIN_COUNT TEST_COUNT [SHIFT] (FOLDER made when missing)
// 28x28 images with a fixed pattern (moved by SHIFT, default 0: another set
// of the same sizes), labels i % 10. The files are plain IDX
// under the .gz names (zlib reads uncompressed files as they are).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

bool write(const std::string& path, const std::vector<unsigned char>& bytes) {
    FILE* f = std::fopen(path.c_str(), "wb");
    bool ok = f && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    if (f && std::fclose(f) != 0) ok = false;
    if (!ok) std::fprintf(stderr, "plexus-make-idx: cannot write %s\n", path.c_str());
    return ok;
}

void big_endian(std::vector<unsigned char>& out, unsigned v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<unsigned char>(v >> shift));
}

bool write_set(const std::string& prefix, unsigned count, unsigned shift) {
    std::vector<unsigned char> images{0, 0, 8, 3}, labels{0, 0, 8, 1};
    big_endian(images, count);
    big_endian(images, 28);
    big_endian(images, 28);
    big_endian(labels, count);
    for (unsigned i = 0; i < count; ++i) {
        for (unsigned p = 0; p < 28 * 28; ++p) images.push_back(static_cast<unsigned char>((p * 7 + i * 13 + shift) % 256));
        labels.push_back(static_cast<unsigned char>(i % 10));
    }
    return write(prefix + "-images-idx3-ubyte.gz", images) && write(prefix + "-labels-idx1-ubyte.gz", labels);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4 && argc != 5) {
        std::fprintf(stderr, "usage: plexus-make-idx FOLDER TRAIN_COUNT TEST_COUNT [SHIFT]\n");
        return 2;
    }
    const std::string folder = argv[1];
    std::error_code e;
    std::filesystem::create_directories(folder, e);
    const unsigned train = unsigned(std::strtoul(argv[2], nullptr, 10)), test = unsigned(std::strtoul(argv[3], nullptr, 10));
    const unsigned shift = argc == 5 ? unsigned(std::strtoul(argv[4], nullptr, 10)) : 0;
    return write_set(folder + "/train", train, shift) && write_set(folder + "/t10k", test, shift) ? 0 : 1;
}
