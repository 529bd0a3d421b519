// A small strict JSON reader for tests (RFC 8259: objects, arrays, strings
// with escapes, numbers, true, false, null), so a test can check that a file
// Plexus wrote is JSON and look inside it. Throws std::runtime_error with the
// offset of the first thing that is not JSON.
#pragma once

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace pxtest {

struct JsonValue {
    enum Kind { null, boolean, number, string, array, object } kind = null;
    bool b = false;
    double n = 0;
    std::string s;
    std::vector<JsonValue> items;
    std::map<std::string, JsonValue> fields;

    bool has(const std::string& k) const { return kind == object && fields.count(k) > 0; }
    const JsonValue& at(const std::string& k) const {
        auto it = fields.find(k);
        if (kind != object || it == fields.end()) throw std::runtime_error("no field '" + k + "'");
        return it->second;
    }
};

class JsonReader {
public:
    static JsonValue parse(const std::string& text) {
        JsonReader r(text);
        JsonValue v = r.value();
        r.space();
        if (r.i_ != text.size()) r.fail("text after the value");
        return v;
    }

private:
    explicit JsonReader(const std::string& t) : t_(t) {}
    [[noreturn]] void fail(const char* what) const {
        throw std::runtime_error(std::string("not JSON at offset ") + std::to_string(i_) + ": " + what);
    }
    void space() {
        while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) ++i_;
    }
    bool eat(char c) {
        space();
        if (i_ < t_.size() && t_[i_] == c) return ++i_, true;
        return false;
    }
    void expect(char c) {
        if (!eat(c)) fail("a missing bracket, brace, colon or comma");
    }
    bool word(const char* w) {
        const std::string s(w);
        if (t_.compare(i_, s.size(), s) != 0) return false;
        i_ += s.size();
        return true;
    }
    std::string text() {
        expect('"');
        std::string out;
        while (i_ < t_.size() && t_[i_] != '"') {
            const unsigned char c = static_cast<unsigned char>(t_[i_++]);
            if (c < 0x20) fail("a control character in a string");
            if (c != '\\') {
                out += char(c);
                continue;
            }
            if (i_ >= t_.size()) fail("a string that ends in a backslash");
            const char e = t_[i_++];
            if (e == 'u') {
                if (i_ + 4 > t_.size()) fail("a short \\u escape");
                for (int k = 0; k < 4; ++k)
                    if (!std::isxdigit(static_cast<unsigned char>(t_[i_ + size_t(k)]))) fail("a bad \\u escape");
                out += '?';  // the code point itself does not matter to the tests
                i_ += 4;
            } else if (std::string("\"\\/bfnrt").find(e) != std::string::npos) {
                out += e;
            } else {
                fail("an unknown escape");
            }
        }
        if (i_ >= t_.size()) fail("an unterminated string");
        ++i_;
        return out;
    }
    JsonValue value() {
        space();
        if (i_ >= t_.size()) fail("the text ends where a value should be");
        JsonValue v;
        const char c = t_[i_];
        if (c == '{') {
            ++i_;
            v.kind = JsonValue::object;
            if (eat('}')) return v;
            do {
                space();
                std::string k = text();
                expect(':');
                v.fields[k] = value();
            } while (eat(','));
            expect('}');
        } else if (c == '[') {
            ++i_;
            v.kind = JsonValue::array;
            if (eat(']')) return v;
            do v.items.push_back(value());
            while (eat(','));
            expect(']');
        } else if (c == '"') {
            v.kind = JsonValue::string;
            v.s = text();
        } else if (word("true") || word("false")) {
            v.kind = JsonValue::boolean;
            v.b = t_[i_ - 1] == 'e' && t_[i_ - 2] == 'u';
        } else if (word("null")) {
            v.kind = JsonValue::null;
        } else {
            const char* start = t_.c_str() + i_;
            char* end = nullptr;
            if (!(c == '-' || std::isdigit(static_cast<unsigned char>(c)))) fail("not a value");
            v.kind = JsonValue::number;
            v.n = std::strtod(start, &end);
            if (end == start) fail("a bad number");
            i_ += size_t(end - start);
        }
        return v;
    }

    const std::string& t_;
    size_t i_ = 0;
};

}  // namespace pxtest
