// fake-eval: a scriptable evaluator for engine tests. The candidate's source carries its verdict in a
// comment, `// fake: status=ok latency_ms=3.5 compile_ms=20 bench_ms=50 feedback=text_with_underscores`,
// so tests decide latencies and verdicts while the engine runs the real evaluator protocol.
//   fake-eval compile CANDIDATE            sleeps compile_ms; exits 1 on status=compile_error
//   fake-eval bench CANDIDATE DIR [BASELINE]   sleeps bench_ms; writes DIR/result.json; with
//                                          `paired_ratio=R` and a BASELINE file that exists, the
//                                          metrics carry paired_ratio {value: R} (with ci_low=L and
//                                          ci_high=H also its 95 % interval)
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

namespace {

std::map<std::string, std::string> directives(const std::string &path)
{
    std::ifstream in(path);
    std::map<std::string, std::string> out{
        {"status", "ok"}, {"latency_ms", "1"}, {"compile_ms", "0"}, {"bench_ms", "0"}};
    std::string line;
    while (std::getline(in, line)) {
        const auto comment = line.find("//");
        const auto pos = comment == std::string::npos ? comment : line.find("fake:", comment);
        if (pos == std::string::npos)
            continue;
        std::istringstream words(line.substr(pos + 5));
        std::string word;
        while (words >> word) {
            const auto eq = word.find('=');
            if (eq == std::string::npos)
                continue;
            std::string value = word.substr(eq + 1);
            while (!value.empty() && value.back() == ';')
                value.pop_back();
            out[word.substr(0, eq)] = value;
        }
    }
    return out;
}

void sleepMs(const std::string &ms)
{
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long long>(std::stod(ms) * 1000)));
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 3) {
        std::cerr << "usage: fake-eval compile|bench CANDIDATE [WORKDIR]\n";
        return 2;
    }
    const std::string mode = argv[1];
    auto d = directives(argv[2]);
    if (mode == "compile") {
        sleepMs(d["compile_ms"]);
        if (d["status"] == "compile_error") {
            std::cerr << argv[2] << ":1:1: error: scripted compile error\n";
            return 1;
        }
        return 0;
    }
    if (mode != "bench" || argc < 4) {
        std::cerr << "fake-eval: bad arguments\n";
        return 2;
    }
    sleepMs(d["bench_ms"]);
    const std::string status = d["status"];
    const bool correct = status == "ok";
    std::string feedback = d.count("feedback") ? d["feedback"] : "";
    for (char &c : feedback)
        if (c == '_')
            c = ' ';
    std::ofstream out(std::string(argv[3]) + "/result.json");
    out << "{\"status\": \"" << status << "\", \"correct\": " << (correct ? "true" : "false") << ", \"metrics\": {";
    if (correct && d["latency_ms"] != "none")
        out << "\"latency_ms\": {\"median\": " << d["latency_ms"] << ", \"mean\": " << d["latency_ms"]
            << ", \"min\": " << d["latency_ms"] << ", \"p99\": " << d["latency_ms"] << ", \"stddev\": 0, \"n\": 10}";
    if (correct && d.count("paired_ratio") && argc >= 5 && std::ifstream(argv[4]).good())
        out << ", \"paired_ratio\": {\"value\": " << d["paired_ratio"]
            << (d.count("ci_low") && d.count("ci_high")
                    ? ", \"ci_low\": " + d["ci_low"] + ", \"ci_high\": " + d["ci_high"]
                    : std::string())
            << "}";
    out << "}, \"feedback\": [" << (feedback.empty() ? "" : "\"" + feedback + "\"") << "], \"flags\": [], \"log\": \""
        << (correct ? "" : "scripted failure: " + status) << "\"}\n";
    return 0;
}
