// eval_noise: how repeatable one candidate's score is. A blocked, vectorized gemm (the kind of candidate
// a search produces; tests/integration/data/gemm_blocked.cpp) is evaluated 10 times on the cpu target,
// each time timed alternately with the naive starting code in the same window (the paired ratio the
// search ranks by); the starting code also runs 3 times on cpu-instructions (callgrind counts).
//   paired_ratio_spread: max/min of the candidate's 10 paired ratios to the start code (1.0 is perfect)
//   median_spread_ratio: max/min of its 10 absolute medians, for comparison
//   median_spread_ratio_naive: the same for the starting code's medians (timed as the baseline)
//   instructions_identical: 1 when every instruction count was the same
//   cache_interference_min/max: the cache probe's slowdown during the benchmarks (1.0: a quiet core)
//   judge_overhead_us: the judge's cost per timed batch (an empty request, timed the same way), and
//   aa_ratio_{min,max,sd}: the rmsnorm start code (plus a comment: the same machine code) timed 10 times
//                         against itself, each a separate evaluation: how much separate evaluations of the
//                         same code differ; aa_intervals_excluding_1 counts the intervals that miss 1.0;
//                         suggested_noise_floor is the sd rounded up to a percent, beside the cpu target's
//                         declared noise_floor (backend.yaml), which should be no lower
//   small_kernel_latency, _calls_per_batch: the median of 3 evaluations of that small kernel, and
//   small_kernel_latency_spread: max/min of their medians (a cost estimate that ate a batch showed here as a
//                                30x spread before the judge bounded what it takes off)
//   judge_overhead_fraction_{small,large}: that cost over one batch's time (the largest of the evaluations)
//   for a kernel of about 10 us
//   (the transpose start code at 128x96, timed in batches of many calls) and one of about 10-30 ms (the
//   blocked gemm at 512^3, one call per batch)
// Each evaluation's figures go to stderr. AUTOCOMP_BENCH_ISOLATION=exclusive runs it with
// evaluation.bench_isolation: exclusive (nothing of ours beside a benchmark) instead of the default.
#include "eval/evaluator.h"
#include "catalog/repository.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QFile>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace autocomp;

static QList<EvalResult> evaluateAll(Evaluator &evaluator, const Target &target, const Problem &problem,
                                     const QString &code, int count, const QString &baseline = {})
{
    QList<EvalResult> results;
    QEventLoop loop;
    for (int i = 0; i < count; ++i) {
        EvalJob *job = evaluator.evaluate(target, problem, code, baseline);
        QObject::connect(job, &EvalJob::finished, &loop, [&](const EvalResult &r) {
            results << r;
            if (results.size() == count)
                loop.quit();
        });
    }
    loop.exec();
    return results;
}

static double spread(const std::vector<double> &v)
{
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return *hi / *lo;
}

static double overheadFraction(const EvalResult &r)
{
    const double batchMs = r.metricValue(QStringLiteral("latency_ms"))
        * r.metrics.value(QStringLiteral("calls_per_batch")).toDouble(1);
    return r.metrics.value(QStringLiteral("judge_overhead_us")).toDouble() * 1e-3 / batchMs;
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
    const auto transpose = repository.problem(QStringLiteral("cpu"), QStringLiteral("transpose"), &error);
    const auto rmsnorm = repository.problem(QStringLiteral("cpu"), QStringLiteral("rmsnorm"), &error);
    if (!cpu || !instr || !problem || !problemI || !transpose || !rmsnorm) {
        std::fprintf(stderr, "eval_noise: %s\n", qPrintable(error));
        return 1;
    }
    EvaluationConfig config;
    if (qEnvironmentVariableIsSet("AUTOCOMP_BENCH_ISOLATION"))
        config.benchIsolation = qEnvironmentVariable("AUTOCOMP_BENCH_ISOLATION");
    Evaluator evaluator(config);
    const QString start = problem->startCode();
    QFile fastFile(qEnvironmentVariable("AUTOCOMP_DATA_DIR")
                   + QStringLiteral("/tests/integration/data/gemm_blocked.cpp"));
    if (!fastFile.open(QIODevice::ReadOnly)) {
        std::fprintf(stderr, "eval_noise: %s: %s\n", qPrintable(fastFile.fileName()),
                     qPrintable(fastFile.errorString()));
        return 1;
    }
    const QString fast = QString::fromUtf8(fastFile.readAll());

    std::vector<double> ratios, medians, naive, interference, fractionsLarge, overheads;
    int n = 0;
    for (const EvalResult &r : evaluateAll(evaluator, *cpu, *problem, fast, 10, start)) {
        if (!r.correct) {
            std::fprintf(stderr, "eval_noise: evaluation failed: %s %s\n", qPrintable(r.status), qPrintable(r.log));
            return 1;
        }
        const QJsonObject ratio = r.metrics.value(QStringLiteral("paired_ratio")).toObject();
        ratios.push_back(ratio.value(QStringLiteral("value")).toDouble());
        medians.push_back(r.metricValue(QStringLiteral("latency_ms")));
        naive.push_back(r.metrics.value(QStringLiteral("baseline_latency_ms")).toDouble());
        interference.push_back(r.metricValue(QStringLiteral("cache_interference")));
        fractionsLarge.push_back(overheadFraction(r));
        overheads.push_back(r.metrics.value(QStringLiteral("judge_overhead_us")).toDouble());
        std::fprintf(stderr,
                     "evaluation %d: ratio %.4f [%.4f, %.4f] over %d pairs, median %.4f ms, start code %.2f ms, "
                     "interference %.3f\n",
                     ++n, ratios.back(), ratio.value(QStringLiteral("ci_low")).toDouble(),
                     ratio.value(QStringLiteral("ci_high")).toDouble(), ratio.value(QStringLiteral("pairs")).toInt(),
                     medians.back(), naive.back(), interference.back());
    }
    // A kernel of about 10 us: the transpose start code at 128 x 96.
    Problem small = *transpose;
    small.shapes = {QVariantMap{{QStringLiteral("rows"), 128}, {QStringLiteral("cols"), 96}}};
    small.benchShape = 0;
    std::vector<double> fractionsSmall, smallLatency, smallBatches;
    for (const EvalResult &r : evaluateAll(evaluator, *cpu, small, transpose->startCode(), 3)) {
        if (!r.correct) {
            std::fprintf(stderr, "eval_noise: transpose evaluation failed: %s %s\n", qPrintable(r.status),
                         qPrintable(r.log));
            return 1;
        }
        fractionsSmall.push_back(overheadFraction(r));
        smallLatency.push_back(r.metricValue(QStringLiteral("latency_ms")));
        smallBatches.push_back(r.metrics.value(QStringLiteral("calls_per_batch")).toDouble());
        overheads.push_back(r.metrics.value(QStringLiteral("judge_overhead_us")).toDouble());
        std::fprintf(stderr, "small kernel %zu: median %.5f ms, %.0f calls per batch, judge overhead %.3f us\n",
                     smallLatency.size(), smallLatency.back(), smallBatches.back(), overheads.back());
    }
    // A/A: the same machine code as the baseline, in separate evaluations.
    std::vector<double> aa;
    int aaExcluding = 0;
    for (const EvalResult &r :
         evaluateAll(evaluator, *cpu, *rmsnorm, rmsnorm->startCode() + QStringLiteral("\n// A/A copy\n"), 10,
                     rmsnorm->startCode())) {
        const QJsonObject ratio = r.metrics.value(QStringLiteral("paired_ratio")).toObject();
        if (!r.correct || ratio.value(QStringLiteral("value")).toDouble() <= 0) {
            std::fprintf(stderr, "eval_noise: A/A evaluation failed or was not paired: %s %s\n", qPrintable(r.status),
                         qPrintable(r.log));
            return 1;
        }
        aa.push_back(ratio.value(QStringLiteral("value")).toDouble());
        const double low = ratio.value(QStringLiteral("ci_low")).toDouble(),
                     high = ratio.value(QStringLiteral("ci_high")).toDouble();
        aaExcluding += (low > 1.0 || high < 1.0) ? 1 : 0;
        std::fprintf(stderr, "A/A evaluation %zu: ratio %.4f [%.4f, %.4f]\n", aa.size(), aa.back(), low, high);
    }
    double aaMean = 0, aaVar = 0;
    for (double v : aa)
        aaMean += v / double(aa.size());
    for (double v : aa)
        aaVar += (v - aaMean) * (v - aaMean) / double(aa.size() - 1);
    const double aaSd = std::sqrt(aaVar);
    std::vector<double> counts;
    for (const EvalResult &r : evaluateAll(evaluator, *instr, *problemI, start, 3)) {
        if (!r.correct) {
            std::fprintf(stderr, "eval_noise: instructions evaluation failed: %s %s\n", qPrintable(r.status),
                         qPrintable(r.log));
            return 1;
        }
        counts.push_back(r.metricValue(QStringLiteral("instructions")));
    }
    std::sort(overheads.begin(), overheads.end());
    std::printf("paired_ratio_min: %.4f ratio\n", *std::min_element(ratios.begin(), ratios.end()));
    std::printf("paired_ratio_max: %.4f ratio\n", *std::max_element(ratios.begin(), ratios.end()));
    std::printf("paired_ratio_spread: %.4f ratio\n", spread(ratios));
    std::printf("median_latency_min: %.4f ms\n", *std::min_element(medians.begin(), medians.end()));
    std::printf("median_spread_ratio: %.4f ratio\n", spread(medians));
    std::printf("median_spread_ratio_naive: %.4f ratio\n", spread(naive));
    std::printf("cache_interference_min: %.3f ratio\n", *std::min_element(interference.begin(), interference.end()));
    std::printf("cache_interference_max: %.3f ratio\n", *std::max_element(interference.begin(), interference.end()));
    std::printf("aa_ratio_min: %.4f ratio\n", *std::min_element(aa.begin(), aa.end()));
    std::printf("aa_ratio_max: %.4f ratio\n", *std::max_element(aa.begin(), aa.end()));
    std::printf("aa_ratio_sd: %.4f ratio\n", aaSd);
    std::printf("aa_intervals_excluding_1: %d of %zu count\n", aaExcluding, aa.size());
    std::printf("suggested_noise_floor: %.2f fraction (the cpu target declares %.2f)\n", std::ceil(aaSd * 100) / 100,
                cpu->noiseFloor);
    std::printf("judge_overhead_us: %.3f us\n", overheads[overheads.size() / 2]);
    std::printf("small_kernel_latency_spread: %.4f ratio\n", spread(smallLatency));
    std::sort(smallLatency.begin(), smallLatency.end());
    std::sort(smallBatches.begin(), smallBatches.end());
    std::printf("small_kernel_latency: %.5f ms\n", smallLatency[smallLatency.size() / 2]);
    std::printf("small_kernel_calls_per_batch: %.0f calls\n", smallBatches[smallBatches.size() / 2]);
    std::printf("judge_overhead_fraction_small: %.5f ratio\n",
                *std::max_element(fractionsSmall.begin(), fractionsSmall.end()));
    std::printf("judge_overhead_fraction_large: %.6f ratio\n",
                *std::max_element(fractionsLarge.begin(), fractionsLarge.end()));
    std::printf("instructions: %.0f count\n", counts.front());
    std::printf("instructions_identical: %d bool\n",
                std::all_of(counts.begin(), counts.end(), [&](double c) { return c == counts.front(); }) ? 1 : 0);
    return 0;
}
