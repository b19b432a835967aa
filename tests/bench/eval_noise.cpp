// eval_noise: how repeatable one candidate's score is. A blocked, vectorized gemm (the kind of candidate
// a search produces; tests/integration/data/gemm_fast.md) is evaluated 10 times on the cpu target, and so
// is the naive starting code, whose 280 ms calls leave the 2 s timing budget only a handful of samples;
// the starting code also runs 3 times on cpu-instructions (callgrind counts).
//   median_spread_ratio: max/min of the optimized candidate's 10 medians (1.0 is perfect)
//   median_spread_ratio_naive: the same for the starting code
//   instructions_identical: 1 when every instruction count was the same
//   cache_interference_min/max: the cache probe's slowdown during the optimized candidate's benchmarks
//   (backends/cpu/include/autocomp_probe.h; 1.0 is a quiet core), the part of the spread that comes from
//   outside this machine
// Each evaluation's median and interference go to stderr. AUTOCOMP_BENCH_ISOLATION=exclusive runs it with
// evaluation.bench_isolation: exclusive (nothing of ours beside a benchmark) instead of the default.
#include "eval/evaluator.h"
#include "agents/response_parser.h"
#include "model/repository.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QFile>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace autocomp;

static QList<EvalResult> evaluateAll(Evaluator &evaluator, const Target &target, const Problem &problem, const QString &code, int count)
{
    QList<EvalResult> results;
    QEventLoop loop;
    for (int i = 0; i < count; ++i) {
        EvalJob *job = evaluator.evaluate(target, problem, code);
        QObject::connect(job, &EvalJob::finished, &loop, [&](const EvalResult &r) {
            results << r;
            if (results.size() == count)
                loop.quit();
        });
    }
    loop.exec();
    return results;
}

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    Repository repository;
    QString error;
    const auto cpu = repository.target(QStringLiteral("cpu"), &error);
    const auto instr = repository.target(QStringLiteral("cpu-instructions"), &error);
    const auto problem = repository.problem(QStringLiteral("cpu"), QStringLiteral("gemm"), &error);
    const auto problemI = repository.problem(QStringLiteral("cpu-instructions"), QStringLiteral("gemm"), &error);
    if (!cpu || !instr || !problem || !problemI) {
        std::fprintf(stderr, "eval_noise: %s\n", qPrintable(error));
        return 1;
    }
    EvaluationConfig config;
    if (qEnvironmentVariableIsSet("AUTOCOMP_BENCH_ISOLATION"))
        config.benchIsolation = qEnvironmentVariable("AUTOCOMP_BENCH_ISOLATION");
    Evaluator evaluator(config);
    const QString code = problem->startCode();

    QFile fastFile(qEnvironmentVariable("AUTOCOMP_DATA_DIR") + QStringLiteral("/tests/integration/data/gemm_fast.md"));
    if (!fastFile.open(QIODevice::ReadOnly)) {
        std::fprintf(stderr, "eval_noise: %s: %s\n", qPrintable(fastFile.fileName()), qPrintable(fastFile.errorString()));
        return 1;
    }
    const auto fast = ResponseParser::extractCode(QString::fromUtf8(fastFile.readAll()), QStringLiteral("cpp"));
    if (!fast) {
        std::fprintf(stderr, "eval_noise: no code block in %s\n", qPrintable(fastFile.fileName()));
        return 1;
    }
    std::vector<double> interference;
    auto mediansOf = [&](const QString &source, std::vector<double> &medians) {
        for (const EvalResult &r : evaluateAll(evaluator, *cpu, *problem, source, 10)) {
            if (!r.correct) {
                std::fprintf(stderr, "eval_noise: evaluation failed: %s %s\n", qPrintable(r.status), qPrintable(r.log));
                return false;
            }
            medians.push_back(r.metricValue(QStringLiteral("latency_ms")));
            if (interference.size() < 10) {
                interference.push_back(r.metricValue(QStringLiteral("cache_interference")));
                std::fprintf(stderr, "evaluation %zu: median %.4f ms, cache interference %.3f\n", interference.size(),
                             medians.back(), interference.back());
            }
        }
        return true;
    };
    std::vector<double> medians, naive;
    if (!mediansOf(*fast, medians) || !mediansOf(code, naive))
        return 1;
    std::vector<double> counts;
    for (const EvalResult &r : evaluateAll(evaluator, *instr, *problemI, code, 3)) {
        if (!r.correct) {
            std::fprintf(stderr, "eval_noise: instructions evaluation failed: %s %s\n", qPrintable(r.status), qPrintable(r.log));
            return 1;
        }
        counts.push_back(r.metricValue(QStringLiteral("instructions")));
    }
    const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
    std::printf("median_latency_min: %.4f ms\n", *lo);
    std::printf("median_latency_max: %.4f ms\n", *hi);
    std::printf("median_spread_ratio: %.4f ratio\n", *hi / *lo);
    const auto [nlo, nhi] = std::minmax_element(naive.begin(), naive.end());
    std::printf("naive_median_latency_min: %.4f ms\n", *nlo);
    std::printf("naive_median_latency_max: %.4f ms\n", *nhi);
    std::printf("median_spread_ratio_naive: %.4f ratio\n", *nhi / *nlo);
    const auto [ilo, ihi] = std::minmax_element(interference.begin(), interference.end());
    std::printf("cache_interference_min: %.3f ratio\n", *ilo);
    std::printf("cache_interference_max: %.3f ratio\n", *ihi);
    std::printf("instructions: %.0f count\n", counts.front());
    std::printf("instructions_identical: %d bool\n", std::all_of(counts.begin(), counts.end(), [&](double c) { return c == counts.front(); }) ? 1 : 0);
    return 0;
}
