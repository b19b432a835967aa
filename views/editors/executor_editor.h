#pragma once

#include "model/run_config.h"

#include <QWidget>

class QComboBox;
class QGroupBox;
class QLineEdit;
class QSpinBox;
class QTableWidget;

namespace autocomp {

// The "where evaluations run" part of a run configuration (evaluation.executor, hosts, ssh, remote,
// slurm and the placement of the run's target): the fields of the chosen executor only, read back
// into an EvaluationConfig. What a field cannot hold as typed (a port that is not a number, a host
// row without a host) is listed by errors(), each naming the configuration key; the rest is checked
// by RunConfig::validate like a YAML file.
class ExecutorEditor : public QWidget
{
    Q_OBJECT
public:
    explicit ExecutorEditor(QWidget *parent = nullptr);

    // `target`: whose placement the form shows (the run's target).
    void setEvaluation(const EvaluationConfig &config, const QString &target);
    void setTarget(const QString &target);
    // Writes the form's values into `config` (other evaluation settings are left as they are).
    void apply(EvaluationConfig *config) const;
    QStringList errors() const;

Q_SIGNALS:
    void changed();

private:
    void executorChanged();
    void addHostRow(const RemoteHost &host);

    QComboBox *m_executor;
    QGroupBox *m_remoteGroup;
    QGroupBox *m_sshGroup;
    QGroupBox *m_slurmGroup;
    QTableWidget *m_hosts;
    QLineEdit *m_knownHosts;
    QLineEdit *m_identity;
    QSpinBox *m_connectTimeout;
    QLineEdit *m_remoteCommand;
    QLineEdit *m_remoteWorkdir;
    QSpinBox *m_retries;
    QComboBox *m_placement;
    QLineEdit *m_partition;
    QLineEdit *m_gres;
    QLineEdit *m_time;
    QLineEdit *m_mem;
    QSpinBox *m_slurmSlots;
    QSpinBox *m_cpus;
    QSpinBox *m_batch;
    QSpinBox *m_batchWait;
    QLineEdit *m_sharedDir;
    QString m_target;
    QMap<QString, QString> m_placements; // every target's, the shown one edited in place
};

} // namespace autocomp
