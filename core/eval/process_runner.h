#pragma once

#include "platform/cpu_account.h"
#include "model/eval_result.h"

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QMap>
#include <QStringList>

class QTimer;

namespace autocomp {

struct ProcessLimits
{
    int timeoutS = 60;
    qint64 maxOutputBytes = 1 << 20; // kept; the rest is counted and marked as truncated
    qint64 floodBytes = 64LL << 20; // past this much output in all, the command is killed (0: never)
    qint64 addressSpaceBytes = 8LL << 30;
    qint64 fileSizeBytes = 1LL << 30;
    int cpuSeconds = 0; // 0: timeout + 5 s
    bool sandbox = false; // run under bubblewrap: no network, minimal read-only file system, private /tmp
    QString writableDir; // the only writable path inside the sandbox (none when empty)
    QStringList readOnlyDirs; // made visible (read-only) inside the sandbox
    // Judging steps see the host's processes (to watch their workers through /proc); candidate
    // processes get a pid namespace of their own, so they cannot see or signal anything else.
    bool sharePids = false;
    // The environment: nothing of the caller's but these (PATH and LANG are added when absent,
    // HOME is the writable directory); never a secret.
    QMap<QString, QString> environment;
    QList<int> passFds; // become descriptors 3, 4, ... of the command; all others above 2 are closed
    // Tasks (processes and threads) the command may have at once: a pids cgroup where one can be
    // made (root ignores RLIMIT_NPROC), else RLIMIT_NPROC for unprivileged users. 0: unlimited.
    int maxTasks = 512;
    QList<int> cpus; // CPUs of the command (a cpuset cgroup where one can be made, else affinity)
    bool cpuset = false; // put the command in a cpuset cgroup of `cpus` when possible
    // The command may use the GPU: the NVIDIA device files are bound into the sandbox and the
    // address-space limit is off (CUDA reserves far more address space than it uses: cuInit fails with
    // CUDA_ERROR_OUT_OF_MEMORY under the 8 GiB limit, measured on an H100). The other limits stay.
    bool gpu = false;
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
    // A judging command and the worker processes it drives: each worker gets a shared-memory
    // channel as its descriptor 3; the judge gets them all as 3, 4, ... and, in its command,
    // {channels} becomes "3,4" and {worker_pids} the workers' process ids. The workers end with
    // the judge; their output is appended to the judge's log.
    void startJudged(const QString &name, const QStringList &judge, const QList<QStringList> &workers,
                     const QString &workdir, const ProcessLimits &judgeLimits, const ProcessLimits &workerLimits);
    void cancel();
    // Moves the running command (every process of it, where its cgroup lists them) to `cpus`.
    void setCpus(const QList<int> &cpus);
    bool isRunning() const;

    static bool sandboxAvailable();
    static QStringList sandboxPrefix(const QString &writableDir, const QStringList &readOnlyDirs = {},
                                     bool sharePids = false, bool gpu = false);
    // What a sandboxed command sees of the host: the toolchain under /usr (with the merged-/usr links),
    // the loader's cache, /etc/alternatives (cc, c++), /dev and /proc; then the directories named.
    static QStringList sandboxSystemPaths();
    // The pids cgroup under which runners make one cgroup per command; empty when none can be made.
    static QString pidsCgroupParent();
    // The cpuset cgroup under which benchmark commands get a cpuset of their CPUs; empty when none.
    static QString cpusetCgroupParent();
    // The first of `candidates` that is a cgroup directory of `controller` where this process can
    // make a child cgroup (pids: and set its limit); its stale autocomp cgroups are removed.
    static QString usableCgroupParent(const QStringList &candidates, const QByteArray &controller);
    // Removes the autocomp cgroups under `parent` (runners' and probes') whose process is gone.
    static void removeStaleCgroups(const QString &parent);
    qint64 processId() const;
    // Kills the command now and waits for it: its result (for workers that end with their judge).
    StepResult stopAndCollect();

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
    QString m_cpusetCgroup;
    QList<ProcessRunner *> m_workers;
    QList<int> m_channelFds;
    int m_setupFd = -1; // read end of the child's setup-failure pipe, while a command runs
    bool m_cancelled = false;
    bool m_finished = false;
    bool m_startFailed = false; // QProcess could not start the program
    bool m_sandboxed = false;
};

} // namespace autocomp
