#include "eval/process_runner.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QThread>
#include <QLoggingCategory>
#include <QStandardPaths>
#include <QTimer>

#include <atomic>
#include <csignal>
#include <ctime>
#include <sched.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcProcess, "autocomp.eval.process")

namespace autocomp {

namespace {

bool writeFile(const QString &path, const QByteArray &data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(data) == data.size();
}

QList<qint64> cgroupPids(const QString &cgroup)
{
    QFile f(cgroup + QStringLiteral("/cgroup.procs"));
    QList<qint64> pids;
    if (f.open(QIODevice::ReadOnly))
        for (const QByteArray &line : f.readAll().split('\n'))
            if (const qint64 pid = line.trimmed().toLongLong(); pid > 0)
                pids << pid;
    return pids;
}

// Processes owned by this user, for an RLIMIT_NPROC that leaves the user's other work alone.
int processesOfThisUser()
{
    int count = 0;
    const uint uid = ::getuid();
    for (const QFileInfo &info : QDir(QStringLiteral("/proc")).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot))
        if (info.fileName().toLongLong() > 0 && info.ownerId() == uid)
            ++count;
    return count;
}

} // namespace

QString ProcessRunner::pidsCgroupParent()
{
    static const QString s_parent = []() -> QString {
        // cgroup v1 "N:pids:/path" or v2 "0::/path", from our own membership.
        QFile self(QStringLiteral("/proc/self/cgroup"));
        if (!self.open(QIODevice::ReadOnly))
            return {};
        QStringList candidates;
        for (const QByteArray &raw : self.readAll().split('\n')) {
            const QList<QByteArray> parts = raw.split(':');
            if (parts.size() < 3)
                continue;
            const QString path = QString::fromUtf8(parts.mid(2).join(':'));
            if (parts.at(1).split(',').contains("pids"))
                candidates << QStringLiteral("/sys/fs/cgroup/pids") + path;
            else if (parts.at(0) == "0" && parts.at(1).isEmpty())
                candidates << QStringLiteral("/sys/fs/cgroup") + path;
        }
        for (const QString &parent : std::as_const(candidates)) {
            const QString probe = parent + QStringLiteral("/autocomp-probe-%1").arg(::getpid());
            if (!QDir().mkdir(probe))
                continue;
            const bool ok = writeFile(probe + QStringLiteral("/pids.max"), "64");
            QDir().rmdir(probe);
            if (!ok)
                continue;
            // Cgroups left by runs that were killed (or whose last tasks were still being reaped):
            // remove those of processes that no longer exist.
            for (const QString &name : QDir(parent).entryList({QStringLiteral("autocomp-*")}, QDir::Dirs)) {
                const QString owner = name.section(QLatin1Char('-'), 1, 1);
                if (!QFileInfo::exists(QStringLiteral("/proc/") + owner))
                    QDir(parent).rmdir(name);
            }
            return QDir::cleanPath(parent);
        }
        return {};
    }();
    return s_parent;
}

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
    removeCgroup();
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

QStringList ProcessRunner::sandboxPrefix(const QString &writableDir, const QStringList &readOnlyDirs)
{
    QStringList args{QStringLiteral("bwrap"), QStringLiteral("--ro-bind"), QStringLiteral("/"),    QStringLiteral("/"),
                     QStringLiteral("--dev"), QStringLiteral("/dev"),      QStringLiteral("--proc"), QStringLiteral("/proc"),
                     QStringLiteral("--tmpfs"), QStringLiteral("/tmp")};
    for (const QString &dir : readOnlyDirs)
        if (QFileInfo(dir).isDir())
            args << QStringLiteral("--ro-bind") << dir << dir;
    // Run as root, bwrap keeps every capability, and root inside could remount / read-write.
    args << QStringLiteral("--bind") << writableDir << writableDir << QStringLiteral("--unshare-net") << QStringLiteral("--unshare-pid")
         << QStringLiteral("--unshare-ipc") << QStringLiteral("--cap-drop") << QStringLiteral("ALL") << QStringLiteral("--die-with-parent")
         << QStringLiteral("--new-session") << QStringLiteral("--chdir") << writableDir;
    return args;
}

void ProcessRunner::start(const QString &name, const QStringList &command, const QString &workdir, const ProcessLimits &limits)
{
    const EvalRuntimeCpu::Scope runtimeCpu;
    m_result = {};
    m_result.name = name;
    m_result.command = command;
    m_output.clear();
    m_dropped = 0;
    m_maxOutput = limits.maxOutputBytes;
    m_floodBytes = limits.floodBytes;
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
    {
        // The sandbox's /tmp is private: whatever the command names under /tmp (a checkout or build tree
        // there, a tool, the problem's files) is bound back read-only, its top directory at a time.
        const QString writable = limits.writableDir.isEmpty() ? workdir : limits.writableDir;
        QStringList readOnly = limits.readOnlyDirs;
        static const QRegularExpression s_tmpPath(QStringLiteral("(?:^-[A-Za-z]|(?<![A-Za-z0-9_.~/-]))(/tmp/[^/:=\\s]+)"));
        for (const QString &arg : command) {
            for (auto it = s_tmpPath.globalMatch(arg); it.hasNext();) {
                const QString top = it.next().captured(1);
                if (top != writable && !readOnly.contains(top) && QFileInfo(top).isDir())
                    readOnly << top;
            }
        }
        full = sandboxPrefix(writable, readOnly) + command;
    }

    removeCgroup();
    QByteArray procsFile;
    rlim_t nproc = RLIM_INFINITY;
    if (limits.maxTasks > 0) {
        static std::atomic<int> s_counter{0};
        const QString parent = pidsCgroupParent();
        const QString cgroup = parent + QStringLiteral("/autocomp-%1-%2").arg(::getpid()).arg(++s_counter);
        if (!parent.isEmpty() && QDir().mkdir(cgroup)) {
            m_cgroup = cgroup;
            if (writeFile(cgroup + QStringLiteral("/pids.max"), QByteArray::number(limits.maxTasks)))
                procsFile = QFile::encodeName(cgroup + QStringLiteral("/cgroup.procs"));
        }
        if (procsFile.isEmpty() && ::getuid() != 0)
            nproc = rlim_t(processesOfThisUser() + limits.maxTasks);
    }

    const rlim_t as = rlim_t(limits.addressSpaceBytes);
    const rlim_t fsize = rlim_t(limits.fileSizeBytes);
    const rlim_t cpu = rlim_t(limits.cpuSeconds > 0 ? limits.cpuSeconds : limits.timeoutS + 5);
    cpu_set_t affinity;
    CPU_ZERO(&affinity);
    for (int c : limits.cpus)
        if (c >= 0 && c < CPU_SETSIZE)
            CPU_SET(c, &affinity);
    const bool pin = CPU_COUNT(&affinity) > 0;
    m_process->setChildProcessModifier([as, fsize, cpu, nproc, procsFile, affinity, pin] {
        // Runs in the child between fork and exec: only async-signal-safe calls.
        ::setpgid(0, 0);
        if (pin)
            ::sched_setaffinity(0, sizeof affinity, &affinity);
        if (!procsFile.isEmpty()) {
            // Join the command's pids cgroup; its descendants inherit the limit. Failure: abort the
            // child rather than run untrusted code without the limit.
            const int fd = ::open(procsFile.constData(), O_WRONLY | O_CLOEXEC);
            if (fd < 0 || ::write(fd, "0", 1) != 1)
                ::_exit(126);
            ::close(fd);
        }
        struct rlimit rl;
        rl.rlim_cur = rl.rlim_max = as;
        ::setrlimit(RLIMIT_AS, &rl);
        rl.rlim_cur = rl.rlim_max = fsize;
        ::setrlimit(RLIMIT_FSIZE, &rl);
        rl.rlim_cur = rl.rlim_max = cpu;
        ::setrlimit(RLIMIT_CPU, &rl);
        rl.rlim_cur = rl.rlim_max = 0;
        ::setrlimit(RLIMIT_CORE, &rl);
        if (nproc != RLIM_INFINITY) {
            rl.rlim_cur = rl.rlim_max = nproc;
            ::setrlimit(RLIMIT_NPROC, &rl);
        }
    });
    m_process->setWorkingDirectory(workdir);
    m_clock.start();
    m_process->start(full.first(), full.mid(1));
    if (m_process->waitForStarted(10000))
        m_pgid = m_process->processId();
    m_watchdog->start(limits.timeoutS * 1000);
}

void ProcessRunner::setCpus(const QList<int> &cpus)
{
    const EvalRuntimeCpu::Scope runtimeCpu;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus)
        if (c >= 0 && c < CPU_SETSIZE)
            CPU_SET(c, &set);
    if (CPU_COUNT(&set) == 0 || m_process->state() == QProcess::NotRunning)
        return;
    QList<qint64> pids = m_cgroup.isEmpty() ? QList<qint64>{} : cgroupPids(m_cgroup);
    if (pids.isEmpty())
        pids << m_process->processId();
    for (const qint64 pid : std::as_const(pids)) {
        // Every thread of the process: compilers and candidates may be multi-threaded.
        const QStringList tids = QDir(QStringLiteral("/proc/%1/task").arg(pid)).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        if (tids.isEmpty())
            ::sched_setaffinity(pid_t(pid), sizeof set, &set);
        for (const QString &tid : tids)
            ::sched_setaffinity(pid_t(tid.toLongLong()), sizeof set, &set);
    }
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
    // Processes that left the group (setsid, the sandbox's own session) are still in the cgroup.
    if (!m_cgroup.isEmpty())
        for (const qint64 pid : cgroupPids(m_cgroup))
            ::kill(pid_t(pid), SIGKILL);
}

void ProcessRunner::removeCgroup()
{
    if (m_cgroup.isEmpty())
        return;
    // A fork bomb may still be forking while we kill: repeat until the cgroup is empty.
    for (int attempt = 0; attempt < 200; ++attempt) {
        const QList<qint64> pids = cgroupPids(m_cgroup);
        for (const qint64 pid : pids)
            ::kill(pid_t(pid), SIGKILL);
        if (QDir().rmdir(m_cgroup))
            break;
        QThread::msleep(5);
    }
    // Still busy (exited tasks not yet reaped): retried by the next runner, or at the next start.
    static QStringList s_pending;
    if (QFileInfo::exists(m_cgroup))
        s_pending << m_cgroup;
    s_pending.removeIf([](const QString &dir) { return QDir().rmdir(dir) || !QFileInfo::exists(dir); });
    m_cgroup.clear();
}

void ProcessRunner::readOutput()
{
    const EvalRuntimeCpu::Scope runtimeCpu;
    const QByteArray bytes = m_process->readAll();
    const qint64 room = m_maxOutput - m_output.size();
    if (room >= bytes.size()) {
        m_output += bytes;
    } else {
        if (room > 0)
            m_output += bytes.left(room);
        m_dropped += bytes.size() - qMax<qint64>(room, 0);
    }
    // Writing hundreds of megabytes only wastes the time limit: stop it now, with a verdict that does
    // not depend on how fast the machine happens to be.
    if (m_floodBytes > 0 && !m_result.outputFlooded && m_output.size() + m_dropped > m_floodBytes) {
        m_result.outputFlooded = true;
        killGroup();
    }
}

void ProcessRunner::done()
{
    const EvalRuntimeCpu::Scope runtimeCpu;
    if (m_finished)
        return;
    m_finished = true;
    m_watchdog->stop();
    readOutput();
    // Leftover children of the step (background work, forks) die with it.
    killGroup();
    removeCgroup();
    m_result.durationMs = double(m_clock.nsecsElapsed()) / 1e6;
    if (m_result.exitCode != 127 || m_result.log.isEmpty()) {
        const bool crashed = m_process->exitStatus() == QProcess::CrashExit;
        m_result.crashed = crashed && !m_result.timedOut && !m_cancelled && !m_result.outputFlooded;
        m_result.exitCode = crashed ? -1 : m_process->exitCode();
        QString log = QString::fromUtf8(m_output);
        if (m_dropped > 0)
            log += QStringLiteral("\n[output truncated: %1 more bytes not kept]").arg(m_dropped);
        if (m_result.outputFlooded)
            log += QStringLiteral("\n[killed: wrote more than %1 MiB of output]").arg(m_floodBytes >> 20);
        else if (m_result.timedOut)
            log += QStringLiteral("\n[killed: exceeded the step's time limit]");
        else if (m_cancelled)
            log += QStringLiteral("\n[cancelled]");
        else if (crashed)
            log += QStringLiteral("\n[terminated abnormally (signal)]");
        m_result.log = log.trimmed();
    }
    const EvalRuntimeCpu::Pause handlers;
    Q_EMIT finished(m_result);
}

} // namespace autocomp
