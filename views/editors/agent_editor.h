#pragma once

#include "model/agent.h"
#include "model/candidate.h"
#include "catalog/repository.h"
#include "model/run_config.h"

#include <QDialog>

#include <optional>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;
class QTableView;
class QTimer;

namespace autocomp {

class MenuModel;

// Edits an agent's prompt material (DESIGN.md §4). Edits are saved as a user copy under
// Repository::userDataDir()/agents/<name>/, in the shipped file formats, which shadows the shipped
// agent; "Reset to Shipped" deletes the copy. Menu items switched off are left out of
// optimization_menu.yaml and kept in optimization_menu.disabled.yaml.
class AgentEditor : public QDialog
{
    Q_OBJECT
public:
    // agentCombo's item data: the loader's message for an agent that fails to load (empty: it loads).
    enum Roles { BrokenRole = Qt::UserRole + 1 };

    explicit AgentEditor(Repository repository, QWidget *parent = nullptr);

    bool loadAgent(const QString &name, QString *error);
    QString agentName() const { return m_name; }
    // True when the loaded agent comes from the user's copy rather than the shipped data.
    bool isUserCopy() const;
    MenuModel *menuModel() const { return m_menu; }
    QStringList validationErrors() const { return m_errors; }
    void validateNow();

    bool save(QString *error);
    bool resetToShipped(QString *error);

    // The candidate (and the run settings) "Preview Plan Prompt" uses; without one, the starting code of
    // the first problem of the agent's target at iteration 1 with default settings.
    void setPreviewContext(const Candidate &parent, const RunConfig &config);
    // The plan prompt the engine would send for the context's candidate as parent (iteration = its
    // iteration + 1, first parent, first plan), with the menu as edited here after the engine's dropout draw.
    std::optional<QString> previewPlanPrompt(QString *error) const;

    static QString userAgentDir(const QString &name);

    // Opens the plan prompt preview of previewPlanPrompt() in a dialog.
    void showPreview();
    // The store whose runs of the loaded agent give each menu item its record (MenuModel::RecordColumn).
    void setStorePath(const QString &path);

Q_SIGNALS:
    void agentSaved(const QString &name);
    // The menu's records were read from the store.
    void recordsUpdated();

private:
    QWidget *createMenuPage();
    void agentSelected(const QString &name);
    void scheduleValidation();
    void markModified();
    // Writes the edited agent into `dir` in the shipped formats.
    bool writeAgent(const QString &dir, QString *error) const;
    // The agent exactly as the engine would load it from the edited files.
    std::optional<Agent> buildAgent(QString *error) const;
    void updateSourceLabel();
    void refreshRecords();

    Repository m_repository;
    QString m_name;
    QString m_sourceDir; // where the loaded agent came from
    QString m_storePath;
    quint64 m_recordsGeneration = 0;
    std::optional<Candidate> m_previewParent;
    std::optional<RunConfig> m_previewConfig;
    QStringList m_errors;
    bool m_loading = false;
    bool m_modified = false;

    QComboBox *m_agentCombo;
    QLabel *m_sourceLabel;
    QTabWidget *m_tabs;
    QPlainTextEdit *m_architecture;
    QPlainTextEdit *m_isa;
    MenuModel *m_menu;
    QTableView *m_menuView;
    QPlainTextEdit *m_rulesGeneral;
    QPlainTextEdit *m_rulesPlanning;
    QPlainTextEdit *m_rulesCoding;
    QPlainTextEdit *m_examples;
    QLabel *m_validation;
    QPushButton *m_saveButton;
    QPushButton *m_resetButton;
    QTimer *m_validateTimer;
};

} // namespace autocomp
