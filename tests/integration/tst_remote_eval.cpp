// Remote evaluation through a real sshd and a real one-node Slurm cluster, both started here in
// temporary directories: the cpu target's verdicts (correct, incorrect, compile error, timeout) are the
// same through each executor as locally; a cancel kills the remote work (no process, no work directory,
// no job left); an unreachable host or a lost job is a remote failure retried elsewhere, never a verdict;
// host keys are checked strictly. Skips, saying why, only where openssh-server or Slurm is absent.
#include "eval/evaluator.h"
#include "eval/remote_executor.h"
#include "model/repository.h"
#include "slurm_cluster.h"
#include "ssh_daemon.h"

#include <QDirIterator>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace autocomp;

namespace {

bool copyTree(const QString &from, const QString &to)
{
    QDir().mkpath(to);
    QDirIterator it(from, QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        const QString target = to + QLatin1Char('/') + QDir(from).relativeFilePath(path);
        if (QFileInfo(path).isDir() ? !QDir().mkpath(target) : !QFile::copy(path, target))
            return false;
    }
    return true;
}

QString describe(const EvalResult &r)
{
    return QStringLiteral("%1 (correct %2): %3").arg(r.status).arg(r.correct).arg(r.log.left(3000));
}

// Processes whose command line mentions `text` (the remote evaluation's directory).
int processesMentioning(const QString &text)
{
    int count = 0;
    for (const QString &pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        if (pid.toInt() <= 0 || pid.toInt() == QCoreApplication::applicationPid())
            continue;
        QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
        if (cmdline.open(QIODevice::ReadOnly) && cmdline.readAll().contains(text.toUtf8()))
            ++count;
    }
    return count;
}

} // namespace

class TestRemoteEval : public QObject
{
    Q_OBJECT

    QTemporaryDir m_data;
    QTemporaryDir m_remoteWork;
    Target m_target;
    Problem m_problem;
    QMap<QString, QString> m_codes;
    QMap<QString, EvalResult> m_local;
    std::unique_ptr<test::SshDaemon> m_ssh;
    std::unique_ptr<test::SlurmCluster> m_slurm;
    QString m_sshSkip;
    QString m_slurmSkip;

    static const QMap<QString, QString> &expected()
    {
        static const QMap<QString, QString> s{{QStringLiteral("correct"), QStringLiteral("ok")},
                                              {QStringLiteral("incorrect"), QStringLiteral("incorrect")},
                                              {QStringLiteral("compile_error"), QStringLiteral("compile_error")},
                                              {QStringLiteral("timeout"), QStringLiteral("timeout")}};
        return s;
    }

    EvaluationConfig sshConfig(int slots = 2) const
    {
        EvaluationConfig c;
        c.executor = QStringLiteral("ssh");
        c.hosts = {RemoteHost{QStringLiteral("127.0.0.1"), {}, m_ssh->port(), slots}};
        c.sshKnownHosts = m_ssh->knownHosts();
        c.sshIdentity = m_ssh->identity();
        c.remoteCommand = qEnvironmentVariable("AUTOCOMP_CLI");
        c.remoteWorkdir = m_remoteWork.path();
        return c;
    }

    EvaluationConfig slurmConfig() const
    {
        EvaluationConfig c;
        c.executor = QStringLiteral("slurm");
        c.slurmSharedDir = m_slurm->dir() + QStringLiteral("/shared");
        c.slurmPollMs = 200;
        c.slurmSlots = 4;
        c.remoteCommand = qEnvironmentVariable("AUTOCOMP_CLI");
        return c;
    }

    // Evaluates every named candidate at once and waits for all results.
    QMap<QString, EvalResult> evaluateAll(Evaluator &evaluator, const QStringList &names)
    {
        QMap<QString, EvalResult> results;
        for (const QString &name : names) {
            EvalJob *job = evaluator.evaluate(m_target, m_problem, m_codes.value(name));
            connect(job, &EvalJob::finished, this, [&results, name](const EvalResult &r) { results.insert(name, r); });
        }
        QElapsedTimer clock;
        clock.start();
        while (results.size() < names.size() && clock.elapsed() < 900000)
            QTest::qWait(50);
        // A missing result fails the caller's comparisons (an empty status).
        return results;
    }

    QStringList remoteEvalDirs() const
    {
        return QDir(m_remoteWork.path()).entryList({QStringLiteral("autocomp-eval-*")}, QDir::Dirs);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_data.isValid() && m_remoteWork.isValid());
        // A private data directory: the shipped targets, with the cpu check's limit lowered so that the
        // hanging candidate costs 40 s rather than 120 (with room for a correct check on a loaded machine),
        // and the transpose problem.
        const QString source = qEnvironmentVariable("AUTOCOMP_DATA_DIR");
        QVERIFY(copyTree(source + QStringLiteral("/backends"), m_data.filePath(QStringLiteral("backends"))));
        QVERIFY(copyTree(source + QStringLiteral("/sols/cpu/transpose"), m_data.filePath(QStringLiteral("sols/cpu/transpose"))));
        QFile yaml(m_data.filePath(QStringLiteral("backends/cpu/backend.yaml")));
        QVERIFY(yaml.open(QIODevice::ReadOnly));
        QByteArray text = yaml.readAll();
        yaml.close();
        const QByteArray check = "timeout_s: 120, parallel: true, fail_status: incorrect";
        QCOMPARE(text.count(check), 1);
        text.replace(check, "timeout_s: 40, parallel: true, fail_status: incorrect");
        QVERIFY(yaml.open(QIODevice::WriteOnly | QIODevice::Truncate));
        yaml.write(text);
        yaml.close();
        qputenv("AUTOCOMP_DATA_DIR", m_data.path().toLocal8Bit());

        Repository repository;
        QString error;
        const auto target = repository.target(QStringLiteral("cpu"), &error);
        QVERIFY2(target, qPrintable(error));
        const auto problem = repository.problem(QStringLiteral("cpu"), QStringLiteral("transpose"), &error);
        QVERIFY2(problem, qPrintable(error));
        m_target = *target;
        m_problem = *problem;
        const QString start = m_problem.startCode();
        QVERIFY(start.contains(QLatin1String("= x[i * cols + j];")));
        m_codes.insert(QStringLiteral("correct"), start);
        m_codes.insert(QStringLiteral("incorrect"), QString(start).replace(QLatin1String("= x[i * cols + j];"), QLatin1String("= x[i * cols + j] + 1.0f;")));
        m_codes.insert(QStringLiteral("compile_error"),
                       QStringLiteral("extern \"C\" void transpose(int rows, int cols, const float* x, float* y) { this is not C++; }\n"));
        m_codes.insert(QStringLiteral("timeout"), QStringLiteral("extern \"C\" void transpose(int rows, int cols, const float* x, float* y) {\n"
                                                                 "    volatile unsigned long spin = 0;\n"
                                                                 "    for (;;) spin = spin + static_cast<unsigned long>(rows + cols) + (x != y);\n}\n"));

        // The local verdicts everything else is compared with.
        EvaluationConfig local;
        local.parallelCompiles = 2;
        Evaluator evaluator(local);
        m_local = evaluateAll(evaluator, m_codes.keys());
        for (auto it = expected().cbegin(); it != expected().cend(); ++it)
            QVERIFY2(m_local.value(it.key()).status == it.value(), qPrintable(it.key() + QStringLiteral(": ") + describe(m_local.value(it.key()))));
        QVERIFY(m_local.value(QStringLiteral("correct")).correct);

        m_ssh = std::make_unique<test::SshDaemon>();
        if (!m_ssh->start(&m_sshSkip))
            m_ssh.reset();
        m_slurm = std::make_unique<test::SlurmCluster>();
        if (!m_slurm->start(&m_slurmSkip))
            m_slurm.reset();
        // Installed but not starting is a failure, not a skip.
        QVERIFY2(m_ssh || !test::SshDaemon::absenceReason().isEmpty(), qPrintable(m_sshSkip));
        QVERIFY2(m_slurm || !test::SlurmCluster::absenceReason().isEmpty(), qPrintable(m_slurmSkip));
    }

    void sshGivesTheLocalVerdicts()
    {
        if (!m_ssh)
            QSKIP(qPrintable(m_sshSkip));
        Evaluator evaluator(sshConfig());
        QVERIFY2(evaluator.configurationError().isEmpty(), qPrintable(evaluator.configurationError()));
        QCOMPARE(evaluator.placement(m_target), QStringLiteral("remote"));
        const QMap<QString, EvalResult> results = evaluateAll(evaluator, m_codes.keys());
        for (const QString &name : m_codes.keys()) {
            const EvalResult &r = results.value(name);
            QVERIFY2(r.status == m_local.value(name).status && r.correct == m_local.value(name).correct, qPrintable(name + QStringLiteral(": ") + describe(r)));
            // The remote steps come back with the result, after a note of where they ran.
            QVERIFY2(!r.steps.isEmpty() && r.steps.first().name == QLatin1String("remote"), qPrintable(describe(r)));
            QVERIFY(r.steps.first().log.contains(QStringLiteral("127.0.0.1:%1").arg(m_ssh->port())));
            QVERIFY(r.steps.size() > 1);
        }
        QVERIFY(results.value(QStringLiteral("correct")).metricValue(m_target.metric) > 0);
        QVERIFY(results.value(QStringLiteral("compile_error")).log.contains(QLatin1String("error")));
        // Every per-candidate directory is gone on the host; the target's data stays for the next ones.
        QTRY_COMPARE_WITH_TIMEOUT(remoteEvalDirs(), QStringList(), 20000);
        QCOMPARE(QDir(m_remoteWork.path()).entryList({QStringLiteral("autocomp-data-*")}, QDir::Dirs).size(), 1);
    }

    void sshCompileLocalRunsTheRestRemotely()
    {
        if (!m_ssh)
            QSKIP(qPrintable(m_sshSkip));
        EvaluationConfig config = sshConfig();
        config.placement.insert(QStringLiteral("cpu"), QStringLiteral("compile_local"));
        Evaluator evaluator(config);
        QCOMPARE(evaluator.placement(m_target), QStringLiteral("compile_local"));
        const QMap<QString, EvalResult> results =
            evaluateAll(evaluator, {QStringLiteral("correct"), QStringLiteral("incorrect"), QStringLiteral("compile_error")});
        for (auto it = results.cbegin(); it != results.cend(); ++it) {
            QVERIFY2(it->status == m_local.value(it.key()).status && it->correct == m_local.value(it.key()).correct, qPrintable(it.key() + describe(*it)));
            const bool wentRemote = std::any_of(it->steps.cbegin(), it->steps.cend(), [](const StepResult &s) { return s.name == QLatin1String("remote"); });
            // A compile error is found here; the others were compiled here and judged there.
            QCOMPARE(wentRemote, it.key() != QLatin1String("compile_error"));
            QCOMPARE(it->steps.first().name, QStringLiteral("preprocess"));
        }
    }

    void sshCancelKillsTheRemoteEvaluation()
    {
        if (!m_ssh)
            QSKIP(qPrintable(m_sshSkip));
        Evaluator evaluator(sshConfig());
        std::optional<EvalResult> result;
        EvalJob *job = evaluator.evaluate(m_target, m_problem, m_codes.value(QStringLiteral("timeout")));
        connect(job, &EvalJob::finished, this, [&result](const EvalResult &r) { result = r; });
        // The hanging kernel is running over there (its work directory is on its command lines).
        QTRY_VERIFY_WITH_TIMEOUT(remoteEvalDirs().size() == 1 && processesMentioning(m_remoteWork.path() + QStringLiteral("/autocomp-eval-")) >= 2, 120000);
        job->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), 60000);
        QCOMPARE(result->status, QStringLiteral("cancelled"));
        QTRY_COMPARE_WITH_TIMEOUT(processesMentioning(m_remoteWork.path() + QStringLiteral("/autocomp-eval-")), 0, 30000);
        QTRY_COMPARE_WITH_TIMEOUT(remoteEvalDirs(), QStringList(), 30000);
    }

    void sshUnreachableHostIsRetriedElsewhere()
    {
        if (!m_ssh)
            QSKIP(qPrintable(m_sshSkip));
        // A host nobody listens on, first in the list: its failure is retried on the good host.
        EvaluationConfig config = sshConfig(1);
        config.hosts.prepend(RemoteHost{QStringLiteral("127.0.0.1"), {}, test::freePort(), 1});
        config.sshConnectTimeoutS = 3;
        {
            Evaluator evaluator(config);
            const EvalResult r = evaluateAll(evaluator, {QStringLiteral("correct")}).value(QStringLiteral("correct"));
            QVERIFY2(r.status == QLatin1String("ok") && r.correct, qPrintable(describe(r)));
            QVERIFY2(r.feedback.join(QLatin1Char('\n')).contains(QStringLiteral("1 remote failure")), qPrintable(r.feedback.join(QLatin1Char('\n'))));
        }
        // Only the dead host: an error that says so, never a verdict on the candidate.
        config.hosts.removeLast();
        config.remoteRetries = 1;
        Evaluator evaluator(config);
        const EvalResult r = evaluateAll(evaluator, {QStringLiteral("correct")}).value(QStringLiteral("correct"));
        QCOMPARE(r.status, QStringLiteral("error"));
        QVERIFY(!r.correct);
        QVERIFY2(r.log.contains(QLatin1String("no verdict about the candidate")) && r.log.contains(QLatin1String("cannot connect")), qPrintable(r.log));
    }

    void sshHostKeysAreCheckedStrictly()
    {
        if (!m_ssh)
            QSKIP(qPrintable(m_sshSkip));
        EvaluationConfig config = sshConfig(1);
        config.sshKnownHosts = m_ssh->wrongKnownHosts();
        config.remoteRetries = 0;
        Evaluator evaluator(config);
        const EvalResult r = evaluateAll(evaluator, {QStringLiteral("correct")}).value(QStringLiteral("correct"));
        QCOMPARE(r.status, QStringLiteral("error"));
        QVERIFY2(r.log.contains(QLatin1String("Host key verification failed")) || r.log.contains(QLatin1String("IDENTIFICATION HAS CHANGED")), qPrintable(r.log));
    }

    void slurmGivesTheLocalVerdicts()
    {
        if (!m_slurm)
            QSKIP(qPrintable(m_slurmSkip));
        Evaluator evaluator(slurmConfig());
        QVERIFY2(evaluator.configurationError().isEmpty(), qPrintable(evaluator.configurationError()));
        const QMap<QString, EvalResult> results = evaluateAll(evaluator, m_codes.keys());
        for (const QString &name : m_codes.keys()) {
            const EvalResult &r = results.value(name);
            QVERIFY2(r.status == m_local.value(name).status && r.correct == m_local.value(name).correct, qPrintable(name + QStringLiteral(": ") + describe(r)));
            QVERIFY(r.steps.first().log.contains(QLatin1String("slurm")));
        }
        QCOMPARE(m_slurm->queue(), QStringList());
        // Four jobs ran to completion, and their directories are gone.
        QCOMPARE(m_slurm->completedJobs().filter(QStringLiteral("JobState=COMPLETED")).size(), 4);
        QTRY_COMPARE_WITH_TIMEOUT(QDir(slurmConfig().slurmSharedDir).entryList({QStringLiteral("autocomp-job-*")}, QDir::Dirs), QStringList(), 10000);
    }

    void slurmCancelCancelsTheJob()
    {
        if (!m_slurm)
            QSKIP(qPrintable(m_slurmSkip));
        Evaluator evaluator(slurmConfig());
        std::optional<EvalResult> result;
        EvalJob *job = evaluator.evaluate(m_target, m_problem, m_codes.value(QStringLiteral("timeout")));
        connect(job, &EvalJob::finished, this, [&result](const EvalResult &r) { result = r; });
        QTRY_VERIFY_WITH_TIMEOUT(m_slurm->queue().join(QLatin1Char('\n')).contains(QLatin1String("RUNNING")), 60000);
        job->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), 60000);
        QCOMPARE(result->status, QStringLiteral("cancelled"));
        QTRY_COMPARE_WITH_TIMEOUT(m_slurm->queue(), QStringList(), 60000);
        QVERIFY(m_slurm->completedJobs().last().contains(QLatin1String("JobState=CANCELLED")));
    }

    void slurmLostJobIsRetried()
    {
        if (!m_slurm)
            QSKIP(qPrintable(m_slurmSkip));
        Evaluator evaluator(slurmConfig());
        std::optional<EvalResult> result;
        EvalJob *job = evaluator.evaluate(m_target, m_problem, m_codes.value(QStringLiteral("correct")), {}, nullptr,
                                          EvalRequest{QStringLiteral("lost-job-test"), {}, {}});
        connect(job, &EvalJob::finished, this, [&result](const EvalResult &r) { result = r; });
        // The job vanishes under the evaluation (as a preempted job or a lost node's does).
        QTRY_VERIFY_WITH_TIMEOUT(m_slurm->queue().join(QLatin1Char('\n')).contains(QLatin1String("RUNNING autocomp-lost-job-test")), 60000);
        const QString id = m_slurm->queue().first().section(QLatin1Char(' '), 0, 0);
        QCOMPARE(QProcess::execute(QStringLiteral("scancel"), {id}), 0);
        QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), 600000);
        QVERIFY2(result->status == QLatin1String("ok") && result->correct, qPrintable(describe(*result)));
        QVERIFY2(result->feedback.join(QLatin1Char('\n')).contains(QStringLiteral("Slurm job %1").arg(id)), qPrintable(result->feedback.join(QLatin1Char('\n'))));
        QCOMPARE(m_slurm->queue(), QStringList());
    }
};

QTEST_GUILESS_MAIN(TestRemoteEval)
#include "tst_remote_eval.moc"
