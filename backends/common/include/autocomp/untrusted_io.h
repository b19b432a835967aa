// autocomp/untrusted_io.h — reading what a candidate step wrote, writing the judge's own files, and
// the judge's command line (C++17, Linux).
//
// Part of the judge kit (backends/common/include; backends/README.md, "Writing a target with the kit").
// Contract:
//   read_untrusted   a regular file only (no link followed unless asked), never more than `cap` bytes;
//                    says whether the file was longer (truncated), so a judge can report it instead of
//                    judging a prefix silently. Throws std::runtime_error naming the path.
//   quote_untrusted  text the candidate influenced, made printable and capped, for a log or a prompt.
//   write_file       the judge's own output; throws naming the path when it cannot be written.
//   Args             `judge MODE --key value ...`: need() throws naming the missing option.
//   parse_seed       a decimal 64-bit seed or an error: a seed is never guessed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace autocomp {
namespace kit {

constexpr std::size_t kTextCap = 1 << 20;  // what is read of a file a candidate step wrote, by default

// The judge's command line: a mode, then --key value pairs.
struct Args {
    std::string mode;
    std::map<std::string, std::string> opts;
    std::string need(const std::string& key) const {
        const auto it = opts.find(key);
        if (it == opts.end())
            throw std::runtime_error("missing option --" + key);
        return it->second;
    }
    std::string get(const std::string& key, const std::string& fallback = {}) const {
        const auto it = opts.find(key);
        return it == opts.end() ? fallback : it->second;
    }
    bool has(const std::string& key) const { return opts.count(key) != 0; }
};

inline std::string fmt(const char* format, double v) {
    char buf[128];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// A file a candidate step may have written: a regular file (no link followed), at most `cap` bytes.
inline std::string read_untrusted(const std::string& path, std::size_t cap = kTextCap, bool* truncated = nullptr,
                                  bool follow_links = false) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow_links ? 0 : O_NOFOLLOW));
    if (fd < 0)
        throw std::runtime_error("cannot read " + path);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw std::runtime_error(path + " is not a regular file");
    }
    // /proc files say size 0: read to the end, never past the cap.
    std::string out;
    char buf[65536];
    bool more = true;
    while (out.size() < cap) {
        const ssize_t n = ::read(fd, buf, std::min(sizeof buf, cap - out.size()));
        if (n <= 0) {
            more = false;
            break;
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
    if (more) {
        char extra;
        more = ::read(fd, &extra, 1) == 1;
    }
    ::close(fd);
    if (truncated)
        *truncated = more;
    return out;
}

// The file named by option --key, or "" when the option is absent or the file unreadable.
inline std::string read_optional(const Args& a, const std::string& key, std::size_t cap = kTextCap) {
    const auto it = a.opts.find(key);
    if (it == a.opts.end())
        return {};
    try {
        return read_untrusted(it->second, cap);
    } catch (const std::exception&) {
        return {};
    }
}

inline void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out)
        throw std::runtime_error("cannot write " + path);
}

// Text the candidate influenced, for a log or a prompt: printable, capped.
inline std::string quote_untrusted(const std::string& text, std::size_t cap = 2000) {
    std::string out;
    for (const char ch : text.substr(0, cap)) {
        const auto c = static_cast<unsigned char>(ch);
        out += (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' ? ch : '?';
    }
    if (text.size() > cap)
        out += " [...]";
    return out;
}

inline std::uint64_t parse_seed(const std::string& text) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0')
        throw std::runtime_error("bad --seed");
    return v;
}

} // namespace kit
} // namespace autocomp
