// A small JSON writer for the tools' --json output (strings escaped per RFC 8259).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace pxtools {

class Json {
public:
    Json& begin_object() { return open('{'); }
    Json& end_object() { return close('}'); }
    Json& begin_array() { return open('['); }
    Json& end_array() { return close(']'); }
    Json& key(const std::string& k) {
        comma();
        quote(k);
        s_ += ':';
        after_key_ = true;
        return *this;
    }
    Json& value(const std::string& v) { return raw_value([&] { quote(v); }); }
    Json& value(const char* v) { return value(std::string(v ? v : "")); }
    Json& value(bool v) { return raw_value([&] { s_ += v ? "true" : "false"; }); }
    Json& value(double v) {
        return raw_value([&] {
            char b[32];
            std::snprintf(b, sizeof b, "%.6g", v);
            s_ += b;
        });
    }
    Json& value(int64_t v) { return raw_value([&] { s_ += std::to_string(v); }); }
    Json& value(uint64_t v) { return raw_value([&] { s_ += std::to_string(v); }); }
    Json& value(int v) { return value(int64_t(v)); }
    template <class T>
    Json& field(const std::string& k, const T& v) { return key(k).value(v); }
    const std::string& str() const { return s_; }

private:
    template <class F>
    Json& raw_value(F&& f) {
        comma();
        f();
        return *this;
    }
    Json& open(char c) {
        comma();
        s_ += c;
        first_.push_back(true);
        return *this;
    }
    Json& close(char c) {
        s_ += c;
        first_.pop_back();
        return *this;
    }
    void comma() {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (!first_.empty()) {
            if (!first_.back()) s_ += ',';
            first_.back() = false;
        }
    }
    void quote(const std::string& v) {
        s_ += '"';
        for (unsigned char c : v) {
            if (c == '"' || c == '\\') s_ += '\\', s_ += char(c);
            else if (c < 0x20) {
                char b[8];
                std::snprintf(b, sizeof b, "\\u%04x", c);
                s_ += b;
            } else s_ += char(c);
        }
        s_ += '"';
    }
    std::string s_;
    std::vector<bool> first_;
    bool after_key_ = false;
};

}  // namespace pxtools
