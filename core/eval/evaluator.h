#pragma once

#include "model/candidate.h"
#include "model/eval_result.h"
#include "model/problem.h"
#include "model/run_config.h"
#include "model/target.h"

#include <QHash>
#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTemporaryDir>

#include <memory>

namespace autocomp {

class ProcessRunner;
class Evaluator;
class RemoteAttempt;
struct RemoteTask;
class RemoteExecutor;

// How one evaluation is asked for beyond its code.
struct EvalRequest
{
    // Names the candidate across restarts (e.g. store, run and candidate): a remote executor finds the
    // job of an earlier, killed process by it instead of starting another. Empty: a fresh name.
    QString key;
    // The far side of a remote evaluation: start at this step, with the work directory holding the
    // files of this directory (what the steps before it made on the other machine).
    QString fromStep;
    QString seedDir;
};

// One candidate's evaluation: the target's steps in order, each waiting for a slot in the evaluator.
class EvalJob : public QObject
{
    Q_OBJECT
public:
    ~EvalJob() override;
    const EvalResult &result() const { return m_result; }
    QString workdir() const;
    void cancel();

Q_SIGNALS:
    void statusChanged(autocomp::CandidateStatus status);
    // A step begins (or its output is reused from the cache): for progress lines.
    void stepStarted(const QString &step, const QString &note);
    void finished(const autocomp::EvalResult &result);

private:
    friend class Evaluator;
    EvalJob(Evaluator *evaluator, Target target, Problem problem, QString code, QString baselineCode);

    const TargetStep &currentStep() const { return m_target.steps.at(m_stepIndex); }
    // `cpus`: where the step's command runs (a benchmark's workers: its reserved CPU, as a cpuset);
    // `judgeCpus`: where a judge that drives workers runs (off the benchmark's CPU).
    void runCurrentStep(bool sandbox, const QList<int> &cpus = {}, const QList<int> &judgeCpus = {});
    // The steps from m_remoteFrom on, as one remote evaluation on the executor's slot.
    bool inRemotePhase() const { return m_remoteFrom < m_target.steps.size() && m_stepIndex >= m_remoteFrom; }
    RemoteTask remoteTask() const;
    void runRemote(int slot, RemoteAttempt *attempt);
    void remoteFinished(int slot, const QJsonObject &result, const QString &failure);
    // Moves past steps that do not apply (only_if_exists names no file, e.g. no baseline).
    void skipInapplicableSteps();
    QString judgedir() const;
    void stepFinished(const StepResult &step);
    void complete();
    // requireMetric: a correct result must carry the target's metric (not when the timed steps were left out).
    void parseResultFile(bool requireMetric = true);
    // The job's own placeholders: {candidate} {workdir} {judgedir} {baseline} {seed}.
    QHash<QString, QString> placeholders() const;

    Evaluator *m_evaluator;
    Target m_target;
    Problem m_problem;
    QString m_code;
    QString m_baselineCode;
    QString m_candidateFile;
    QString m_baselineFile;
    QString m_seed;
    std::unique_ptr<QTemporaryDir> m_dir;
    int m_stepIndex = 0;
    ProcessRunner *m_runner = nullptr;
    EvalResult m_result;
    bool m_cancelled = false;
    bool m_done = false;
    bool m_holdsBench = false;
    QStringList m_optionalNotes; // failures of optional steps, added to the feedback
    // Why the steps that need the hardware were left out (hardware_check failed, or compile_only):
    // the evaluation ends after the others with the status no_hardware.
    QString m_noHardware;
    bool m_setupRetried = false; // a step whose limits could not be applied was tried again once
    // The cache entry a reusable step's output is stored in after it succeeds (empty: nothing to store).
    QString m_reuseEntry;
    // Copies a reusable step's output from the cache instead of running it; false when there is none.
    bool reuseCachedOutput(const TargetStep &step);
    void storeReusableOutput(const TargetStep &step);
    int m_benchCpu = -1;
    QString m_key;
    qsizetype m_remoteFrom = 0; // steps from here on run remotely; steps.size(): none
    RemoteAttempt *m_remote = nullptr;
    QElapsedTimer m_remoteSince; // since it waits for a remote slot
    QList<int> m_triedGroups; // machines a remote attempt failed on: a retry goes elsewhere first
    QStringList m_remoteFailures;
    bool m_profile = false;
};

// Runs evaluations of any number of candidates: steps marked parallel share `parallel` slots; an
// exclusive (benchmark) step waits for a bench slot and for the parallel steps to drain, and no new
// parallel step starts while a benchmark waits or runs, so timings are not disturbed by our own work.
class Evaluator : public QObject
{
    Q_OBJECT
public:
    explicit Evaluator(const EvaluationConfig &config, QObject *parent = nullptr);
    ~Evaluator() override;

    // The job is a child of the evaluator; it deletes itself after finished().
    // `baselineCode`: timed alternately with the candidate in the same window (the paired ratio);
    // empty: the candidate is timed alone.
    // `options`: the run's own evaluation settings (profile, keep_workdirs) where several runs share this
    // evaluator's slots; by default the evaluator's.
    EvalJob *evaluate(const Target &target, const Problem &problem, const QString &code,
                      const QString &baselineCode = {}, const EvaluationConfig *options = nullptr,
                      const EvalRequest &request = {});
    void cancelAll();
    // Where the evaluation's steps run with this evaluator's executor: "local", "remote" (all of them
    // on the executor's hosts) or "compile_local" (up to the last compile step here, the rest there).
    QString placement(const Target &target) const;
    // The remote executor, null for executor: local.
    RemoteExecutor *remoteExecutor() const { return m_remote.get(); }
    // Benchmark steps take a lock of this machine (in the cache directory) as well as a bench slot, so
    // that evaluations of other processes (the far side of remote evaluations) never time at once.
    void setNodeBenchLock(bool on) { m_nodeBenchLock = on; }

    int running() const { return m_runningParallel + m_runningExclusive; }
    int waiting() const { return int(m_waiting.size()); }
    bool sandboxed() const { return m_sandbox; }
    // Why the sandbox is off, when it is (for logs); empty when it is on.
    QString sandboxNote() const { return m_sandboxNote; }
    // Non-empty when `sandbox: required` and the sandbox cannot run.
    QString configurationError() const { return m_configError; }

    // Where setup steps keep per-machine measurements ($XDG_CACHE_HOME/autocomp-workbench); created.
    static QString cacheDir();
    // "hostname-cpu-model" with only [A-Za-z0-9._-], naming per-machine cache files.
    static QString machineId();
    // Replaces {backend_dir} {problem_dir} {problem} {reference} {shapes} {bench_shape} {tolerance}
    // {allow_libraries} {cache_dir} {machine} {target} {sources_hash} and the extra names given (candidate, workdir,
    // seed). The environment of every step: the target's `env:` and nothing of this process's.
    static QMap<QString, QString> stepEnvironment(const Target &target, const Problem &problem);
    // What a sandboxed step reads besides the system and the paths its command names: the cache, the
    // target's folder and its sandbox_read_only paths; setup and judging steps (`trusted`) also the
    // problem's whole folder. Candidate steps never see the problem's folder, which holds the trusted
    // reference (they see only what their command names: the candidate's file, the cached worker).
    static QStringList sandboxReadOnly(const Target &target, const Problem &problem, bool trusted);
    static QString expand(QString arg, const Target &target, const Problem &problem,
                          const QHash<QString, QString> &extra);
    // Every built-in placeholder of a step's arguments, without braces ("env:NAME" for {env:NAME});
    // a target's settings add their own. backends/README.md documents each.
    static QStringList placeholderNames();
    // A step's argument list: each argument expanded, and an argument that is exactly "{libraries}"
    // replaced by -l<name> for each library the problem allows (none when it allows none).
    // The target as this configuration runs it: steps whose `option` is off are left out.
    static Target withOptions(Target target, const EvaluationConfig &config);
    static QStringList expandArgs(const QStringList &run, const Target &target, const Problem &problem,
                                  const QHash<QString, QString> &extra);
    // Hash of the files a target's build reads (its directory, the problem's, the -I directories and
    // the sandbox_read_only paths inside the folder of the backends, such as the judge kit in
    // backends/common), the {sources_hash} placeholder; with a problem without a directory, the backend's alone
    // ({backend_hash}: what every problem's judge shares).
    static QString sourcesHash(const Target &target, const Problem &problem);

Q_SIGNALS:
    void logMessage(const QString &message);

private:
    friend class EvalJob;
    void enqueue(EvalJob *job);
    void release(EvalJob *job, bool exclusive);
    void schedule();
    void scheduleRemote();
    // A slot for the job's next remote attempt, -1 while none suits it.
    int remoteSlotFor(const EvalJob *job) const;
    bool acquireNodeBench();
    void releaseNodeBench();
    void runSetupStep(const QString &key);

    // Setup of one (target, problem) pair: its steps run one after another before any candidate.
    struct Setup
    {
        Target target;
        Problem problem;
        int index = 0;
        bool done = false;
        QString failure;
        QList<QPointer<EvalJob>> waiting;
    };
    QHash<QString, Setup> m_setups;

    EvaluationConfig m_config;
    int m_parallelSlots;
    int m_benchSlots;
    // With more CPUs than bench slots, a benchmark gets a CPU of its own: steps already running are
    // moved off it when it starts and new ones start on the others while it runs; with no benchmark
    // running, compiles and tests use every CPU.
    bool m_reserveCpus = false;
    QList<int> m_freeBenchCpus;
    QList<int> m_parallelCpus;
    int m_runningParallel = 0;
    int m_runningExclusive = 0;
    bool m_sandbox = false;
    QString m_sandboxNote;
    QString m_configError;
    QList<QPointer<EvalJob>> m_waiting;
    std::unique_ptr<RemoteExecutor> m_remote;
    QList<int> m_slotUse; // remote attempts under way per slot (several share a slot in a batch)
    bool m_remoteBatchTimer = false;
    QList<QPointer<EvalJob>> m_remoteWaiting;
    bool m_nodeBenchLock = false;
    int m_nodeLockFd = -1;
    bool m_nodeLockRetry = false;
};

} // namespace autocomp
