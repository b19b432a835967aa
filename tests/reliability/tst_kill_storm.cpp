// 20 SIGKILLs at random moments of one run: right after a request left, or at a random time after the
// process started (opening the store, evaluating, committing). Each time `autocomp resume` continues it.
// The run must end with the uninterrupted run's beam, its store intact, and no request sent again except
// those cut off in flight (recorded as unconfirmed calls).
#include "reliability_harness.h"

#include <QRandomGenerator>

#include <csignal>

using namespace autocomp;
using namespace autocomp::test;

class TestKillStorm : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void twentyKillsGiveTheUninterruptedBeam()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString config = dir.filePath(QStringLiteral("run.yaml"));
        QVERIFY(writeFile(config, runConfig(5)));
        // Answers take 400 ms, so a session killed within its first moments gets little done and the 20 kills
        // land before the run's end.
        const QByteArray script = deterministicScript(CodeAnswers::Normal, 0, 400);
        QString error;

        FakeLlmServer reference;
        QVERIFY(reference.listen());
        QVERIFY2(reference.loadScriptText(script, dir.path(), &error), qPrintable(error));
        const QString referenceStore = dir.filePath(QStringLiteral("reference.sqlite"));
        const CliResult ref = runCli({QStringLiteral("run"), config, QStringLiteral("--store"), referenceStore},
                                     reference);
        QVERIFY2(ref.exitCode == 0, qPrintable(describe(ref)));
        auto refStore = RunStore::open(referenceStore, &error);
        QVERIFY(refStore);
        const RunInfo refRun = refStore->runs().first();
        const QStringList expectedBeam = beamCodes(*refStore, refRun.id);
        QVERIFY(reference.requestCount() >= 30);

        FakeLlmServer server;
        QVERIFY(server.listen());
        QVERIFY(server.loadScriptText(script, dir.path(), &error));
        const QString storePath = dir.filePath(QStringLiteral("killed.sqlite"));
        const int wanted = 20;
        int kills = 0;
        int sessions = 0;
        bool done = false;
        QRandomGenerator *random = QRandomGenerator::global();
        while (!done && sessions < 200) {
            // Killed before its first commit, the run does not exist yet and is started again.
            bool stored = false;
            if (QFileInfo::exists(storePath)) {
                auto store = RunStore::open(storePath, &error);
                QVERIFY2(store, qPrintable(error));
                stored = store->run(1).has_value();
            }
            const QStringList args = !stored
                ? QStringList{QStringLiteral("run"), config, QStringLiteral("--store"), storePath}
                : QStringList{QStringLiteral("resume"), QStringLiteral("1"), QStringLiteral("--store"), storePath};
            ++sessions;
            if (kills >= wanted) {
                const CliResult last = runCli(args, server);
                QVERIFY2(last.exitCode == 0, qPrintable(describe(last)));
                done = true;
                break;
            }
            // Half the kills land a random moment after the next request reached the server, half at a random
            // time after the process started.
            const bool afterRequest = random->bounded(2) == 0;
            const int target = server.requestCount() + 1;
            const int delayMs = afterRequest ? int(random->bounded(0, 60)) : int(random->bounded(20, 600));
            QElapsedTimer clock;
            clock.start();
            qint64 armedAt = -1;
            const CliResult r = runCli(args, server, [&](QProcess &p) {
                if (afterRequest && armedAt < 0) {
                    if (server.requestCount() < target)
                        return false;
                    armedAt = clock.elapsed();
                }
                if (clock.elapsed() - qMax<qint64>(0, armedAt) < delayMs)
                    return false;
                ::kill(pid_t(p.processId()), SIGKILL);
                return true;
            });
            if (r.finished) {
                QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
                done = true;
            } else {
                ++kills;
            }
        }
        qInfo() << "kills:" << kills << "sessions:" << sessions << "requests:" << server.requestCount()
                << "reference:" << reference.requestCount();
        QVERIFY(done);
        QVERIFY2(kills == wanted, qPrintable(QStringLiteral("the run ended after %1 kills").arg(kills)));

        auto store = RunStore::open(storePath, &error);
        QVERIFY2(store, qPrintable(error));
        const RunInfo run = *store->run(1);
        QCOMPARE(toString(run.state), QStringLiteral("finished"));
        QCOMPARE(run.iteration, refRun.iteration);
        QCOMPARE(beamCodes(*store, 1), expectedBeam);
        QCOMPARE(run.bestScore, refRun.bestScore);
        const QString problems = storedRunProblems(*store, 1);
        QVERIFY2(problems.isEmpty(), qPrintable(problems));
        const QString repeats = repeatedRequests(*store, 1, server);
        QVERIFY2(repeats.isEmpty(), qPrintable(repeats));
        store.reset();
        QCOMPARE(integrity(storePath), QStringLiteral("ok"));
    }
};

QTEST_GUILESS_MAIN(TestKillStorm)
#include "tst_kill_storm.moc"
