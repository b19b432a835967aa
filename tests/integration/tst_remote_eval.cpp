// Remote evaluation through a real sshd and a real one-node Slurm cluster, both started here in
// temporary directories: the cpu target's verdicts (correct, incorrect, compile error, timeout) are the
// same through each executor as locally; a cancel kills the remote work (no process, no work directory,
// no job left); an unreachable host or a lost job is a remote failure retried elsewhere, never a verdict;
// host keys are checked strictly. Several candidates in one Slurm job (slurm.batch) give the same
// verdicts, one failing without an answer ends none of the others, a lost batch job fails every
// candidate still in it with the reason and each is retried, and cancelling one candidate kills only
// its evaluation. A problem whose reference lies outside its folder (as `autocomp problems import`
// makes them) is evaluated remotely from the files sent along. Skips, saying why, only where
// openssh-server or Slurm (or, for its row, torch) is absent.
#include "eval/evaluator.h"
#include "eval/remote_executor.h"
#include "eval/slurm_executor.h"
#include "catalog/repository.h"
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
// The processes whose command line mentions `text`: "pid: argv[0] argv[1]…" (shortened).
QStringList processListMentioning(const QString &text)
{
    QStringList found;
    for (const QString &pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        if (pid.toInt() <= 0 || pid.toInt() == QCoreApplication::applicationPid())
            continue;
        QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
        if (!cmdline.open(QIODevice::ReadOnly))
            continue;
        const QByteArray line = cmdline.readAll();
        if (line.contains(text.toUtf8()))
            found << pid + QStringLiteral(": ")
                    + QString::fromUtf8(line).replace(QLatin1Char('\0'), QLatin1Char(' ')).left(160);
    }
    return found;
}

int processesMentioning(const QString &text) { return int(processListMentioning(text).size()); }

} // namespace

class TestRemoteEval : public QObject
{
    Q_OBJECT

    QTemporaryDir m_data;
    QTemporaryDir m_remoteWork;
    QTemporaryDir m_userFiles; // files of the user's outside every data directory
    Target m_target;
    Problem m_problem;
    QMap<QString, QString> m_codes;
    QMap<QString, EvalResult> m_local;
    std::unique_ptr<test::SshDaemon> m_ssh;
    std::unique_ptr<test::SlurmCluster> m_slurm;
    QString m_shipped; // the shipped data directory (this test's own copy replaces it in AUTOCOMP_DATA_DIR)
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

    // Candidates share jobs: up to `batch` in one, two evaluated at once in it.
    EvaluationConfig slurmBatchConfig(int batch, int slots) const
    {
        EvaluationConfig c = slurmConfig();
        c.slurmBatch = batch;
        c.slurmBatchWaitMs = 2000;
        c.slurmCpus = 2;
        c.slurmSlots = slots;
        return c;
    }

    int completedJobs(const QString &state) const
    {
        return int(m_slurm->completedJobs().filter(QStringLiteral("JobState=") + state).size());
    }

    QStringList slurmLeftovers() const
    {
        return QDir(slurmConfig().slurmSharedDir)
            .entryList({QStringLiteral("autocomp-batch-*"), QStringLiteral("autocomp-cand-*")},
                       QDir::Dirs | QDir::Files);
    }

    // Evaluates every named candidate at once and waits for all results.
    QMap<QString, EvalResult> evaluateAll(Evaluator &evaluator, const QStringList &names,
                                          const Problem *problem = nullptr)
    {
        QMap<QString, EvalResult> results;
        for (const QString &name : names) {
            EvalJob *job = evaluator.evaluate(m_target, problem ? *problem : m_problem, m_codes.value(name));
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
        QVERIFY(m_data.isValid() && m_remoteWork.isValid() && m_userFiles.isValid());
        // A private data directory: the shipped targets, with the cpu check's limit lowered so that the
        // hanging candidate costs 40 s rather than 120 (with room for a correct check on a loaded machine),
        // and the transpose problem.
        const QString source = qEnvironmentVariable("AUTOCOMP_DATA_DIR");
        m_shipped = source;
        QVERIFY(copyTree(source + QStringLiteral("/backends"), m_data.filePath(QStringLiteral("backends"))));
        QVERIFY(copyTree(source + QStringLiteral("/sols/cpu/transpose"),
                         m_data.filePath(QStringLiteral("sols/cpu/transpose"))));
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
        m_codes.insert(
            QStringLiteral("incorrect"),
            QString(start).replace(QLatin1String("= x[i * cols + j];"), QLatin1String("= x[i * cols + j] + 1.0f;")));
        m_codes.insert(
            QStringLiteral("compile_error"),
            QStringLiteral(
                "extern \"C\" void transpose(int rows, int cols, const float* x, float* y) { this is not C++; }\n"));
        m_codes.insert(
            QStringLiteral("timeout"),
            QStringLiteral("extern \"C\" void transpose(int rows, int cols, const float* x, float* y) {\n"
                           "    volatile unsigned long spin = 0;\n"
                           "    for (;;) spin = spin + static_cast<unsigned long>(rows + cols) + (x != y);\n}\n"));

        // The local verdicts everything else is compared with.
        EvaluationConfig local;
        local.parallelCompiles = 2;
        Evaluator evaluator(local);
        m_local = evaluateAll(evaluator, m_codes.keys());
        for (auto it = expected().cbegin(); it != expected().cend(); ++it)
            QVERIFY2(m_local.value(it.key()).status == it.value(),
                     qPrintable(it.key() + QStringLiteral(": ") + describe(m_local.value(it.key()))));
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
            QVERIFY2(r.status == m_local.value(name).status && r.correct == m_local.value(name).correct,
                     qPrintable(name + QStringLiteral(": ") + describe(r)));
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

    // The far side's own verdict no_hardware (a target whose hardware check fails there) comes back as
    // that verdict, not as a failure of the remote machinery retried elsewhere.
    void sshNoHardwareIsAVerdict()
    {
        if (!m_ssh)
            QSKIP(qPrintable(m_sshSkip));
        const auto write = [this](const QString &path, const QByteArray &bytes) {
            QDir().mkpath(QFileInfo(m_data.filePath(path)).absolutePath());
            QFile file(m_data.filePath(path));
            return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(bytes) == bytes.size();
        };
        QVERIFY(write(
            QStringLiteral("backends/remote-nohw/backend.yaml"),
            "name: remote-nohw\nextension: txt\nhardware_check: [sh, -c, \"echo no such card here; exit 1\"]\nsteps:\n"
            "  - {name: syntax, run: [sh, -c, \"test -s {candidate}\"], timeout_s: 30, fail_status: compile_error}\n"
            "  - {name: bench, role: judge, needs_hardware: true, run: [sh, -c, \"exit 0\"], timeout_s: 30}\n"));
        QVERIFY(write(QStringLiteral("sols/remote-nohw/p/problem.yaml"),
                      "name: p\nstart: start.txt\nreference: start.txt\nshapes: [{n: 1}]\n"));
        QVERIFY(write(QStringLiteral("sols/remote-nohw/p/start.txt"), "a kernel\n"));
        Repository repository;
        QString error;
        const auto target = repository.target(QStringLiteral("remote-nohw"), &error);
        QVERIFY2(target, qPrintable(error));
        const auto problem = repository.problem(QStringLiteral("remote-nohw"), QStringLiteral("p"), &error);
        QVERIFY2(problem, qPrintable(error));
        Evaluator evaluator(sshConfig());
        QCOMPARE(evaluator.placement(*target), QStringLiteral("remote"));
        EvalResult result;
        bool done = false;
        EvalJob *job = evaluator.evaluate(*target, *problem, QStringLiteral("a kernel\n"));
        connect(job, &EvalJob::finished, this, [&](const EvalResult &r) {
            result = r;
            done = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(done, 300000);
        QVERIFY2(result.status == QLatin1String("no_hardware") && !result.correct, qPrintable(describe(result)));
        QVERIFY2(result.log.contains(QLatin1String("no such card here")), qPrintable(describe(result)));
        QVERIFY2(!result.steps.isEmpty() && result.steps.first().name == QLatin1String("remote"),
                 qPrintable(describe(result)));
        // One attempt: a verdict, not a remote failure tried again.
        QVERIFY2(!result.feedback.join(QLatin1Char('\n')).contains(QLatin1String("remote failure")),
                 qPrintable(result.feedback.join(QLatin1Char('\n'))));
    }

    void sshCompileLocalRunsTheRestRemotely()
    {
        if (!m_ssh)
            QSKIP(qPrintable(m_sshSkip));
        EvaluationConfig config = sshConfig();
        config.placement.insert(QStringLiteral("cpu"), QStringLiteral("compile_local"));
        Evaluator evaluator(config);
        QCOMPARE(evaluator.placement(m_target), QStringLiteral("compile_local"));
        const QMap<QString, EvalResult> results = evaluateAll(
            evaluator, {QStringLiteral("correct"), QStringLiteral("incorrect"), QStringLiteral("compile_error")});
        for (auto it = results.cbegin(); it != results.cend(); ++it) {
            QVERIFY2(it->status == m_local.value(it.key()).status && it->correct == m_local.value(it.key()).correct,
                     qPrintable(it.key() + describe(*it)));
            const bool wentRemote = std::any_of(it->steps.cbegin(), it->steps.cend(),
                                                [](const StepResult &s) { return s.name == QLatin1String("remote"); });
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
        QTRY_VERIFY_WITH_TIMEOUT(remoteEvalDirs().size() == 1
                                     && processesMentioning(m_remoteWork.path() + QStringLiteral("/autocomp-eval-"))
                                         >= 2,
                                 120000);
        job->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), 60000);
        QCOMPARE(result->status, QStringLiteral("cancelled"));
        // Well inside the hanging step's own limit (120 s), so only the cancel can have ended it; a loaded
        // machine (a fresh chroot building beside the suite) needed 41 s once.
        QTRY_VERIFY2_WITH_TIMEOUT(
            processesMentioning(m_remoteWork.path() + QStringLiteral("/autocomp-eval-")) == 0,
            qPrintable(
                processListMentioning(m_remoteWork.path() + QStringLiteral("/autocomp-eval-")).join(QLatin1Char('\n'))),
            80000);
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
            QVERIFY2(r.feedback.join(QLatin1Char('\n')).contains(QStringLiteral("1 remote failure")),
                     qPrintable(r.feedback.join(QLatin1Char('\n'))));
        }
        // Only the dead host: an error that says so, never a verdict on the candidate.
        config.hosts.removeLast();
        config.remoteRetries = 1;
        Evaluator evaluator(config);
        const EvalResult r = evaluateAll(evaluator, {QStringLiteral("correct")}).value(QStringLiteral("correct"));
        QCOMPARE(r.status, QStringLiteral("error"));
        QVERIFY(!r.correct);
        QVERIFY2(r.log.contains(QLatin1String("no verdict about the candidate"))
                     && r.log.contains(QLatin1String("cannot connect")),
                 qPrintable(r.log));
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
        QVERIFY2(r.log.contains(QLatin1String("Host key verification failed"))
                     || r.log.contains(QLatin1String("IDENTIFICATION HAS CHANGED")),
                 qPrintable(r.log));
    }

    // A problem.yaml whose reference (and context) name the user's own files elsewhere, as `autocomp
    // problems import` writes them: the host gets copies, and never the paths of this machine.
    void sshSendsFilesOutsideTheProblem_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("problem");
        QTest::addColumn<QStringList>("candidates"); // names in m_codes, or files under data/
        QTest::addColumn<QStringList>("statuses");
        QTest::newRow("cpu") << QStringLiteral("cpu") << QStringLiteral("transpose")
                             << QStringLiteral("transpose_imported")
                             << QStringList{QStringLiteral("correct"), QStringLiteral("incorrect")}
                             << QStringList{QStringLiteral("ok"), QStringLiteral("incorrect")};
        QTest::newRow("kernelbench") << QStringLiteral("kernelbench") << QStringLiteral("level1/1_NewGELU")
                                     << QStringLiteral("level1/9_Imported")
                                     << QStringList{QStringLiteral("data/kernelbench/gelu_fused.py")}
                                     << QStringList{QStringLiteral("ok")};
    }

    void sshSendsFilesOutsideTheProblem()
    {
        QFETCH(QString, target);
        QFETCH(QString, source);
        QFETCH(QString, problem);
        QFETCH(QStringList, candidates);
        QFETCH(QStringList, statuses);
        if (!m_ssh)
            QSKIP(qPrintable(m_sshSkip));
        Repository repository;
        QString error;
        const auto t = repository.target(target, &error);
        QVERIFY2(t, qPrintable(error));
        if (!t->available())
            QSKIP(qPrintable(t->absenceReason()
                             + QStringLiteral(" (packaging/install-deps.sh --kernelbench installs python3-torch)")));
        const auto from = Repository(QStringList{m_shipped}).problem(target, source, &error);
        QVERIFY2(from, qPrintable(error));
        // The problem as an importer writes it: its own folder, the reference (and context) the user's files.
        const QString dir = m_data.filePath(QStringLiteral("sols/%1/%2").arg(target, problem));
        QVERIFY(QDir().mkpath(dir));
        QVERIFY(copyTree(from->dir, dir));
        QFile yaml(dir + QStringLiteral("/problem.yaml"));
        QVERIFY(yaml.open(QIODevice::ReadOnly));
        QByteArray text = yaml.readAll();
        yaml.close();
        QStringList moved;
        for (const auto &[key, file] :
             {std::pair{"reference", from->referenceFile}, std::pair{"context", from->contextFile}}) {
            if (file.isEmpty())
                continue;
            const QString outside = m_userFiles.filePath(QStringLiteral("%1-%2").arg(
                QString(problem).replace(QLatin1Char('/'), QLatin1Char('-')), QFileInfo(file).fileName()));
            QVERIFY(QFile::copy(file, outside));
            QVERIFY(QFile::remove(dir + QLatin1Char('/') + QFileInfo(file).fileName()));
            const QByteArray line = QByteArray(key) + ": " + QFileInfo(file).fileName().toUtf8();
            QVERIFY2(text.contains(line), line.constData());
            text.replace(line, QByteArray(QByteArray(key) + ": " + outside.toUtf8()));
            moved << outside;
        }
        text.replace(QByteArray("name: " + source.section(QLatin1Char('/'), -1).toUtf8()),
                     QByteArray("name: " + problem.section(QLatin1Char('/'), -1).toUtf8()));
        QVERIFY(yaml.open(QIODevice::WriteOnly | QIODevice::Truncate));
        yaml.write(text);
        yaml.close();
        const auto p = Repository().problem(target, problem, &error);
        QVERIFY2(p, qPrintable(error));
        QVERIFY2(p->referenceFile.startsWith(m_userFiles.path()), qPrintable(p->referenceFile));
        // The files are read to send them; afterwards they are gone from this machine (and so from the
        // host, which is this machine): the far side can only use the copies it got.
        RemoteTask task;
        task.target = *t;
        task.problem = *p;
        QString hash;
        QVERIFY2(!RemoteExecutor::dataArchive(task, &hash, &error).isEmpty(), qPrintable(error));
        for (const QString &file : std::as_const(moved))
            QVERIFY(QFile::rename(file, file + QStringLiteral(".away")));
        QMap<QString, QString> codes;
        for (const QString &name : std::as_const(candidates)) {
            if (m_codes.contains(name)) {
                codes.insert(name, m_codes.value(name));
                continue;
            }
            QFile file(QFINDTESTDATA(name));
            QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(name));
            codes.insert(name, QString::fromUtf8(file.readAll()));
        }
        Evaluator evaluator(sshConfig());
        QMap<QString, EvalResult> results;
        for (auto it = codes.cbegin(); it != codes.cend(); ++it) {
            EvalJob *job = evaluator.evaluate(*t, *p, it.value());
            connect(job, &EvalJob::finished, this,
                    [&results, name = it.key()](const EvalResult &r) { results.insert(name, r); });
        }
        QTRY_VERIFY_WITH_TIMEOUT(results.size() == codes.size(), 900000);
        for (qsizetype i = 0; i < candidates.size(); ++i) {
            const EvalResult &r = results.value(candidates.at(i));
            QVERIFY2(r.status == statuses.at(i), qPrintable(candidates.at(i) + QStringLiteral(": ") + describe(r)));
            QVERIFY2(r.steps.first().name == QLatin1String("remote"), qPrintable(describe(r)));
        }
        for (const QString &file : std::as_const(moved))
            QVERIFY(QFile::rename(file + QStringLiteral(".away"), file));
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
            QVERIFY2(r.status == m_local.value(name).status && r.correct == m_local.value(name).correct,
                     qPrintable(name + QStringLiteral(": ") + describe(r)));
            QVERIFY(r.steps.first().log.contains(QLatin1String("slurm")));
        }
        QCOMPARE(m_slurm->queue(), QStringList());
        // Four jobs ran to completion, and their directories are gone.
        QCOMPARE(m_slurm->completedJobs().filter(QStringLiteral("JobState=COMPLETED")).size(), 4);
        QTRY_COMPARE_WITH_TIMEOUT(slurmLeftovers(), QStringList(), 10000);
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
        const QString id = m_slurm->queue().first().section(QLatin1Char(' '), 0, 0);
        job->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), 60000);
        QCOMPARE(result->status, QStringLiteral("cancelled"));
        QTRY_COMPARE_WITH_TIMEOUT(m_slurm->queue(), QStringList(), 60000);
        // slurmctld writes the job's completion record on its own schedule, after the queue is empty.
        const auto endedAs = [this, &id] {
            for (const QString &line : m_slurm->completedJobs())
                if (line.contains(QStringLiteral("JobId=%1 ").arg(id)))
                    return line.section(QLatin1String("JobState="), 1).section(QLatin1Char(' '), 0, 0);
            return QString();
        };
        QTRY_COMPARE_WITH_TIMEOUT(endedAs(), QStringLiteral("CANCELLED"), 60000);
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
        QTRY_VERIFY_WITH_TIMEOUT(
            m_slurm->queue().join(QLatin1Char('\n')).contains(QLatin1String("RUNNING autocomp-lost-job-test")), 60000);
        const QString id = m_slurm->queue().first().section(QLatin1Char(' '), 0, 0);
        QCOMPARE(QProcess::execute(QStringLiteral("scancel"), {id}), 0);
        QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), 600000);
        QVERIFY2(result->status == QLatin1String("ok") && result->correct, qPrintable(describe(*result)));
        QVERIFY2(result->feedback.join(QLatin1Char('\n')).contains(QStringLiteral("Slurm job %1").arg(id)),
                 qPrintable(result->feedback.join(QLatin1Char('\n'))));
        QCOMPARE(m_slurm->queue(), QStringList());
    }

    // Five candidates in one job, two at a time: the four the local verdicts, and the fifth, whose far
    // side ends without an answer, an error with the reason after its retry (in a job of its own),
    // never a verdict; it takes none of the others with it.
    void slurmBatchGivesTheLocalVerdicts()
    {
        if (!m_slurm)
            QSKIP(qPrintable(m_slurmSkip));
        QTemporaryDir dir;
        const QString wrapper = dir.filePath(QStringLiteral("autocomp-remote.sh"));
        QFile script(wrapper);
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write(QStringLiteral("#!/bin/sh\nprev=\nfor a in \"$@\"; do\n"
                                    "  if [ \"$prev\" = --code ] && grep -q AUTOCOMP_TEST_NO_ANSWER \"$a\"; then echo "
                                    "'test: no answer' >&2; exit 3; fi\n"
                                    "  prev=$a\ndone\nexec '%1' \"$@\"\n")
                         .arg(qEnvironmentVariable("AUTOCOMP_CLI"))
                         .toUtf8());
        script.close();
        QVERIFY(script.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        EvaluationConfig config = slurmBatchConfig(5, 1);
        config.remoteCommand = wrapper;
        config.remoteRetries = 1;
        m_codes.insert(QStringLiteral("no_answer"),
                       QStringLiteral("// AUTOCOMP_TEST_NO_ANSWER\n") + m_codes.value(QStringLiteral("correct")));
        const int completedBefore = completedJobs(QStringLiteral("COMPLETED"));
        const int endedBefore = int(m_slurm->completedJobs().size());
        Evaluator evaluator(config);
        QVERIFY2(evaluator.configurationError().isEmpty(), qPrintable(evaluator.configurationError()));
        const QMap<QString, EvalResult> results = evaluateAll(evaluator, m_codes.keys());
        m_codes.remove(QStringLiteral("no_answer"));
        for (const QString &name : m_codes.keys()) {
            const EvalResult &r = results.value(name);
            QVERIFY2(r.status == m_local.value(name).status && r.correct == m_local.value(name).correct,
                     qPrintable(name + QStringLiteral(": ") + describe(r)));
            QVERIFY(r.steps.first().log.contains(QLatin1String("slurm")));
        }
        const EvalResult &failed = results.value(QStringLiteral("no_answer"));
        QCOMPARE(failed.status, QStringLiteral("error"));
        QVERIFY(!failed.correct);
        QVERIFY2(failed.log.contains(QLatin1String("no verdict about the candidate"))
                     && failed.log.contains(QLatin1String("exited with status 3"))
                     && failed.log.contains(QLatin1String("test: no answer")),
                 qPrintable(failed.log));
        QCOMPARE(m_slurm->queue(), QStringList());
        // One job for the five, one for the retry; both ran to their end.
        QCOMPARE(completedJobs(QStringLiteral("COMPLETED")) - completedBefore, 2);
        QCOMPARE(int(m_slurm->completedJobs().size()) - endedBefore, 2);
        QTRY_COMPARE_WITH_TIMEOUT(slurmLeftovers(), QStringList(), 10000);
    }

    // The job of two candidates vanishes under them (as a preempted job or a lost node's does): both
    // are evaluation errors with the reason, retried in another job, and get their verdicts; how the
    // job ended comes from sacct, which reads Slurm's job completion log without an accounting database.
    void slurmLostBatchIsRetried()
    {
        if (!m_slurm)
            QSKIP(qPrintable(m_slurmSkip));
        Evaluator evaluator(slurmBatchConfig(2, 1));
        QMap<QString, EvalResult> results;
        for (const QString &name : {QStringLiteral("correct"), QStringLiteral("incorrect")}) {
            EvalJob *job = evaluator.evaluate(m_target, m_problem, m_codes.value(name), {}, nullptr,
                                              EvalRequest{QStringLiteral("lost-batch-") + name, {}, {}});
            connect(job, &EvalJob::finished, this, [&results, name](const EvalResult &r) { results.insert(name, r); });
        }
        QTRY_VERIFY_WITH_TIMEOUT(
            m_slurm->queue().join(QLatin1Char('\n')).contains(QLatin1String("RUNNING autocomp-lost-batch-")), 60000);
        QCOMPARE(m_slurm->queue().size(), 1);
        const QString id = m_slurm->queue().first().section(QLatin1Char(' '), 0, 0);
        QCOMPARE(QProcess::execute(QStringLiteral("scancel"), {id}), 0);
        QTRY_VERIFY_WITH_TIMEOUT(results.size() == 2, 600000);
        for (auto it = results.cbegin(); it != results.cend(); ++it) {
            QVERIFY2(it->status == m_local.value(it.key()).status && it->correct == m_local.value(it.key()).correct,
                     qPrintable(it.key() + describe(*it)));
            const QString feedback = it->feedback.join(QLatin1Char('\n'));
            QVERIFY2(feedback.contains(QStringLiteral("Slurm job %1 ended as CANCELLED").arg(id)),
                     qPrintable(feedback));
        }
        // Slurm's accounting without a database: sacct reads the job completion log.
        const QString ended = SlurmExecutor::endedState(id.toLongLong());
        QVERIFY2(ended.startsWith(QLatin1String("CANCELLED"))
                     && ended.contains(QLatin1String("from sacct --completion")),
                 qPrintable(ended));
        QCOMPARE(m_slurm->queue(), QStringList());
        QTRY_COMPARE_WITH_TIMEOUT(slurmLeftovers(), QStringList(), 10000);
    }

    // Cancelling one candidate of a job kills its evaluation and leaves the other running; cancelling
    // the last one cancels the job.
    void slurmBatchCancelKillsOnlyThatCandidate()
    {
        if (!m_slurm)
            QSKIP(qPrintable(m_slurmSkip));
        Evaluator evaluator(slurmBatchConfig(2, 1));
        QList<EvalJob *> jobs;
        QMap<int, EvalResult> results;
        for (int i = 0; i < 2; ++i) {
            jobs << evaluator.evaluate(m_target, m_problem,
                                       m_codes.value(QStringLiteral("timeout")) + QStringLiteral("// %1\n").arg(i));
            connect(jobs.last(), &EvalJob::finished, this,
                    [&results, i](const EvalResult &r) { results.insert(i, r); });
        }
        const QString shared = slurmConfig().slurmSharedDir;
        const auto batchDir = [&] {
            const QStringList dirs = QDir(shared).entryList({QStringLiteral("autocomp-batch-*")}, QDir::Dirs);
            return dirs.size() == 1 ? shared + QLatin1Char('/') + dirs.first() : QString();
        };
        // Both hanging kernels run in the one job (their directories are on their command lines).
        QTRY_VERIFY_WITH_TIMEOUT(!batchDir().isEmpty() && processesMentioning(batchDir() + QStringLiteral("/m0/")) >= 2
                                     && processesMentioning(batchDir() + QStringLiteral("/m1/")) >= 2,
                                 120000);
        const QString dir = batchDir();
        jobs.at(0)->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(results.contains(0), 30000);
        QCOMPARE(results.value(0).status, QStringLiteral("cancelled"));
        QTRY_COMPARE_WITH_TIMEOUT(processesMentioning(dir + QStringLiteral("/m0/")), 0, 30000);
        QVERIFY(processesMentioning(dir + QStringLiteral("/m1/")) >= 2);
        QVERIFY(m_slurm->queue().join(QLatin1Char('\n')).contains(QLatin1String("RUNNING")));
        QVERIFY(!results.contains(1));
        jobs.at(1)->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(results.contains(1), 30000);
        QCOMPARE(results.value(1).status, QStringLiteral("cancelled"));
        QTRY_COMPARE_WITH_TIMEOUT(m_slurm->queue(), QStringList(), 60000);
        QVERIFY(m_slurm->completedJobs().last().contains(QLatin1String("JobState=CANCELLED")));
        QTRY_COMPARE_WITH_TIMEOUT(processesMentioning(dir), 0, 30000);
        QTRY_COMPARE_WITH_TIMEOUT(slurmLeftovers(), QStringList(), 10000);
    }
};

QTEST_GUILESS_MAIN(TestRemoteEval)
#include "tst_remote_eval.moc"
