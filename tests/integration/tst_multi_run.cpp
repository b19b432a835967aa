// Several searches at once in one process (RunManager): one LLM client and one set of evaluation slots
// for all, against the local LLM server and the scriptable fake evaluator; and `autocomp run A B`.
#include "fake_llm_server.h"
#include "catalog/repository.h"
#include "search/run_manager.h"
#include "search/run_setup.h"
#include "store/run_store.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace autocomp;

namespace {

// Distinct answers (the same code twice would be a duplicate, not benchmarked again).
QByteArray codeAnswers()
{
    QByteArray out;
    for (int i = 0; i < 24; ++i)
        out += "      - {content: \"```cpp\\n// fake: status=ok latency_ms=0.5 bench_ms=40 compile_ms=10 variant="
            + QByteArray::number(i) + ";\\nvoid kernel() {}\\n```\\n\", delay_ms: 30}\n";
    return out;
}

// Plans and code for any prompt; every code is correct, faster than the start (1 ms), and its benchmark
// takes 40 ms, so benchmarks of two runs would overlap if each run had slots of its own.
QByteArray script()
{
    return "rules:\n"
           "  - name: plan\n    match: 'Plan:\\s*$'\n    cycle: true\n    responses:\n"
           "      - {content: \"Chosen optimization: 1. alpha: tile the loops\\nTile it.\", delay_ms: 30}\n"
           "  - name: code\n    match: 'Optimized code:\\s*$'\n    cycle: true\n    responses:\n"
        + codeAnswers();
}

} // namespace

class TestMultiRun : public QObject
{
    Q_OBJECT

    test::FakeLlmServer m_server;
    QTemporaryDir m_dir;

    std::optional<RunSetup> setup(const QString &name, quint64 seed, int iterations = 2)
    {
        const QByteArray yaml =
            QStringLiteral(
                "target: fake\nproblem: kernel\nagent: fake\nmodels: {plan: [\"openai-compatible@%1/v1::m\"]}\n"
                "search: {iterations: %2, beam_width: 2, plans_per_parent: 2, code_per_plan: 1, seed: %3, "
                "fix_attempts: 0}\nevaluation: {bench_slots: 1}\n")
                .arg(m_server.baseUrl().toString())
                .arg(iterations)
                .arg(seed)
                .toUtf8();
        QStringList errors;
        const auto config = RunConfig::fromYaml(yaml, name, &errors);
        if (!config) {
            qWarning() << errors;
            return std::nullopt;
        }
        auto s = prepareRun(*config, yaml, Repository({qEnvironmentVariable("AUTOCOMP_FAKE_DATA")}),
                            m_dir.filePath(QStringLiteral("runs.sqlite")), &errors);
        if (!s)
            qWarning() << errors;
        return s;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_server.listen());
        QString error;
        QVERIFY2(m_server.loadScriptText(script(), QString(), &error), qPrintable(error));
    }

    void twoRunsShareTheClientAndTheBenchSlot()
    {
        RunManager manager;
        const auto a = setup(QStringLiteral("a.yaml"), 1);
        const auto b = setup(QStringLiteral("b.yaml"), 2);
        QVERIFY(a && b);
        SearchEngine *engineA = manager.create(*a);
        SearchEngine *engineB = manager.create(*b);
        QCOMPARE(engineA->llmClient(), engineB->llmClient());
        // Candidates being benchmarked, across both runs, at every moment.
        QSet<std::pair<SearchEngine *, qint64>> benchmarking;
        int peak = 0;
        int benchmarks = 0;
        for (SearchEngine *engine : {engineA, engineB})
            connect(engine, &SearchEngine::candidateUpdated, this, [&, engine](const Candidate &c) {
                const auto key = std::make_pair(engine, c.id);
                if (c.status == CandidateStatus::Benchmarking) {
                    if (!benchmarking.contains(key))
                        ++benchmarks;
                    benchmarking.insert(key);
                } else {
                    benchmarking.remove(key);
                }
                peak = std::max(peak, int(benchmarking.size()));
            });
        QSignalSpy finished(&manager, &RunManager::runFinished);
        QSignalSpy idle(&manager, &RunManager::idle);
        QString error;
        QVERIFY2(manager.start(engineA, &error), qPrintable(error));
        QVERIFY2(manager.start(engineB, &error), qPrintable(error));
        QCOMPARE(manager.active(), 2);
        QVERIFY(idle.wait(120000));
        QCOMPARE(finished.size(), 2);
        for (const QList<QVariant> &args : std::as_const(finished)) {
            const RunInfo run = args.at(1).value<RunInfo>();
            QCOMPARE(toString(run.state), toString(RunState::Finished));
            QVERIFY(run.bestCandidateId != 0);
            QVERIFY2(run.speedup() > 1.5, qPrintable(QString::number(run.speedup())));
        }
        // Both runs benchmarked several candidates, never two at once: one slot for the machine.
        QVERIFY2(benchmarks >= 6, qPrintable(QString::number(benchmarks)));
        QCOMPARE(peak, 1);
    }

    void pausingOneLetsTheOtherFinish()
    {
        RunManager manager;
        const auto a = setup(QStringLiteral("a.yaml"), 3, 3);
        const auto b = setup(QStringLiteral("b.yaml"), 4, 3);
        QVERIFY(a && b);
        SearchEngine *engineA = manager.create(*a);
        SearchEngine *engineB = manager.create(*b);
        QSignalSpy finished(&manager, &RunManager::runFinished);
        QString error;
        QVERIFY2(manager.start(engineA, &error), qPrintable(error));
        QVERIFY2(manager.start(engineB, &error), qPrintable(error));
        QSignalSpy firstCandidate(engineA, &SearchEngine::candidateAdded);
        QVERIFY(firstCandidate.wait(30000));
        engineA->pause();
        QTRY_COMPARE_WITH_TIMEOUT(toString(engineA->state()), toString(RunState::Paused), 60000);
        const int candidatesAtPause = int(RunStore::open(a->storePath, &error)->candidates(engineA->runId()).size());
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 120000);
        QCOMPARE(finished.first().at(1).value<RunInfo>().id, engineB->runId());
        QCOMPARE(toString(finished.first().at(1).value<RunInfo>().state), toString(RunState::Finished));
        // The paused run did nothing meanwhile, and goes on when resumed.
        QCOMPARE(int(RunStore::open(a->storePath, &error)->candidates(engineA->runId()).size()), candidatesAtPause);
        QCOMPARE(toString(engineA->state()), toString(RunState::Paused));
        engineA->resumeWork();
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 120000);
        QCOMPARE(toString(finished.at(1).at(1).value<RunInfo>().state), toString(RunState::Finished));
    }

    void cliRunsSeveralConfigurations()
    {
        QTemporaryDir dir;
        QStringList paths;
        for (int i = 0; i < 2; ++i) {
            const QString path = dir.filePath(QStringLiteral("run%1.yaml").arg(i));
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QStringLiteral(
                        "target: fake\nproblem: kernel\nagent: fake\nmodels: {plan: [\"openai-compatible@%1/v1::m\"]}\n"
                        "search: {iterations: 1, beam_width: 2, plans_per_parent: 2, code_per_plan: 1, seed: %2}\n")
                        .arg(m_server.baseUrl().toString())
                        .arg(10 + i)
                        .toUtf8());
            paths << path;
        }
        QProcess cli;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), qEnvironmentVariable("AUTOCOMP_FAKE_DATA"));
        cli.setProcessEnvironment(env);
        cli.start(qEnvironmentVariable("AUTOCOMP_CLI"),
                  QStringList{QStringLiteral("run")} + paths
                      + QStringList{QStringLiteral("--store"), dir.filePath(QStringLiteral("s.sqlite")),
                                    QStringLiteral("--json")});
        // The LLM server lives in this process: wait with the event loop running.
        QSignalSpy done(&cli, &QProcess::finished);
        QVERIFY(done.wait(180000));
        const QByteArray errText = cli.readAllStandardError();
        QCOMPARE(cli.exitCode(), 0);
        const QJsonArray runs = QJsonDocument::fromJson(cli.readAllStandardOutput()).array();
        QCOMPARE(runs.size(), 2);
        QSet<qint64> ids;
        QVERIFY2(!errText.contains("failed"), errText.constData());
        for (const QJsonValue &run : runs) {
            QCOMPARE(run.toObject().value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
            ids.insert(run.toObject().value(QStringLiteral("run_id")).toInteger());
        }
        QCOMPARE(ids.size(), 2);
        // Progress lines name their run.
        QVERIFY2(errText.contains("[run "), errText.constData());

        // One bad configuration: nothing starts, and the file is named.
        QFile bad(dir.filePath(QStringLiteral("bad.yaml")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("target: fake\nproblem: kernel\nsearch: {iterations: -3}\n");
        bad.close();
        cli.start(qEnvironmentVariable("AUTOCOMP_CLI"),
                  {QStringLiteral("run"), paths.first(), bad.fileName(), QStringLiteral("--store"),
                   dir.filePath(QStringLiteral("s.sqlite"))});
        QVERIFY(done.wait(60000));
        QCOMPARE(cli.exitCode(), 1);
        QVERIFY(cli.readAllStandardError().contains("bad.yaml"));
        QString error;
        QCOMPARE(RunStore::open(dir.filePath(QStringLiteral("s.sqlite")), &error)->runs().size(), 2);
    }
};

QTEST_GUILESS_MAIN(TestMultiRun)
#include "tst_multi_run.moc"
