#include "eval/slurm_executor.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryFile>
#include <QTimer>

#include <pwd.h>
#include <unistd.h>

namespace autocomp {

namespace {

QString userName()
{
    if (const passwd *pw = ::getpwuid(::getuid()))
        return QString::fromLocal8Bit(pw->pw_name);
    return qEnvironmentVariable("USER");
}

bool copyTree(const QString &from, const QString &to)
{
    if (!QDir().mkpath(to))
        return false;
    QDirIterator it(from, QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden, QDirIterator::Subdirectories);
    const QDir root(from);
    while (it.hasNext()) {
        const QString path = it.next();
        const QString target = to + QLatin1Char('/') + root.relativeFilePath(path);
        if (QFileInfo(path).isDir() ? !QDir().mkpath(target) : !QFile::copy(path, target))
            return false;
    }
    return true;
}

bool writeFile(const QString &path, const QByteArray &content)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(content) == content.size() && file.flush();
}

} // namespace

// One candidate's job: submitted, or found again after a restart, then watched until its result is there.
class SlurmAttempt : public RemoteAttempt
{
public:
    SlurmAttempt(SlurmExecutor *executor, const RemoteTask &task) : RemoteAttempt(executor), m_executor(executor), m_task(task)
    {
        const QString key = task.key.isEmpty()
                                ? QStringLiteral("x%1").arg(QRandomGenerator::global()->generate64(), 16, 16, QLatin1Char('0'))
                                : task.key;
        m_key = key;
        m_dir = executor->sharedDir() + QStringLiteral("/autocomp-job-") + key;
    }

    ~SlurmAttempt() override
    {
        // A job still under way when its evaluator goes: a keyed one is left to finish, for the
        // process that resumes the run to take over (as after a kill); one nobody can find again is
        // cancelled. Otherwise the result was taken (and stored by whoever asked): the files go.
        if (!m_done && !m_task.key.isEmpty())
            return;
        if (!m_done)
            scancel();
        QDir(m_dir).removeRecursively();
    }

    qint64 jobId() const { return m_jobId; }
    QString resultFile() const { return m_dir + QStringLiteral("/out.json"); }

    void begin()
    {
        QString hash;
        QString error;
        const QByteArray data = RemoteExecutor::dataArchive(m_task, &hash, &error);
        if (data.isEmpty())
            return fail(error);
        m_dataDir = m_executor->sharedDir() + QStringLiteral("/autocomp-data-") + hash;
        if (!QFileInfo::exists(m_dataDir) && !unpackData(data, &error))
            return fail(error);
        if (!m_task.key.isEmpty() && QFileInfo::exists(m_dir)) {
            // A job of this candidate from before a restart: its result, or the job itself.
            if (QFileInfo::exists(resultFile()))
                return takeResult();
            QFile idFile(m_dir + QStringLiteral("/jobid"));
            if (idFile.open(QIODevice::ReadOnly))
                m_jobId = idFile.readAll().trimmed().toLongLong();
            if (m_jobId <= 0) {
                // Killed between sbatch and writing the id: the queue knows the job by its name.
                const QList<qint64> ids = SlurmExecutor::jobsNamed(SlurmExecutor::jobName(m_key), &error);
                if (!ids.isEmpty()) {
                    m_jobId = ids.first();
                    writeFile(m_dir + QStringLiteral("/jobid"), QByteArray::number(m_jobId));
                }
            }
            if (m_jobId > 0) {
                m_attached = true;
                m_executor->watch(this);
                return;
            }
        }
        submit();
    }

    void cancel() override
    {
        if (m_done)
            return;
        m_cancelled = true;
        if (m_jobId > 0) {
            scancel();
            fail(QStringLiteral("cancelled"));
        }
        // Otherwise sbatch is under way: its answer cancels the job.
    }

    // From the executor's poll: the job's state in the queue, or empty when it left the queue.
    void polled(const QString &state, const QString &reason)
    {
        if (m_done)
            return;
        if (QFileInfo::exists(resultFile()))
            return takeResult();
        if (!state.isEmpty()) {
            m_state = state;
            if (state == QLatin1String("RUNNING") && !m_timer) {
                // The limit counts from the start of the run, not the wait in the queue.
                m_timer = new QTimer(this);
                m_timer->setSingleShot(true);
                connect(m_timer, &QTimer::timeout, this, [this] {
                    scancel();
                    fail(QStringLiteral("Slurm job %1: no result within %2 s of running; cancelled").arg(m_jobId).arg(m_task.timeoutS));
                });
                m_timer->start(m_task.timeoutS * 1000);
            }
            Q_UNUSED(reason);
            return;
        }
        // Gone from the queue without a result: preempted, node lost, cancelled by someone, failed.
        QProcess show;
        show.start(QStringLiteral("scontrol"), {QStringLiteral("show"), QStringLiteral("job"), QString::number(m_jobId), QStringLiteral("-o")});
        show.waitForFinished(10000);
        const QString info = QString::fromUtf8(show.readAllStandardOutput());
        static const QRegularExpression s_state(QStringLiteral("JobState=(\\S+).*Reason=(\\S+)"));
        const auto m = s_state.match(info);
        QString why = m.hasMatch() ? QStringLiteral("ended as %1 (reason %2)").arg(m.captured(1), m.captured(2)) : QStringLiteral("left the queue");
        QFile log(m_dir + QStringLiteral("/slurm.out"));
        if (log.open(QIODevice::ReadOnly))
            why += QStringLiteral(": ") + QString::fromUtf8(log.readAll().right(2000)).trimmed();
        fail(QStringLiteral("Slurm job %1 %2 without a result").arg(m_jobId).arg(why));
    }

    bool attached() const { return m_attached; }

private:
    bool unpackData(const QByteArray &data, QString *error)
    {
        const QString tmp = m_dataDir + QStringLiteral(".tmp.%1").arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'));
        QDir().mkpath(tmp);
        QProcess tar;
        tar.start(QStringLiteral("tar"), {QStringLiteral("-xf"), QStringLiteral("-"), QStringLiteral("-C"), tmp});
        tar.write(data);
        tar.closeWriteChannel();
        if (!tar.waitForFinished(120000) || tar.exitCode() != 0) {
            *error = QStringLiteral("cannot unpack the target's files into %1: %2").arg(tmp, QString::fromUtf8(tar.readAllStandardError()));
            QDir(tmp).removeRecursively();
            return false;
        }
        // Another process may have made it meanwhile: then this copy goes.
        if (!QDir().rename(tmp, m_dataDir))
            QDir(tmp).removeRecursively();
        return QFileInfo::exists(m_dataDir);
    }

    void submit()
    {
        QDir(m_dir).removeRecursively();
        if (!QDir().mkpath(m_dir + QStringLiteral("/tmp")) || !copyTree(m_task.workdir, m_dir + QStringLiteral("/work")))
            return fail(QStringLiteral("cannot write the job's directory %1").arg(m_dir));
        const EvaluationConfig &config = m_executor->config();
        QStringList command;
        for (const QString &word : RemoteExecutor::remoteEvalCommand(config, m_task, m_dir))
            command << RemoteExecutor::shellQuote(word);
        const QString d = RemoteExecutor::shellQuote(m_dir);
        const QByteArray script = QStringLiteral("#!/bin/sh\n"
                                                 "# autocomp: one candidate's evaluation\n"
                                                 "export AUTOCOMP_DATA_DIR=%1 TMPDIR=%2/tmp\n"
                                                 "%3 > %2/out.json.part 2> %2/err.txt < /dev/null\n"
                                                 "rc=$?\n"
                                                 "if [ -s %2/out.json.part ]; then mv %2/out.json.part %2/out.json; exit 0; fi\n"
                                                 "echo \"autocomp eval exited with status $rc and no result:\" >&2\n"
                                                 "tail -c 4000 %2/err.txt >&2\n"
                                                 "exit 93\n")
                                      .arg(RemoteExecutor::shellQuote(m_dataDir), d, command.join(QLatin1Char(' ')))
                                      .toUtf8();
        const QString scriptPath = m_dir + QStringLiteral("/job.sh");
        if (!writeFile(scriptPath, script))
            return fail(QStringLiteral("cannot write %1").arg(scriptPath));
        QStringList args{QStringLiteral("--parsable"),
                         QStringLiteral("--job-name=") + SlurmExecutor::jobName(m_key),
                         QStringLiteral("--output=") + m_dir + QStringLiteral("/slurm.out"),
                         QStringLiteral("--chdir=") + m_dir,
                         QStringLiteral("--ntasks=1")};
        if (!config.slurmPartition.isEmpty())
            args << QStringLiteral("--partition=") + config.slurmPartition;
        if (!config.slurmGres.isEmpty())
            args << QStringLiteral("--gres=") + config.slurmGres;
        args << QStringLiteral("--time=") + (config.slurmTime.isEmpty() ? QString::number(m_task.timeoutS / 60 + 2) : config.slurmTime);
        if (!config.slurmMem.isEmpty())
            args << QStringLiteral("--mem=") + config.slurmMem;
        args << scriptPath;
        auto *sbatch = new QProcess(this);
        connect(sbatch, &QProcess::finished, this, [this, sbatch](int code, QProcess::ExitStatus status) {
            sbatch->deleteLater();
            const QString out = QString::fromUtf8(sbatch->readAllStandardOutput()).trimmed();
            m_jobId = out.section(QLatin1Char(';'), 0, 0).toLongLong();
            if (status != QProcess::NormalExit || code != 0 || m_jobId <= 0)
                return fail(QStringLiteral("sbatch failed (status %1): %2").arg(code).arg(QString::fromUtf8(sbatch->readAllStandardError()).trimmed()));
            writeFile(m_dir + QStringLiteral("/jobid"), QByteArray::number(m_jobId));
            if (m_cancelled) {
                scancel();
                return fail(QStringLiteral("cancelled"));
            }
            m_executor->watch(this);
        });
        connect(sbatch, &QProcess::errorOccurred, this, [this, sbatch](QProcess::ProcessError e) {
            if (e == QProcess::FailedToStart)
                fail(QStringLiteral("cannot start sbatch: %1").arg(sbatch->errorString()));
        });
        sbatch->start(QStringLiteral("sbatch"), args);
    }

    void scancel()
    {
        if (m_jobId > 0)
            QProcess::startDetached(QStringLiteral("scancel"), {QString::number(m_jobId)});
    }

    void takeResult()
    {
        QFile file(resultFile());
        QJsonParseError error;
        const QJsonDocument doc = file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll(), &error) : QJsonDocument();
        if (!doc.isObject() || !doc.object().contains(QStringLiteral("status")))
            return fail(QStringLiteral("Slurm job %1 left an unreadable result in %2").arg(m_jobId).arg(resultFile()));
        finishWith(doc.object(), {});
    }

    void fail(const QString &why)
    {
        // A failed job's directory goes now, so that a retry with the same key submits afresh.
        QDir(m_dir).removeRecursively();
        finishWith({}, why);
    }

    void finishWith(const QJsonObject &result, const QString &failure)
    {
        if (m_done)
            return;
        m_done = true;
        Q_EMIT finished(result, failure);
        deleteLater();
    }

    SlurmExecutor *m_executor;
    RemoteTask m_task;
    QString m_key;
    QString m_dir;
    QString m_dataDir;
    QString m_state;
    qint64 m_jobId = 0;
    QTimer *m_timer = nullptr;
    bool m_cancelled = false;
    bool m_done = false;
    bool m_attached = false;
};

std::unique_ptr<SlurmExecutor> SlurmExecutor::create(const EvaluationConfig &config, QString *error)
{
    for (const char *tool : {"sbatch", "squeue", "scancel", "scontrol"}) {
        if (QStandardPaths::findExecutable(QLatin1String(tool)).isEmpty()) {
            *error = QStringLiteral("evaluation.executor is slurm but '%1' is not on PATH (install the Slurm client tools)").arg(QLatin1String(tool));
            return nullptr;
        }
    }
    QString shared = config.slurmSharedDir;
    if (shared.isEmpty())
        shared = QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation) + QStringLiteral("/autocomp-workbench/slurm");
    if (!QDir().mkpath(shared)) {
        *error = QStringLiteral("evaluation.slurm.shared_dir: cannot create %1").arg(shared);
        return nullptr;
    }
    return std::unique_ptr<SlurmExecutor>(new SlurmExecutor(config, shared));
}

SlurmExecutor::SlurmExecutor(const EvaluationConfig &config, QString sharedDir)
    : m_config(config), m_sharedDir(std::move(sharedDir)), m_timer(new QTimer(this))
{
    m_timer->setInterval(config.slurmPollMs);
    connect(m_timer, &QTimer::timeout, this, &SlurmExecutor::poll);
}

SlurmExecutor::~SlurmExecutor()
{
    if (m_squeue) {
        m_squeue->kill();
        m_squeue->waitForFinished(2000);
    }
}

QString SlurmExecutor::slotName(int slot) const
{
    return QStringLiteral("slurm#%1").arg(slot);
}

QString SlurmExecutor::jobName(const QString &key)
{
    return QStringLiteral("autocomp-") + key;
}

QList<qint64> SlurmExecutor::jobsNamed(const QString &prefix, QString *error)
{
    QProcess squeue;
    squeue.start(QStringLiteral("squeue"), {QStringLiteral("--noheader"), QStringLiteral("--format=%i %j"), QStringLiteral("--user=") + userName()});
    QList<qint64> ids;
    if (!squeue.waitForFinished(30000) || squeue.exitCode() != 0) {
        *error = QStringLiteral("squeue failed: %1").arg(QString::fromUtf8(squeue.readAllStandardError()).trimmed());
        return ids;
    }
    for (const QByteArray &line : squeue.readAllStandardOutput().split('\n')) {
        const QList<QByteArray> words = line.trimmed().split(' ');
        if (words.size() == 2 && QString::fromUtf8(words.at(1)).startsWith(prefix))
            ids << words.at(0).toLongLong();
    }
    return ids;
}

RemoteAttempt *SlurmExecutor::start(int, const RemoteTask &task)
{
    auto *attempt = new SlurmAttempt(this, task);
    QMetaObject::invokeMethod(attempt, [attempt] { attempt->begin(); }, Qt::QueuedConnection);
    return attempt;
}

void SlurmExecutor::watch(SlurmAttempt *attempt)
{
    m_watched << attempt;
    if (!m_timer->isActive())
        m_timer->start();
}

void SlurmExecutor::poll()
{
    m_watched.removeIf([](const QPointer<SlurmAttempt> &a) { return !a; });
    if (m_watched.isEmpty()) {
        m_timer->stop();
        return;
    }
    // A result on the shared file system ends the job's watch without asking Slurm.
    for (const QPointer<SlurmAttempt> &a : QList<QPointer<SlurmAttempt>>(m_watched))
        if (a && QFileInfo::exists(a->resultFile()))
            a->polled(QStringLiteral("COMPLETED"), {});
    m_watched.removeIf([](const QPointer<SlurmAttempt> &a) { return !a; });
    if (m_watched.isEmpty() || m_squeue)
        return;
    // One squeue for every job of ours.
    m_squeue = new QProcess(this);
    // Only jobs submitted before this squeue began can be judged by its answer.
    const QList<QPointer<SlurmAttempt>> asked = m_watched;
    connect(m_squeue, &QProcess::finished, this, [this, asked](int code, QProcess::ExitStatus status) {
        QProcess *squeue = std::exchange(m_squeue, nullptr);
        squeue->deleteLater();
        if (status != QProcess::NormalExit || code != 0)
            return; // the controller did not answer: asked again at the next poll
        QHash<qint64, std::pair<QString, QString>> states;
        for (const QByteArray &line : squeue->readAllStandardOutput().split('\n')) {
            const QList<QByteArray> words = line.trimmed().split('|');
            if (words.size() >= 2)
                states.insert(words.at(0).toLongLong(), {QString::fromUtf8(words.at(1)), QString::fromUtf8(words.value(2))});
        }
        for (const QPointer<SlurmAttempt> &a : asked) {
            if (!a)
                continue;
            const auto state = states.value(a->jobId());
            a->polled(state.first, state.second);
        }
    });
    m_squeue->start(QStringLiteral("squeue"), {QStringLiteral("--noheader"), QStringLiteral("--format=%i|%T|%r"), QStringLiteral("--user=") + userName()});
}

} // namespace autocomp
