// kernelbench on device cpu: what one candidate costs and what hand-written kernels gain.
//
// Prints, for the shipped problems and hand-written load_inline candidates (tests/integration/data/
// kernelbench), through the real CLI (`autocomp eval --json`):
//   build_cold_s      the build step of a candidate never built on this machine (torch headers, g++)
//   build_cached_s    the same file again: its build reused from the cache by content hash
//   eval_cold_s       the whole evaluation (static check, build, correctness, 100 timed trials)
//   eval_cached_s     the same with the build reused
//   check_s           the judge's step alone (5 correctness trials, warm-ups, 100 trials of both)
//   speedup_<problem> the candidate's mean over the eager reference's, timed alternately
// The machine's load changes every figure; run it alone (`ctest --preset bench -R kernelbench_eval`).
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <cstdio>

namespace {

struct Eval
{
    bool ok = false;
    double seconds = 0;
    QJsonObject json;
    double step(const QString &name) const
    {
        for (const QJsonValue &s : json.value(QStringLiteral("steps")).toArray())
            if (s.toObject().value(QStringLiteral("name")).toString() == name)
                return s.toObject().value(QStringLiteral("duration_ms")).toDouble() / 1000.0;
        return -1;
    }
};

Eval evaluate(const QString &problem, const QString &file, const QString &cache)
{
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_CACHE_HOME"), cache);
    process.setProcessEnvironment(env);
    QElapsedTimer timer;
    timer.start();
    process.start(qEnvironmentVariable("AUTOCOMP_CLI"),
                  {QStringLiteral("eval"), QStringLiteral("--target"), QStringLiteral("kernelbench"),
                   QStringLiteral("--problem"), problem, QStringLiteral("--code"), file, QStringLiteral("--json")});
    process.waitForFinished(1800000);
    Eval e;
    e.seconds = timer.elapsed() / 1000.0;
    e.json = QJsonDocument::fromJson(process.readAllStandardOutput()).object();
    e.ok = process.exitCode() == 0 && e.json.value(QStringLiteral("correct")).toBool();
    if (!e.ok)
        std::fprintf(stderr, "%s on %s: exit %d\n%s\n", qPrintable(file), qPrintable(problem), process.exitCode(),
                     process.readAllStandardError().right(3000).constData());
    return e;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QString data = qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/integration/data/kernelbench/");
    QTemporaryDir cache;
    const QList<std::pair<const char *, QString>> cases{
        {"level2/1_ScaleShiftClampSquare", QStringLiteral("scale_shift_clamp_square_fused.py")},
        {"level1/1_NewGELU", QStringLiteral("gelu_fused.py")}};
    bool first = true;
    for (const auto &[problem, file] : cases) {
        const Eval cold = evaluate(QLatin1String(problem), data + file, cache.path());
        const Eval cached = evaluate(QLatin1String(problem), data + file, cache.path());
        if (!cold.ok || !cached.ok) {
            std::printf("failed_%s: 1\n", problem);
            continue;
        }
        if (first) {
            std::printf("build_cold_s: %.1f s\n", cold.step(QStringLiteral("build")));
            std::printf("build_cached_s: %.2f s\n", cached.step(QStringLiteral("build")));
            std::printf("eval_cold_s: %.1f s\n", cold.seconds);
            std::printf("eval_cached_s: %.1f s\n", cached.seconds);
            std::printf("check_s: %.1f s\n", cached.step(QStringLiteral("check")));
            first = false;
        }
        QString name = QLatin1String(problem);
        name.replace(QLatin1Char('/'), QLatin1Char('_'));
        const QJsonObject metrics = cached.json.value(QStringLiteral("metrics")).toObject();
        std::printf("latency_ms_%s: %.3f ms\n", qPrintable(name),
                    metrics.value(QStringLiteral("latency_ms")).toObject().value(QStringLiteral("mean")).toDouble());
        std::printf("reference_ms_%s: %.3f ms\n", qPrintable(name),
                    metrics.value(QStringLiteral("reference_ms")).toObject().value(QStringLiteral("mean")).toDouble());
        std::printf("speedup_%s: %.2f\n", qPrintable(name),
                    metrics.value(QStringLiteral("speedup_vs_eager")).toDouble());
    }
    return 0;
}
