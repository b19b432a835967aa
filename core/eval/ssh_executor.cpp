#include "eval/ssh_executor.h"
#include "eval/tar_writer.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryFile>
#include <QTimer>

#include <unistd.h>

namespace autocomp {

namespace {

// Runs on the host, as `sh -c SCRIPT autocomp-remote DIR DATA DATASIZE WORKSIZE COMMAND...`. Its stdin
// carries the target's data (DATASIZE bytes of tar, 0 when the host has it) and the candidate's files
// (WORKSIZE bytes), then stays open: its end (cancel, timeout, the workbench gone) kills the evaluation.
const char *const s_remoteScript = R"SH(set -u
d=$1; data=$2; datasize=$3; worksize=$4; shift 4
trap 'exit 129' HUP INT TERM
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/work" "$d/tmp" || exit 90
: > "$d/running"
if [ "$datasize" -gt 0 ]; then
  t="$data.tmp.$$"
  mkdir -p "$t" && head -c "$datasize" | tar -xf - -C "$t" ||
    { rm -rf "$t"; echo "autocomp-remote: cannot unpack the target's files into $t" >&2; exit 91; }
  mv -T "$t" "$data" 2>/dev/null || rm -rf "$t"
fi
[ -d "$data" ] || { echo "autocomp-remote: no target data at $data" >&2; exit 91; }
head -c "$worksize" | tar -xf - -C "$d/work" ||
  { echo "autocomp-remote: cannot unpack the candidate's files" >&2; exit 92; }
AUTOCOMP_DATA_DIR="$data" TMPDIR="$d/tmp" "$@" > "$d/out.json" 2> "$d/err.txt" < /dev/null &
pid=$!
# A background list's stdin is /dev/null: the watcher reads ours through descriptor 3.
exec 3<&0
( cat <&3 > /dev/null
  if [ -e "$d/running" ]; then kill -TERM $pid; sleep 5; [ -e "$d/running" ] && kill -KILL $pid; fi ) > /dev/null 2>&1 &
exec 3<&-
wait $pid; rc=$?
rm -f "$d/running"
if [ -s "$d/out.json" ]; then cat "$d/out.json"; exit 0; fi
echo "autocomp-remote: '$1' exited with status $rc and no result:" >&2
tail -c 4000 "$d/err.txt" >&2
exit 93
)SH";

class SshAttempt : public RemoteAttempt
{
public:
    SshAttempt(SshExecutor *executor, int hostIndex, const RemoteTask &task)
        : RemoteAttempt(executor)
        , m_executor(executor)
        , m_hostIndex(hostIndex)
        , m_task(task)
    {
        m_host = executor->config().hosts.at(hostIndex);
    }

    void begin()
    {
        m_executor->withMaster(m_hostIndex, [this](const QString &error) {
            if (m_cancelled)
                return fail(QStringLiteral("cancelled"));
            if (!error.isEmpty())
                return fail(error);
            run();
        });
    }

    void cancel() override
    {
        if (m_done || m_cancelled)
            return;
        m_cancelled = true;
        if (!m_process)
            return; // begin()'s callback reports it
        // The far side kills the evaluation when its stdin ends; the local ssh goes if that does not end it.
        m_process->closeWriteChannel();
        QTimer::singleShot(10000, this, [this] {
            if (m_process && m_process->state() != QProcess::NotRunning)
                m_process->kill();
        });
    }

private:
    void run()
    {
        QString hash;
        QString error;
        const QByteArray data = RemoteExecutor::dataArchive(m_task, &hash, &error);
        if (data.isEmpty())
            return finishWith({}, error);
        TarWriter tar;
        if (!tar.addDirectory(m_task.workdir, {}))
            return finishWith({}, tar.error());
        const QByteArray work = tar.finish();
        m_sendsData = !m_executor->dataSent(m_hostIndex, hash);
        m_hash = hash;
        const EvaluationConfig &config = m_executor->config();
        const QString base = config.remoteWorkdir;
        const QString dir = QStringLiteral("%1/autocomp-eval-%2-%3")
                                .arg(base, m_task.key.isEmpty() ? QStringLiteral("x") : m_task.key)
                                .arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'));
        QStringList remote{QStringLiteral("sh"),
                           QStringLiteral("-c"),
                           QString::fromUtf8(s_remoteScript),
                           QStringLiteral("autocomp-remote"),
                           dir,
                           QStringLiteral("%1/autocomp-data-%2").arg(base, hash),
                           QString::number(m_sendsData ? data.size() : 0),
                           QString::number(work.size())};
        remote << RemoteExecutor::remoteEvalCommand(config, m_task, dir);
        QStringList quoted;
        for (const QString &word : std::as_const(remote))
            quoted << RemoteExecutor::shellQuote(word);
        m_process = new QProcess(this);
        connect(m_process, &QProcess::finished, this,
                [this](int code, QProcess::ExitStatus status) { processFinished(code, status); });
        connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
            if (e == QProcess::FailedToStart)
                finishWith({},
                           QStringLiteral("%1: cannot start ssh: %2").arg(m_host.label(), m_process->errorString()));
        });
        QStringList args = m_executor->sshArguments(m_host);
        args << QStringLiteral("-o") << QStringLiteral("ControlMaster=no") << m_host.host
             << quoted.join(QLatin1Char(' '));
        m_process->start(QStringLiteral("ssh"), args);
        if (m_sendsData)
            m_process->write(data);
        m_process->write(work);
        // Past the limit the evaluation is a remote failure: the host is killed off the attempt.
        QTimer::singleShot(qint64(m_task.timeoutS) * 1000, this, [this] {
            if (m_done)
                return;
            m_timedOut = true;
            cancel();
            m_cancelled = false;
        });
    }

    void processFinished(int code, QProcess::ExitStatus status)
    {
        const QByteArray out = m_process->readAllStandardOutput();
        const QString err = QString::fromUtf8(m_process->readAllStandardError()).trimmed();
        if (m_cancelled)
            return finishWith({}, QStringLiteral("cancelled"));
        if (m_timedOut)
            return finishWith({},
                              QStringLiteral("%1: no answer within %2 s; the remote evaluation was killed")
                                  .arg(m_host.label())
                                  .arg(m_task.timeoutS));
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(out, &error);
        if (status == QProcess::NormalExit && code == 0 && doc.isObject()
            && doc.object().contains(QStringLiteral("status"))) {
            if (m_sendsData)
                m_executor->setDataSent(m_hostIndex, m_hash, true);
            return finishWith(doc.object(), {});
        }
        // 91: the host lost the target's data (a cleaned /tmp): the next attempt sends it again.
        if (code == 91)
            m_executor->setDataSent(m_hostIndex, m_hash, false);
        const QString why = code == 255 ? QStringLiteral("ssh failed (host down or unreachable?)")
                                        : QStringLiteral("the remote command exited with status %1").arg(code);
        finishWith({}, QStringLiteral("%1: %2: %3").arg(m_host.label(), why, err.right(2000)));
    }

    void fail(const QString &why) { finishWith({}, why); }

    void finishWith(const QJsonObject &result, const QString &failure)
    {
        if (m_done)
            return;
        m_done = true;
        Q_EMIT finished(result, failure);
        deleteLater();
    }

    SshExecutor *m_executor;
    int m_hostIndex;
    RemoteHost m_host;
    RemoteTask m_task;
    QProcess *m_process = nullptr;
    QString m_hash;
    bool m_sendsData = false;
    bool m_cancelled = false;
    bool m_timedOut = false;
    bool m_done = false;
};

} // namespace

SshExecutor::SshExecutor(const EvaluationConfig &config, QObject *parent) : RemoteExecutor(parent), m_config(config)
{
    for (int h = 0; h < config.hosts.size(); ++h) {
        m_hosts << HostState{};
        for (int s = 0; s < config.hosts.at(h).slots; ++s)
            m_slots << h;
    }
    // The master sockets: a private directory (sockets of other users' masters must not be used).
    m_controlDir = QDir::tempPath() + QStringLiteral("/autocomp-ssh-%1").arg(::getuid());
    QDir().mkpath(m_controlDir);
    QFile::setPermissions(m_controlDir, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
}

SshExecutor::~SshExecutor()
{
    for (int h = 0; h < m_hosts.size(); ++h) {
        if (!m_hosts.at(h).up)
            continue;
        QProcess exit;
        exit.start(QStringLiteral("ssh"),
                   sshArguments(m_config.hosts.at(h))
                       << QStringLiteral("-O") << QStringLiteral("exit") << m_config.hosts.at(h).host);
        exit.waitForFinished(5000);
    }
}

QString SshExecutor::slotName(int slot) const
{
    const int host = m_slots.at(slot);
    return QStringLiteral("%1#%2").arg(m_config.hosts.at(host).label()).arg(slot - int(m_slots.indexOf(host)));
}

QStringList SshExecutor::sshArguments(const RemoteHost &host) const
{
    QStringList args{QStringLiteral("-o"), QStringLiteral("BatchMode=yes"),
                     QStringLiteral("-o"), QStringLiteral("StrictHostKeyChecking=yes"),
                     QStringLiteral("-o"), QStringLiteral("ConnectTimeout=%1").arg(m_config.sshConnectTimeoutS),
                     QStringLiteral("-o"), QStringLiteral("ServerAliveInterval=10"),
                     QStringLiteral("-o"), QStringLiteral("ServerAliveCountMax=3"),
                     QStringLiteral("-o"), QStringLiteral("LogLevel=ERROR"),
                     QStringLiteral("-o"), QStringLiteral("ControlPath=%1/%C").arg(m_controlDir),
                     QStringLiteral("-p"), QString::number(host.port)};
    if (!m_config.sshKnownHosts.isEmpty())
        args << QStringLiteral("-o") << QStringLiteral("UserKnownHostsFile=%1").arg(m_config.sshKnownHosts);
    if (!m_config.sshIdentity.isEmpty())
        args << QStringLiteral("-i") << m_config.sshIdentity << QStringLiteral("-o")
             << QStringLiteral("IdentitiesOnly=yes");
    if (!host.user.isEmpty())
        args << QStringLiteral("-l") << host.user;
    return args;
}

void SshExecutor::setDataSent(int hostIndex, const QString &hash, bool sent)
{
    if (sent)
        m_hosts[hostIndex].dataSent.insert(hash);
    else
        m_hosts[hostIndex].dataSent.remove(hash);
}

void SshExecutor::withMaster(int hostIndex, const std::function<void(const QString &)> &then)
{
    HostState &state = m_hosts[hostIndex];
    if (state.up) {
        then({});
        return;
    }
    state.waiting << then;
    if (state.starting)
        return;
    state.starting = true;
    const RemoteHost host = m_config.hosts.at(hostIndex);
    auto *process = new QProcess(this);
    auto *errors = new QTemporaryFile(process);
    errors->open();
    // -f: ssh goes to the background once authenticated; ControlPersist keeps it for the next candidates.
    process->setStandardOutputFile(QProcess::nullDevice());
    process->setStandardErrorFile(errors->fileName());
    process->setStandardInputFile(QProcess::nullDevice());
    const auto done = [this, hostIndex, process, errors, host](const QString &failure) {
        HostState &s = m_hosts[hostIndex];
        s.starting = false;
        s.up = failure.isEmpty();
        const auto waiting = std::exchange(s.waiting, {});
        process->deleteLater();
        for (const auto &callback : waiting)
            callback(failure);
    };
    connect(process, &QProcess::finished, this, [process, errors, host, done](int code, QProcess::ExitStatus status) {
        if (status == QProcess::NormalExit && code == 0)
            return done({});
        errors->seek(0);
        done(QStringLiteral("%1: cannot connect over ssh (status %2): %3")
                 .arg(host.label())
                 .arg(code)
                 .arg(QString::fromUtf8(errors->readAll()).trimmed()));
    });
    connect(process, &QProcess::errorOccurred, this, [process, host, done](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            done(QStringLiteral("%1: cannot start ssh: %2").arg(host.label(), process->errorString()));
    });
    process->start(QStringLiteral("ssh"),
                   sshArguments(host) << QStringLiteral("-o") << QStringLiteral("ControlMaster=yes")
                                      << QStringLiteral("-o") << QStringLiteral("ControlPersist=300")
                                      << QStringLiteral("-N") << QStringLiteral("-f") << host.host);
}

RemoteAttempt *SshExecutor::start(int slot, const RemoteTask &task)
{
    auto *attempt = new SshAttempt(this, m_slots.at(slot), task);
    QMetaObject::invokeMethod(
        attempt, [attempt] { attempt->begin(); }, Qt::QueuedConnection);
    return attempt;
}

} // namespace autocomp
