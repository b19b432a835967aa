#include "eval/process_runner.h"

#include "platform/sandbox.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QThread>
#include <QLoggingCategory>
#include <QStandardPaths>
#include <QTimer>

#include <atomic>
#include <cstring>
#include <csignal>
#include <ctime>
#include <sched.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <QProcessEnvironment>

Q_LOGGING_CATEGORY(lcProcess, "autocomp.eval.process")

namespace autocomp {

namespace {

// Writes a control file that must already exist (a cgroup's): never creates one, so a directory
// that only looks like a cgroup (a tmpfs where the v2 hierarchy is not mounted) is not taken for one.
bool writeFile(const QString &path, const QByteArray &data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::ExistingOnly) && f.write(data) == data.size();
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

// The directories where this process's cgroup of `controller` lives: cgroup v1 "N:pids:/path" or
// v2 "0::/path", from our own membership.
QStringList cgroupCandidates(const QByteArray &controller)
{
    QFile self(QStringLiteral("/proc/self/cgroup"));
    QStringList candidates;
    if (!self.open(QIODevice::ReadOnly))
        return candidates;
    for (const QByteArray &raw : self.readAll().split('\n')) {
        const QList<QByteArray> parts = raw.split(':');
        if (parts.size() < 3)
            continue;
        const QString path = QString::fromUtf8(parts.mid(2).join(':'));
        if (parts.at(1).split(',').contains(controller))
            candidates << QStringLiteral("/sys/fs/cgroup/") + QString::fromLatin1(controller) + path;
        else if (parts.at(0) == "0" && parts.at(1).isEmpty())
            candidates << QStringLiteral("/sys/fs/cgroup") + path;
    }
    return candidates;
}

// The pid of the process that made an autocomp cgroup, from its name: "autocomp-PID-N",
// "autocomp-PID-cN" (a runner's) or "autocomp-probe-PID-CONTROLLER" (a probe); 0 when unknown.
// (Reading "probe" as the owner of a probe made every starting process remove the live probes of
// the others, which then took a tmpfs for their cgroup parent.)
qint64 cgroupOwner(const QString &name)
{
    const QStringList parts = name.split(QLatin1Char('-'));
    const int at = parts.value(1) == QLatin1String("probe") ? 2 : 1;
    return parts.value(at).toLongLong();
}

// Says, from the child between fork and exec, why the command's limits could not be applied; the
// parent reads it back from a close-on-exec pipe the command itself never sees.
void reportSetupFailure(int fd, const char *what)
{
    if (fd >= 0) {
        const ssize_t ignored = ::write(fd, what, ::strlen(what));
        (void)ignored;
    }
    ::_exit(126);
}

} // namespace

QString ProcessRunner::pidsCgroupParent()
{
    static const QString s_parent = usableCgroupParent(cgroupCandidates("pids"), "pids");
    return s_parent;
}

QString ProcessRunner::cpusetCgroupParent()
{
    static const QString s_parent = usableCgroupParent(cgroupCandidates("cpuset"), "cpuset");
    return s_parent;
}

QString ProcessRunner::usableCgroupParent(const QStringList &candidates, const QByteArray &controller)
{
    // pids: the limit can be written; cpuset: the CPU list is there.
    auto usable = [&controller](const QString &probe) {
        return controller == "pids" ? writeFile(probe + QStringLiteral("/pids.max"), "64")
                                    : QFileInfo::exists(probe + QStringLiteral("/cpuset.cpus"));
    };
    for (const QString &parent : candidates) {
        // Only a real cgroup directory: a tmpfs where a hierarchy is not mounted takes any mkdir.
        if (!QFileInfo::exists(parent + QStringLiteral("/cgroup.procs")))
            continue;
        const QString probe = parent
            + QStringLiteral("/autocomp-probe-%1-%2").arg(::getpid()).arg(QString::fromLatin1(controller));
        // A probe of a killed process that had our pid is stale: removed, then made again.
        if (!QDir().mkdir(probe) && !(QDir().rmdir(probe) && QDir().mkdir(probe)))
            continue;
        const bool ok = usable(probe);
        QDir().rmdir(probe);
        if (!ok)
            continue;
        removeStaleCgroups(parent);
        return QDir::cleanPath(parent);
    }
    return {};
}

void ProcessRunner::removeStaleCgroups(const QString &parent)
{
    // Only those whose process is gone: a live process's probe, or its cgroup made but not yet
    // joined by its command, is its own.
    for (const QString &name : QDir(parent).entryList({QStringLiteral("autocomp-*")}, QDir::Dirs)) {
        const qint64 owner = cgroupOwner(name);
        if (owner > 0 && owner != ::getpid() && !QFileInfo::exists(QStringLiteral("/proc/%1").arg(owner)))
            QDir(parent).rmdir(name);
    }
}

qint64 ProcessRunner::processId() const { return m_process->processId(); }

StepResult ProcessRunner::stopAndCollect()
{
    if (!m_finished) {
        killGroup();
        m_process->waitForFinished(3000);
        done();
    }
    return m_result;
}

void ProcessRunner::startJudged(const QString &name, const QStringList &judge, const QList<QStringList> &workers,
                                const QString &workdir, const ProcessLimits &judgeLimits,
                                const ProcessLimits &workerLimits)
{
    const EvalRuntimeCpu::Scope runtimeCpu;
    QStringList channels, pids;
    QList<int> fds;
    for (int i = 0; i < workers.size(); ++i) {
        // Pages are allocated as they are touched: the size only bounds a batch's inputs and outputs.
        const int fd = int(::syscall(SYS_memfd_create, "autocomp-channel", MFD_CLOEXEC));
        if (fd < 0 || ::ftruncate(fd, 1LL << 30) != 0) {
            if (fd >= 0)
                ::close(fd);
            m_result = {};
            m_result.name = name;
            m_result.exitCode = 2;
            m_result.log = QStringLiteral("cannot create the judge's channel to a worker");
            m_finished = true;
            QMetaObject::invokeMethod(
                this, [this] { Q_EMIT finished(m_result); }, Qt::QueuedConnection);
            return;
        }
        fds << fd;
        auto *worker = new ProcessRunner(this);
        ProcessLimits limits = workerLimits;
        limits.passFds = {fd};
        worker->start(name + QStringLiteral("-worker%1").arg(i), workers.at(i), workdir, limits);
        m_workers << worker;
        channels << QString::number(3 + i);
        pids << QString::number(worker->processId());
    }
    QStringList command;
    for (QString arg : judge) {
        arg.replace(QLatin1String("{channels}"), channels.join(QLatin1Char(',')));
        arg.replace(QLatin1String("{worker_pids}"), pids.join(QLatin1Char(',')));
        command << arg;
    }
    ProcessLimits limits = judgeLimits;
    limits.passFds = fds;
    m_channelFds = fds;
    start(name, command, workdir, limits);
}

ProcessRunner::ProcessRunner(QObject *parent)
    : QObject(parent)
    , m_process(new QProcess(this))
    , m_watchdog(new QTimer(this))
{
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    m_watchdog->setSingleShot(true);
    connect(m_process, &QProcess::readyRead, this, &ProcessRunner::readOutput);
    connect(m_process, &QProcess::finished, this, &ProcessRunner::done);
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            m_result.log =
                QStringLiteral("failed to start '%1': %2").arg(m_result.command.value(0), m_process->errorString());
            m_result.exitCode = 127;
            m_startFailed = true;
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
    if (m_setupFd >= 0)
        ::close(m_setupFd);
}

bool ProcessRunner::isRunning() const { return m_process->state() != QProcess::NotRunning; }

bool ProcessRunner::sandboxAvailable() { return Sandbox::available(); }

QStringList ProcessRunner::sandboxSystemPaths() { return Sandbox::systemPaths(); }

QStringList ProcessRunner::sandboxPrefix(const QString &writableDir, const QStringList &readOnlyDirs, bool sharePids,
                                         bool gpu)
{
    return Sandbox::prefix(writableDir, readOnlyDirs, sharePids, gpu);
}

namespace {

// The command's pids cgroup, limited to `maxTasks`: its cgroup.procs file, which the child joins; empty when
// there is no cgroup to make or the limit could not be written. *cgroup: the cgroup made, to remove later.
QByteArray makePidsCgroup(int maxTasks, QString *cgroup)
{
    static std::atomic<int> s_counter{0};
    const QString parent = ProcessRunner::pidsCgroupParent();
    const QString path = parent + QStringLiteral("/autocomp-%1-%2").arg(::getpid()).arg(++s_counter);
    if (parent.isEmpty() || !QDir().mkdir(path))
        return {};
    *cgroup = path;
    if (!writeFile(path + QStringLiteral("/pids.max"), QByteArray::number(maxTasks)))
        return {};
    return QFile::encodeName(path + QStringLiteral("/cgroup.procs"));
}

// A cpuset cgroup of `cpus` (cgroup v2, or v1 with its memory nodes): its cgroup.procs file, which the child
// joins; empty when it could not be made. *cgroup: the cgroup made, to remove later.
QByteArray makeCpusetCgroup(const QList<int> &cpus, QString *cgroup)
{
    static std::atomic<int> s_cpusetCounter{0};
    const QString parent = ProcessRunner::cpusetCgroupParent();
    const QString path = parent + QStringLiteral("/autocomp-%1-c%2").arg(::getpid()).arg(++s_cpusetCounter);
    QStringList cpuList;
    for (int c : cpus)
        cpuList << QString::number(c);
    QFile mems(parent + QStringLiteral("/cpuset.mems"));
    const QByteArray memsValue = mems.open(QIODevice::ReadOnly) ? mems.readAll().trimmed() : QByteArray("0");
    if (!QDir().mkdir(path))
        return {};
    *cgroup = path;
    const bool v1 = QFileInfo::exists(path + QStringLiteral("/cpuset.cpus"))
        && QFileInfo::exists(path + QStringLiteral("/tasks"));
    if (writeFile(path + QStringLiteral("/cpuset.cpus"), cpuList.join(QLatin1Char(',')).toLatin1())
        && (!v1 || writeFile(path + QStringLiteral("/cpuset.mems"), memsValue.isEmpty() ? QByteArray("0") : memsValue)))
        return QFile::encodeName(path + QStringLiteral("/cgroup.procs"));
    return {};
}

// The command's environment: an allow-list, never the caller's (API keys and tokens live there), with
// defaults for PATH, LANG, TMPDIR and HOME.
QProcessEnvironment commandEnvironment(const ProcessLimits &limits, const QString &workdir)
{
    QProcessEnvironment env;
    for (auto it = limits.environment.cbegin(); it != limits.environment.cend(); ++it)
        env.insert(it.key(), it.value());
    if (!env.contains(QStringLiteral("PATH")))
        env.insert(QStringLiteral("PATH"), QStringLiteral("/usr/local/bin:/usr/bin:/bin"));
    if (!env.contains(QStringLiteral("LANG")))
        env.insert(QStringLiteral("LANG"), QStringLiteral("C.UTF-8"));
    if (!env.contains(QStringLiteral("TMPDIR")))
        env.insert(QStringLiteral("TMPDIR"), QStringLiteral("/tmp"));
    if (!env.contains(QStringLiteral("HOME")))
        env.insert(QStringLiteral("HOME"), limits.writableDir.isEmpty() ? workdir : limits.writableDir);
    return env;
}

} // namespace

void ProcessRunner::start(const QString &name, const QStringList &command, const QString &workdir,
                          const ProcessLimits &limits)
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
    m_startFailed = false;
    m_sandboxed = limits.sandbox;
    m_pgid = 0;
    if (command.isEmpty()) {
        m_result.log = QStringLiteral("empty command");
        QMetaObject::invokeMethod(
            this, [this] { Q_EMIT finished(m_result); }, Qt::QueuedConnection);
        m_finished = true;
        return;
    }
    if (m_setupFd >= 0)
        ::close(m_setupFd);
    m_setupFd = -1;
    QStringList full = command;
    if (limits.sandbox) {
        // The sandbox shows only the system paths and the directories the limits name; the files a
        // command names itself (its program, its inputs: paths in backend.yaml, which the backend's
        // author wrote) are bound back read-only, a directory at a time.
        full = Sandbox::wrap(command, limits.writableDir, limits.readOnlyDirs, limits.sharePids, limits.gpu);
    }

    removeCgroup();
    QByteArray procsFile;
    rlim_t nproc = RLIM_INFINITY;
    if (limits.maxTasks > 0) {
        procsFile = makePidsCgroup(limits.maxTasks, &m_cgroup);
        if (procsFile.isEmpty() && ::getuid() != 0)
            nproc = rlim_t(processesOfThisUser()) + rlim_t(limits.maxTasks);
    }

    const rlim_t as = limits.gpu ? RLIM_INFINITY : rlim_t(limits.addressSpaceBytes);
    const rlim_t fsize = rlim_t(limits.fileSizeBytes);
    const rlim_t cpu = rlim_t(limits.cpuSeconds > 0 ? limits.cpuSeconds : limits.timeoutS + 5);
    cpu_set_t affinity;
    CPU_ZERO(&affinity);
    for (int c : limits.cpus)
        if (c >= 0 && c < CPU_SETSIZE)
            CPU_SET(c, &affinity);
    const bool pin = CPU_COUNT(&affinity) > 0;
    // A cpuset for the command's CPUs (benchmarks): the kernel keeps every thread there, whatever
    // affinity the command sets for itself.
    QByteArray cpusetProcs;
    if (limits.cpuset && pin && !cpusetCgroupParent().isEmpty())
        cpusetProcs = makeCpusetCgroup(limits.cpus, &m_cpusetCgroup);
    int passFds[16];
    const int passCount = int(qMin<qsizetype>(limits.passFds.size(), 16));
    for (int i = 0; i < passCount; ++i)
        passFds[i] = limits.passFds.at(i);
    // The child's word when it cannot apply the limits (it then exits without running the command):
    // a failure of the machinery, never the command's verdict.
    int setupPipe[2] = {-1, -1};
    if (::pipe2(setupPipe, O_CLOEXEC) == 0)
        m_setupFd = setupPipe[0];
    const int setupFd = setupPipe[1];
    m_process->setChildProcessModifier(
        [as, fsize, cpu, nproc, procsFile, cpusetProcs, affinity, pin, passFds, passCount, setupFd] {
            // Runs in the child between fork and exec: only async-signal-safe calls.
            ::setpgid(0, 0);
            // Every descriptor above 2 closes at exec (the run store, sockets, Qt's pipes), then the
            // channels are placed at 3, 4, ... (dup2 clears close-on-exec on the copies). Moved out of
            // the way first, so that placing one cannot overwrite another (nor the setup pipe).
            const int report = setupFd >= 0 ? ::fcntl(setupFd, F_DUPFD_CLOEXEC, 64) : -1;
            int moved[16];
            for (int i = 0; i < passCount; ++i)
                moved[i] = ::fcntl(passFds[i], F_DUPFD_CLOEXEC, 64);
            ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
            for (int i = 0; i < passCount; ++i)
                if (moved[i] < 0 || ::dup2(moved[i], 3 + i) < 0)
                    reportSetupFailure(report, "could not pass the judge's channels to the command");
            if (!cpusetProcs.isEmpty()) {
                const int fd = ::open(cpusetProcs.constData(), O_WRONLY | O_CLOEXEC);
                if (fd < 0 || ::write(fd, "0", 1) != 1)
                    reportSetupFailure(report, "could not join the command's cpuset cgroup");
                ::close(fd);
            }
            if (pin)
                ::sched_setaffinity(0, sizeof affinity, &affinity);
            if (!procsFile.isEmpty()) {
                // Join the command's pids cgroup; its descendants inherit the limit. Failure: abort the
                // child rather than run untrusted code without the limit.
                const int fd = ::open(procsFile.constData(), O_WRONLY | O_CLOEXEC);
                if (fd < 0 || ::write(fd, "0", 1) != 1)
                    reportSetupFailure(report, "could not join the command's pids cgroup (its task limit)");
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
    m_process->setProcessEnvironment(commandEnvironment(limits, workdir));
    m_process->setWorkingDirectory(workdir);
    m_clock.start();
    m_process->start(full.first(), full.mid(1));
    if (setupFd >= 0)
        ::close(setupFd); // the child has its copy
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
        const QStringList tids =
            QDir(QStringLiteral("/proc/%1/task").arg(pid)).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
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
    if (!m_cpusetCgroup.isEmpty()) {
        for (int attempt = 0; attempt < 200 && !QDir().rmdir(m_cpusetCgroup); ++attempt) {
            for (const qint64 pid : cgroupPids(m_cpusetCgroup))
                ::kill(pid_t(pid), SIGKILL);
            QThread::msleep(5);
        }
        m_cpusetCgroup.clear();
    }
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
    const QString cgroups =
        QStringList{m_cgroup, m_cpusetCgroup}.filter(QStringLiteral("/")).join(QStringLiteral(", "));
    removeCgroup();
    m_result.durationMs = double(m_clock.nsecsElapsed()) / 1e6;
    for (const int fd : std::as_const(m_channelFds))
        ::close(fd);
    m_channelFds.clear();
    QByteArray setupFailure;
    if (m_setupFd >= 0) {
        char buffer[256];
        const int flags = ::fcntl(m_setupFd, F_GETFL);
        ::fcntl(m_setupFd, F_SETFL, flags | O_NONBLOCK);
        for (ssize_t n; (n = ::read(m_setupFd, buffer, sizeof buffer)) > 0;)
            setupFailure.append(buffer, n);
        ::close(m_setupFd);
        m_setupFd = -1;
    }
    if (!setupFailure.isEmpty()) {
        m_result.setupFailed = true;
        m_result.exitCode = 126;
        m_result.log = QStringLiteral("the command was not run: %1 (%2)").arg(QString::fromUtf8(setupFailure), cgroups);
    } else if (m_result.exitCode != 127 || m_result.log.isEmpty()) {
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
    // The machine's failures before the command's own code ran are no verdict about what it was given:
    // its program could not be started, the sandbox could not set itself up (bwrap's own message, e.g. a
    // path it cannot bind), or a program it needs could not be found or loaded: exit status 127, as the
    // shell, the dynamic loader and the shipped tools' wrappers (gemmini_run.py) report it.
    if (!m_result.setupFailed && !m_result.timedOut && !m_cancelled) {
        if (m_startFailed) {
            m_result.setupFailed = true;
        } else if (m_sandboxed && m_result.exitCode == 1 && m_result.log.startsWith(QLatin1String("bwrap: "))) {
            m_result.setupFailed = true;
            m_result.log = QStringLiteral("the sandbox (bubblewrap) could not run the command: ") + m_result.log;
        } else if (m_result.exitCode == 127 && !m_result.crashed) {
            m_result.setupFailed = true;
            m_result.log = QStringLiteral(
                               "a program the step needs could not be found, started or loaded (exit status 127): ")
                + m_result.log;
        }
    }
    // The workers end with their judge; what they printed (a crash, a forbidden system call) is
    // part of the step's log, and a worker that flooded its output fails the step as one.
    for (ProcessRunner *worker : std::as_const(m_workers)) {
        const StepResult w = worker->stopAndCollect();
        m_result.outputFlooded = m_result.outputFlooded || w.outputFlooded;
        if (!w.log.isEmpty())
            m_result.log += QStringLiteral("\n--- %1 (the candidate's process%2) ---\n%3")
                                .arg(w.name,
                                     w.crashed ? QStringLiteral(", ended by a signal")
                                               : QStringLiteral(", exit status %1").arg(w.exitCode),
                                     w.log);
        worker->deleteLater();
    }
    m_workers.clear();
    const EvalRuntimeCpu::Pause handlers;
    Q_EMIT finished(m_result);
}

} // namespace autocomp
