#include "eval/process_runner.h"

#include <QFileInfo>
#include <QLoggingCategory>
#include <QStandardPaths>
#include <QTimer>

#include <csignal>
#include <sys/resource.h>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcProcess, "autocomp.eval.process")

namespace autocomp {

ProcessRunner::ProcessRunner(QObject *parent) : QObject(parent), m_process(new QProcess(this)), m_watchdog(new QTimer(this))
{
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    m_watchdog->setSingleShot(true);
    connect(m_process, &QProcess::readyRead, this, &ProcessRunner::readOutput);
    connect(m_process, &QProcess::finished, this, &ProcessRunner::done);
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            m_result.log = QStringLiteral("failed to start '%1': %2").arg(m_result.command.value(0), m_process->errorString());
            m_result.exitCode = 127;
            done();
        }
    });
    connect(m_watchdog, &QTimer::timeout, this, [this] {
        m_result.timedOut = true;
        killGroup();
    });
}

ProcessRunner::~ProcessRunner()
{
    if (m_process->state() != QProcess::NotRunning) {
        killGroup();
        m_process->waitForFinished(2000);
    }
}

bool ProcessRunner::isRunning() const
{
    return m_process->state() != QProcess::NotRunning;
}

bool ProcessRunner::sandboxAvailable()
{
    static const bool s_available = [] {
        const QString bwrap = QStandardPaths::findExecutable(QStringLiteral("bwrap"));
        if (bwrap.isEmpty())
            return false;
        // Namespaces can be forbidden (some containers): try once.
        QProcess probe;
        probe.start(bwrap, sandboxPrefix(QStringLiteral("/tmp")).mid(1) + QStringList{QStringLiteral("true")});
        return probe.waitForFinished(5000) && probe.exitStatus() == QProcess::NormalExit && probe.exitCode() == 0;
    }();
    return s_available;
}

QStringList ProcessRunner::sandboxPrefix(const QString &writableDir)
{
    return {QStringLiteral("bwrap"),       QStringLiteral("--ro-bind"), QStringLiteral("/"),       QStringLiteral("/"),
            QStringLiteral("--dev"),       QStringLiteral("/dev"),      QStringLiteral("--proc"),  QStringLiteral("/proc"),
            QStringLiteral("--tmpfs"),     QStringLiteral("/tmp"),      QStringLiteral("--bind"),  writableDir,
            writableDir,                   QStringLiteral("--unshare-net"), QStringLiteral("--unshare-pid"),
            QStringLiteral("--unshare-ipc"), QStringLiteral("--die-with-parent"), QStringLiteral("--new-session"),
            QStringLiteral("--chdir"),     writableDir};
}

void ProcessRunner::start(const QString &name, const QStringList &command, const QString &workdir, const ProcessLimits &limits)
{
    m_result = {};
    m_result.name = name;
    m_result.command = command;
    m_output.clear();
    m_dropped = 0;
    m_maxOutput = limits.maxOutputBytes;
    m_cancelled = false;
    m_finished = false;
    m_pgid = 0;
    if (command.isEmpty()) {
        m_result.log = QStringLiteral("empty command");
        QMetaObject::invokeMethod(this, [this] { Q_EMIT finished(m_result); }, Qt::QueuedConnection);
        m_finished = true;
        return;
    }
    QStringList full = command;
    if (limits.sandbox)
        full = sandboxPrefix(limits.writableDir.isEmpty() ? workdir : limits.writableDir) + command;

    const rlim_t as = rlim_t(limits.addressSpaceBytes);
    const rlim_t fsize = rlim_t(limits.fileSizeBytes);
    const rlim_t cpu = rlim_t(limits.cpuSeconds > 0 ? limits.cpuSeconds : limits.timeoutS + 5);
    m_process->setChildProcessModifier([as, fsize, cpu] {
        // Runs in the child between fork and exec: only async-signal-safe calls.
        ::setpgid(0, 0);
        struct rlimit rl;
        rl.rlim_cur = rl.rlim_max = as;
        ::setrlimit(RLIMIT_AS, &rl);
        rl.rlim_cur = rl.rlim_max = fsize;
        ::setrlimit(RLIMIT_FSIZE, &rl);
        rl.rlim_cur = rl.rlim_max = cpu;
        ::setrlimit(RLIMIT_CPU, &rl);
        rl.rlim_cur = rl.rlim_max = 0;
        ::setrlimit(RLIMIT_CORE, &rl);
    });
    m_process->setWorkingDirectory(workdir);
    m_clock.start();
    m_process->start(full.first(), full.mid(1));
    if (m_process->waitForStarted(10000))
        m_pgid = m_process->processId();
    m_watchdog->start(limits.timeoutS * 1000);
}

void ProcessRunner::cancel()
{
    m_cancelled = true;
    killGroup();
}

void ProcessRunner::killGroup()
{
    if (m_pgid > 0)
        ::kill(pid_t(-m_pgid), SIGKILL);
    else if (m_process->state() != QProcess::NotRunning)
        m_process->kill();
}

void ProcessRunner::readOutput()
{
    const QByteArray bytes = m_process->readAll();
    const qint64 room = m_maxOutput - m_output.size();
    if (room >= bytes.size()) {
        m_output += bytes;
    } else {
        if (room > 0)
            m_output += bytes.left(room);
        m_dropped += bytes.size() - qMax<qint64>(room, 0);
    }
}

void ProcessRunner::done()
{
    if (m_finished)
        return;
    m_finished = true;
    m_watchdog->stop();
    readOutput();
    // Leftover children of the step (background work, forks) die with it.
    killGroup();
    m_result.durationMs = double(m_clock.nsecsElapsed()) / 1e6;
    if (m_result.exitCode != 127 || m_result.log.isEmpty()) {
        const bool crashed = m_process->exitStatus() == QProcess::CrashExit;
        m_result.crashed = crashed && !m_result.timedOut && !m_cancelled;
        m_result.exitCode = crashed ? -1 : m_process->exitCode();
        QString log = QString::fromUtf8(m_output);
        if (m_dropped > 0)
            log += QStringLiteral("\n[output truncated: %1 more bytes not kept]").arg(m_dropped);
        if (m_result.timedOut)
            log += QStringLiteral("\n[killed: exceeded the step's time limit]");
        else if (m_cancelled)
            log += QStringLiteral("\n[cancelled]");
        else if (crashed)
            log += QStringLiteral("\n[terminated abnormally (signal)]");
        m_result.log = log.trimmed();
    }
    Q_EMIT finished(m_result);
}

} // namespace autocomp
