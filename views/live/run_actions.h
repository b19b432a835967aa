#pragma once

#include "dialogs/human_input_dialog.h"
#include "model/candidate.h"
#include "model/run_info.h"
#include "model/store_changes.h"

#include <QObject>
#include <QHash>
#include <QPointer>

class QAction;
class QMenu;
class QSystemTrayIcon;

namespace autocomp {

class AgentEditor;
class NewTargetWizard;
class EngineHost;
class MainWindow;
class NewRunDialog;
class RunController;
class RunStatusWidget;
class Settings;

// Run control for the main window: the Run menu and toolbar (start, pause, resume, stop), the live
// status bar widget, the human-in-the-loop actions on candidates, navigation shortcuts, the agent editor
// and the settings, and a notification when a run ends. The engines it starts feed the window's ShownRun
// directly (their candidates and beam); their runs' rows reach the window through updateRunRow(). Uses
// MainWindow's public API only.
class RunActions : public QObject
{
    Q_OBJECT
public:
    explicit RunActions(MainWindow *window);

    // The controller of the shown run when this window drives it, else the one started last.
    RunController *controller() const;
    RunController *controllerFor(qint64 runId) const;
    // Whether this window drives run `runId` (running or paused here).
    bool isDriving(qint64 runId) const;
    int activeRuns() const;
    Settings *settings() const { return m_settings; }
    QAction *startAction() const { return m_start; }
    QAction *pauseAction() const { return m_pause; }
    QAction *resumeAction() const { return m_resume; }
    QAction *stopAction() const { return m_stop; }
    QAction *humanPlanAction() const { return m_humanPlan; }
    QAction *humanCodeAction() const { return m_humanCode; }
    QAction *agentEditorAction() const { return m_agentEditor; }
    QAction *settingsAction() const { return m_settingsAction; }

    // Opens the New Run dialog (window-modal, returns at once); the run starts when it is accepted.
    NewRunDialog *showNewRunDialog();
    AgentEditor *showAgentEditor();
    // Tools > New Target from Documents: the agent builder's wizard; a built agent opens in the editor.
    NewTargetWizard *showNewTargetWizard();
    HumanInputDialog *showHumanDialog(HumanInputDialog::Kind kind);
    // Stops the active runs (they stay resumable) before the window closes.
    void shutdown();

private:
    RunController *addController();
    void createActions();
    void updateActions();
    void resumeClicked();
    // Drives `run` from this window (a run nobody drives: paused, stopped, interrupted).
    void resumeHere(const RunInfo &run);
    // Another live process holds the run's lease.
    bool drivenElsewhere(qint64 runId) const;
    // Another live process drives the run and takes plans and edits from this window through the store.
    bool handsOff(qint64 runId) const;
    // Hands a plan or edited code to the process that drives the shown run; its outcome arrives through the follower.
    void handToDriver(HumanInputDialog::Kind kind, qint64 parentId, const QString &text);
    // A request this window sent was taken or refused (or its driver ended first).
    void requestSettled(const RunRequest &request);
    // Asks the process driving `runId` to pause, resume or stop it, through the store.
    void requestOfDriver(qint64 runId, const QString &request);
    // Records a paused or interrupted run nobody drives as stopped.
    void stopUndriven(qint64 runId);
    void storeChanged(const StoreChanges &changes);
    void updateStatusWidget();
    // Why "Write a plan here" and "Edit code and evaluate" are not offered on the shown run.
    QString humanRefusal() const;
    void runStarted(qint64 runId);
    void refreshShownRun();
    void runFinished(const RunInfo &run);
    void notify(const QString &title, const QString &message, bool failure);
    void candidateContextMenu(const QPoint &pos);
    void showCandidateMenu(const QPoint &globalPos);
    // What Write a Plan shows under `parent`: its figures, the agent's menu with each item's record in the agent's
    // runs, and the prompt the plan will be sent in.
    HumanInputDialog::PlanContext planContext(const Candidate &parent) const;
    void goToParent();
    void goToBest();

    MainWindow *m_window;
    EngineHost *m_host;
    QList<RunController *> m_controllers; // one per run this window has driven
    Settings *m_settings;
    RunStatusWidget *m_status;
    QSystemTrayIcon *m_tray = nullptr;
    QPointer<AgentEditor> m_agentEditorDialog;
    qint64 m_currentCandidate = 0;
    qint64 m_notifiedRun = 0; // the run whose log a click on the last notification opens
    QHash<qint64, QString> m_requests; // run -> pause|resume|stop asked of another process, not yet done
    QHash<qint64, RunRequest> m_sentRequests; // request id -> a plan or edit handed to another process, not yet settled
    QHash<qint64, std::pair<int, std::optional<double>>>
        m_configs; // run -> iterations, budget (its stored configuration)
    QAction *m_start = nullptr;
    QAction *m_pause = nullptr;
    QAction *m_resume = nullptr;
    QAction *m_stop = nullptr;
    QAction *m_humanPlan = nullptr;
    QAction *m_humanCode = nullptr;
    QAction *m_agentEditor = nullptr;
    QAction *m_settingsAction = nullptr;
};

} // namespace autocomp
