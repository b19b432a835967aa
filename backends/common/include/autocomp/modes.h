// autocomp/modes.h — a judge's modes as a table, and the one entry point that runs them (C++17).
//
// Part of the judge kit (backends/common/include). A judge is `judge MODE --key value ...`, one mode per
// step of its backend.yaml. A target builds a ModeTable (name -> function) and hands it to run_modes;
// a target that reuses another's judge takes that table and adds, replaces or removes entries (rvv
// starts from the CPU judge's table and replaces lint, gate, count and report) instead of renaming
// entry points with macros.
//
// Exit status, the protocol's (backends/README.md):
//   0  the mode passed;
//   1  the candidate failed: a CandidateFailure was thrown; its verdict is written to --result (when
//      that option was given) and its message to stderr;
//   2  anything else (a bad command line, a harness or machine fault): a message on stderr, and no
//      result.json is written, so the evaluator reports the step's own failure status.
#pragma once

#include "autocomp/result.h"
#include "autocomp/untrusted_io.h"

#include <csignal>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace autocomp {
namespace kit {

// What result.json says about a failed candidate.
struct Verdict {
    std::string status;
    std::vector<std::string> flags;
    std::string log;
};

// Thrown by a mode when the candidate failed (exit 1). A target derives its own to say how a message
// maps to a status (the CPU judge classifies the message's first word; CUDA carries the status).
struct CandidateFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
    virtual Verdict verdict() const { return {"incorrect", {}, what()}; }
};

using Mode = std::function<int(const Args&)>;
using ModeTable = std::map<std::string, Mode>;

// Parses `argv[0] MODE --key value ...`; throws std::runtime_error for anything else.
inline Args parse_args(int argc, char** argv) {
    Args a;
    if (argc >= 2)
        a.mode = argv[1];
    if (argc % 2 != 0)
        throw std::runtime_error("options must come in --key value pairs");
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        if (key.size() < 3 || key.compare(0, 2, "--") != 0)
            throw std::runtime_error("unexpected argument '" + key + "'");
        a.opts[key.substr(2)] = argv[i + 1];
    }
    return a;
}

// Runs the mode argv[1] names. `who` names the judge in messages ("judge", "rvv judge"), `problem`
// the problem.
inline int run_modes(int argc, char** argv, const ModeTable& modes, const std::string& who, const std::string& problem) {
    // A worker that dies must not take the judge with it through a broken pipe.
    std::signal(SIGPIPE, SIG_IGN);
    Args a;
    if (argc >= 2)
        a.mode = argv[1];  // for the message, should the rest not parse
    try {
        a = parse_args(argc, argv);
        const auto it = modes.find(a.mode);
        if (it == modes.end()) {
            std::string known;
            for (const auto& m : modes)
                known += (known.empty() ? "" : ", ") + m.first;
            throw std::runtime_error("unknown mode '" + a.mode + "' (modes: " + known + ")");
        }
        try {
            return it->second(a);
        } catch (const CandidateFailure& f) {
            const Verdict v = f.verdict();
            std::fprintf(stderr, "%s\n", f.what());
            if (a.has("result"))
                write_result(a.opts.at("result"), v.status, v.status == "ok", {}, {}, v.flags, v.log);
            return 1;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "autocomp %s (%s, mode %s): %s\n", who.c_str(), problem.c_str(), a.mode.c_str(), e.what());
        return 2;
    }
}

} // namespace kit
} // namespace autocomp
