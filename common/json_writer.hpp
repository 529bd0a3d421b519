// A small JSON writer for the tools' --json output and libplexus's trace
// (strings escaped per RFC 8259).
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
    // Fixed-point with `decimals` digits after the point: a trace's
    // microsecond times need them all, where %.6g would round 1234567.891.
    Json& value(double v, int decimals) {
        return raw_value([&] {
            char b[48];
            std::snprintf(b, sizeof b, "%.*f", decimals, v);
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
    // Bytes that are not UTF-8 (a path is any bytes on Linux) cannot appear in
    // JSON: each byte that starts no well-formed sequence becomes U+FFFD.
    void quote(const std::string& v) {
        s_ += '"';
        for (size_t i = 0; i < v.size();) {
            const unsigned char c = static_cast<unsigned char>(v[i]);
            if (c == '"' || c == '\\') s_ += '\\', s_ += char(c);
            else if (c < 0x20) {
                char b[8];
                std::snprintf(b, sizeof b, "\\u%04x", c);
                s_ += b;
            } else if (c >= 0x80) {
                const size_t n = utf8_length(v, i);
                if (n == 0) s_ += "\\ufffd", ++i;
                else s_.append(v, i, n), i += n;
                continue;
            } else s_ += char(c);
            ++i;
        }
        s_ += '"';
    }
    // The length of the well-formed UTF-8 sequence at v[i] (RFC 3629: no
    // overlong forms, surrogates or code points past U+10FFFF), 0 if none.
    static size_t utf8_length(const std::string& v, size_t i) {
        const unsigned char c = static_cast<unsigned char>(v[i]);
        size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        if (c < 0xC2 || c > 0xF4 || v.size() - i < n) return 0;
        unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
        if (c == 0xE0) lo = 0xA0;
        else if (c == 0xED) hi = 0x9F;
        else if (c == 0xF0) lo = 0x90;
        else if (c == 0xF4) hi = 0x8F;
        for (size_t k = 1; k < n; ++k) {
            const unsigned char b = static_cast<unsigned char>(v[i + k]);
            if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
        }
        return n;
    }
    std::string s_;
    std::vector<bool> first_;
    bool after_key_ = false;
};

}  // namespace pxtools
