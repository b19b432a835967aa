#pragma once

#include "catalog/repository.h"
#include "llm/model_spec.h"
#include "model/run_config.h"
#include "search/search_engine.h"
#include "secrets/secret_store.h"

#include <QDialog>
#include <QHash>

#include <optional>

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QLabel;
class QLayout;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;
class QTimer;

namespace autocomp {

class ExecutorEditor;

// Edits a run configuration (DESIGN.md §8). The same checks the CLI runs (RunConfig::validate and
// prepareRun) run as the form changes, but what is wrong is shown only once the user tries to start,
// next to the group concerned: a first look at the form is not a wall of errors. A model picker shows
// each provider's key state (keychain, environment variable, missing, or a local endpoint that needs
// none); Start stays disabled while a chosen model has no key, with the reason in its tooltip. An
// estimate of candidates and LLM calls follows the search settings. Save YAML writes exactly what
// `autocomp run` reads.
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

    // The model string the picker composes (provider and model name).
    QString pickedModel() const;
    // Why Start is disabled (a chosen model without a key); empty when it is not.
    QString keyProblem() const { return m_keyProblem; }

    bool saveYaml(const QString &path, QString *error) const;
    bool loadYaml(const QString &path, QStringList *errors);

private:
    // The constructor's parts, in this order: the fields, the form that lays them out, the buttons, the signals
    // (new_run_dialog_form.cpp).
    void createTargetFields();
    QLayout *createSearchFields();
    void createLimitFields();
    QWidget *buildForm(QLayout *scheduleRow);
    QDialogButtonBox *createButtons();
    void connectValidation();
    QWidget *createModelList(const QString &name, QListWidget **list, const QString &placeholder);
    void targetChanged();
    void scheduleValidation();
    void saveYamlClicked();
    void loadYamlClicked();
    void browseSchedule();
    void startClicked();
    // Each error next to its group, once the user has tried to start.
    void showErrors();
    // The picker's key states, the chosen models' key lines and Start's state.
    void updateKeyState();
    void updateEstimate();
    void fillModelNames();
    QString providerKeyState(const QString &provider, bool *missing) const;
    QString modelKeyState(const ModelSpec &spec, bool *missing) const;

    Repository m_repository;
    QString m_storePath;
    RunConfig m_base; // keeps settings the form does not show (slack, early stop, ...)
    std::optional<RunSetup> m_setup;
    QStringList m_errors;
    QTimer *m_validateTimer;
    SecretStore *m_secrets;
    QHash<QString, KeyStatus> m_stored; // the keychain's answer per provider
    bool m_attempted = false; // Start was pressed: errors are shown
    QString m_keyProblem;

    QComboBox *m_target;
    QLabel *m_targetState; // available or absent (and what is missing), the metric and its unit
    QComboBox *m_problem;
    QComboBox *m_agent;
    QComboBox *m_modelProvider;
    QComboBox *m_modelName;
    QLabel *m_modelKeys; // each chosen model's key state
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
    // Autocomp's newer search options (search.skip_planning, menu_strategy, example_rate, translate_score,
    // translate_perf_threshold).
    QCheckBox *m_skipPlanning;
    QCheckBox *m_oneShotMenu;
    QDoubleSpinBox *m_exampleRate; // 0: off (every example at 0.25, no model asked)
    QCheckBox *m_translateScore;
    QDoubleSpinBox *m_translatePerf;
    QSpinBox *m_seed;
    QLineEdit *m_schedule;
    QDoubleSpinBox *m_maxUsd;
    QSpinBox *m_maxCalls;
    QDoubleSpinBox *m_maxHours;
    ExecutorEditor *m_executor;
    QComboBox *m_sandbox;
    QCheckBox *m_profile;
    QLabel *m_estimate;
    QLabel *m_whatErrors;
    QLabel *m_modelErrors;
    QLabel *m_searchErrors;
    QLabel *m_limitsErrors;
    QLabel *m_executorErrors;
    QLabel *m_errorsLabel; // what belongs to no group: a YAML file that cannot be read or written
    QPushButton *m_startButton;
};

} // namespace autocomp
