#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>

namespace autocomp::test {

// A real one-node Slurm cluster for tests (munged, slurmctld, slurmd from Debian's slurm-wlm), all in
// a temporary directory: its own munge key and socket, free ports, state and spool there, SlurmUser
// root, proctrack/linuxproc, task/none, and a job completion log. start() sets SLURM_CONF in this
// process, so sbatch/squeue/scancel (and the processes it starts) talk to it.
class SlurmCluster
{
public:
    SlurmCluster();
    ~SlurmCluster();
    bool start(QString *why);
    static QString absenceReason();

    QString dir() const { return m_dir.path(); }
    // The jobs in the queue, one "ID STATE NAME" line each (empty: none).
    QStringList queue() const;
    // The completion log: one line per job that ended (JobId=... Name=... JobState=...).
    QStringList completedJobs() const;

private:
    QTemporaryDir m_dir;
    std::unique_ptr<QProcess> m_munged;
    std::unique_ptr<QProcess> m_slurmctld;
    std::unique_ptr<QProcess> m_slurmd;
};

} // namespace autocomp::test
