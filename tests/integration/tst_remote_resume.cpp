// A run whose candidates are evaluated as Slurm jobs (a real one-node cluster started here) is killed
// with SIGKILL at five random moments and resumed each time, with a job per candidate and with
// several candidates per job (slurm.batch). At the end: the run finished, no job is left in the queue,
// every candidate with code has exactly one evaluation in the store, and Slurm's own completion log
// shows every job ended once, COMPLETED (none was cancelled or lost: the resumed process re-attached
// to the jobs the killed one had started), while the far side's record of which job started which
// candidate (the remote command is a wrapper that notes it) shows every candidate started exactly
// once, in one of those jobs.
#include "fake_llm_server.h"
#include "slurm_cluster.h"
#include "store/run_store.h"

#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSet>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

using namespace autocomp;

namespace {

// Plans pick a menu item; each code answer carries its own latency, so candidates differ.
QByteArray script()
{
    QString s = QStringLiteral("rules:\n"
                               "  - name: fix\n    match: 'Fixed code:\\s*$'\n    cycle: true\n    responses:\n"
                               "      - content: \"```cpp\\n// fake: status=ok latency_ms=70 bench_ms=1200;\\nvoid "
                               "kernel() { /* fixed */ }\\n```\"\n"
                               "  - name: plan\n    match: 'Plan:\\s*$'\n    cycle: true\n    responses:\n"
                               "      - content: \"Chosen optimization: 1. alpha: tile the loops\\nApply it.\"\n"
                               "      - content: \"Chosen optimization: 2. beta: vectorize\\nApply it.\"\n"
                               "  - name: code\n    match: 'Optimized code:\\s*$'\n    cycle: true\n    responses:\n");
    for (int i = 0; i < 12; ++i)
        s += QStringLiteral("      - content: \"```cpp\\n// fake: status=%1 latency_ms=%2 compile_ms=100 "
                            "bench_ms=1500;\\nvoid kernel() { /* %3 */ }\\n```\"\n")
                 .arg(i == 5 ? QStringLiteral("compile_error") : QStringLiteral("ok"))
                 .arg(95 - i * 3)
                 .arg(i);
    return s.toUtf8();
}

} // namespace

class TestRemoteResume : public QObject
{
    Q_OBJECT

    // Runs the CLI; with killAfterMs > 0 kills it with SIGKILL then. True when it ended by itself with 0.
    bool runCli(const QStringList &args, const test::FakeLlmServer &server, int killAfterMs)
    {
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), qEnvironmentVariable("AUTOCOMP_FAKE_DATA"));
        env.insert(QStringLiteral("VLLM_API_BASE"), server.baseUrl().toString() + QStringLiteral("/v1"));
        process.setProcessEnvironment(env);
        process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        QSignalSpy finished(&process, &QProcess::finished);
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"), args);
        if (!process.waitForStarted())
            return false;
        if (killAfterMs > 0 && !finished.wait(killAfterMs)) {
            ::kill(pid_t(process.processId()), SIGKILL);
            finished.wait(10000);
            return false;
        }
        if (finished.isEmpty())
            finished.wait(600000);
        return !finished.isEmpty() && process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0;
    }

private Q_SLOTS:
    void killedRunsLeaveNoJobAndRepeatNoEvaluation_data()
    {
        QTest::addColumn<QString>("slurm");
        QTest::addColumn<bool>("batched");
        QTest::newRow("a job per candidate") << QStringLiteral("{poll_ms: 200, slots: 4}") << false;
        QTest::newRow("batches") << QStringLiteral("{poll_ms: 200, slots: 2, batch: 4, batch_wait_ms: 1500, cpus: 2}")
                                 << true;
    }

    void killedRunsLeaveNoJobAndRepeatNoEvaluation()
    {
        QFETCH(QString, slurm);
        QFETCH(bool, batched);
        if (const QString absent = test::SlurmCluster::absenceReason(); !absent.isEmpty())
            QSKIP(qPrintable(absent));
        test::SlurmCluster cluster;
        QString error;
        QVERIFY2(cluster.start(&error), qPrintable(error));
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // The far side's note of each evaluation it starts: the job and the candidate's key.
        const QString started = dir.filePath(QStringLiteral("started.log"));
        const QString wrapper = dir.filePath(QStringLiteral("autocomp-remote.sh"));
        QFile wrapperFile(wrapper);
        QVERIFY(wrapperFile.open(QIODevice::WriteOnly));
        wrapperFile.write(
            QStringLiteral("#!/bin/sh\nprev=\nfor a in \"$@\"; do [ \"$prev\" = --code ] && code=$a; prev=$a; done\n"
                           "echo \"$SLURM_JOB_ID $(cat \"$(dirname \"$code\")/../key\")\" >> '%1'\nexec '%2' \"$@\"\n")
                .arg(started, qEnvironmentVariable("AUTOCOMP_CLI"))
                .toUtf8());
        wrapperFile.close();
        QVERIFY(wrapperFile.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        const QString config = dir.filePath(QStringLiteral("run.yaml"));
        QFile file(config);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QStringLiteral("target: fake\nproblem: kernel\nagent: fake\nmodels: {plan: [\"vllm::m1\"]}\n"
                                  "search: {iterations: 3, beam_width: 2, plans_per_parent: 2, code_per_plan: 2, "
                                  "menu_dropout: 0.5, fix_attempts: 1, seed: 7}\n"
                                  "evaluation: {executor: slurm, slurm: %1, remote: {command: \"%2\"}}\n")
                       .arg(QString(slurm).replace(QLatin1String("{"),
                                                   QStringLiteral("{shared_dir: \"%1/shared\", ").arg(cluster.dir())),
                            wrapper)
                       .toUtf8());
        file.close();

        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QVERIFY2(server.loadScriptText(script(), dir.path(), &error), qPrintable(error));
        const QString storePath = dir.filePath(QStringLiteral("store.sqlite"));
        QRandomGenerator random(QRandomGenerator::system()->generate());
        int kills = 0;
        bool done = runCli({QStringLiteral("run"), config, QStringLiteral("--store"), storePath}, server,
                           int(random.bounded(2000, 6000)));
        kills += !done;
        qint64 runId = 0;
        {
            auto store = RunStore::open(storePath, &error);
            QVERIFY2(store, qPrintable(error));
            QVERIFY(!store->runs().isEmpty());
            runId = store->runs().first().id;
        }
        const QStringList resume{QStringLiteral("resume"), QString::number(runId), QStringLiteral("--store"),
                                 storePath};
        int jobsSeenAtAKill = 0;
        while (!done && kills < 5) {
            // Jobs the killed process started are still queued or running: the next process must take them over.
            jobsSeenAtAKill += int(cluster.queue().size());
            done = runCli(resume, server, int(random.bounded(1500, 7000)));
            kills += !done;
        }
        if (!done)
            jobsSeenAtAKill += int(cluster.queue().size());
        for (int attempt = 0; !done && attempt < 3; ++attempt)
            done = runCli(resume, server, 0);
        QVERIFY2(done, "the resumed run finishes");
        qInfo() << "kills:" << kills << "jobs in the queue at the kills:" << jobsSeenAtAKill;
        QVERIFY2(kills >= 3, qPrintable(QStringLiteral("only %1 kills landed before the run ended").arg(kills)));
        QVERIFY2(jobsSeenAtAKill > 0, "some kill landed while jobs were in the queue");

        auto store = RunStore::open(storePath, &error);
        QVERIFY(store);
        QCOMPARE(toString(store->run(runId)->state), QStringLiteral("finished"));
        // 0 orphans: the queue is empty.
        QCOMPARE(cluster.queue(), QStringList());

        // 0 lost, 0 repeated in the store: one evaluation per candidate that has code (and is no duplicate).
        const QList<Candidate> candidates = store->candidates(runId);
        QVERIFY(candidates.size() >= 5);
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("count"));
        db.setDatabaseName(storePath);
        QVERIFY(db.open());
        int evaluated = 0;
        for (const Candidate &c : candidates) {
            QSqlQuery q(db);
            q.prepare(QStringLiteral("SELECT COUNT(*) FROM evaluations WHERE candidate_id = ? AND step_index = 0"));
            q.addBindValue(c.id);
            QVERIFY(q.exec() && q.next());
            // A duplicate (the same code as one evaluated before) is not evaluated.
            QVERIFY2(q.value(0).toInt() == (c.code.isEmpty() || c.status == CandidateStatus::Duplicate ? 0 : 1),
                     qPrintable(QStringLiteral("candidate %1 has %2 evaluations").arg(c.id).arg(q.value(0).toInt())));
            evaluated += q.value(0).toInt();
        }
        // 0 repeated on the cluster: every job ended once, COMPLETED (a job cancelled or failed would
        // mean work redone), and every evaluated candidate started exactly once, in one of those jobs.
        QHash<QString, QStringList> endings;
        static const QRegularExpression s_job(QStringLiteral("JobId=(\\d+) .*Name=(\\S+) JobState=(\\S+)"));
        for (const QString &line : cluster.completedJobs()) {
            const auto m = s_job.match(line);
            QVERIFY2(m.hasMatch(), qPrintable(line));
            endings[m.captured(1)] << m.captured(3);
        }
        for (auto it = endings.cbegin(); it != endings.cend(); ++it)
            QVERIFY2(it.value() == QStringList{QStringLiteral("COMPLETED")},
                     qPrintable(it.key() + QStringLiteral(": ") + it.value().join(QLatin1Char(','))));
        QFile log(started);
        QVERIFY(log.open(QIODevice::ReadOnly));
        QHash<QString, QString> jobOf;
        QSet<QString> jobs;
        for (const QString &line : QString::fromUtf8(log.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
            const QString job = line.section(QLatin1Char(' '), 0, 0);
            const QString key = line.section(QLatin1Char(' '), 1);
            QVERIFY2(
                !jobOf.contains(key),
                qPrintable(QStringLiteral("%1 started in job %2 and again in job %3").arg(key, jobOf.value(key), job)));
            QVERIFY2(
                endings.contains(job),
                qPrintable(QStringLiteral("%1 started in job %2, which is not in the completion log").arg(key, job)));
            jobOf.insert(key, job);
            jobs.insert(job);
        }
        QCOMPARE(int(jobOf.size()), evaluated);
        QCOMPARE(int(jobs.size()), int(endings.size()));
        qInfo() << "candidates evaluated:" << evaluated << "jobs:" << jobs.size();
        // With batches, some job evaluated several candidates; without, each its own.
        if (batched)
            QVERIFY2(jobs.size() < evaluated, "no job evaluated more than one candidate");
        else
            QCOMPARE(int(jobs.size()), evaluated);
    }
};

QTEST_GUILESS_MAIN(TestRemoteResume)
#include "tst_remote_resume.moc"
