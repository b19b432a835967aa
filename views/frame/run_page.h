#pragma once

#include <QList>
#include <QWidget>

#include <functional>
#include <optional>

class QComboBox;
class QDialog;
class QLabel;
class QLineEdit;
class QSplitter;
class QTabWidget;
class QTimer;
class QTreeView;

namespace autocomp {

class BeamGraphView;
class CandidateFilterProxy;
class CandidateInspector;
class CandidateTreeModel;
class DiffView;
class LatencyChart;
class MenuInsightsView;
class ResultActions;
class ShownRun;
struct Candidate;

// The shown run's page: its header, the middle (graph, tree, chart, menu insights, with the candidate search
// above them) beside the selected candidate (the inspector, with the diff as one of its tabs, or the middle's
// when widened). Its views subscribe to the ShownRun; the page keeps them on one selection (the tree's current
// row selects in the ShownRun) and lays them out.
class RunPage : public QWidget
{
    Q_OBJECT
public:
    // The run header follows a run another process drives at most this often.
    static constexpr int HeaderUpdateMs = 250;

    // `driverText` says who drives a run (MainWindow::driverText); `results` gives the header's Save kernel link.
    RunPage(ShownRun *shown, ResultActions *results, std::function<QString(qint64)> driverText,
            QWidget *parent = nullptr);

    // After ShownRun::show(): the tree expanded and its columns fitted, the header, and the run's best candidate
    // selected (else its first), so the result of the run is one glance away.
    void runShown();
    // The one path by which the tree, the graph, the chart and the inspector follow a selection.
    void selectCandidate(qint64 candidateId);
    void searchCandidates(const QString &text, const QString &status = QString(), const QString &strategy = QString());
    bool showView(const QString &name);
    void setDiffInCenter(bool center);
    bool diffInCenter() const;
    DiffView *openDiffWindow();
    QDialog *showStopReasonDetails();
    void updateRunHeader();
    void setStorePath(const QString &path);
    void focusSearch();

    CandidateTreeModel *candidateModel() const { return m_candidateModel; }
    CandidateFilterProxy *candidateProxy() const { return m_candidateProxy; }
    QTreeView *candidateTree() const { return m_candidateTree; }
    CandidateInspector *inspector() const { return m_inspector; }
    BeamGraphView *beamGraph() const { return m_beamGraph; }
    LatencyChart *latencyChart() const { return m_latencyChart; }
    MenuInsightsView *menuInsights() const { return m_insights; }
    DiffView *diffView() const { return m_diffView; }
    // The middle beside the inspector ("mainSplitter").
    QSplitter *splitter() const { return m_splitter; }
    // The splitter's state to save: widened, the sizes from before (the next start shows the diff beside the
    // candidate).
    QByteArray splitterState() const;
    // The tree's column widths came from the settings: showing a run no longer fits them to it.
    void setTreeHeaderRestored(bool restored) { m_treeHeaderRestored = restored; }

Q_SIGNALS:
    // The menu insights asked for candidate `candidateId` of run `runId` (maybe not the shown one).
    void candidateOfRunActivated(qint64 runId, qint64 candidateId);

private:
    QWidget *createCandidatesPane();
    QWidget *createCenterTabs();
    QWidget *createSearchBar();
    void createRunHeader();
    void searchChanged();
    void fillStrategyFilter(const QList<Candidate> &candidates);
    void expandParentsOf(const QList<Candidate> &candidates);
    // Updates the header soon, once for a burst of changes.
    void scheduleRunHeader();
    QString headerText() const;

    ShownRun *m_shown;
    ResultActions *m_results;
    std::function<QString(qint64)> m_driverText;
    CandidateTreeModel *m_candidateModel;
    CandidateFilterProxy *m_candidateProxy;
    QSplitter *m_splitter = nullptr; // horizontal: the middle and the inspector
    std::optional<QList<int>> m_sizesBeforeWiden;
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
    bool m_treeHeaderRestored = false; // the tree's column widths come from the settings, not from each run
};

} // namespace autocomp
