// Benchmark: several searches at once in one process (RunManager: one engine thread, one LLM client,
// one evaluator) against one search alone. Workload per search: B=2 N=4 K=1 I=3 on the fake target,
// LLM answers from the local server (its own process) with a heavy tail, compile 60-120 ms on shared
// slots, benchmarks of 10-20 ms on the machine's one bench slot.
//   ratio_to_single: wall time of the four together / wall time of one alone (target <= 1.3)
//   fairness:        four searches again, now with the client as the bottleneck (8 requests in flight
//                    for all of them, so requests queue): smallest / largest number of requests each run
//                    had sent when the first of them finished (target >= 0.9)
#include "llm/llm_client.h"
#include "catalog/repository.h"
#include "search/run_manager.h"
#include "search/run_setup.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>

using namespace autocomp;

namespace {

QByteArray workloadScript()
{
    // Heavy tail: most answers in a few hundred ms, every sixth one takes seconds.
    const int delays[] = {180, 240, 300, 210, 350, 1800};
    QString s = QStringLiteral(
        "rules:\n  - name: code\n    match: 'Optimized code:\\s*$'\n    cycle: true\n    responses:\n");
    for (int i = 0; i < 36; ++i)
        s += QStringLiteral("      - content: \"```cpp\\n// fake: status=ok latency_ms=%1 compile_ms=%2 "
                            "bench_ms=%3;\\nvoid kernel() { /* variant %4 */ }\\n```\"\n"
                            "        delay_ms: %5\n")
                 .arg(95 - i * 2)
                 .arg(60 + (i % 4) * 20)
                 .arg(10 + (i % 3) * 5)
                 .arg(i)
                 .arg(delays[i % 6]);
    s += QStringLiteral("  - name: plan\n    match: 'Plan:\\s*$'\n    cycle: true\n    responses:\n");
    for (int i = 0; i < 6; ++i)
        s += QStringLiteral("      - content: \"Chosen optimization: %1. step\\nplan %1\"\n        delay_ms: %2\n")
                 .arg(i + 1)
                 .arg(delays[(i + 3) % 6]);
    return s.toUtf8();
}

struct Outcome
{
    double wallS = 0;
    QList<qint64> callsWhileAllRan; // per run
    QList<RunInfo> runs;
};

Outcome runTogether(int count, const QString &base, const QString &dataDir, const QString &storePath, int inFlight = 64)
{
    Outcome outcome;
    RunManager manager;
    manager.llmClient()->setMaxInFlightPerProvider(inFlight);
    manager.llmClient()->setMaxInFlight(inFlight);
    QList<SearchEngine *> engines;
    for (int i = 0; i < count; ++i) {
        const QByteArray yaml =
            QStringLiteral(
                "target: fake\nproblem: kernel\nagent: fake\nmodels: {plan: [\"openai-compatible@%1/v1::m\"]}\n"
                "search: {iterations: 3, beam_width: 2, plans_per_parent: 4, code_per_plan: 1, fix_attempts: 0, "
                "seed: %2}\nevaluation: {parallel_compiles: 2, bench_slots: 1}\n")
                .arg(base)
                .arg(100 + i)
                .toUtf8();
        QStringList errors;
        const auto config = RunConfig::fromYaml(yaml, QStringLiteral("multi_run"), &errors);
        const auto setup = config ? prepareRun(*config, yaml, Repository({dataDir}), storePath, &errors) : std::nullopt;
        if (!setup)
            qFatal("multi_run: %s", qPrintable(errors.join(QLatin1Char('\n'))));
        engines << manager.create(*setup);
    }
    bool allRunning = true;
    QObject::connect(&manager, &RunManager::runFinished, [&](SearchEngine *, const RunInfo &run) {
        if (allRunning) {
            for (SearchEngine *engine : std::as_const(engines))
                outcome.callsWhileAllRan << manager.llmClient()->startedFor(
                    QStringLiteral("run %1").arg(engine->runId()));
        }
        allRunning = false;
        outcome.runs << run;
    });
    QObject::connect(&manager, &RunManager::idle, [] { QCoreApplication::quit(); });
    QElapsedTimer wall;
    wall.start();
    for (SearchEngine *engine : engines) {
        QString error;
        if (!manager.start(engine, &error))
            qFatal("multi_run: %s", qPrintable(error));
    }
    QCoreApplication::exec();
    outcome.wallS = double(wall.nsecsElapsed()) / 1e9;
    return outcome;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QTemporaryDir dir;
    const QString scriptPath = dir.filePath(QStringLiteral("script.yaml"));
    {
        QFile f(scriptPath);
        if (!f.open(QIODevice::WriteOnly))
            return 1;
        f.write(workloadScript());
    }
    QProcess server;
    server.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    server.start(qEnvironmentVariable("AUTOCOMP_FAKE_LLM_SERVER"), {QStringLiteral("--script"), scriptPath});
    if (!server.waitForReadyRead(10000)) {
        std::fprintf(stderr, "multi_run: the fake LLM server did not start\n");
        return 1;
    }
    const QString base = QString::fromUtf8(server.readLine()).trimmed().section(QLatin1Char(' '), -1);
    const QString dataDir = qEnvironmentVariable("AUTOCOMP_FAKE_DATA");

    const Outcome single = runTogether(1, base, dataDir, dir.filePath(QStringLiteral("single.sqlite")));
    const Outcome four = runTogether(4, base, dataDir, dir.filePath(QStringLiteral("four.sqlite")));
    const Outcome queued = runTogether(4, base, dataDir, dir.filePath(QStringLiteral("queued.sqlite")), 8);
    server.kill();
    server.waitForFinished();

    int failures = 0;
    for (const Outcome *o : {&single, &four, &queued})
        for (const RunInfo &run : o->runs)
            if (run.state != RunState::Finished)
                ++failures;
    const qint64 least = *std::min_element(queued.callsWhileAllRan.cbegin(), queued.callsWhileAllRan.cend());
    const qint64 most = *std::max_element(queued.callsWhileAllRan.cbegin(), queued.callsWhileAllRan.cend());
    QStringList shares;
    for (qint64 n : queued.callsWhileAllRan)
        shares << QString::number(n);
    std::printf("workload: B=2 N=4 K=1 I=3 per search, fake target, LLM answers after 180-1800 ms\n");
    std::printf("single_wall_s: %.2f s\n", single.wallS);
    std::printf("four_wall_s: %.2f s\n", four.wallS);
    std::printf("ratio_to_single: %.3f (target <= 1.3)\n", four.wallS / single.wallS);
    std::printf("fairness: %.3f (requests sent per run while all four ran, 8 in flight for all: %s; target >= 0.9)\n",
                most > 0 ? double(least) / double(most) : 0.0, qPrintable(shares.join(QStringLiteral(", "))));
    std::printf("four_with_8_in_flight_wall_s: %.2f s\n", queued.wallS);
    std::printf("runs_not_finished: %d\n", failures);
    return failures == 0 ? 0 : 1;
}
