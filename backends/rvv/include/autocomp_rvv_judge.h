// autocomp_rvv_judge.h — the trusted side of the rvv target (C++17, runs natively on the host).
//
// The rvv judge is a problem's harness.cpp and reference, built for the host, linked with
// tools/judge_core.cpp, which compiles the CPU judge of the C/C++ kit (backends/common/include/
// autocomp_judge.h) and builds its mode table from the CPU judge's (rvv::modes below). Shared with
// the CPU target unchanged: the seed, the inputs, the reference results, the comparison and the correctness check over the shared-memory channel (`check`), and the lint of
// the candidate's source. Specific to rvv:
//
//   judge lint   ... as the CPU target's, plus RISC-V inline assembly: ecall/ebreak and counter or CSR
//                reads (rdcycle, rdtime, rdinstret, csrr) are rejected
//   judge gate   --object candidate.o ... the CPU target's object gate for an ELF64 RISC-V object, and
//                a disassembly scan: no ecall/ebreak, no CSR access except the vector and FP ones
//   judge count  --channels 3 --worker-pids P --shapes SH --tolerance T --counts F --object O --vlen V
//                --out count.json : one call at the benchmark shape on fixed inputs, checked, counted by
//                the TCG plugin in the worker's qemu
//   judge report --check check.json --count count.json [--remarks remarks.yaml] --result result.json
//
// Exit status: 0 passed, 1 the candidate failed (result.json says why), 2 a harness error.
#pragma once

#include <array>
#include <regex>

namespace autocomp {
namespace rvv {

using judge::Args;
using judge::Failure;
using judge::fmt;
using judge::json;

// --- lint: RISC-V specifics -----------------------------------------------------------------------

inline std::vector<lint::Finding> riscv_source_findings(const std::string& text) {
    std::vector<lint::Finding> out;
    const lint::Source src = lint::tokenize(text);
    static const std::regex forbidden(
        "\\b(ecall|ebreak|scall|sbreak|rdcycle|rdcycleh|rdtime|rdtimeh|rdinstret|rdinstreth|csrr|csrw|csrs|csrc|"
        "csrrw|csrrs|csrrc|csrrwi|csrrsi|csrrci|csrwi|csrsi|csrci)\\b",
        std::regex::icase);
    std::set<std::string> seen;
    const auto& t = src.tokens;
    for (std::size_t k = 0; k < t.size(); ++k) {
        const std::string& w = t[k].text;
        if (t[k].kind == lint::Token::Identifier && (w == "__builtin_readcyclecounter" || w == "__builtin_readsteadycounter")) {
            if (seen.insert(w).second)
                out.push_back({"reads a counter", t[k].line, "uses " + w + ": a kernel does not read the cycle or time counters"});
            continue;
        }
        if (t[k].kind != lint::Token::Identifier || (w != "asm" && w != "__asm__" && w != "__asm"))
            continue;
        for (std::size_t j = k + 1; j < t.size() && j < k + 200 && t[j].text != ";"; ++j) {
            std::smatch m;
            if (t[j].kind == lint::Token::String && std::regex_search(t[j].text, m, forbidden)) {
                const std::string insn = lint::lower(m[1].str());
                if (!seen.insert("asm-" + insn).second)
                    continue;
                const bool call = insn == "ecall" || insn == "scall" || insn == "ebreak" || insn == "sbreak";
                out.push_back({call ? "raw system call or trap" : "reads a counter or control register", t[j].line,
                               "inline assembly uses '" + insn + "': " +
                                   (call ? std::string("a kernel makes no system calls and raises no traps")
                                         : std::string("a kernel does not read the cycle, time or instruction counters "
                                                       "or other control/status registers"))});
            }
        }
    }
    return out;
}

inline int mode_lint(const Args& a) {
    const int cpu = judge::mode_lint(a);
    if (cpu != 0)
        return cpu;
    return judge::reject_lint(a, riscv_source_findings(judge::read_optional(a, "raw", 16 << 20)));
}

// --- gate: the riscv64 object -----------------------------------------------------------------------

// Control and status registers a kernel may touch: the vector unit's and the FP unit's.
inline bool allowed_csr(const std::string& csr) {
    static const std::set<std::string> ok{"vl", "vtype", "vlenb", "vstart", "vxrm", "vxsat", "vcsr",
                                          "fflags", "frm", "fcsr"};
    return ok.count(csr) != 0;
}

// Forbidden instructions in the object's code, from the cross disassembler without aliases (so
// rdcycle is csrrs a0,cycle,zero and cannot hide behind another spelling).
inline std::vector<gate::Finding> riscv_code_findings(const std::string& object, const std::string& objdump) {
    std::vector<gate::Finding> out;
    if (object.find('\'') != std::string::npos || objdump.find('\'') != std::string::npos)
        return {{"unreadable object", "the object's path cannot be quoted"}};
    FILE* pipe = popen(("'" + objdump + "' -d --no-show-raw-insn -M no-aliases '" + object + "' 2>&1").c_str(), "r");
    if (!pipe)
        return {{"unreadable object", "cannot run " + objdump}};
    std::set<std::string> seen;
    bool disassembled = false;
    const auto header = [&](const std::string& l) {
        if (l.find("file format") != std::string::npos)
            disassembled = true;
    };
    judge::walk_disassembly(pipe, header, [&](const std::string& function, const std::string& insn) {
        const std::string mnemonic = insn.substr(0, insn.find_first_of(" \t"));
        const std::string where = function.empty() ? std::string("?") : function;
        if (mnemonic == "ecall" || mnemonic == "ebreak" || mnemonic == "c.ebreak") {
            if (seen.insert(mnemonic + where).second)
                out.push_back({"raw system call or trap", "'" + where + "' contains '" + mnemonic + "'"});
        } else if (mnemonic.rfind("csrr", 0) == 0) {
            const auto ops = split(trim(insn.substr(mnemonic.size())), ',');
            const std::string csr = ops.size() >= 2 ? ops[1] : std::string("?");
            if (!allowed_csr(csr) && seen.insert(csr + where).second)
                out.push_back({"reads or writes a control/status register",
                               "'" + where + "' accesses the CSR '" + csr + "' (" + mnemonic +
                                   "): a kernel may use only vl, vtype, vlenb, vstart, vxrm, vxsat, vcsr and the FP CSRs, "
                                   "never the cycle, time or instret counters"});
        }
    });
    const int status = pclose(pipe);
    if (!disassembled || status != 0)
        out.push_back({"unreadable object", "the disassembler (" + objdump + ") could not read the object"});
    return out;
}

inline int mode_gate(const Args& a) {
    gate::Options opt;
    for (const Entry& e : entries())
        opt.entries.push_back(e.name);
    opt.threads = false;
    opt.machine = EM_RISCV;
    const std::string object = a.need("object");
    bool truncated = false;
    const std::string data = judge::read_untrusted(object, 64u << 20, &truncated);
    auto findings = truncated ? std::vector<gate::Finding>{{"object too large", "the compiled candidate is over 64 MiB"}}
                              : gate::check(data, opt);
    for (auto& f : riscv_code_findings(object, a.get("objdump", "riscv64-linux-gnu-objdump")))
        findings.push_back(std::move(f));
    return judge::reject_gate(a, findings);
}

// --- count: one call under the TCG plugin -------------------------------------------------------------

struct Counts {
    std::vector<std::array<unsigned long long, 3>> pairs;  // total, vector, vsetvl per begin/end pair
    struct Block {
        unsigned long long vaddr = 0, insns = 0, vector = 0, vsetvl = 0, execs = 0;
        std::string symbol;
    };
    std::vector<Block> blocks;
    int unpaired = 0;
    bool complete = false;
};

// The plugin's file, written by a process the candidate's code ran in: parsed strictly, capped.
inline Counts parse_counts(const std::string& text) {
    Counts c;
    std::istringstream in(text);
    std::string line;
    bool first = true;
    while (std::getline(in, line)) {
        std::istringstream l(line);
        std::string kind;
        l >> kind;
        if (first) {
            int version = 0;
            l >> version;
            if (kind != "version" || version != 1)
                throw std::runtime_error("the count file does not start with 'version 1'");
            first = false;
            continue;
        }
        if (kind == "pair") {
            std::array<unsigned long long, 3> p{};
            if (!(l >> p[0] >> p[1] >> p[2]))
                throw std::runtime_error("bad pair line in the count file: " + judge::quote_untrusted(line, 200));
            c.pairs.push_back(p);
        } else if (kind == "block") {
            Counts::Block b;
            if (!(l >> std::hex >> b.vaddr >> std::dec >> b.insns >> b.vector >> b.vsetvl >> b.execs >> b.symbol))
                throw std::runtime_error("bad block line in the count file: " + judge::quote_untrusted(line, 200));
            c.blocks.push_back(b);
        } else if (kind == "unpaired") {
            l >> c.unpaired;
        } else if (kind == "end") {
            c.complete = true;
        } else if (kind != "blocks-truncated") {
            throw std::runtime_error("unexpected line in the count file: " + judge::quote_untrusted(line, 200));
        }
    }
    return c;
}

// Functions the candidate's object defines (the entry points and its static helpers).
inline std::set<std::string> defined_functions(const std::string& object) {
    std::set<std::string> out;
    const gate::Object o = gate::parse(judge::read_untrusted(object, 64u << 20), false, EM_RISCV);
    for (const auto& s : o.symbols)
        if (s.type == STT_FUNC && s.shndx != SHN_UNDEF && !s.name.empty())
            out.insert(s.name);
    return out;
}

// The counted call's inputs come from a fixed seed, so that a kernel whose branches depend on the
// data (libm's expf, a data-dependent max) counts the same in every evaluation: the metric is exactly
// reproducible. The check step's inputs and shapes stay secret and random; the counted call's output
// is checked too.
constexpr std::uint64_t kCountSeed = 0x52565643u;  // "RVVC"

inline int mode_count(const Problem& p, const Args& a) {
    using namespace judge;
    const std::uint64_t seed = kCountSeed;
    const Tolerance tol = parse_tolerance(a.need("tolerance"));
    const auto shapes = shapes_for(p, a.need("shapes"));
    const Shape shape = shapes.front();
    const double vlen = std::atof(a.get("vlen", "256").c_str());
    auto workers = open_workers(a);
    Worker& w = *workers.front();
    counted_call(p, w, shape, seed, tol, "the counted call");
    const Counts counts = parse_counts(read_untrusted(a.need("counts"), 1 << 20));
    if (!counts.complete)
        throw std::runtime_error("the counting plugin's file is incomplete (the worker did not exit normally)");
    // The worker's calibration pair (the markers alone), then the one kernel call.
    if (counts.pairs.size() != 2 || counts.unpaired != 0)
        throw std::runtime_error("the counting plugin saw " + std::to_string(counts.pairs.size()) + " marker pairs and " +
                                 std::to_string(counts.unpaired) + " unpaired markers; expected 2 and 0");
    const auto& empty = counts.pairs[0];
    const auto& call = counts.pairs[1];
    if (call[0] < empty[0] || call[1] < empty[1] || call[2] < empty[2])
        throw std::runtime_error("the counted call cost less than the empty marker pair");
    const double total = static_cast<double>(call[0] - empty[0]);
    const double vector = static_cast<double>(call[1] - empty[1]);
    const double vsetvl = static_cast<double>(call[2] - empty[2]);
    // A lower bound from the work: an LMUL=8 group holds 8*VLEN bits, so one instruction does at most
    // 2 operations (multiply-add) on VLEN single bytes.
    const double flops = p.flops ? p.flops(shape) : 0.0;
    if (flops > 0 && total * 2.0 * vlen < flops)
        throw Failure("IMPOSSIBLE COUNT: " + fmt("%.0f", total) + " instructions for " + fmt("%.0f", flops) +
                      " operations at shape " + shape.text() + " (at most " + fmt("%.0f", 2 * vlen) +
                      " per instruction at VLEN " + fmt("%.0f", vlen) + ")");
    json hot = json::array();
    const std::set<std::string> own = defined_functions(a.need("object"));
    for (const auto& b : counts.blocks) {
        if (!own.count(b.symbol) || b.execs == 0 || hot.size() >= 5)
            continue;
        const double share = total > 0 ? static_cast<double>(b.insns * b.execs) / total : 0.0;
        if (share < 0.02)
            continue;
        hot.push_back({{"symbol", b.symbol}, {"insns", b.insns}, {"vector", b.vector}, {"vsetvl", b.vsetvl},
                       {"execs", b.execs}, {"share", share}});
    }
    json out{{"shape", shape.text()},  {"instructions", total}, {"vector_instructions", vector},
             {"vsetvl_instructions", vsetvl}, {"marker_overhead", empty[0]}, {"vlen", vlen}, {"hot_blocks", hot}};
    write_file(a.need("out"), out.dump(2) + "\n");
    return 0;
}

// --- report ----------------------------------------------------------------------------------------

// Clang's optimization record (-fsave-optimization-record, YAML): the loop vectorizer's and the SLP
// vectorizer's remarks on the candidate's own file, one line each.
inline std::vector<std::string> compiler_remarks(const std::string& yaml, std::size_t max_lines = 6) {
    std::vector<std::string> out;
    std::set<std::string> seen;
    std::size_t pos = 0;
    while ((pos = yaml.find("--- !", pos)) != std::string::npos) {
        const std::size_t next = yaml.find("\n--- !", pos + 5);
        const std::string rec = yaml.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
        pos = next == std::string::npos ? yaml.size() : next + 1;
        const std::string kind = rec.substr(5, rec.find_first_of(" \n", 5) - 5);
        auto field = [&](const std::string& key) {
            const auto k = rec.find("\n" + key + ":");
            if (k == std::string::npos)
                return std::string();
            const auto e = rec.find('\n', k + 1);
            return trim(rec.substr(k + key.size() + 2, e == std::string::npos ? std::string::npos : e - k - key.size() - 2));
        };
        const std::string pass = field("Pass");
        if (pass != "loop-vectorize" && pass != "slp-vectorizer")
            continue;
        // The SLP vectorizer's misses are about every straight-line bundle; only its successes help.
        if (pass == "slp-vectorizer" && kind != "Passed")
            continue;
        std::smatch m;
        std::string line = "?";
        static const std::regex loc("Line: *([0-9]+)");
        if (std::regex_search(rec, m, loc))
            line = m[1].str();
        std::string text;
        static const std::regex str("- (String|[A-Za-z]+): *'?([^'\\n]*)'?");
        for (auto it = std::sregex_iterator(rec.begin(), rec.end(), str); it != std::sregex_iterator(); ++it)
            text += (*it)[2].str();
        const std::string entry = "compiler (" + pass + ", line " + line + "): " + judge::quote_untrusted(trim(text), 240);
        if (seen.insert(entry).second && out.size() < max_lines)
            out.push_back(entry);
    }
    return out;
}

inline int mode_report(const Args& a) {
    using namespace judge;
    const json check = read_json(a.need("check"));
    const json count = read_json(a.need("count"));
    if (!check.value("ok", false))
        throw std::runtime_error("the check report says the candidate failed, yet the report step ran");
    const double total = count.value("instructions", 0.0);
    const double vector = count.value("vector_instructions", 0.0);
    const double vsetvl = count.value("vsetvl_instructions", 0.0);
    if (total <= 0)
        throw std::runtime_error("no instruction count: count.json is missing or empty");
    json metrics{{"instructions", total},
                 {"vector_instructions", vector},
                 {"vsetvl_instructions", vsetvl},
                 {"scalar_instructions", total - vector},
                 {"vector_fraction", vector / total}};
    const std::string shape = count.value("shape", std::string());
    std::vector<std::string> feedback;
    feedback.push_back("one call at " + shape + " (VLEN " + fmt("%.0f", count.value("vlen", 0.0)) + "): " + fmt("%.0f", total) +
                       " instructions, of which " + fmt("%.0f", vector) + " RVV (" + fmt("%.1f", 100 * vector / total) +
                       "%, " + fmt("%.0f", vsetvl) + " vsetvl) and " + fmt("%.0f", total - vector) + " scalar");
    for (const auto& b : count.value("hot_blocks", json::array())) {
        const double insns = b.value("insns", 0.0), vec = b.value("vector", 0.0);
        feedback.push_back("hot block in " + judge::quote_untrusted(b.value("symbol", std::string()), 80) + ": " +
                           fmt("%.0f", insns) + " instructions (" + fmt("%.0f", vec) + " vector, " +
                           fmt("%.0f", b.value("vsetvl", 0.0)) + " vsetvl) x " + fmt("%.0f", b.value("execs", 0.0)) +
                           " executions = " + fmt("%.1f", 100 * b.value("share", 0.0)) + "% of the count");
    }
    for (auto& r : compiler_remarks(read_optional(a, "remarks", 4 << 20)))
        feedback.push_back(std::move(r));
    const std::string log = "correct on " + std::to_string(check.value("shapes", 0)) + " shapes x " +
                            std::to_string(check.value("input_sets", 0)) + " input sets (rtol=" +
                            fmt("%g", check.value("rtol", 0.0)) + ", atol=" + fmt("%g", check.value("atol", 0.0)) +
                            "); counted one call at " + shape;
    json r{{"status", "ok"}, {"correct", true}, {"metrics", metrics}, {"bench_shape", shape},
           {"feedback", feedback}, {"flags", json::array()}, {"log", log}};
    write_file(a.need("result"), r.dump(2) + "\n");
    return 0;
}

} // namespace rvv

namespace rvv {

// The CPU judge's table with rvv's lint, gate, count and report; no bench (the metric is a count)
// and no selftime.
inline kit::ModeTable modes(const Problem& p) {
    kit::ModeTable t = judge::cpu_modes(p);
    t.erase("bench");
    t.erase("selftime");
    t["lint"] = [](const Args& a) { return mode_lint(a); };
    t["gate"] = [](const Args& a) { return mode_gate(a); };
    t["count"] = [&p](const Args& a) { return mode_count(p, a); };
    t["report"] = [](const Args& a) { return mode_report(a); };
    return t;
}

} // namespace rvv

int harness_main(int argc, char** argv, const Problem& p) {
    return kit::run_modes(argc, argv, rvv::modes(p), "rvv judge", p.name);
}

} // namespace autocomp
