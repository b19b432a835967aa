// eval_noise: how repeatable one candidate's score is. The gemm starting code is evaluated 10 times
// on the cpu target (wall-clock medians) and 3 times on cpu-instructions (callgrind counts).
//   median_spread_ratio: max/min of the 10 medians (1.0 is perfect)
//   instructions_identical: 1 when every instruction count was the same
#include "eval/evaluator.h"
#include "model/repository.h"

#include <QCoreApplication>
#include <QEventLoop>

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
    Evaluator evaluator(EvaluationConfig{});
    const QString code = problem->startCode();

    std::vector<double> medians;
    for (const EvalResult &r : evaluateAll(evaluator, *cpu, *problem, code, 10)) {
        if (!r.correct) {
            std::fprintf(stderr, "eval_noise: evaluation failed: %s %s\n", qPrintable(r.status), qPrintable(r.log));
            return 1;
        }
        medians.push_back(r.metricValue(QStringLiteral("latency_ms")));
    }
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
    std::printf("instructions: %.0f count\n", counts.front());
    std::printf("instructions_identical: %d bool\n", std::all_of(counts.begin(), counts.end(), [&](double c) { return c == counts.front(); }) ? 1 : 0);
    return 0;
}
