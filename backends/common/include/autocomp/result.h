// autocomp/result.h — the judge's result.json, the one file the evaluator reads a verdict from (C++17).
//
// Part of the judge kit (backends/common/include). Written by hand, without a JSON library, so a judge
// needs nothing beyond the C++ standard library. The fields are the protocol's (backends/README.md):
// status (ok, incorrect, compile_error, crash, timeout, rejected, error, ...), correct (status == ok
// unless the caller says otherwise), metrics (name -> an already-serialized JSON value), feedback and
// flags (strings) and log. Strings are escaped for JSON (a byte below 0x20 becomes \u00XX, a byte
// that is not part of valid UTF-8 becomes '?'), so the file always parses; a log that quotes a
// candidate's text should still make it printable first (quote_untrusted).
#pragma once

#include "autocomp/untrusted_io.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace autocomp {
namespace kit {

// The length of the valid UTF-8 sequence at s[i] (1 to 4), or 0 when the bytes there are not one.
inline std::size_t utf8_length(const std::string& s, std::size_t i) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const unsigned char c = b(0);
    std::size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || i + n > s.size())
        return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((b(k) & 0xC0) != 0x80)
            return 0;
    // No overlong forms, no surrogates, nothing above U+10FFFF.
    if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) >= 0xA0) || (c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) >= 0x90))
        return 0;
    return n;
}

// A JSON string: control characters escaped, bytes that are not valid UTF-8 replaced by '?'.
inline std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char ch = s[i];
        const auto c = static_cast<unsigned char>(ch);
        switch (ch) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else if (const std::size_t n = utf8_length(s, i); n > 0) {
                out.append(s, i, n);
                i += n - 1;
            } else {
                out += '?';
            }
        }
    }
    return out + "\"";
}

// A number for JSON: NaN and infinities have no JSON form and become null.
inline std::string json_number(double v) {
    if (!std::isfinite(v))
        return "null";
    return fmt("%.15g", v);
}

inline std::string json_strings(const std::vector<std::string>& v) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
        out += (i ? ", " : "") + json_string(v[i]);
    return out + "]";
}

// metrics: already-serialized JSON values by name, in the order given.
using Metrics = std::vector<std::pair<std::string, std::string>>;

inline std::string result_json(const std::string& status, bool correct, const Metrics& metrics, const std::vector<std::string>& feedback,
                               const std::vector<std::string>& flags, const std::string& log) {
    std::string m = "{";
    for (std::size_t i = 0; i < metrics.size(); ++i)
        m += (i ? ", " : "") + json_string(metrics[i].first) + ": " + metrics[i].second;
    m += "}";
    return "{\"status\": " + json_string(status) + ",\n \"correct\": " + (correct ? "true" : "false") + ",\n \"metrics\": " + m +
           ",\n \"feedback\": " + json_strings(feedback) + ",\n \"flags\": " + json_strings(flags) + ",\n \"log\": " + json_string(log) +
           "}\n";
}

inline void write_result(const std::string& path, const std::string& status, bool correct, const Metrics& metrics,
                         const std::vector<std::string>& feedback, const std::vector<std::string>& flags, const std::string& log) {
    write_file(path, result_json(status, correct, metrics, feedback, flags, log));
}

} // namespace kit
} // namespace autocomp
