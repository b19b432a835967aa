#pragma once

#include "model/run_info.h"
#include "model/store_changes.h"

#include <QFuture>
#include <QHash>
#include <QMainWindow>

#include <memory>
#include <optional>

class QAction;
class QDialog;
class QLabel;
class QSplitter;
class QStackedWidget;
class QTableView;
class QTreeView;

namespace autocomp {

class BeamGraphView;
class CandidateFilterProxy;
class CandidateInspector;
class DiffView;
class LatencyChart;
class MenuInsightsView;
class ResultActions;
class RunActions;
class RunListModel;
class RunPage;
class RunsPane;
class RunStore;
class RunsComparisonView;
class ShownRun;
class StoreFollower;
class StoreSession;
class StudyView;
class WelcomePage;

// The workbench window, a frame: the runs list across the top (as high as its rows, at most a third of the
// window) above the run page (the shown run's graph, tree, chart and menu insights beside the selected candidate),
// or the welcome page for a store without runs. Several runs can be selected: Compare Runs ticks them. The window's
// geometry, both splitters and the runs' and candidates' column widths are saved on close and restored at the next
// start (QSettings; a fresh configuration restores nothing). The shown run is a ShownRun that the run page's views
// follow; the store and its background work are a StoreSession.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(std::unique_ptr<RunStore> store, QWidget *parent = nullptr);
    ~MainWindow() override;

    RunStore *store() const;
    StoreSession *storeSession() const { return m_session; }
    // The shown run: its row, candidates, selection and driver.
    ShownRun *shownRun() const { return m_shownRun; }
    // Run control: the Run menu, toolbar, live status and human-in-the-loop actions.
    RunActions *runActions() const { return m_runActions; }
    // Results out: exports of the shown run, the selected candidate's kernel.
    ResultActions *resultActions() const { return m_resultActions; }
    qint64 currentRunId() const;

    // Replaces the open store by the one at `path`; keeps the current one when that fails.
    bool openStore(const QString &path, QString *error);
    // Imports a JSONL run archive, or an Autocomp output directory, into the store and shows the run.
    // Returns the new run id, or 0.
    qint64 importRunArchive(const QString &path, QString *error);
    // File > Open Store: the store is checked off the GUI thread, then opened here; the future yields the
    // error (empty when the store opened).
    QFuture<QString> openStoreInBackground(const QString &path);
    // The same off the GUI thread (what File > Import does): the run is shown once it is committed; a
    // failure is reported in a message box titled `title`. The future yields the run id and the error.
    QFuture<std::pair<qint64, QString>> importInBackground(const QString &path, const QString &title);
    // `autocomp problems import` from the window: KernelBench problem files become kernelbench
    // problems in the user's data directory, measured on the thread pool; the result is reported in
    // a message (the ids made, the files skipped and why). Returns the report's text.
    QFuture<QString> importKernelBenchInBackground(const QStringList &paths);
    // Imports the example run bundled as a resource.
    qint64 importExampleRun(QString *error);
    bool selectRun(qint64 runId);
    // The one path by which the tree, the graph, the chart and the inspector follow a selection.
    void selectCandidate(qint64 candidateId);
    MenuInsightsView *menuInsights() const;
    DiffView *diffView() const;
    BeamGraphView *beamGraph() const;
    LatencyChart *latencyChart() const;
    CandidateFilterProxy *candidateSearch() const;
    QTreeView *candidateTree() const;
    QTableView *runsView() const;
    CandidateInspector *inspector() const;
    // Search in the shown run: text in plan or code, a status (empty: any), a strategy (empty: any).
    void searchCandidates(const QString &text, const QString &status = QString(), const QString &strategy = QString());
    // The runs side by side in a window of their own, these runs ticked.
    RunsComparisonView *openRunsComparison(const QList<qint64> &runIds);
    // A parameter study's runs (StudyView) in a window of its own; empty: the store's first study. Its runs open here.
    StudyView *openStudyView(const QString &study = QString());
    // The shown run, then the other runs selected in the runs list (top to bottom): what Compare Runs ticks.
    QList<qint64> selectedRunIds() const;
    // The diff as a tab of the middle area (wide: the inspector shrinks to a strip) or of the inspector (beside
    // the candidate, the sizes from before Widen back).
    void setDiffInCenter(bool center);
    bool diffInCenter() const;
    // Esc and Ctrl+W close `window` (a detached diff, a comparison).
    static void closableByKeys(QWidget *window);
    // The shown comparison in a window of its own; returns that window's view.
    DiffView *openDiffWindow();
    // Brings a view to the front: graph, tree, chart, menu (middle) or plan, code, evaluation, prompts, llm,
    // diff (inspector). False for an unknown name.
    bool showView(const QString &name);
    void reloadRuns();
    // A run's row as stored now: the runs list shows it, and when it is the shown run, the header and the views
    // too (work in flight of a run that has ended reads cancelled).
    void updateRunRow(const RunInfo &run);
    // The shown run's whole stop reason (a failed start carries the evaluation's log) in a window of its own.
    QDialog *showStopReasonDetails();

    static QString exampleRunResource();

    // Who drives run `runId` as the store last showed it (none: no process holds its lease). Runs of other
    // processes are followed live: StoreFollower reads what they commit.
    std::optional<RunLease> driverOf(qint64 runId) const;
    // "this workbench", "pid 1234 on this host", "pid 1234 on HOST", "gone (pid 1234 on HOST)"; empty: nobody.
    QString driverText(qint64 runId) const;
    // Work of the shown run in flight as the store shows it (for a run another process drives).
    int requestsInFlight() const;
    int evaluationsInFlight() const;
    StoreFollower *storeFollower() const;

Q_SIGNALS:
    void currentRunChanged(qint64 runId);
    void currentCandidateChanged(qint64 candidateId);
    // Applied to the views: what other connections committed (runs, drivers, the shown run's candidates).
    void storeChanged(const autocomp::StoreChanges &changes);

protected:
    void closeEvent(QCloseEvent *event) override;
    void showEvent(QShowEvent *event) override;

private:
    void setStore(std::unique_ptr<RunStore> store);
    QWidget *createSandboxBanner();
    void createMenus();
    void createFileMenu();
    void showRun(qint64 runId);
    void applyStoreChanges(const StoreChanges &changes);
    void updateStoreViews();
    void openStoreDialog();
    void importArchiveDialog();
    void importAutocompDirDialog();
    void importKernelBenchDialog();
    // Deletes the selected run after asking; refuses the run this window is driving.
    void deleteRunClicked();
    void runsContextMenu(const QPoint &pos);
    void loadExampleRunClicked();
    void showAbout();
    void saveSettings() const;
    void restoreSettings();
    void fitRunsPane();

    StoreSession *m_session;
    ShownRun *m_shownRun;

    QStackedWidget *m_stack = nullptr;
    WelcomePage *m_welcomePage = nullptr;
    RunPage *m_runPage = nullptr;
    RunsPane *m_runsPane = nullptr;
    QSplitter *m_runsSplitter = nullptr; // vertical: the runs list above the run page
    QAction *m_deleteRun = nullptr;
    QLabel *m_storeLabel = nullptr;
    RunActions *m_runActions = nullptr;
    ResultActions *m_resultActions = nullptr;
    bool m_layoutRestored = false; // the user's saved splitter and column sizes were applied
    bool m_runsPaneFitted = false;
    bool m_userSizedRuns = false; // the user dragged the runs list's handle: its height is theirs from then on
};

} // namespace autocomp
