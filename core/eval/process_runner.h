#pragma once

#include "model/cpu_account.h"
#include "model/eval_result.h"

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QStringList>

class QTimer;

namespace autocomp {

struct ProcessLimits {
    int timeoutS = 60;
    qint64 maxOutputBytes = 1 << 20;     // kept; the rest is counted and marked as truncated
    qint64 floodBytes = 64LL << 20;      // past this much output in all, the command is killed (0: never)
    qint64 addressSpaceBytes = 8LL << 30;
    qint64 fileSizeBytes = 1LL << 30;
    int cpuSeconds = 0;                  // 0: timeout + 5 s
    bool sandbox = false;                // run under bubblewrap: no network, read-only root, private /tmp
    QString writableDir;                 // the only writable path inside the sandbox
    QStringList readOnlyDirs;            // made visible inside the sandbox even when under /tmp
    // Tasks (processes and threads) the command may have at once: a pids cgroup where one can be
    // made (root ignores RLIMIT_NPROC), else RLIMIT_NPROC for unprivileged users. 0: unlimited.
    int maxTasks = 512;
    QList<int> cpus;                     // CPU affinity of the command; empty: inherited
};

// CPU time the evaluation runtime spends in this process: work directories, starting, limiting and
// reaping step processes (fork, rlimits, cgroups, sandbox), reading their results; not the search
// engine's handlers its signals call into.
struct EvalRuntimeTag;
using EvalRuntimeCpu = CpuAccount<EvalRuntimeTag>;

// Runs one command (argument list, no shell) in its own process group with rlimits, a watchdog and
// an output cap. The whole group is killed on timeout, on cancel and after the command exits, so no
// child of untrusted code survives its step.
class ProcessRunner : public QObject
{
    Q_OBJECT
public:
    explicit ProcessRunner(QObject *parent = nullptr);
    ~ProcessRunner() override;

    void start(const QString &name, const QStringList &command, const QString &workdir, const ProcessLimits &limits);
    void cancel();
    // Moves the running command (every process of it, where its cgroup lists them) to `cpus`.
    void setCpus(const QList<int> &cpus);
    bool isRunning() const;

    static bool sandboxAvailable();
    static QStringList sandboxPrefix(const QString &writableDir, const QStringList &readOnlyDirs = {});
    // The pids cgroup under which runners make one cgroup per command; empty when none can be made.
    static QString pidsCgroupParent();

Q_SIGNALS:
    void finished(const autocomp::StepResult &result);

private:
    void readOutput();
    void done();
    void killGroup();
    void removeCgroup();

    QProcess *m_process;
    QTimer *m_watchdog;
    QElapsedTimer m_clock;
    StepResult m_result;
    QByteArray m_output;
    qint64 m_dropped = 0;
    qint64 m_maxOutput = 0;
    qint64 m_floodBytes = 0;
    qint64 m_pgid = 0;
    QString m_cgroup;
    bool m_cancelled = false;
    bool m_finished = false;
};

} // namespace autocomp
