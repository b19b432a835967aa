#pragma once

#include "model/eval_result.h"
#include "model/problem.h"
#include "model/run_config.h"
#include "model/target.h"

#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

namespace autocomp {

// What one remote evaluation needs: the remote side runs `autocomp eval` on the candidate's files,
// with the target and problem sent along, so its trusted judge steps give the verdict as they would here.
struct RemoteTask
{
    QString key; // the same for every attempt at one candidate (a resumed run finds its jobs by it)
    Target target;
    Problem problem;
    QString workdir; // local: the candidate's files (and whatever local steps made), all sent
    QString candidateName; // file names inside workdir
    QString baselineName; // empty: no baseline
    QString fromStep; // empty: every step runs remotely; else the first remote step
    bool profile = false;
    int timeoutS = 600; // past it without an answer, the attempt is a remote failure
};

// One attempt at a task on one slot: ends with a result of the remote evaluator, or a failure of the
// remote machinery (host down, job lost) that says nothing about the candidate.
class RemoteAttempt : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;
    // Kills the remote work (the process on the host, the Slurm job); finished() follows with a failure.
    virtual void cancel() = 0;

Q_SIGNALS:
    // `result`: `autocomp eval --json` of the far side (valid JSON with a status) or empty with `failure`.
    void finished(const QJsonObject &result, const QString &failure);
};

// Where remote attempts run: a set of slots (an SSH host's slots, a number of Slurm jobs at once).
class RemoteExecutor : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;
    // null and *error for an executor that cannot run with this configuration.
    static std::unique_ptr<RemoteExecutor> create(const EvaluationConfig &config, QString *error);

    virtual int slotCount() const = 0;
    // Slots of one group share a machine: a retry prefers a slot of another group.
    virtual int slotGroup(int slot) const = 0;
    virtual QString slotName(int slot) const = 0;
    // The attempt is a child of the executor; it deletes itself after finished().
    virtual RemoteAttempt *start(int slot, const RemoteTask &task) = 0;
    // Candidates of one target and problem an executor takes on one slot at once (one Slurm job for
    // several), and how long a free slot waits for that many; 1: one candidate per slot.
    virtual int batchLimit() const { return 1; }
    virtual int batchWaitMs() const { return 0; }
    // Several tasks on one slot, an attempt each (in their order); each attempt ends on its own.
    virtual QList<RemoteAttempt *> startBatch(int slot, const QList<RemoteTask> &tasks);
    // What an attempt costs beyond the evaluation, as the executor's name for logs ("ssh", "slurm").
    virtual QString name() const = 0;

    // The command line of the far side's evaluation, its work directory being `remoteDir`.
    static QStringList remoteEvalCommand(const EvaluationConfig &config, const RemoteTask &task,
                                         const QString &remoteDir);
    // The target's and the problem's files as a data directory (backends/<target>, sols/<target>/<problem>),
    // and a hash naming it; empty with *error when the layout is not that of a data directory.
    static QByteArray dataArchive(const RemoteTask &task, QString *hash, QString *error);
    static QString shellQuote(const QString &word);
    // The remote result as an EvalResult, checked as strictly as a local result.json; a failure of the
    // remote machinery (no valid answer) is not a verdict: empty status and *error.
    static EvalResult resultFromJson(const QJsonObject &o, const QString &metric, QString *error);
};

} // namespace autocomp
