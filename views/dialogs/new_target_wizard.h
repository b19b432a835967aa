#pragma once

#include "agents/agent_builder.h"

#include <QWizard>

#include <functional>
#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;

namespace autocomp {

class LlmClient;
class RunStore;

// New Target from documents: pick folders, files (text, markdown, HTML, PDF) and web pages, a scope and a
// model; see the plan and its cost estimate (nothing is sent before Build); watch the build stage by stage,
// cancel it and build again (answers already received are reused from the store). The agent lands in the
// user's data dir; finishing opens it in the agent editor (agentBuilt).
class NewTargetWizard : public QWizard
{
    Q_OBJECT
public:
    enum Pages { SourcesPage, PlanPage, BuildPage };

    NewTargetWizard(RunStore *store, std::function<QString(const QString &)> keyLookup, QWidget *parent = nullptr);
    ~NewTargetWizard() override;

    // For tests and scripts: what the first page's fields would hold.
    void setSources(const QStringList &sources);
    QStringList sources() const;
    AgentBuildOptions options() const;
    AgentBuilder *builder() const { return m_builder.get(); }
    QString planText() const;

    // Starts (or, after a cancel, restarts) the build; the Build page's button does the same.
    void startBuild();
    void cancelBuild();

Q_SIGNALS:
    void planShown();
    void buildFinished(const QString &dir);
    void buildFailed(const QString &error);
    // The wizard was finished on a built agent.
    void agentBuilt(const QString &name);

protected:
    void initializePage(int id) override;
    bool validateCurrentPage() override;
    void cleanupPage(int id) override;

private:
    QWizardPage *createSourcesPage();
    QWizardPage *createPlanPage();
    QWizardPage *createBuildPage();
    void collectPlan();

    RunStore *m_store;
    std::unique_ptr<LlmClient> m_client;
    std::unique_ptr<AgentBuilder> m_builder;
    bool m_built = false;

    QLineEdit *m_name;
    QListWidget *m_sources;
    QLineEdit *m_url;
    QPlainTextEdit *m_scope;
    QComboBox *m_model;
    QLineEdit *m_target;
    QComboBox *m_scaffold;
    QLabel *m_sourcesError;
    QPlainTextEdit *m_plan;
    QLabel *m_planStatus;
    QLabel *m_stage;
    QProgressBar *m_progress;
    QLabel *m_usage;
    QPlainTextEdit *m_log;
    QPushButton *m_buildButton;
    QPushButton *m_cancelButton;
};

} // namespace autocomp
