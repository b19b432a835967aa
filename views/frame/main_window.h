#pragma once

#include "model/candidate.h"
#include "model/run_info.h"
#include "model/store_changes.h"

#include <QDateTime>
#include <QFuture>
#include <QMainWindow>

#include <memory>
#include <optional>

class QAction;
class QComboBox;
class QDialog;
class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QTableView;
class QTimer;
class QTreeView;

namespace autocomp {

class BeamGraphView;
class CandidateInspector;
class CandidateFilterProxy;
class CandidateTreeModel;
class DiffView;
class LatencyChart;
class MenuInsightsView;
class RunListModel;
class RunsComparisonView;
class StudyView;
class RunActions;
class ResultActions;
class RunStore;
class StoreFollower;

// The workbench window: the runs list across the top (as high as its rows, at most a third of the window), below
// it the selected run's graph, tree, chart and menu insights (the middle) beside the selected candidate (the
// inspector). Several runs can be selected: Compare Runs ticks them. The window's geometry, both splitters and
// the runs' and candidates' column widths are saved on close and restored at the next start (QSettings; a
// fresh configuration restores nothing). A store without runs shows a welcome panel instead.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    // The run header follows a run another process drives at most this often.
    static constexpr int HeaderUpdateMs = 250;
    // Candidates another process committed are applied to the views this many per turn of the event loop.
    static constexpr int CandidatesPerTurn = 100;

    explicit MainWindow(std::unique_ptr<RunStore> store, QWidget *parent = nullptr);
    ~MainWindow() override;

    RunStore *store() const { return m_store.get(); }
    // Run control: the Run menu, toolbar, live status and human-in-the-loop actions.
    RunActions *runActions() const { return m_runActions; }
    // Results out: exports of the shown run, the selected candidate's kernel.
    ResultActions *resultActions() const { return m_resultActions; }
    qint64 currentRunId() const { return m_run.id; }

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
    MenuInsightsView *menuInsights() const { return m_insights; }
    DiffView *diffView() const { return m_diffView; }
    BeamGraphView *beamGraph() const { return m_beamGraph; }
    LatencyChart *latencyChart() const { return m_latencyChart; }
    CandidateFilterProxy *candidateSearch() const { return m_candidateProxy; }
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
    // The shown run's whole stop reason (a failed start carries the evaluation's log) in a window of its own.
    QDialog *showStopReasonDetails();

    static QString exampleRunResource();

    // Who drives run `runId` as the store last showed it (none: no process holds its lease). Runs of other
    // processes are followed live: StoreFollower reads what they commit.
    std::optional<RunLease> driverOf(qint64 runId) const;
    // "this workbench", "pid 1234 on this host", "pid 1234 on HOST", "gone (pid 1234 on HOST)"; empty: nobody.
    QString driverText(qint64 runId) const;
    // Work of the shown run in flight as the store shows it (for a run another process drives).
    int requestsInFlight() const { return m_requestsInFlight; }
    int evaluationsInFlight() const { return m_evaluationsInFlight; }
    StoreFollower *storeFollower() const { return m_follower; }

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
    QWidget *createWelcomePanel();
    QWidget *createRunsPane();
    QWidget *createCandidatesPane();
    void createMenus();
    void showRun(qint64 runId);
    void showCandidate(qint64 candidateId);
    void updateRunHeader();
    // Updates the header soon, once for a burst of changes.
    void scheduleRunHeader();
    void startFollowing();
    void applyStoreChanges(const StoreChanges &changes);
    // New or changed candidates of the shown run: the tree, the graph, the chart, the diff and the inspector.
    void applyCandidates(const QList<Candidate> &candidates);
    // Work in flight in a run that has ended (stopped, failed, finished) reads "cancelled" in every view: nothing
    // will finish it until the run is resumed, which redoes it.
    QList<Candidate> settled(QList<Candidate> candidates) const;
    void settleInFlight();
    void applyCandidateBacklog();
    void updateLiveState(qint64 runId);
    // A new beam of the shown run: the candidates that enter or leave it are updated in every view.
    void applyBeam(const QList<qint64> &beam);
    void updateStoreViews();
    void openStoreDialog();
    void importArchiveDialog();
    void importAutocompDirDialog();
    void importKernelBenchDialog();
    // Deletes the selected run after asking; refuses the run this window is driving.
    void deleteRunClicked();
    void runsContextMenu(const QPoint &pos);
    void loadExampleRunClicked();
    QWidget *createSearchBar();
    void searchChanged();
    void fillStrategyFilter(const QList<Candidate> &candidates);
    void showAbout();
    void saveSettings() const;
    void restoreSettings();
    void fitRunsPane();
    QString languageOfTarget(const QString &target);

    std::unique_ptr<RunStore> m_store;
    RunInfo m_run;
    QString m_runLanguage;

    RunListModel *m_runModel;
    QSortFilterProxyModel *m_runProxy;
    CandidateTreeModel *m_candidateModel;
    CandidateFilterProxy *m_candidateProxy;

    QStackedWidget *m_stack = nullptr;
    QWidget *m_welcomePanel = nullptr;
    QLabel *m_welcomeStoreLabel = nullptr;
    QPushButton *m_loadExampleButton = nullptr;
    QSplitter *m_runsSplitter = nullptr; // vertical: the runs list above m_splitter
    QSplitter *m_splitter = nullptr; // horizontal: the middle and the inspector
    std::optional<QList<int>> m_sizesBeforeWiden;
    QLineEdit *m_runFilter = nullptr;
    QTableView *m_runsView = nullptr;
    QAction *m_deleteRun = nullptr;
    QLabel *m_runHeader = nullptr;
    QTimer *m_headerTimer = nullptr;
    QLabel *m_labelBanner = nullptr;
    QTreeView *m_candidateTree = nullptr;
    QTabWidget *m_centerTabs = nullptr;
    QLineEdit *m_searchText = nullptr;
    QComboBox *m_searchStatus = nullptr;
    QComboBox *m_searchStrategy = nullptr;
    QLabel *m_searchCount = nullptr;
    BeamGraphView *m_beamGraph = nullptr;
    LatencyChart *m_latencyChart = nullptr;
    MenuInsightsView *m_insights = nullptr;
    QWidget *m_insightsScroll = nullptr; // the Menu tab: m_insights in a scroll area
    DiffView *m_diffView = nullptr;
    CandidateInspector *m_inspector = nullptr;
    QLabel *m_storeLabel = nullptr;
    RunActions *m_runActions = nullptr;
    ResultActions *m_resultActions = nullptr;
    bool m_layoutRestored = false; // the user's saved splitter and column sizes were applied
    bool m_runsPaneFitted = false;
    bool m_userSizedRuns = false; // the user dragged the runs list's handle: its height is theirs from then on
    bool m_treeHeaderRestored = false; // the tree's column widths come from the settings, not from each run
    StoreFollower *m_follower = nullptr;
    QHash<qint64, RunSnapshot> m_live; // per run: the row and lease as the follower last read them
    qint64 m_shownCandidate = 0;
    QList<Candidate> m_candidateBacklog; // of the shown run, committed by another process, not applied yet
    QDateTime m_runLoadedAt; // when the shown run's candidates were read
    int m_requestsInFlight = 0;
    int m_evaluationsInFlight = 0;

    friend class RunActions; // drives the views of the shown run while it is live
};

} // namespace autocomp
