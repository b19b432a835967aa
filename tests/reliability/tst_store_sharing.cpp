// Processes sharing one store (issue #33): a driver stopped past its lease never writes the run again once another
// process took it over; any number of processes may create and migrate a new store at once; `resume` of a run that
// has ended reports it as it ended. The real CLI, the local LLM server, the fake target, real SQLite.
#include "reliability_harness.h"

#include <csignal>

using namespace autocomp;
using namespace autocomp::test;

namespace {

// A lease whose heartbeat is this old is taken over (AUTOCOMP_LEASE_TIMEOUT_S, instead of 120 s).
constexpr int s_leaseTimeoutS = 3;
// How late the code answers come in the take-over test.
constexpr int s_codeDelayMs = 4000;

QProcessEnvironment cliEnvironment(const FakeLlmServer &server)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), qEnvironmentVariable("AUTOCOMP_FAKE_DATA"));
    env.insert(QStringLiteral("VLLM_API_BASE"), server.baseUrl().toString() + QStringLiteral("/v1"));
    env.insert(QStringLiteral("VLLM_API_KEY"), QStringLiteral("test-key"));
    env.insert(QStringLiteral("AUTOCOMP_LEASE_TIMEOUT_S"), QString::number(s_leaseTimeoutS));
    return env;
}

void startCli(QProcess &process, const QStringList &args, const FakeLlmServer &server)
{
    process.setProcessEnvironment(cliEnvironment(server));
    process.start(qEnvironmentVariable("AUTOCOMP_CLI"), args);
}

// Waits (serving the LLM server meanwhile) for the process to end; its exit status, or -1 when it did not end.
int waitFor(QProcess &process, int timeoutMs)
{
    QElapsedTimer clock;
    clock.start();
    while (process.state() != QProcess::NotRunning && clock.elapsed() < timeoutMs)
        QTest::qWait(20);
    return process.state() == QProcess::NotRunning && process.exitStatus() == QProcess::NormalExit ? process.exitCode()
                                                                                                   : -1;
}

// All the process wrote so far (kept on the process: a check's message is built whether the check fails or not).
QString output(QProcess &process)
{
    const QString out = process.property("out").toString() + QString::fromUtf8(process.readAllStandardOutput());
    const QString err = process.property("err").toString() + QString::fromUtf8(process.readAllStandardError());
    process.setProperty("out", out);
    process.setProperty("err", err);
    return QStringLiteral("--- stdout\n%1\n--- stderr\n%2").arg(out, err.right(6000));
}

int rulesSeen(const FakeLlmServer &server, const QString &rule)
{
    int n = 0;
    for (const RecordedRequest &r : server.requests())
        n += r.ruleName == rule;
    return n;
}

QByteArray smallConfig(int iterations, int plansPerParent)
{
    return "target: fake\nproblem: kernel\nagent: fake\nmodels: {plan: [\"vllm::m1\"]}\n"
           "search: {iterations: "
        + QByteArray::number(iterations) + ", beam_width: 1, plans_per_parent: " + QByteArray::number(plansPerParent)
        + ", code_per_plan: 1, menu_dropout: 0, fix_attempts: 0, seed: 7}\n";
}

// Whether a process could write the store now (none holds its write lock), within 200 ms.
bool storeWritable(const QString &path)
{
    bool ok = false;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("writable"));
        db.setDatabaseName(path);
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=200"));
        if (db.open()) {
            QSqlQuery q(db);
            ok = q.exec(QStringLiteral("BEGIN IMMEDIATE")) && q.exec(QStringLiteral("ROLLBACK"));
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("writable"));
    return ok;
}

QString codeAnswer(int latency)
{
    return QStringLiteral("\"```cpp\\n// fake: status=ok latency_ms=%1 compile_ms=5 bench_ms=10;\\nvoid kernel() { /* "
                          "%1 */ }\\n```\"")
        .arg(latency);
}

// Candidates that are the same piece of work twice: same parent, origin, iteration, plan slot and sample.
QString doubledCandidates(RunStore &store, qint64 runId)
{
    QStringList problems;
    QSet<QString> seen;
    for (const Candidate &c : store.candidates(runId)) {
        const QString key = QStringLiteral("%1/%2/%3/%4/%5")
                                .arg(c.parentId)
                                .arg(toString(c.origin))
                                .arg(c.iteration)
                                .arg(c.planSlot)
                                .arg(c.sample);
        if (seen.contains(key))
            problems << QStringLiteral("candidate %1 doubles another (parent/origin/iteration/slot/sample %2)")
                            .arg(c.id)
                            .arg(key);
        seen.insert(key);
    }
    return problems.join(QLatin1Char('\n'));
}

} // namespace

class TestStoreSharing : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_seedStore;
    QString m_archive;
    qint64 m_archiveCandidates = 0;
    QDateTime m_archiveCreated; // an imported run keeps it

    QString path(const QString &name) const { return m_dir.filePath(name); }

    static bool startServer(FakeLlmServer &server, const QByteArray &script, const QString &dir)
    {
        QString error;
        if (!server.listen() || !server.loadScriptText(script, dir, &error)) {
            qWarning() << "fake server:" << error;
            return false;
        }
        return true;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QVERIFY(!qEnvironmentVariable("AUTOCOMP_CLI").isEmpty());
        // This process reads leases too: with the same timeout as the CLI processes.
        qputenv("AUTOCOMP_LEASE_TIMEOUT_S", QByteArray::number(s_leaseTimeoutS));
        QCOMPARE(RunLease::timeoutSecs(), s_leaseTimeoutS);
        // A small finished run, and its export: what the processes below import.
        FakeLlmServer server;
        QVERIFY(startServer(server, deterministicScript(), m_dir.path()));
        QVERIFY(writeFile(path(QStringLiteral("small.yaml")), smallConfig(1, 1)));
        m_seedStore = path(QStringLiteral("seed.sqlite"));
        CliResult r = runCli(
            {QStringLiteral("run"), path(QStringLiteral("small.yaml")), QStringLiteral("--store"), m_seedStore},
            server);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        m_archive = path(QStringLiteral("small.jsonl"));
        r = runCli({QStringLiteral("export"), QStringLiteral("1"), QStringLiteral("--format"), QStringLiteral("jsonl"),
                    QStringLiteral("--out"), m_archive, QStringLiteral("--store"), m_seedStore},
                   server);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QString error;
        auto store = RunStore::open(m_seedStore, &error);
        QVERIFY2(store, qPrintable(error));
        m_archiveCandidates = store->candidates(1).size();
        m_archiveCreated = store->run(1)->createdAt;
        QVERIFY(m_archiveCandidates >= 2);
    }

    // A driver stopped (SIGSTOP) past its lease's timeout, while the answers to its code requests arrive; `resume`
    // takes the run over elsewhere and drives it on; the first is continued (SIGCONT): it writes nothing (the run
    // stays running under the new driver, no candidate or answer twice) and exits 4 naming the new driver.
    void staleDriverLeavesTheRunToItsSuccessor()
    {
        // Two plans are answered, then plans hang (the successor's second iteration: it keeps driving); four code
        // answers (two for each driver) come 4 s late, so the first driver is stopped with them on their way.
        QByteArray script =
            "rules:\n"
            "  - name: plan\n    match: 'Plan:\\s*$'\n    responses:\n"
            "      - content: \"Chosen optimization: 1. alpha: tile the loops\\nApply it.\"\n"
            "      - content: \"Chosen optimization: 2. beta: vectorize\\nApply it.\"\n"
            "  - name: plan-later\n    match: 'Plan:\\s*$'\n    cycle: true\n    responses:\n"
            "      - {content: \"Chosen optimization: 3. gamma: unroll\\nApply it.\", fault: never_end}\n"
            "  - name: code\n    match: 'Optimized code:\\s*$'\n    responses:\n";
        for (int latency : {90, 85, 80, 75})
            script += "      - {content: " + codeAnswer(latency).toUtf8()
                + ", delay_ms: " + QByteArray::number(s_codeDelayMs) + "}\n";
        script += "  - name: code-later\n    match: 'Optimized code:\\s*$'\n    cycle: true\n    responses:\n"
                  "      - {content: "
            + codeAnswer(70).toUtf8() + ", fault: never_end}\n";
        FakeLlmServer server;
        QVERIFY(startServer(server, script, m_dir.path()));
        const QString config = path(QStringLiteral("two-iterations.yaml"));
        QVERIFY(writeFile(config, smallConfig(2, 2)));
        const QString storePath = path(QStringLiteral("handover.sqlite"));
        const QStringList store{QStringLiteral("--store"), storePath};

        const auto end = [](QProcess &process) {
            if (process.state() == QProcess::NotRunning)
                return;
            process.kill(); // SIGKILL ends a stopped process too
            process.waitForFinished();
        };
        QProcess first;
        startCli(first, QStringList{QStringLiteral("run"), config} + store, server);
        QVERIFY(first.waitForStarted());
        auto cleanup = qScopeGuard([&] { end(first); });
        QTRY_VERIFY_WITH_TIMEOUT(
            rulesSeen(server, QStringLiteral("code")) == 2 || first.state() == QProcess::NotRunning, 60000);
        QVERIFY2(first.state() == QProcess::Running, qPrintable(output(first)));
        const pid_t firstPid = pid_t(first.processId());
        QVERIFY(firstPid > 0);
        QCOMPARE(::kill(firstPid, SIGSTOP), 0);
        QElapsedTimer stopped;
        stopped.start();
        // Not stopped in the middle of a write (a heartbeat): its write lock would keep the successor out.
        for (int attempt = 0; attempt < 20 && !storeWritable(storePath); ++attempt) {
            ::kill(firstPid, SIGCONT);
            QTest::qWait(30);
            ::kill(firstPid, SIGSTOP);
        }
        QVERIFY(storeWritable(storePath));
        QString error;
        auto reader = RunStore::open(storePath, &error);
        QVERIFY2(reader, qPrintable(error));
        const auto heldBefore = reader->lease(1);
        QVERIFY(heldBefore && heldBefore->pid == first.processId());
        // Its answers arrive and its heartbeat grows older than the lease's timeout.
        QTRY_VERIFY_WITH_TIMEOUT(!reader->lease(1)->alive, (s_leaseTimeoutS + 10) * 1000);
        while (stopped.elapsed() < s_codeDelayMs + 500)
            QTest::qWait(50);

        QProcess second;
        startCli(second, QStringList{QStringLiteral("resume"), QStringLiteral("1")} + store, server);
        QVERIFY(second.waitForStarted());
        auto cleanupSecond = qScopeGuard([&] { end(second); });
        // It drives the run into its second iteration, where its plan requests hang.
        QTRY_VERIFY_WITH_TIMEOUT(
            rulesSeen(server, QStringLiteral("plan-later")) >= 1 || second.state() == QProcess::NotRunning, 60000);
        QVERIFY2(second.state() == QProcess::Running, qPrintable(output(second)));
        QCOMPARE(rulesSeen(server, QStringLiteral("code")), 4);
        const QList<Candidate> beforeContinue = reader->candidates(1);

        QCOMPARE(::kill(firstPid, SIGCONT), 0);
        const int firstExit = waitFor(first, 60000);
        const QString firstOutput = output(first);
        QVERIFY2(firstExit == 4, qPrintable(firstOutput));
        QVERIFY2(firstOutput.contains(QStringLiteral("run 1 is driven by pid %1 on ").arg(second.processId())),
                 qPrintable(firstOutput));

        // The store is the successor's: running, its lease, nothing of the first driver's late answers.
        const RunInfo run = *reader->run(1);
        QCOMPARE(toString(run.state), QStringLiteral("running"));
        const auto lease = reader->lease(1);
        QVERIFY(lease && lease->alive);
        QCOMPARE(lease->pid, second.processId());
        QCOMPARE(reader->candidates(1).size(), beforeContinue.size());
        const QString doubled = doubledCandidates(*reader, 1);
        QVERIFY2(doubled.isEmpty(), qPrintable(doubled));
        const QString repeats = repeatedRequests(*reader, 1, server);
        QVERIFY2(repeats.isEmpty(), qPrintable(repeats));
        int codeCandidates = 0;
        for (const Candidate &c : reader->candidates(1))
            codeCandidates += c.origin != CandidateOrigin::Root && !c.code.isEmpty();
        QCOMPARE(codeCandidates, 2);
        QVERIFY2(second.state() == QProcess::Running, qPrintable(output(second)));

        // The successor still answers to the run's controls.
        const CliResult stop = runCli(QStringList{QStringLiteral("stop"), QStringLiteral("1")} + store, server);
        QVERIFY2(stop.exitCode == 0, qPrintable(describe(stop)));
        QCOMPARE(waitFor(second, 60000), 4);
        QCOMPARE(toString(reader->run(1)->state), QStringLiteral("stopped"));
    }

    // Eight processes (runs and imports) start at once on a store path that does not exist yet, 20 times: every
    // one succeeds, the store is at the current schema version with one version row, and holds each run once.
    void newStoreFromManyProcesses()
    {
        FakeLlmServer server;
        QVERIFY(startServer(server, deterministicScript(), m_dir.path()));
        for (int round = 0; round < 20; ++round) {
            const QString folder = path(QStringLiteral("new-%1").arg(round));
            QVERIFY(QDir().mkpath(folder));
            const QString storePath = folder + QStringLiteral("/runs.sqlite");
            std::vector<std::unique_ptr<QProcess>> processes;
            for (int i = 0; i < 8; ++i) {
                const bool import = i % 2 == 1;
                auto process = std::make_unique<QProcess>();
                startCli(*process,
                         import ? QStringList{QStringLiteral("import"), m_archive, QStringLiteral("--store"), storePath}
                                : QStringList{QStringLiteral("run"), path(QStringLiteral("small.yaml")),
                                              QStringLiteral("--store"), storePath},
                         server);
                processes.push_back(std::move(process));
            }
            for (auto &process : processes) {
                const int exit = waitFor(*process, 120000);
                QVERIFY2(exit == 0,
                         qPrintable(QStringLiteral("round %1, %2: exit %3\n%4")
                                        .arg(round)
                                        .arg(process->arguments().join(QLatin1Char(' ')))
                                        .arg(exit)
                                        .arg(output(*process))));
            }
            QString error;
            auto store = RunStore::open(storePath, &error);
            QVERIFY2(store, qPrintable(error));
            const QList<RunInfo> runs = store->runs();
            QCOMPARE(runs.size(), 8);
            int imported = 0;
            for (const RunInfo &run : runs) {
                QCOMPARE(toString(run.state), QStringLiteral("finished"));
                QCOMPARE(store->candidates(run.id).size(), m_archiveCandidates);
                const QString doubled = doubledCandidates(*store, run.id);
                QVERIFY2(doubled.isEmpty(), qPrintable(doubled));
                imported += run.createdAt == m_archiveCreated;
            }
            QCOMPARE(imported, 4);
            store.reset();
            const QString connection = QStringLiteral("schema-%1").arg(round);
            {
                QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
                db.setDatabaseName(storePath);
                QVERIFY(db.open());
                QSqlQuery q(db);
                QVERIFY(q.exec(QStringLiteral("SELECT count(*), max(version) FROM schema_version")) && q.next());
                QCOMPARE(q.value(0).toInt(), 1);
                QCOMPARE(q.value(1).toInt(), RunStore::SchemaVersion);
                q.finish();
                db.close();
            }
            QSqlDatabase::removeDatabase(connection);
            QCOMPARE(integrity(storePath), QStringLiteral("ok"));
        }
    }

    // `resume` of a run that has ended says so, with its summary and the status of its end: 0 finished, 3 failed.
    void resumeOfAnEndedRun()
    {
        FakeLlmServer server;
        QVERIFY(startServer(server, deterministicScript(), m_dir.path()));
        const int before = server.requestCount();
        CliResult r = runCli({QStringLiteral("resume"), QStringLiteral("1"), QStringLiteral("--store"), m_seedStore},
                             server);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QVERIFY2(r.out.startsWith(QLatin1String("run 1 already finished (finished: completed 1 iterations)")),
                 qPrintable(describe(r)));
        QVERIFY2(r.out.contains(QLatin1String("LLM calls")) && !r.out.contains(QLatin1String("run 0")),
                 qPrintable(describe(r)));
        r = runCli({QStringLiteral("resume"), QStringLiteral("1"), QStringLiteral("--store"), m_seedStore,
                    QStringLiteral("--json")},
                   server);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(o.value(QStringLiteral("run_id")).toInteger(), 1);
        QCOMPARE(o.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
        QVERIFY(o.value(QStringLiteral("already_finished")).toBool());
        QCOMPARE(server.requestCount(), before); // nothing was sent

        FakeLlmServer refusing;
        QVERIFY(startServer(refusing,
                            "rules:\n  - name: refuse\n    match: '.'\n    cycle: true\n    responses:\n"
                            "      - {status: 400, error_message: \"model not found\"}\n",
                            m_dir.path()));
        const QString failedStore = path(QStringLiteral("failed.sqlite"));
        r = runCli({QStringLiteral("run"), path(QStringLiteral("small.yaml")), QStringLiteral("--store"), failedStore},
                   refusing);
        QVERIFY2(r.exitCode == 3, qPrintable(describe(r)));
        r = runCli({QStringLiteral("resume"), QStringLiteral("1"), QStringLiteral("--store"), failedStore}, refusing);
        QVERIFY2(r.exitCode == 3, qPrintable(describe(r)));
        QVERIFY2(r.out.startsWith(QLatin1String("run 1 already finished (failed: every LLM call failed")),
                 qPrintable(describe(r)));
        QVERIFY2(!r.out.contains(QLatin1String("run 0")), qPrintable(describe(r)));
        r = runCli({QStringLiteral("resume"), QStringLiteral("1"), QStringLiteral("--store"), failedStore,
                    QStringLiteral("--json")},
                   refusing);
        QVERIFY2(r.exitCode == 3, qPrintable(describe(r)));
        o = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(o.value(QStringLiteral("run_id")).toInteger(), 1);
        QCOMPARE(o.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
    }
};

QTEST_GUILESS_MAIN(TestStoreSharing)
#include "tst_store_sharing.moc"
