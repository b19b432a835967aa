#pragma once

#include "eval/remote_executor.h"

#include <QHash>
#include <QPointer>

class QTimer;
class QProcess;

namespace autocomp {

class SlurmAttempt;

// Evaluations as Slurm batch jobs (sbatch with partition, gres, time and memory), one candidate per
// job, in a directory under slurm.shared_dir that the nodes see at the same path. The job's directory
// and name follow from the task's key, and its id is written there before anything else happens, so
// a workbench killed with -9 and resumed finds each job again: one still queued or running is
// re-attached, one that ended left its result there; nothing is submitted twice for one key.
// State comes from squeue (one call per poll for all jobs) and, for a job that left the queue without
// a result, from scontrol; cancel, timeout, pause and stop scancel the job.
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
    QString name() const override { return QStringLiteral("slurm"); }

    const EvaluationConfig &config() const { return m_config; }
    QString sharedDir() const { return m_sharedDir; }
    // The job name of a key: how a resumed workbench finds a job whose id it never saw.
    static QString jobName(const QString &key);
    // Ids of this user's jobs whose name starts with `prefix`, from squeue (-1 on failure).
    static QList<qint64> jobsNamed(const QString &prefix, QString *error);
    void watch(SlurmAttempt *attempt);

private:
    SlurmExecutor(const EvaluationConfig &config, QString sharedDir);
    void poll();

    EvaluationConfig m_config;
    QString m_sharedDir;
    QTimer *m_timer;
    QProcess *m_squeue = nullptr;
    QList<QPointer<SlurmAttempt>> m_watched;
};

} // namespace autocomp
