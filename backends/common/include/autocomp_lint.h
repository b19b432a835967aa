// autocomp_lint.h — static check of a candidate's source text, before it is compiled (C++17).
//
// A kernel is one self-contained file that computes its outputs from its inputs. The check rejects
// what a kernel never needs and a reward hack does: reaching the harness or the reference (local
// includes, the harness's names, its files), loading code at run time, starting processes, opening
// files, sockets or /proc, replacing libc functions the harness relies on (timers, memcmp), startup
// hooks that run before the harness, raw system calls, and BLAS-like libraries unless the problem
// allows them. The text is tokenized (comments dropped, strings kept apart from identifiers), so a
// word in a comment is not a finding and a name inside a string is looked at as a path.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace autocomp {
namespace lint {

struct Token {
    enum Kind { Identifier, String, Punct, Number } kind;
    std::string text;
    int line;
};

struct Include {
    std::string name;
    bool quoted;
    int line;
};

struct Finding {
    std::string flag;     // short reason, shared by findings of one kind ("process creation")
    int line;
    std::string message;  // what was found and why it is not allowed
};

struct Source {
    std::vector<Token> tokens;
    std::vector<Include> includes;
};

// Splits C++ text into tokens; comments vanish, preprocessor #include lines become includes.
inline Source tokenize(const std::string& text) {
    Source src;
    std::size_t i = 0;
    const std::size_t n = text.size();
    int line = 1;
    bool line_start = true;
    auto at = [&](std::size_t k) { return k < n ? text[k] : '\0'; };
    while (i < n) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
            line_start = true;
            ++i;
            continue;
        }
        if (c == '\\' && at(i + 1) == '\n') {  // line continuation
            ++line;
            i += 2;
            continue;
        }
        if (std::isspace(static_cast<unsigned char>(c))) {
            ++i;
            continue;
        }
        if (c == '/' && at(i + 1) == '/') {
            while (i < n && text[i] != '\n')
                ++i;
            continue;
        }
        if (c == '/' && at(i + 1) == '*') {
            i += 2;
            while (i < n && !(text[i] == '*' && at(i + 1) == '/')) {
                if (text[i] == '\n')
                    ++line;
                ++i;
            }
            i += 2;
            continue;
        }
        if (c == '#' && line_start) {
            // Directive: "#include <x>" / "#include "x"" recorded; other directives tokenized normally.
            std::size_t k = i + 1;
            while (k < n && (text[k] == ' ' || text[k] == '\t'))
                ++k;
            if (text.compare(k, 7, "include") == 0 || text.compare(k, 12, "include_next") == 0 ||
                text.compare(k, 6, "import") == 0) {
                while (k < n && std::isalpha(static_cast<unsigned char>(text[k])))
                    ++k;
                while (k < n && (text[k] == ' ' || text[k] == '\t'))
                    ++k;
                const char open = at(k);
                const char close = open == '<' ? '>' : '"';
                if (open == '<' || open == '"') {
                    const std::size_t end = text.find_first_of(std::string(1, close) + "\n", k + 1);
                    if (end != std::string::npos && text[end] == close)
                        src.includes.push_back({text.substr(k + 1, end - k - 1), open == '"', line});
                } else {
                    // "#include MACRO": the name is computed, which a kernel has no reason to do.
                    src.includes.push_back({"(computed) " + text.substr(k, text.find('\n', k) - k), true, line});
                }
                while (i < n && text[i] != '\n')
                    ++i;
                continue;
            }
            line_start = false;
            src.tokens.push_back({Token::Punct, "#", line});
            ++i;
            continue;
        }
        line_start = false;
        if (c == 'R' && at(i + 1) == '"') {  // raw string R"delim(...)delim"
            const std::size_t paren = text.find('(', i + 2);
            if (paren != std::string::npos) {
                const std::string delim = ")" + text.substr(i + 2, paren - i - 2) + "\"";
                const std::size_t end = text.find(delim, paren + 1);
                const std::size_t stop = end == std::string::npos ? n : end;
                const std::string body = text.substr(paren + 1, stop - paren - 1);
                src.tokens.push_back({Token::String, body, line});
                line += static_cast<int>(std::count(body.begin(), body.end(), '\n'));
                i = end == std::string::npos ? n : end + delim.size();
                continue;
            }
        }
        if (c == '"' || c == '\'') {
            std::string body;
            std::size_t k = i + 1;
            while (k < n && text[k] != c && text[k] != '\n') {
                if (text[k] == '\\' && k + 1 < n) {
                    const char e = text[k + 1];
                    body += e == 'n' ? '\n' : e == 't' ? '\t' : e;
                    k += 2;
                    continue;
                }
                body += text[k++];
            }
            src.tokens.push_back({c == '"' ? Token::String : Token::Number, body, line});
            i = k + 1;
            continue;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$') {
            std::size_t k = i;
            while (k < n && (std::isalnum(static_cast<unsigned char>(text[k])) || text[k] == '_' || text[k] == '$'))
                ++k;
            src.tokens.push_back({Token::Identifier, text.substr(i, k - i), line});
            i = k;
            continue;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            std::size_t k = i;
            while (k < n && (std::isalnum(static_cast<unsigned char>(text[k])) || text[k] == '.' || text[k] == '\'' ||
                             ((text[k] == '+' || text[k] == '-') && (text[k - 1] == 'e' || text[k - 1] == 'E' ||
                                                                     text[k - 1] == 'p' || text[k - 1] == 'P'))))
                ++k;
            src.tokens.push_back({Token::Number, text.substr(i, k - i), line});
            i = k;
            continue;
        }
        src.tokens.push_back({Token::Punct, std::string(1, c), line});
        ++i;
    }
    return src;
}

inline std::string lower(std::string s) {
    for (auto& ch : s)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
}

inline bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

inline std::string base_name(const std::string& path) {
    const auto slash = path.find_last_of('/');
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    const auto dot = name.find_last_of('.');
    return dot == std::string::npos ? name : name.substr(0, dot);
}

struct Options {
    bool allow_libraries = false;
    std::string reference_path;  // the trusted implementation's file: its name must not appear
};

// The kinds of finding, as they appear in result.json's flags (prefixed with "static check: ").
namespace flag {
constexpr const char* kLibrary = "library call (BLAS/Eigen/MKL) not allowed for this problem";
constexpr const char* kHarness = "reaches the harness or the reference";
constexpr const char* kDynamic = "dynamic loading (dlopen/dlsym)";
constexpr const char* kProcess = "process creation or exec";
constexpr const char* kFiles = "file, /proc or device access";
constexpr const char* kNetwork = "network access";
constexpr const char* kInterpose = "redefines a libc function the harness relies on (timer/compare interposition)";
constexpr const char* kStartup = "code that runs outside the kernel call (startup/exit hooks)";
constexpr const char* kSyscall = "raw system call or memory-protection change";
constexpr const char* kSignals = "signal handlers or timers";
}  // namespace flag

inline std::vector<Finding> check(const std::string& text, const Options& opt) {
    const Source src = tokenize(text);
    std::vector<Finding> out;
    auto add = [&](const char* f, int line, const std::string& msg) { out.push_back({f, line, msg}); };

    // Headers.
    const std::vector<std::string> library_headers{"cblas", "openblas", "mkl", "eigen", "blis", "lapack", "armadillo",
                                                   "blas", "xtensor", "onednn", "dnnl", "accelerate"};
    for (const Include& inc : src.includes) {
        const std::string name = lower(inc.name);
        if (inc.quoted) {
            add(flag::kHarness, inc.line,
                "local #include \"" + inc.name + "\": a candidate is one self-contained file; including other "
                "files (the harness, the reference, its data) is not allowed — use <system headers> only");
            continue;
        }
        if (name.find("autocomp") != std::string::npos)
            add(flag::kHarness, inc.line, "#include <" + inc.name + ">: the harness's headers are not for candidates");
        if (name.find("dlfcn") != std::string::npos)
            add(flag::kDynamic, inc.line, "#include <" + inc.name + ">: loading code at run time is not allowed");
        if (name == "spawn.h" || name == "sys/wait.h")
            add(flag::kProcess, inc.line, "#include <" + inc.name + ">: a kernel does not start processes");
        if (name == "fstream" || name == "filesystem" || name == "fcntl.h" || name == "dirent.h")
            add(flag::kFiles, inc.line, "#include <" + inc.name + ">: a kernel does not open files");
        if (starts_with(name, "sys/socket") || starts_with(name, "netinet/") || starts_with(name, "arpa/") ||
            name == "netdb.h")
            add(flag::kNetwork, inc.line, "#include <" + inc.name + ">: a kernel does not use the network");
        if (name == "sys/ptrace.h" || name == "sys/syscall.h" || name == "linux/seccomp.h")
            add(flag::kSyscall, inc.line, "#include <" + inc.name + ">: raw system calls are not allowed");
        if (!opt.allow_libraries)
            for (const std::string& lib : library_headers)
                if (starts_with(name, lib) || name.find("/" + lib) != std::string::npos) {
                    add(flag::kLibrary, inc.line,
                        "#include <" + inc.name + ">: this problem must be solved without BLAS or other math "
                        "libraries (allow_libraries: false); write the kernel yourself");
                    break;
                }
    }

    const std::set<std::string> dynamic{"dlopen", "dlmopen", "dlsym", "dlvsym", "dladdr", "__libc_dlopen_mode",
                                        "dl_iterate_phdr"};
    const std::set<std::string> process{"fork",     "vfork",   "clone",   "clone3",  "execl",       "execlp",
                                        "execle",   "execv",   "execve",  "execvp",  "execvpe",     "fexecve",
                                        "system",   "popen",   "posix_spawn", "posix_spawnp", "daemon", "kill",
                                        "ptrace",   "waitpid", "wait4"};
    const std::set<std::string> files{"fopen",   "fopen64",  "freopen",  "fdopen",   "open",     "open64",
                                      "openat",  "openat2",  "creat",    "ifstream", "ofstream", "fstream",
                                      "basic_ifstream", "basic_ofstream", "basic_fstream", "filebuf", "filesystem",
                                      "opendir", "readlink", "unlink",   "truncate", "ftruncate", "memfd_create",
                                      "process_vm_readv", "process_vm_writev", "name_to_handle_at"};
    const std::set<std::string> network{"socket", "connect", "getaddrinfo", "gethostbyname", "sendto", "recvfrom",
                                        "socketpair", "inet_pton", "inet_addr", "htons"};
    const std::set<std::string> startup{"constructor", "destructor", "init_priority", "atexit", "at_quick_exit",
                                        "__cxa_atexit", "on_exit", "__libc_start_main"};
    const std::set<std::string> syscalls{"syscall", "mprotect", "pkey_mprotect", "prctl", "seccomp", "personality"};
    const std::set<std::string> signals{"signal", "sigaction", "sigset", "alarm", "setitimer", "timer_create",
                                        "raise", "sigsetjmp", "siglongjmp"};
    // libc functions the harness calls around or inside the timed region: a definition of one in the
    // candidate replaces the libc version for the whole program.
    const std::set<std::string> interposed{"clock_gettime", "__clock_gettime", "gettimeofday", "time", "clock",
                                           "__vdso_clock_gettime", "memcmp", "memcpy", "memmove", "memset",
                                           "bcmp", "malloc", "calloc", "realloc", "free", "posix_memalign",
                                           "aligned_alloc", "sched_getcpu", "sched_setaffinity", "sched_getaffinity",
                                           "rand", "isnan", "isfinite", "__isnan", "__finite", "fwrite", "fprintf",
                                           "snprintf", "write", "abort", "exit", "_exit", "strtoull", "strtod"};
    const std::vector<std::string> library_prefixes{"cblas_", "openblas_", "mkl_", "MKL_", "LAPACKE_", "bli_",
                                                    "dnnl_", "catlas_"};
    const std::set<std::string> library_names{"sgemm_", "dgemm_", "sgemv_", "dgemv_", "saxpy_", "sdot_", "Eigen",
                                              "sgemm", "dgemm", "cublasSgemm", "goto_sgemm", "arma"};
    const std::set<std::string> harness_names{"autocomp", "derive_seed", "splitmix64", "harness_main", "checked_call",
                                              "make_inputs", "g_context", "read_records", "kStreamCheck", "kStreamBench",
                                              "environ", "__environ", "program_invocation_name", "__libc_argv"};
    const std::vector<std::string> harness_files{"/proc", "/dev/", "/sys/", "reference", "harness", "check.json",
                                                 "outputs.bin", "timings.json", "result.json", "candidate.cpp",
                                                 "sols/", "backends/", ".bin", "/tmp"};
    const std::string reference_stem = lower(base_name(opt.reference_path));

    const auto& t = src.tokens;
    std::set<std::string> reported;  // one finding per (flag, name), the first line it appears on
    auto once = [&](const char* f, const std::string& name, int line, const std::string& msg) {
        if (reported.insert(std::string(f) + "|" + name).second)
            add(f, line, msg);
    };
    auto next_is = [&](std::size_t k, const char* s) { return k + 1 < t.size() && t[k + 1].text == s; };
    auto prev_is = [&](std::size_t k, const char* s) { return k > 0 && t[k - 1].text == s; };
    // A member access (x.open(), p->free) is not the libc function.
    auto member = [&](std::size_t k) { return prev_is(k, ".") || (prev_is(k, ">") && k > 1 && t[k - 2].text == "-"); };
    // NAME ( ... ) [const|noexcept|throw()] {  — a function definition.
    auto defines = [&](std::size_t k) {
        if (!next_is(k, "("))
            return false;
        int depth = 0;
        std::size_t j = k + 1;
        for (; j < t.size(); ++j) {
            if (t[j].text == "(")
                ++depth;
            else if (t[j].text == ")" && --depth == 0)
                break;
        }
        for (++j; j < t.size(); ++j) {
            const std::string& w = t[j].text;
            if (w == "noexcept" || w == "const" || w == "__THROW" || w == "throw" || w == "(" || w == ")")
                continue;
            return w == "{";
        }
        return false;
    };
    std::set<std::string> defined;  // functions the candidate defines itself
    for (std::size_t k = 0; k < t.size(); ++k)
        if (t[k].kind == Token::Identifier && defines(k))
            defined.insert(t[k].text);
    for (std::size_t k = 0; k < t.size(); ++k) {
        const Token& tok = t[k];
        if (tok.kind == Token::String) {
            const std::string s = lower(tok.text);
            for (const std::string& f : harness_files)
                if (s.find(f) != std::string::npos) {
                    const bool device = f == "/proc" || f == "/dev/" || f == "/sys/";
                    once(device ? flag::kFiles : flag::kHarness, "str:" + f, tok.line,
                         "string \"" + tok.text.substr(0, 60) + "\" names " +
                             (device ? "a kernel or device file system (" + f + ")" : "a file of the harness (" + f + ")") +
                             ": a kernel reads only its arguments");
                }
            if (!reference_stem.empty() && s.find(reference_stem) != std::string::npos)
                once(flag::kHarness, "str:ref", tok.line, "string names the reference implementation (" + reference_stem + ")");
            continue;
        }
        if (tok.kind != Token::Identifier)
            continue;
        const std::string& w = tok.text;
        if (w == "asm" || w == "__asm__" || w == "__asm") {
            // Inline assembly is fine for arithmetic; not for entering the kernel or reading the TSC.
            for (std::size_t j = k + 1; j < t.size() && j < k + 200 && t[j].text != ";"; ++j) {
                const std::string a = lower(t[j].text);
                if (t[j].kind == Token::String &&
                    (a.find("syscall") != std::string::npos || a.find("sysenter") != std::string::npos ||
                     a.find("int $0x80") != std::string::npos || a.find("int 0x80") != std::string::npos))
                    once(flag::kSyscall, "asm-syscall", tok.line, "inline assembly issues a system call");
                if (t[j].kind == Token::String && a.find("rdtsc") != std::string::npos)
                    once(flag::kInterpose, "asm-rdtsc", tok.line, "inline assembly reads the time-stamp counter");
            }
            continue;
        }
        if (!reference_stem.empty() && lower(w) == reference_stem)
            once(flag::kHarness, w, tok.line, "names the reference implementation '" + w + "'");
        if (harness_names.count(w))
            once(flag::kHarness, w, tok.line, "uses '" + w + "', a name of the harness: the kernel may not reach the "
                                              "harness's data, seeds or process state");
        if (dynamic.count(w))
            once(flag::kDynamic, w, tok.line, "calls " + w + "(): loading or looking up code at run time is not allowed");
        if (member(k))
            continue;
        if (process.count(w) && (next_is(k, "(") || prev_is(k, ":")))
            once(flag::kProcess, w, tok.line, "calls " + w + "(): a kernel may not start processes or programs");
        if (files.count(w))
            once(flag::kFiles, w, tok.line, "uses " + w + ": a kernel reads only its arguments, never files");
        if (network.count(w) && next_is(k, "("))
            once(flag::kNetwork, w, tok.line, "calls " + w + "(): a kernel has no use for the network");
        if (startup.count(w))
            once(flag::kStartup, w, tok.line, "uses '" + w + "': code that runs before main or at exit escapes the "
                                              "harness's checks");
        if (syscalls.count(w) && next_is(k, "("))
            once(flag::kSyscall, w, tok.line, "calls " + w + "(): raw system calls and page-protection changes are "
                                              "not allowed");
        if (signals.count(w) && next_is(k, "(") && !prev_is(k, "::"))
            once(flag::kSignals, w, tok.line, "calls " + w + "(): a kernel may not install signal handlers or timers");
        if (interposed.count(w) && defines(k) && !prev_is(k, "::"))
            once(flag::kInterpose, w, tok.line, "defines " + w + "(), replacing the C library's version for the whole "
                                                "program, including the harness's timer and checks");
        if (!opt.allow_libraries) {
            bool lib = library_names.count(w) != 0;
            for (const std::string& p : library_prefixes)
                lib = lib || starts_with(w, p);
            // Bare "sgemm"/"dgemm" are fine as names of one's own functions; calling an undefined one is not.
            if (lib && !(w == "sgemm" || w == "dgemm" || w == "arma"))
                once(flag::kLibrary, w, tok.line, "uses " + w + ": BLAS and other math libraries are not allowed for "
                                                  "this problem (allow_libraries: false)");
            else if (lib && (next_is(k, "(") || next_is(k, ":")) && !defined.count(w))
                once(flag::kLibrary, w, tok.line, "calls " + w + ": BLAS and other math libraries are not allowed for "
                                                  "this problem (allow_libraries: false)");
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) { return a.line < b.line; });
    return out;
}

}  // namespace lint
}  // namespace autocomp
