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

QString randomHex(int digits)
{
    return QStringLiteral("%1").arg(QRandomGenerator::global()->generate64(), 16, 16, QLatin1Char('0')).right(digits);
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

// Written under another name and renamed: a reader (a resumed process) sees all of it or nothing.
bool writeFileAtomically(const QString &path, const QByteArray &content)
{
    const QString part = path + QStringLiteral(".part");
    if (!writeFile(part, content))
        return false;
    QFile::remove(path);
    return QFile::rename(part, path);
}

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// The job script: each candidate's `autocomp eval` in the candidate's own directory m<i>, at most
// $max at once, each under `timeout` (its own limit), killed when the workbench writes m<i>/cancel.
// A candidate ends with m<i>/out.json (the far side's answer) or m<i>/failed (why there is none);
// either is renamed into place whole. The job itself always ends COMPLETED.
const char *const s_jobScript = R"SH(#!/bin/bash
# autocomp: the evaluations of %1 candidate(s) of one target and problem; each writes its own result.
b=%2
max=%3
run() {
  m="$b/m$1"; t=$2; data=$3; shift 3
  [ -e "$m/cancel" ] || [ -e "$m/out.json" ] || [ -e "$m/failed" ] && return 0
  : > "$m/started"
  AUTOCOMP_DATA_DIR="$data" TMPDIR="$m/tmp" timeout -k 10 "$t" "$@" > "$m/out.json.part" 2> "$m/err.txt" < /dev/null &
  pid=$!
  ( while [ ! -e "$m/cancel" ]; do sleep 1; done; kill -TERM $pid ) > /dev/null 2>&1 &
  w=$!
  wait $pid; rc=$?
  kill $w 2> /dev/null
  [ -e "$m/cancel" ] && return 0
  if [ -s "$m/out.json.part" ]; then mv "$m/out.json.part" "$m/out.json"; return 0; fi
  limit=$([ $rc -eq 124 ] && echo " (stopped at its limit of $t s)")
  { echo "autocomp eval exited with status $rc and no result$limit:"; tail -c 4000 "$m/err.txt"; } > "$m/failed.part"
  mv "$m/failed.part" "$m/failed"
}
n=0
start() {
  if [ $n -ge $max ]; then wait -n; n=$((n - 1)); fi
  run "$@" &
  n=$((n + 1))
}
%4wait
exit 0
)SH";

} // namespace

// One candidate's evaluation in a job of the executor: in a batch (its own or one found again).
class SlurmAttempt : public RemoteAttempt
{
public:
    SlurmAttempt(SlurmExecutor *executor, const RemoteTask &task)
        : RemoteAttempt(executor)
        , m_executor(executor)
        , m_task(task)
        , m_key(task.key.isEmpty() ? QStringLiteral("x") + randomHex(16) : task.key)
    {}

    const RemoteTask &task() const { return m_task; }
    QString key() const { return m_key; }
    bool keyed() const { return !m_task.key.isEmpty(); }
    bool done() const { return m_done; }
    QString recordFile() const { return m_executor->sharedDir() + QStringLiteral("/autocomp-cand-") + m_key; }

    void join(SlurmBatch *batch, int index)
    {
        m_batch = batch;
        m_index = index;
    }
    int index() const { return m_index; }

    void cancel() override;

    void finishWith(const QJsonObject &result, const QString &failure)
    {
        if (m_done)
            return;
        m_done = true;
        Q_EMIT finished(result, failure);
        deleteLater();
    }

private:
    SlurmExecutor *m_executor;
    RemoteTask m_task;
    QString m_key;
    QPointer<SlurmBatch> m_batch;
    int m_index = -1;
    bool m_done = false;
};

// One job and its directory: the candidates in it (those this process was asked for are members),
// their results taken as they appear, the job's end noticed through the executor's poll.
class SlurmBatch : public QObject
{
public:
    SlurmBatch(SlurmExecutor *executor, QString key)
        : QObject(executor)
        , m_executor(executor)
        , m_key(std::move(key))
        , m_dir(executor->sharedDir() + QStringLiteral("/autocomp-batch-") + m_key)
    {}

    QString key() const { return m_key; }
    qint64 jobId() const { return m_jobId; }
    QString memberDir(int index) const { return m_dir + QStringLiteral("/m%1").arg(index); }

    // A new job for these candidates. Their records are written before sbatch, the id right after it.
    void submit(const QList<SlurmAttempt *> &attempts)
    {
        const EvaluationConfig &config = m_executor->config();
        QStringList keys;
        QString lines;
        int slowest = 0;
        QList<SlurmAttempt *> members;
        QDir(m_dir).removeRecursively();
        for (SlurmAttempt *a : attempts) {
            QString error;
            const QString data = m_executor->dataDir(a->task(), &error);
            if (data.isEmpty()) {
                a->finishWith({}, error);
                continue;
            }
            const int index = int(members.size());
            const QString m = memberDir(index);
            if (!QDir().mkpath(m + QStringLiteral("/tmp")) || !copyTree(a->task().workdir, m + QStringLiteral("/work"))
                || !writeFile(m + QStringLiteral("/key"), a->key().toUtf8())) {
                a->finishWith({}, QStringLiteral("cannot write the job's directory %1").arg(m));
                continue;
            }
            QStringList command;
            for (const QString &word : RemoteExecutor::remoteEvalCommand(config, a->task(), m))
                command << RemoteExecutor::shellQuote(word);
            lines += QStringLiteral("start %1 %2 %3 %4\n")
                         .arg(index)
                         .arg(a->task().timeoutS)
                         .arg(RemoteExecutor::shellQuote(data), command.join(QLatin1Char(' ')));
            slowest = std::max(slowest, a->task().timeoutS);
            keys << a->key();
            a->join(this, index);
            members << a;
            m_members.insert(index, a);
        }
        m_size = int(members.size());
        if (members.isEmpty())
            return finishBatch();
        const int atOnce = std::min(config.slurmCpus, m_size);
        // Rounds of `atOnce` candidates, each at most its limit (and `timeout -k`'s grace).
        m_limitS = ((m_size + atOnce - 1) / atOnce) * (slowest + 15) + 60;
        const QString scriptPath = m_dir + QStringLiteral("/job.sh");
        const QByteArray script = QString::fromUtf8(s_jobScript)
                                      .arg(m_size)
                                      .arg(RemoteExecutor::shellQuote(m_dir))
                                      .arg(atOnce)
                                      .arg(lines)
                                      .toUtf8();
        if (!writeFile(m_dir + QStringLiteral("/members"), keys.join(QLatin1Char('\n')).toUtf8() + '\n')
            || !writeFile(m_dir + QStringLiteral("/limit_s"), QByteArray::number(m_limitS))
            || !writeFile(scriptPath, script))
            return failAll(QStringLiteral("cannot write the job's directory %1").arg(m_dir), true);
        for (SlurmAttempt *a : std::as_const(members)) {
            if (a->keyed()
                && !writeFileAtomically(a->recordFile(), QStringLiteral("%1 %2\n").arg(m_key).arg(a->index()).toUtf8()))
                return failAll(QStringLiteral("cannot write %1").arg(a->recordFile()), true);
        }
        QStringList args{QStringLiteral("--parsable"),
                         QStringLiteral("--job-name=") + SlurmExecutor::jobName(m_key),
                         QStringLiteral("--output=") + m_dir + QStringLiteral("/slurm.out"),
                         QStringLiteral("--chdir=") + m_dir,
                         QStringLiteral("--ntasks=1"),
                         QStringLiteral("--cpus-per-task=%1").arg(config.slurmCpus)};
        if (!config.slurmPartition.isEmpty())
            args << QStringLiteral("--partition=") + config.slurmPartition;
        if (!config.slurmGres.isEmpty())
            args << QStringLiteral("--gres=") + config.slurmGres;
        args << QStringLiteral("--time=")
                + (config.slurmTime.isEmpty() ? QString::number(m_limitS / 60 + 2) : config.slurmTime);
        if (!config.slurmMem.isEmpty())
            args << QStringLiteral("--mem=") + config.slurmMem;
        args << scriptPath;
        auto *sbatch = new QProcess(this);
        connect(sbatch, &QProcess::finished, this, [this, sbatch](int code, QProcess::ExitStatus status) {
            sbatch->deleteLater();
            const QString out = QString::fromUtf8(sbatch->readAllStandardOutput()).trimmed();
            m_jobId = out.section(QLatin1Char(';'), 0, 0).toLongLong();
            if (status != QProcess::NormalExit || code != 0 || m_jobId <= 0)
                return failAll(QStringLiteral("sbatch failed (status %1): %2")
                                   .arg(code)
                                   .arg(QString::fromUtf8(sbatch->readAllStandardError()).trimmed()),
                               true);
            writeFile(m_dir + QStringLiteral("/jobid"), QByteArray::number(m_jobId));
            if (m_scancelWhenSubmitted)
                scancel();
            m_executor->watch(this);
        });
        connect(sbatch, &QProcess::errorOccurred, this, [this, sbatch](QProcess::ProcessError e) {
            if (e == QProcess::FailedToStart)
                failAll(QStringLiteral("cannot start sbatch: %1").arg(sbatch->errorString()), true);
        });
        sbatch->start(QStringLiteral("sbatch"), args);
    }

    // A job of an earlier process, found from a candidate's record; false when its directory is gone.
    bool reopen(QString *error)
    {
        const QByteArray members = readFile(m_dir + QStringLiteral("/members"));
        if (members.isEmpty())
            return false;
        m_size = int(members.trimmed().split('\n').size());
        m_limitS = readFile(m_dir + QStringLiteral("/limit_s")).trimmed().toInt();
        m_jobId = readFile(m_dir + QStringLiteral("/jobid")).trimmed().toLongLong();
        if (m_jobId <= 0) {
            // Killed between sbatch and writing the id: the queue knows the job by its name.
            const QList<qint64> ids = SlurmExecutor::jobsNamed(SlurmExecutor::jobName(m_key), error);
            if (!error->isEmpty())
                return false;
            if (!ids.isEmpty()) {
                m_jobId = ids.first();
                writeFile(m_dir + QStringLiteral("/jobid"), QByteArray::number(m_jobId));
            }
        }
        // Until a poll says otherwise the job may still be there; without an id it never was.
        m_gone = m_jobId <= 0;
        return true;
    }

    // Takes a candidate of a reopened job. False when the candidate never started in a job that never
    // ran (a kill before sbatch): then it is submitted afresh, not counted as a failure.
    bool adopt(SlurmAttempt *a, int index)
    {
        const QString m = memberDir(index);
        if (index < 0 || index >= m_size || !QFileInfo::exists(m) || m_members.value(index))
            return false;
        if (m_gone && !QFileInfo::exists(m + QStringLiteral("/started"))
            && !QFileInfo::exists(m + QStringLiteral("/out.json"))) {
            QDir(m).removeRecursively();
            QFile::remove(a->recordFile());
            QMetaObject::invokeMethod(this, &SlurmBatch::cleanUpIfDone, Qt::QueuedConnection);
            return false;
        }
        a->join(this, index);
        m_members.insert(index, a);
        collect();
        if (a->done())
            return true;
        if (m_gone)
            failMember(a, QStringLiteral("its Slurm job (%1) is gone without a result").arg(jobName()));
        else
            m_executor->watch(this);
        return true;
    }

    // Results (or failures) that candidates left in their directories.
    void collect()
    {
        for (auto it = m_members.cbegin(); it != m_members.cend(); ++it) {
            SlurmAttempt *a = it.value();
            if (!a || a->done())
                continue;
            const QString m = memberDir(it.key());
            if (QFileInfo::exists(m + QStringLiteral("/out.json"))) {
                QJsonParseError error;
                const QJsonDocument doc = QJsonDocument::fromJson(readFile(m + QStringLiteral("/out.json")), &error);
                if (!doc.isObject() || !doc.object().contains(QStringLiteral("status")))
                    failMember(a, QStringLiteral("%1 left an unreadable result in %2/out.json").arg(jobName(), m));
                else
                    finishMember(a, doc.object(), {});
            } else if (QFileInfo::exists(m + QStringLiteral("/failed"))) {
                failMember(a,
                           QStringLiteral("%1: %2").arg(
                               jobName(), QString::fromUtf8(readFile(m + QStringLiteral("/failed"))).trimmed()));
            }
        }
    }

    // From the executor's poll: the job's state in the queue, or empty when it left the queue.
    void polled(const QString &state)
    {
        collect();
        if (!state.isEmpty()) {
            if (state == QLatin1String("RUNNING") && !m_watchdog && m_limitS > 0) {
                // The limit counts from the start of the run, not the wait in the queue.
                m_watchdog = new QTimer(this);
                m_watchdog->setSingleShot(true);
                connect(m_watchdog, &QTimer::timeout, this, [this] {
                    scancel();
                    failAll(
                        QStringLiteral("%1: no result within %2 s of running; cancelled").arg(jobName()).arg(m_limitS),
                        false);
                });
                m_watchdog->start(m_limitS * 1000);
            }
            return;
        }
        m_gone = true;
        // Gone from the queue without every result: preempted, node lost, cancelled by someone, failed.
        if (std::any_of(m_members.cbegin(), m_members.cend(),
                        [](const QPointer<SlurmAttempt> &a) { return a && !a->done(); })) {
            const QString ended = SlurmExecutor::endedState(m_jobId);
            QString why = QStringLiteral("%1 %2 without a result for this candidate")
                              .arg(jobName(),
                                   ended.isEmpty() ? QStringLiteral("left the queue")
                                                   : QStringLiteral("ended as ") + ended);
            const QByteArray log = readFile(m_dir + QStringLiteral("/slurm.out")).right(2000).trimmed();
            if (!log.isEmpty())
                why += QStringLiteral(": ") + QString::fromUtf8(log);
            failAll(why, false);
        }
        cleanUpIfDone();
    }

    void cancelMember(SlurmAttempt *a)
    {
        writeFile(memberDir(a->index()) + QStringLiteral("/cancel"), {});
        QFile::remove(a->recordFile());
        a->finishWith({}, QStringLiteral("cancelled"));
        // No candidate of the job is wanted any more: the job goes.
        if (m_members.size() == m_size
            && std::all_of(m_members.cbegin(), m_members.cend(),
                           [](const QPointer<SlurmAttempt> &m) { return !m || m->done(); })) {
            if (m_jobId > 0)
                scancel();
            else
                m_scancelWhenSubmitted = true;
        }
    }

    // The executor goes (the workbench quits or pauses): candidates nobody can find again are
    // cancelled; keyed ones stay with their job for the process that resumes the run.
    void abandon()
    {
        bool keyedLeft = false;
        bool unkeyedLeft = false;
        for (auto it = m_members.cbegin(); it != m_members.cend(); ++it) {
            if (!it.value() || it.value()->done())
                continue;
            (it.value()->keyed() ? keyedLeft : unkeyedLeft) = true;
            if (!it.value()->keyed())
                writeFile(memberDir(it.key()) + QStringLiteral("/cancel"), {});
        }
        if (unkeyedLeft && !keyedLeft && m_members.size() == m_size && !m_gone)
            scancel();
        if (!keyedLeft && !unkeyedLeft)
            removeIfNothingLeft();
    }

    void cleanUpIfDone()
    {
        if (!m_gone)
            return;
        removeIfNothingLeft();
    }

private:
    QString jobName() const
    {
        return m_jobId > 0 ? QStringLiteral("Slurm job %1").arg(m_jobId) : SlurmExecutor::jobName(m_key);
    }

    // The directory goes once every candidate in it was taken (or cancelled): a result not yet asked
    // for (by a resumed process) is never removed.
    void removeIfNothingLeft()
    {
        for (int i = 0; i < m_size; ++i) {
            const QString m = memberDir(i);
            if (QFileInfo::exists(m) && !QFileInfo::exists(m + QStringLiteral("/cancel")))
                return;
        }
        QDir(m_dir).removeRecursively();
        finishBatch();
    }

    void finishBatch()
    {
        m_executor->forget(this);
        deleteLater();
    }

    void finishMember(SlurmAttempt *a, const QJsonObject &result, const QString &failure)
    {
        // The caller stores the result while handling finished(); only then do the candidate's
        // directory and record go (a kill in between finds the result again).
        const QString dir = memberDir(a->index());
        const QString record = a->recordFile();
        a->finishWith(result, failure);
        QDir(dir).removeRecursively();
        QFile::remove(record);
    }

    void failMember(SlurmAttempt *a, const QString &why) { finishMember(a, {}, why); }

    // Every candidate still waiting fails; `dropAll`: the job never got going, its directory goes.
    void failAll(const QString &why, bool dropAll)
    {
        for (const QPointer<SlurmAttempt> &a : QList<QPointer<SlurmAttempt>>(m_members.values()))
            if (a && !a->done())
                failMember(a, why);
        if (dropAll) {
            QDir(m_dir).removeRecursively();
            finishBatch();
        } else {
            cleanUpIfDone();
        }
    }

    void scancel()
    {
        if (m_jobId > 0)
            QProcess::startDetached(QStringLiteral("scancel"), {QString::number(m_jobId)});
    }

    SlurmExecutor *m_executor;
    QString m_key;
    QString m_dir;
    qint64 m_jobId = 0;
    int m_size = 0;
    int m_limitS = 0;
    QHash<int, QPointer<SlurmAttempt>> m_members;
    QTimer *m_watchdog = nullptr;
    bool m_gone = false;
    bool m_scancelWhenSubmitted = false;
};

void SlurmAttempt::cancel()
{
    if (m_done)
        return;
    if (m_batch)
        m_batch->cancelMember(this);
    else
        finishWith({}, QStringLiteral("cancelled")); // not dispatched yet
}

std::unique_ptr<SlurmExecutor> SlurmExecutor::create(const EvaluationConfig &config, QString *error)
{
    for (const char *tool : {"sbatch", "squeue", "scancel", "scontrol"}) {
        if (QStandardPaths::findExecutable(QLatin1String(tool)).isEmpty()) {
            *error = QStringLiteral(
                         "evaluation.executor is slurm but '%1' is not on PATH (install the Slurm client tools)")
                         .arg(QLatin1String(tool));
            return nullptr;
        }
    }
    QString shared = config.slurmSharedDir;
    if (shared.isEmpty())
        shared = QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation)
            + QStringLiteral("/autocomp-workbench/slurm");
    if (!QDir().mkpath(shared)) {
        *error = QStringLiteral("evaluation.slurm.shared_dir: cannot create %1").arg(shared);
        return nullptr;
    }
    return std::unique_ptr<SlurmExecutor>(new SlurmExecutor(config, shared));
}

SlurmExecutor::SlurmExecutor(const EvaluationConfig &config, QString sharedDir)
    : m_config(config)
    , m_sharedDir(std::move(sharedDir))
    , m_timer(new QTimer(this))
{
    m_timer->setInterval(config.slurmPollMs);
    connect(m_timer, &QTimer::timeout, this, &SlurmExecutor::poll);
}

SlurmExecutor::~SlurmExecutor()
{
    for (SlurmBatch *batch : QList<SlurmBatch *>(m_batches.values()))
        batch->abandon();
    if (m_squeue) {
        m_squeue->kill();
        m_squeue->waitForFinished(2000);
    }
}

QString SlurmExecutor::slotName(int slot) const { return QStringLiteral("slurm#%1").arg(slot); }

QString SlurmExecutor::jobName(const QString &batchKey) { return QStringLiteral("autocomp-") + batchKey; }

QList<qint64> SlurmExecutor::jobsNamed(const QString &name, QString *error)
{
    QProcess squeue;
    squeue.start(
        QStringLiteral("squeue"),
        {QStringLiteral("--noheader"), QStringLiteral("--format=%i %j"), QStringLiteral("--user=") + userName()});
    QList<qint64> ids;
    if (!squeue.waitForFinished(30000) || squeue.exitCode() != 0) {
        *error = QStringLiteral("squeue failed: %1").arg(QString::fromUtf8(squeue.readAllStandardError()).trimmed());
        return ids;
    }
    for (const QByteArray &line : squeue.readAllStandardOutput().split('\n')) {
        const QList<QByteArray> words = line.trimmed().split(' ');
        if (words.size() == 2 && QString::fromUtf8(words.at(1)) == name)
            ids << words.at(0).toLongLong();
    }
    return ids;
}

QString SlurmExecutor::endedState(qint64 jobId)
{
    if (jobId <= 0)
        return {};
    const auto run = [](const QString &program, const QStringList &args) {
        QProcess p;
        p.start(program, args);
        if (!p.waitForFinished(10000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
            return QString();
        return QString::fromUtf8(p.readAllStandardOutput()).trimmed();
    };
    // Accounting (slurmdbd) first; without it, the job completion log, which sacct reads without a database.
    const QStringList fields{QStringLiteral("-j"),
                             QString::number(jobId),
                             QStringLiteral("-n"),
                             QStringLiteral("-P"),
                             QStringLiteral("-X"),
                             QStringLiteral("-o"),
                             QStringLiteral("State,ExitCode,NodeList")};
    for (const QStringList &args : {fields, QStringList{QStringLiteral("--completion")} + fields}) {
        const QStringList words =
            run(QStringLiteral("sacct"), args).section(QLatin1Char('\n'), 0, 0).split(QLatin1Char('|'));
        if (words.size() == 3 && !words.at(0).isEmpty())
            return QStringLiteral("%1 (exit code %2, node %3, from sacct%4)")
                .arg(words.at(0), words.at(1), words.at(2),
                     args.first() == QLatin1String("--completion") ? QStringLiteral(" --completion") : QString());
    }
    static const QRegularExpression s_state(QStringLiteral("JobState=(\\S+).*Reason=(\\S+)"));
    const auto m = s_state.match(
        run(QStringLiteral("scontrol"),
            {QStringLiteral("show"), QStringLiteral("job"), QString::number(jobId), QStringLiteral("-o")}));
    return m.hasMatch() ? QStringLiteral("%1 (reason %2, from scontrol)").arg(m.captured(1), m.captured(2)) : QString();
}

QString SlurmExecutor::dataDir(const RemoteTask &task, QString *error)
{
    QString hash;
    const QByteArray data = RemoteExecutor::dataArchive(task, &hash, error);
    if (data.isEmpty())
        return {};
    QString dir = m_sharedDir + QStringLiteral("/autocomp-data-") + hash;
    if (QFileInfo::exists(dir))
        return dir;
    const QString tmp = dir + QStringLiteral(".tmp.") + randomHex(8);
    QDir().mkpath(tmp);
    QProcess tar;
    tar.start(QStringLiteral("tar"), {QStringLiteral("-xf"), QStringLiteral("-"), QStringLiteral("-C"), tmp});
    tar.write(data);
    tar.closeWriteChannel();
    if (!tar.waitForFinished(120000) || tar.exitCode() != 0) {
        *error = QStringLiteral("cannot unpack the target's files into %1: %2")
                     .arg(tmp, QString::fromUtf8(tar.readAllStandardError()));
        QDir(tmp).removeRecursively();
        return {};
    }
    // Another process may have made it meanwhile: then this copy goes.
    if (!QDir().rename(tmp, dir))
        QDir(tmp).removeRecursively();
    if (!QFileInfo::exists(dir)) {
        *error = QStringLiteral("cannot create %1").arg(dir);
        return {};
    }
    return dir;
}

RemoteAttempt *SlurmExecutor::start(int slot, const RemoteTask &task) { return startBatch(slot, {task}).first(); }

QList<RemoteAttempt *> SlurmExecutor::startBatch(int, const QList<RemoteTask> &tasks)
{
    QList<RemoteAttempt *> attempts;
    QList<QPointer<SlurmAttempt>> pending;
    for (const RemoteTask &task : tasks) {
        auto *attempt = new SlurmAttempt(this, task);
        attempts << attempt;
        pending << attempt;
    }
    // After the caller has connected to the attempts: a result found at once is reported to it.
    QMetaObject::invokeMethod(
        this, [this, pending] { dispatch(pending); }, Qt::QueuedConnection);
    return attempts;
}

void SlurmExecutor::dispatch(const QList<QPointer<SlurmAttempt>> &attempts)
{
    QList<SlurmAttempt *> fresh;
    for (const QPointer<SlurmAttempt> &a : attempts) {
        if (!a || a->done())
            continue;
        // A candidate a killed process put in a job: that job's result, or the job itself.
        const QByteArray record = a->keyed() ? readFile(a->recordFile()).trimmed() : QByteArray();
        if (!record.isEmpty()) {
            const QString batchKey = QString::fromUtf8(record.split(' ').value(0));
            bool ok = false;
            const int index = record.split(' ').value(1).toInt(&ok);
            SlurmBatch *batch = m_batches.value(batchKey);
            if (!batch && ok && !batchKey.isEmpty()) {
                batch = new SlurmBatch(this, batchKey);
                QString error;
                if (batch->reopen(&error)) {
                    m_batches.insert(batchKey, batch);
                } else {
                    delete batch;
                    batch = nullptr;
                    if (!error.isEmpty()) {
                        // The queue cannot be asked whether the job is there: never submit a second one.
                        a->finishWith({},
                                      QStringLiteral("cannot find the Slurm job of an earlier process: %1").arg(error));
                        continue;
                    }
                }
            }
            if (batch && batch->adopt(a, index))
                continue;
            QFile::remove(a->recordFile());
        }
        fresh << a;
    }
    if (fresh.isEmpty())
        return;
    // The key names the store and run of the first candidate (job names stay findable), plus its own part.
    auto *batch = new SlurmBatch(this, fresh.first()->key() + QStringLiteral("-b") + randomHex(6));
    m_batches.insert(batch->key(), batch);
    batch->submit(fresh);
}

void SlurmExecutor::watch(SlurmBatch *batch)
{
    if (!m_watched.contains(batch))
        m_watched << batch;
    if (!m_timer->isActive())
        m_timer->start();
}

void SlurmExecutor::forget(SlurmBatch *batch)
{
    m_batches.remove(batch->key());
    m_watched.removeAll(batch);
}

void SlurmExecutor::poll()
{
    m_watched.removeIf([](const QPointer<SlurmBatch> &b) { return !b; });
    if (m_watched.isEmpty()) {
        m_timer->stop();
        return;
    }
    // Results on the shared file system are taken without asking Slurm.
    for (const QPointer<SlurmBatch> &b : QList<QPointer<SlurmBatch>>(m_watched))
        if (b)
            b->collect();
    if (m_squeue)
        return;
    // One squeue for every job of ours.
    m_squeue = new QProcess(this);
    // Only jobs submitted before this squeue began can be judged by its answer.
    const QList<QPointer<SlurmBatch>> asked = m_watched;
    connect(m_squeue, &QProcess::finished, this, [this, asked](int code, QProcess::ExitStatus status) {
        QProcess *squeue = std::exchange(m_squeue, nullptr);
        squeue->deleteLater();
        if (status != QProcess::NormalExit || code != 0)
            return; // the controller did not answer: asked again at the next poll
        QHash<qint64, QString> states;
        for (const QByteArray &line : squeue->readAllStandardOutput().split('\n')) {
            const QList<QByteArray> words = line.trimmed().split('|');
            if (words.size() >= 2)
                states.insert(words.at(0).toLongLong(), QString::fromUtf8(words.at(1)));
        }
        for (const QPointer<SlurmBatch> &b : asked)
            if (b)
                b->polled(states.value(b->jobId()));
    });
    m_squeue->start(
        QStringLiteral("squeue"),
        {QStringLiteral("--noheader"), QStringLiteral("--format=%i|%T"), QStringLiteral("--user=") + userName()});
}

} // namespace autocomp
