#pragma once

#include "eval/remote_executor.h"

#include <QHash>
#include <QPointer>

class QTimer;
class QProcess;

namespace autocomp {

class SlurmAttempt;
class SlurmBatch;

// Evaluations as Slurm batch jobs (sbatch with partition, gres, cpus, time and memory) in a directory
// under slurm.shared_dir that the nodes see at the same path. A job evaluates one candidate or, with
// slurm.batch > 1, several of one target and problem (one `autocomp eval` each, slurm.cpus of them at
// once, each under its own time limit and writing its own result; one failing ends none of the others).
//
// Nothing is evaluated twice or lost across a kill -9: before sbatch, the job's directory
// (autocomp-batch-<batch key>) lists its candidates and a record per candidate
// (autocomp-cand-<candidate key>) names the job's directory and the candidate's place in it; the job
// id is written there as soon as sbatch answers. A resumed workbench asking for a candidate finds its
// record: a result already there is taken, a job still queued or running is watched again (found by
// its name when the id was never written), a job that never started is submitted afresh.
// State comes from squeue (one call per poll for all jobs); for a job that left the queue without
// every result, from sacct (accounting), sacct --completion (the job completion log, which needs no
// database) or scontrol. Timeouts, cancel, pause and stop scancel the job once no candidate in it is
// still wanted.
class SlurmExecutor : public RemoteExecutor
{
    Q_OBJECT
public:
    static std::unique_ptr<SlurmExecutor> create(const EvaluationConfig &config, QString *error);
    ~SlurmExecutor() override;

    int slotCount() const override { return m_config.slurmSlots; }
    int slotGroup(int slot) const override { return slot; }
    QString slotName(int slot) const override;
    RemoteAttempt *start(int slot, const RemoteTask &task) override;
    QList<RemoteAttempt *> startBatch(int slot, const QList<RemoteTask> &tasks) override;
    int batchLimit() const override { return m_config.slurmBatch; }
    int batchWaitMs() const override { return m_config.slurmBatchWaitMs; }
    QString name() const override { return QStringLiteral("slurm"); }

    const EvaluationConfig &config() const { return m_config; }
    QString sharedDir() const { return m_sharedDir; }
    // The job name of a batch key: how a resumed workbench finds a job whose id it never saw.
    static QString jobName(const QString &batchKey);
    // Ids of this user's jobs whose name is `name`, from squeue; empty with *error when squeue failed.
    static QList<qint64> jobsNamed(const QString &name, QString *error);
    // How a job that left the queue ended ("COMPLETED", "NODE_FAIL (reason ...)"), from sacct where
    // accounting runs, else sacct --completion (jobcomp), else scontrol; empty when none knows.
    static QString endedState(qint64 jobId);

    // For the batches: the target's data unpacked under the shared directory; empty with *error.
    QString dataDir(const RemoteTask &task, QString *error);
    void watch(SlurmBatch *batch);
    void forget(SlurmBatch *batch);

private:
    SlurmExecutor(const EvaluationConfig &config, QString sharedDir);
    void dispatch(const QList<QPointer<SlurmAttempt>> &attempts);
    void poll();

    EvaluationConfig m_config;
    QString m_sharedDir;
    QTimer *m_timer;
    QProcess *m_squeue = nullptr;
    QHash<QString, SlurmBatch *> m_batches; // by batch key
    QList<QPointer<SlurmBatch>> m_watched;
};

} // namespace autocomp
