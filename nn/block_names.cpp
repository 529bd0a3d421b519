// Block::name: Gluon's block names ("conv0", "dense1"), given at the first
// call from a count per kind. Kept beside the blocks, not in them (a member
// would change Block's layout), and forgotten with the block.
#include <cctype>
#include <map>
#include <mutex>
#include <unordered_map>

#include "plexus/nn.hpp"

namespace plexus::nn {
namespace {

struct Names {
    std::mutex mu;
    std::unordered_map<const Block*, std::string> given;
    std::map<std::string, int> counts;  // per kind
};
Names& names() {
    static Names* all = new Names;  // never destroyed: blocks may outlive static destruction
    return *all;
}

// Gluon's kind of a block from its description's first word: "Conv2D(...)"
// is a conv, the pooling layers pools, the rest (a block written in Python:
// its class's name) that word in lower case (AttentionPooling is no pool).
std::string kind_of(const std::string& description) {
    std::string word = description.substr(0, description.find_first_of("( "));
    if (word == "Conv2D") return "conv";
    if (word == "MaxPool2D" || word == "AvgPool2D" || word == "GlobalAvgPool2D" || word == "AdaptiveAvgPool2D")
        return "pool";
    for (char& c : word) c = char(std::tolower(static_cast<unsigned char>(c)));
    return word.empty() ? "block" : word;
}

}  // namespace

std::string Block::name() const {
    const std::string kind = kind_of(describe());
    Names& n = names();
    std::lock_guard<std::mutex> lock(n.mu);
    auto it = n.given.find(this);
    if (it != n.given.end()) return it->second;
    std::string made = kind + std::to_string(n.counts[kind]++);
    n.given.emplace(this, made);
    return made;
}

Block::~Block() {
    Names& n = names();
    std::lock_guard<std::mutex> lock(n.mu);
    n.given.erase(this);
}

}  // namespace plexus::nn
