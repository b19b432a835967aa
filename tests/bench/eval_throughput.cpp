// eval_throughput: candidates evaluated per minute, end to end (compile, check, bench, report),
// through one Evaluator: 16 distinct gemm candidates with parallel compiles (one per core) and
// with parallel_compiles = 1. Benchmarks stay exclusive in both, as they are in a search.
#include "eval/evaluator.h"
#include "model/repository.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>

#include <cstdio>

using namespace autocomp;

static double perMinute(int parallel, const Target &target, const Problem &problem, const QStringList &codes, int *failures)
{
    EvaluationConfig config;
    config.parallelCompiles = parallel;
    Evaluator evaluator(config);
    QEventLoop loop;
    int done = 0;
    QElapsedTimer clock;
    clock.start();
    for (const QString &code : codes) {
        EvalJob *job = evaluator.evaluate(target, problem, code);
        QObject::connect(job, &EvalJob::finished, &loop, [&](const EvalResult &r) {
            if (!r.correct)
                ++*failures;
            if (++done == codes.size())
                loop.quit();
        });
    }
    loop.exec();
    return codes.size() / (double(clock.elapsed()) / 60000.0);
}

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    Repository repository;
    QString error;
    const auto target = repository.target(QStringLiteral("cpu"), &error);
    const auto problem = target ? repository.problem(QStringLiteral("cpu"), QStringLiteral("gemm"), &error) : std::nullopt;
    if (!problem) {
        std::fprintf(stderr, "eval_throughput: %s\n", qPrintable(error));
        return 1;
    }
    // Distinct sources (a different comment each) so no compiler cache makes later ones free.
    QStringList codes;
    for (int i = 0; i < 16; ++i)
        codes << QStringLiteral("// candidate %1\n").arg(i) + problem->startCode();
    int failures = 0;
    // Warm the per-machine setup (roofline, vendor baseline) so neither measurement pays for it.
    perMinute(1, *target, *problem, codes.mid(0, 1), &failures);
    const double parallel = perMinute(0, *target, *problem, codes, &failures);
    const double serial = perMinute(1, *target, *problem, codes, &failures);
    std::printf("per_min_parallel: %.2f candidates/min\n", parallel);
    std::printf("per_min_serial: %.2f candidates/min\n", serial);
    std::printf("failed_evaluations: %d count\n", failures);
    return failures == 0 ? 0 : 1;
}
