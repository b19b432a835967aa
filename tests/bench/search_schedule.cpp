// Benchmark: how close the pipelined engine gets to the critical path of a simulated workload.
// Workload: B=4 N=4 K=2 I=4, LLM latencies from the local server with a heavy tail, evaluation times
// from the fake evaluator (parallel compile, exclusive benchmark). From the durations the run itself
// recorded (each LLM call's latency, each evaluation step's duration) it computes, per iteration:
//   bound      = max(longest plan->code->compile->bench chain, shortest chain head + all benchmarks in a row)
//   phase_sync = slowest plan + slowest code + compile makespan on the same slots + all benchmarks in a row
// and prints the engine's wall time against both, plus the engine's own CPU time per candidate.
#include "eval/evaluator.h"
#include "eval/process_runner.h"
#include "llm/llm_client.h"
#include "platform/cpu_account.h"
#include "catalog/repository.h"
#include "search/run_setup.h"
#include "search/search_engine.h"
#include "store/run_store.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>

#include <cstdio>
#include <sys/resource.h>

using namespace autocomp;

namespace {

double cpuSeconds(int who = RUSAGE_SELF)
{
    rusage usage{};
    getrusage(who, &usage);
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

QByteArray workloadScript()
{
    // Heavy tail: most answers in a few hundred ms, every fifth one takes seconds.
    const int planDelays[] = {150, 220, 180, 260, 1600};
    const int codeDelays[] = {250, 300, 350, 280, 2200};
    QString s = QStringLiteral(
        "rules:\n  - name: code\n    match: 'Optimized code:\\s*$'\n    cycle: true\n    responses:\n");
    for (int i = 0; i < 40; ++i)
        s += QStringLiteral("      - content: \"```cpp\\n// fake: status=ok latency_ms=%1 compile_ms=%2 "
                            "bench_ms=%3;\\nvoid kernel() { /* variant %4 */ }\\n```\"\n"
                            "        delay_ms: %5\n")
                 .arg(100 - i * 2 - (i % 3))
                 .arg(150 + (i % 4) * 40)
                 .arg(25 + (i % 3) * 10)
                 .arg(i)
                 .arg(codeDelays[i % 5]);
    s += QStringLiteral("  - name: plan\n    match: 'Plan:\\s*$'\n    cycle: true\n    responses:\n");
    for (int i = 0; i < 5; ++i)
        s += QStringLiteral("      - content: \"Chosen optimization: %1. step\\nplan %1\"\n        delay_ms: %2\n")
                 .arg(i + 1)
                 .arg(planDelays[i]);
    return s.toUtf8();
}

// Qt's own work for a component's objects (reading a step's pipe before readyRead, a network reply's
// cross-thread events before finished) runs before any of the component's code, so its scopes cannot
// see it. Events delivered on the engine's thread to an object owned by the evaluation runtime or the
// LLM client are counted to that component; the signals they lead to are paused where the component
// emits them, so the engine's handlers stay the engine's.
class AccountingApplication : public QCoreApplication
{
public:
    using QCoreApplication::QCoreApplication;

    bool notify(QObject *receiver, QEvent *event) override
    {
        if (receiver && QThread::currentThread() == thread()) {
            for (const QObject *o = receiver; o; o = o->parent()) {
                if (qobject_cast<const Evaluator *>(o)) {
                    const EvalRuntimeCpu::Scope runtime;
                    return QCoreApplication::notify(receiver, event);
                }
                if (qobject_cast<const LlmClient *>(o)) {
                    const LlmClientCpu::Scope client;
                    return QCoreApplication::notify(receiver, event);
                }
            }
        }
        return QCoreApplication::notify(receiver, event);
    }
};

} // namespace

int main(int argc, char **argv)
{
    AccountingApplication app(argc, argv);
    CpuAccounting::enable(); // the split of this process's CPU time between components below
    QTemporaryDir dir;
    const QString scriptPath = dir.filePath(QStringLiteral("script.yaml"));
    {
        QFile f(scriptPath);
        f.open(QIODevice::WriteOnly);
        f.write(workloadScript());
    }
    // The server runs in its own process, so this process's CPU time is the engine's (and its HTTP client's).
    QProcess server;
    server.start(qEnvironmentVariable("AUTOCOMP_FAKE_LLM_SERVER"), {QStringLiteral("--script"), scriptPath});
    if (!server.waitForReadyRead(10000)) {
        std::fprintf(stderr, "search_schedule: the fake LLM server did not start\n");
        return 1;
    }
    const QString base = QString::fromUtf8(server.readLine()).trimmed().section(QLatin1Char(' '), -1);
    const int slots = 2;
    const QByteArray yaml =
        QStringLiteral(
            "target: fake\nproblem: kernel\nagent: fake\nmodels: {plan: [\"openai-compatible@%1/v1::m1\", "
            "\"openai-compatible@%1/v1::m2\"]}\n"
            "search: {iterations: 4, beam_width: 4, plans_per_parent: 4, code_per_plan: 2, fix_attempts: 0}\n"
            "evaluation: {parallel_compiles: %2, bench_slots: 1}\n")
            .arg(base)
            .arg(slots)
            .toUtf8();
    QStringList errors;
    const auto config = RunConfig::fromYaml(yaml, QStringLiteral("search_schedule"), &errors);
    const auto setup = config ? prepareRun(*config, yaml, Repository({qEnvironmentVariable("AUTOCOMP_FAKE_DATA")}),
                                           dir.filePath(QStringLiteral("runs.sqlite")), &errors)
                              : std::nullopt;
    if (!setup) {
        std::fprintf(stderr, "search_schedule: %s\n", qPrintable(errors.join(QLatin1Char('\n'))));
        return 1;
    }
    SearchEngine engine(*setup);
    RunInfo final;
    QObject::connect(&engine, &SearchEngine::finished, [&](const RunInfo &run) {
        final = run;
        QCoreApplication::quit();
    });
    QString error;
    const double cpuStart = cpuSeconds();
    const double threadStart = cpuSeconds(RUSAGE_THREAD); // the engine's thread
    const qint64 runtimeStart = EvalRuntimeCpu::totalNs();
    const qint64 clientStart = LlmClientCpu::totalNs();
    QElapsedTimer wall;
    wall.start();
    if (!engine.start(&error)) {
        std::fprintf(stderr, "search_schedule: %s\n", qPrintable(error));
        return 1;
    }
    QCoreApplication::exec();
    const double wallS = wall.nsecsElapsed() / 1e9;
    const double cpuS = cpuSeconds() - cpuStart;
    const double threadS = cpuSeconds(RUSAGE_THREAD) - threadStart;
    const double runtimeS = double(EvalRuntimeCpu::totalNs() - runtimeStart) / 1e9;
    const double clientS = double(LlmClientCpu::totalNs() - clientStart) / 1e9;
    server.kill();
    server.waitForFinished();

    auto store = RunStore::open(setup->storePath, &error);
    QHash<qint64, LlmCall> calls;
    QHash<qint64, double> codeLatency; // candidate -> its code call's latency
    for (const LlmCall &c : store->llmCalls(final.id)) {
        calls.insert(c.id, c);
        if (c.phase == QLatin1String("code"))
            codeLatency.insert(c.candidateId, c.latencyMs / 1000.0);
    }
    const QList<Candidate> candidates = store->candidates(final.id);
    double bound = 0, phaseSync = 0;
    for (int it = 0; it <= final.iteration; ++it) {
        double longest = 0, shortestHead = 1e9, benches = 0, maxPlan = 0, maxCode = 0, compileSum = 0, maxCompile = 0;
        for (const Candidate &c : candidates) {
            if (c.iteration != it)
                continue;
            double compile = 0, bench = 0;
            for (const StepResult &s : store->evaluationSteps(c.id))
                (s.name == QLatin1String("bench") ? bench : compile) += s.durationMs / 1000.0;
            const double plan = c.planCallId ? calls.value(c.planCallId).latencyMs / 1000.0 : 0;
            const double code = codeLatency.value(c.id);
            longest = qMax(longest, plan + code + compile + bench);
            shortestHead = qMin(shortestHead, plan + code + compile);
            benches += bench;
            maxPlan = qMax(maxPlan, plan);
            maxCode = qMax(maxCode, code);
            compileSum += compile;
            maxCompile = qMax(maxCompile, compile);
        }
        bound += qMax(longest, shortestHead + benches);
        phaseSync += maxPlan + maxCode + qMax(maxCompile, compileSum / slots) + benches;
    }
    std::printf("candidates: %lld\n", static_cast<long long>(candidates.size()));
    std::printf("wall_s: %.3f s\n", wallS);
    std::printf("bound_s: %.3f s\n", bound);
    std::printf("phase_sync_s: %.3f s\n", phaseSync);
    std::printf("ratio_to_bound: %.3f\n", wallS / bound);
    std::printf("ratio_to_phase_sync: %.3f\n", wallS / phaseSync);
    // This process's CPU time, split by component. The engine (core/search: scheduling, prompts, parsing,
    // beam selection, and the store writes it makes) is its thread's time less what it spent inside the
    // LLM client's and the evaluation runtime's code. The LLM client (core/llm) is its own code plus any
    // other thread of this process (Qt's host-name lookups; HTTP itself runs on the engine's thread). The evaluation
    // runtime (core/eval) is work directories and starting, limiting and reaping the step processes (fork, rlimits,
    // cgroup, sandbox).
    const double n = double(candidates.size());
    std::printf("engine_cpu_ms_per_candidate: %.3f ms\n", (threadS - runtimeS - clientS) * 1000.0 / n);
    std::printf("llm_client_cpu_ms_per_candidate: %.3f ms\n", (clientS + cpuS - threadS) * 1000.0 / n);
    std::printf("evaluation_runtime_cpu_ms_per_candidate: %.3f ms\n", runtimeS * 1000.0 / n);
    std::printf("total_cpu_ms_per_candidate: %.3f ms\n", cpuS * 1000.0 / n);
    return final.state == RunState::Finished ? 0 : 1;
}
