// Crash safety: `autocomp run` is killed with SIGKILL at several points of a scripted run and resumed
// with `autocomp resume` each time. The server's request log and the store must show that no paid
// response was requested again, and the final beam must equal an uninterrupted run's.
#include "fake_llm_server.h"
#include "store/run_store.h"

#include <QProcess>
#include <QRandomGenerator>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

using namespace autocomp;

namespace {

// Responses are chosen by the content of the prompt only (never by arrival order), so an interrupted
// run and an uninterrupted one see the same answers: plan by the menu items the dropout kept, code by
// the parent's latency and the chosen item.
QByteArray deterministicScript()
{
    QString s = QStringLiteral("rules:\n");
    const int step[] = {10, 5, 3};
    QSet<int> levels{100};
    for (int round = 0; round < 3; ++round)
        for (int l : QSet<int>(levels))
            for (int d : step)
                levels.insert(l - d);
    s += QStringLiteral("  - name: fix\n    match: 'Fixed code:\\s*$'\n    cycle: true\n    responses:\n"
                        "      - content: \"```cpp\\n// fake: status=ok latency_ms=93 compile_ms=30 "
                        "bench_ms=120;\\nvoid kernel() { /* fixed */ }\\n```\"\n");
    for (int level : levels) {
        for (int item = 1; item <= 3; ++item) {
            const int next = level - step[item - 1];
            const QString status = (item == 2 && level == 95) ? QStringLiteral("compile_error") : QStringLiteral("ok");
            s += QStringLiteral("  - name: code-%1-%2\n    match: 'latency_ms=%1\\b[\\s\\S]*Chosen optimization: "
                                "%2\\.[\\s\\S]*Optimized code:\\s*$'\n"
                                "    cycle: true\n    responses:\n"
                                "      - content: \"```cpp\\n// fake: status=%3 latency_ms=%4 compile_ms=30 "
                                "bench_ms=120;\\nvoid kernel() { /* %4 */ }\\n```\"\n")
                     .arg(level)
                     .arg(item)
                     .arg(status)
                     .arg(next);
        }
    }
    const char *names[] = {"alpha: tile the loops", "beta: vectorize", "gamma: unroll"};
    for (int item = 1; item <= 3; ++item)
        s += QStringLiteral(
                 "  - name: plan-%1\n    match: '\\n%1\\. [\\s\\S]*Plan:\\s*$'\n    cycle: true\n    responses:\n"
                 "      - content: \"Chosen optimization: %1. %2\\nApply it.\"\n")
                 .arg(item)
                 .arg(QLatin1String(names[item - 1]));
    s += QStringLiteral("  - name: plan-other\n    match: 'Plan:\\s*$'\n    cycle: true\n    responses:\n"
                        "      - content: \"Chosen optimization: 3. gamma: unroll\\nApply it.\"\n");
    return s.toUtf8();
}

} // namespace

class TestCrashResume : public QObject
{
    Q_OBJECT

    QString m_config;
    QTemporaryDir m_dir;

    QProcessEnvironment environment(const test::FakeLlmServer &server)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), qEnvironmentVariable("AUTOCOMP_FAKE_DATA"));
        env.insert(QStringLiteral("VLLM_API_BASE"), server.baseUrl().toString() + QStringLiteral("/v1"));
        return env;
    }

    // Starts the CLI; kills it with SIGKILL once the server has seen `killAt` requests (0: never).
    // Returns true when the process ran to its end by itself.
    bool runCli(const QStringList &args, test::FakeLlmServer &server, int killAt)
    {
        QProcess process;
        process.setProcessEnvironment(environment(server));
        process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        QSignalSpy finished(&process, &QProcess::finished);
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"), args);
        if (!process.waitForStarted())
            return false;
        QElapsedTimer clock;
        clock.start();
        while (finished.isEmpty() && clock.elapsed() < 300000) {
            if (killAt > 0 && server.requestCount() >= killAt) {
                // A little later, so the kill also lands while evaluations run.
                QTest::qWait(int(QRandomGenerator::global()->bounded(20, 200)));
                if (finished.isEmpty()) {
                    ::kill(pid_t(process.processId()), SIGKILL);
                    finished.wait(10000);
                    return false;
                }
            }
            finished.wait(20);
        }
        return !finished.isEmpty() && process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0;
    }

    static QStringList beamCodes(RunStore &store, qint64 runId)
    {
        QStringList codes;
        for (const Candidate &c : store.candidates(runId))
            if (c.inBeam)
                codes << c.code.simplified();
        codes.sort();
        return codes;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_config = m_dir.filePath(QStringLiteral("run.yaml"));
        QFile file(m_config);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("target: fake\nproblem: kernel\nagent: fake\nmodels: {plan: [\"vllm::m1\", \"vllm::m2\"]}\n"
                   "search: {iterations: 3, beam_width: 2, plans_per_parent: 2, code_per_plan: 2, menu_dropout: 0.5, "
                   "fix_attempts: 1, seed: 7}\n"
                   "evaluation: {parallel_compiles: 2}\n");
    }

    void killedRunsResumeToTheSameBeam()
    {
        // The uninterrupted reference.
        test::FakeLlmServer reference;
        QVERIFY(reference.listen());
        QString error;
        QVERIFY2(reference.loadScriptText(deterministicScript(), m_dir.path(), &error), qPrintable(error));
        const QString referenceStore = m_dir.filePath(QStringLiteral("reference.sqlite"));
        QVERIFY(runCli({QStringLiteral("run"), m_config, QStringLiteral("--store"), referenceStore}, reference, 0));
        const int total = reference.requestCount();
        QVERIFY2(total >= 12, qPrintable(QString::number(total)));
        auto refStore = RunStore::open(referenceStore, &error);
        QVERIFY(refStore);
        const RunInfo refRun = refStore->runs().first();
        QCOMPARE(toString(refRun.state), QStringLiteral("finished"));
        const QStringList expectedBeam = beamCodes(*refStore, refRun.id);
        QVERIFY(!expectedBeam.isEmpty());

        // The same run, killed three times.
        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QVERIFY(server.loadScriptText(deterministicScript(), m_dir.path(), &error));
        const QString storePath = m_dir.filePath(QStringLiteral("crashed.sqlite"));
        int kills = 0;
        bool done = runCli({QStringLiteral("run"), m_config, QStringLiteral("--store"), storePath}, server, total / 4);
        kills += !done;
        qint64 runId = 0;
        {
            auto store = RunStore::open(storePath, &error);
            QVERIFY(store);
            QVERIFY(!store->runs().isEmpty());
            runId = store->runs().first().id;
        }
        const QStringList resumeArgs{QStringLiteral("resume"), QString::number(runId), QStringLiteral("--store"),
                                     storePath};
        for (int fraction : {2, 3}) {
            if (done)
                break;
            done = runCli(resumeArgs, server, qMax(server.requestCount() + 1, total * fraction / 4));
            kills += !done;
        }
        for (int attempt = 0; !done && attempt < 3; ++attempt)
            done = runCli(resumeArgs, server, 0);
        QVERIFY2(done, "the resumed run finishes");
        QVERIFY2(kills >= 2, qPrintable(QStringLiteral("only %1 kills landed").arg(kills)));

        auto store = RunStore::open(storePath, &error);
        QVERIFY(store);
        const RunInfo run = *store->run(runId);
        QCOMPARE(toString(run.state), QStringLiteral("finished"));
        QCOMPARE(run.iteration, 3);
        QCOMPARE(beamCodes(*store, runId), expectedBeam);
        QCOMPARE(run.bestScore, refRun.bestScore);

        // Paid once: every request key has at most one received ("ok") response in the store...
        QHash<QString, int> paid;
        for (const LlmCall &call : store->llmCalls(runId))
            if (call.status == QLatin1String("ok"))
                ++paid[call.requestHash.left(32)];
        for (auto it = paid.cbegin(); it != paid.cend(); ++it)
            QVERIFY2(it.value() == 1,
                     qPrintable(QStringLiteral("request %1 was paid %2 times").arg(it.key()).arg(it.value())));
        // ...and a key reaches the server again only when its first answer never arrived (killed in flight).
        QHash<QByteArray, int> sent;
        for (const auto &r : server.requests())
            ++sent[r.header("x-autocomp-request")];
        int resent = 0;
        for (auto it = sent.cbegin(); it != sent.cend(); ++it) {
            QVERIFY(!it.key().isEmpty());
            QVERIFY2(it.value() <= 1 + kills, qPrintable(QString::fromLatin1(it.key())));
            resent += it.value() - 1;
        }
        qInfo() << "kills:" << kills << "requests:" << server.requestCount() << "reference:" << total
                << "re-sent after a kill:" << resent;
        QVERIFY2(server.requestCount() <= total + resent,
                 "no request beyond the reference run's and those cut off in flight");
        QCOMPARE(sent.size(), paid.size());
    }
};

QTEST_GUILESS_MAIN(TestCrashResume)
#include "tst_crash_resume.moc"
