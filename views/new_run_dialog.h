#pragma once

#include "model/repository.h"
#include "model/run_config.h"
#include "search/search_engine.h"

#include <QDialog>

#include <optional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;
class QTimer;

namespace autocomp {

class ExecutorEditor;

// Edits a run configuration (DESIGN.md §8) with live validation: the same checks the CLI runs
// (RunConfig::validate and prepareRun) are shown under the form, and Start stays disabled until they
// pass. Save YAML writes exactly what `autocomp run` reads.
class NewRunDialog : public QDialog
{
    Q_OBJECT
public:
    NewRunDialog(Repository repository, QString storePath, QWidget *parent = nullptr);

    void setConfig(const RunConfig &config);
    RunConfig config() const;
    // The resolved run; empty while the form is invalid.
    std::optional<RunSetup> setup() const { return m_setup; }
    QStringList errors() const { return m_errors; }
    // Re-validates now instead of after the short debounce.
    void validateNow();

    bool saveYaml(const QString &path, QString *error) const;
    bool loadYaml(const QString &path, QStringList *errors);

private:
    QWidget *createModelList(const QString &name, QListWidget **list, const QString &placeholder);
    void targetChanged();
    void scheduleValidation();
    void saveYamlClicked();
    void loadYamlClicked();
    void browseSchedule();

    Repository m_repository;
    QString m_storePath;
    RunConfig m_base; // keeps settings the form does not show (slack, early stop, ...)
    std::optional<RunSetup> m_setup;
    QStringList m_errors;
    QTimer *m_validateTimer;

    QComboBox *m_target;
    QLabel *m_targetState; // available or absent (and what is missing), the metric and its unit
    QComboBox *m_problem;
    QComboBox *m_agent;
    QListWidget *m_planModels = nullptr;
    QListWidget *m_codeModels = nullptr;
    QSpinBox *m_beamWidth;
    QSpinBox *m_plansPerParent;
    QSpinBox *m_codePerPlan;
    QSpinBox *m_iterations;
    QDoubleSpinBox *m_dropout;
    QSpinBox *m_fixAttempts;
    QCheckBox *m_editMode;
    QCheckBox *m_feedback;
    QSpinBox *m_translateIters;
    QSpinBox *m_seed;
    QLineEdit *m_schedule;
    QDoubleSpinBox *m_maxUsd;
    QSpinBox *m_maxCalls;
    QDoubleSpinBox *m_maxHours;
    ExecutorEditor *m_executor;
    QComboBox *m_sandbox;
    QCheckBox *m_profile;
    QLabel *m_errorsLabel;
    QPushButton *m_startButton;
};

} // namespace autocomp
