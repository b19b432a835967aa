// The beam graph, the latency chart and the diff view, alone and inside the main window, on stores built
// through the RunStore API.
#include "charts/beam_graph_view.h"
#include "panels/candidate_inspector.h"
#include "models/candidate_tree_model.h"
#include "editors/diff_view.h"
#include "charts/latency_chart.h"
#include "frame/main_window.h"
#include "editors/code_view.h"
#include "panels/menu_insights_view.h"
#include "live/result_actions.h"
#include "common/theme.h"
#include "exchange/run_archive.h"
#include "store/run_store.h"

#include <QApplication>
#include <QClipboard>
#include <QDesktopServices>
#include <QScrollBar>
#include <QSyntaxHighlighter>
#include <QFileInfo>
#include <QTimer>
#include <QComboBox>
#include <QContextMenuEvent>
#include <QMenu>
#include <QLabel>
#include <QLineEdit>
#include <QGraphicsScene>
#include <QPlainTextEdit>
#include <QPointer>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTextBlock>
#include <QToolButton>
#include <QTreeView>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>

using namespace autocomp;

namespace {

// Ten lines; the child changes lines 2 and 8, so its diff has two separate changes.
const QString s_rootCode = QStringLiteral("// naive gemm\n"
                                          "void gemm(int n, const float *a, const float *b, float *c) {\n"
                                          "    for (int i = 0; i < n; ++i)\n"
                                          "        for (int j = 0; j < n; ++j) {\n"
                                          "            float sum = 0;\n"
                                          "            for (int k = 0; k < n; ++k)\n"
                                          "                sum += a[i * n + k] * b[k * n + j];\n"
                                          "            c[i * n + j] = sum;\n"
                                          "        }\n"
                                          "}\n");
const QString s_tiledCode = QStringLiteral("// naive gemm\n"
                                           "void gemm(int n, const float *__restrict a, const float *b, float *c) {\n"
                                           "    for (int i = 0; i < n; ++i)\n"
                                           "        for (int j = 0; j < n; ++j) {\n"
                                           "            float sum = 0;\n"
                                           "            for (int k = 0; k < n; ++k)\n"
                                           "                sum += a[i * n + k] * b[k * n + j];\n"
                                           "            c[i * n + j] = 2 * sum;\n"
                                           "        }\n"
                                           "}\n");

struct Ids
{
    qint64 run = 0;
    qint64 root = 0;
    qint64 tiled = 0; // correct, in beam, 2x
    qint64 broken = 0; // compile error
    qint64 unrolled = 0; // child of tiled, correct, in beam, best (2.5x)
    qint64 wrong = 0; // incorrect
    qint64 slow = 0; // correct, pruned
    qint64 planning = 0; // not evaluated yet
};

Candidate make(qint64 runId, qint64 parentId, int iteration, CandidateStatus status, double score, bool inBeam = false)
{
    Candidate c;
    c.runId = runId;
    c.parentId = parentId;
    c.iteration = iteration;
    c.origin = parentId == 0 ? CandidateOrigin::Root : CandidateOrigin::Llm;
    c.status = status;
    c.score = score;
    c.inBeam = inBeam;
    c.code = s_tiledCode;
    c.menuItem = QStringLiteral("loop tiling");
    return c;
}

Ids fillStore(RunStore &store)
{
    Ids ids;
    RunInfo run;
    run.target = QStringLiteral("cpu");
    run.problem = QStringLiteral("gemm");
    run.agent = QStringLiteral("cpu");
    run.state = RunState::Finished;
    run.metric = QStringLiteral("latency_ms");
    run.iteration = 2;
    run.baselineScore = 10;
    run.bestScore = 4;
    ids.run = store.createRun(run);

    Candidate root = make(ids.run, 0, 0, CandidateStatus::Correct, 10, false);
    root.code = s_rootCode;
    root.menuItem.clear();
    ids.root = store.addCandidate(root);
    Candidate tiled = make(ids.run, ids.root, 1, CandidateStatus::Correct, 5, true);
    tiled.plan = QStringLiteral("Tile the loops by 64.\nKeep B in L1.\n");
    ids.tiled = store.addCandidate(tiled);
    Candidate broken = make(ids.run, ids.root, 1, CandidateStatus::CompileError, std::nan(""));
    broken.code = QStringLiteral("void gemm( {");
    ids.broken = store.addCandidate(broken);
    Candidate unrolled = make(ids.run, ids.tiled, 2, CandidateStatus::Correct, 4, true);
    unrolled.plan = QStringLiteral("Tile the loops by 64.\nUnroll k by 4.\n");
    unrolled.menuItem = QStringLiteral("loop unrolling");
    // A paired timing's 95 % interval of the ratio to the root (0.38..0.42 around 0.40), the judge's roofline.
    unrolled.metrics = QJsonObject{{QStringLiteral("vendor_latency_ms"), 2.0},
                                   {QStringLiteral("paired_ratio"),
                                    QJsonObject{{QStringLiteral("value"), 0.4},
                                                {QStringLiteral("ci_low"), 0.38},
                                                {QStringLiteral("ci_high"), 0.42}}},
                                   {QStringLiteral("gflops"), 21.0},
                                   {QStringLiteral("gbps"), 0.5089},
                                   {QStringLiteral("roofline_bound_gflops"), 50.0},
                                   {QStringLiteral("roofline_fraction"), 0.42}};
    ids.unrolled = store.addCandidate(unrolled);
    ids.wrong = store.addCandidate(make(ids.run, ids.tiled, 2, CandidateStatus::Incorrect, std::nan("")));
    Candidate slow = make(ids.run, ids.root, 1, CandidateStatus::Correct, 8, false);
    // 8 ms measured, but anywhere in 7.5..10.5 ms: within noise of the root's 10 ms.
    slow.metrics = QJsonObject{{QStringLiteral("paired_ratio"),
                                QJsonObject{{QStringLiteral("value"), 0.8},
                                            {QStringLiteral("ci_low"), 0.75},
                                            {QStringLiteral("ci_high"), 1.05}}}};
    ids.slow = store.addCandidate(slow);
    ids.planning = store.addCandidate(make(ids.run, ids.tiled, 2, CandidateStatus::Planning, std::nan("")));

    run.id = ids.run;
    run.bestCandidateId = ids.unrolled;
    store.updateRun(run);
    return ids;
}

template<typename T>
T *child(const QWidget &parent, const char *name)
{
    return parent.findChild<T *>(QString::fromLatin1(name));
}

qint64 currentTreeCandidate(const QWidget &window)
{
    auto *tree = child<QTreeView>(window, "candidateTree");
    return tree ? tree->currentIndex().data(CandidateTreeModel::CandidateIdRole).toLongLong() : 0;
}

int findBlock(const QPlainTextEdit *edit, const QString &text)
{
    for (QTextBlock block = edit->document()->begin(); block.isValid(); block = block.next())
        if (block.text() == text)
            return block.blockNumber();
    return -1;
}

DiffView::LineKind kindOf(const QPlainTextEdit *edit, int blockNumber)
{
    return DiffView::LineKind(
        edit->document()->findBlockByNumber(blockNumber).blockFormat().intProperty(DiffView::LineKindProperty));
}

bool hasChangedSpan(const QPlainTextEdit *edit, int blockNumber, const QString &word)
{
    const QTextBlock block = edit->document()->findBlockByNumber(blockNumber);
    for (auto it = block.begin(); !it.atEnd(); ++it) {
        const QTextFragment fragment = it.fragment();
        if (fragment.charFormat().boolProperty(DiffView::ChangedSpanProperty) && fragment.text().contains(word))
            return true;
    }
    return false;
}

// Takes the URLs QDesktopServices::openUrl is given (installed with setUrlHandler), so nothing is opened.
class UrlCatcher : public QObject
{
    Q_OBJECT
public:
    QList<QUrl> urls;
public Q_SLOTS:
    void open(const QUrl &url) { urls << url; }
};

// A candidate evaluated in `jobDir` (the evaluator's autocomp-eval-XXXXXX), its compile step failing at line 3.
StepResult compileStep(const QString &jobDir)
{
    StepResult step;
    step.name = QStringLiteral("compile");
    step.command = {QStringLiteral("c++"), QStringLiteral("-O2"), jobDir + QStringLiteral("/work/candidate.cpp"),
                    QStringLiteral("-o"), jobDir + QStringLiteral("/work/candidate")};
    step.exitCode = 1;
    step.log = jobDir + QStringLiteral("/work/candidate.cpp: In function 'void k()':\n") + jobDir
        + QStringLiteral(
                   "/work/candidate.cpp:3:7: error: expected ';' before '}' token\n    3 |   x = 1\n      |       ^\n");
    return step;
}

// Clicks the middle of the first occurrence of `text` in `browser` (a link there is followed).
bool clickText(QTextBrowser *browser, const QString &text)
{
    const QTextCursor found = browser->document()->find(text);
    if (found.isNull())
        return false;
    QTextCursor at(browser->document());
    at.setPosition((found.selectionStart() + found.selectionEnd()) / 2);
    browser->setTextCursor(at);
    browser->ensureCursorVisible();
    const QPoint point = browser->cursorRect(at).center();
    QTest::mouseClick(browser->viewport(), Qt::LeftButton, {}, point);
    return true;
}

} // namespace

class TestViews : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void diffRows_data();
    void diffRows();
    void windowShowsRunConsistently();
    void evaluationHeaderGivesContext();
    void chartClickSelectsEverywhere();
    void graphClickSelectsEverywhere();
    void contextMenuActsOnWhatIsUnderThePointer();
    void resultsGoOut();
    void codeViewsNumberLinesAndFind();
    void themeSwitchRepaintsDiffAndCharts();
    void diffShowsParentAndChild();
    void diffNavigatesChanges();
    void largeDiffLeavesTheGuiThread();
    void diffComparesWithAncestorAndPlan();
    void graphBatchesLiveUpdates();
    void bigGraphIsLaidOutOffTheGuiThread();
    void chartFindsVendorLine();
    void chartAppendsLivePointsInPlace();
    void diffHeadsHunksAndHighlightsTheLanguage();
    void logsLinkToCodeLinesAndTheFolder();
    void openFolderActsOnTheEvaluationFiles();

private:
    std::unique_ptr<MainWindow> openSample();

    QTemporaryDir m_configDir;
    std::unique_ptr<QTemporaryDir> m_dir;
    Ids m_ids;
};

void TestViews::initTestCase()
{
    QVERIFY(m_configDir.isValid());
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_configDir.path()));
    QStandardPaths::setTestModeEnabled(true);
}

void TestViews::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

std::unique_ptr<MainWindow> TestViews::openSample()
{
    QString error;
    std::unique_ptr<RunStore> store = RunStore::open(m_dir->filePath(QStringLiteral("runs.sqlite")), &error);
    if (!store) {
        qWarning("%s", qPrintable(error));
        return {};
    }
    m_ids = fillStore(*store);
    auto window = std::make_unique<MainWindow>(std::move(store));
    window->show();
    if (!QTest::qWaitForWindowExposed(window.get()))
        return {};
    return window;
}

void TestViews::diffRows_data()
{
    QTest::addColumn<QString>("left");
    QTest::addColumn<QString>("right");
    QTest::addColumn<QStringList>("leftColumn"); // each row: kind letter + text (S same, R removed, A added, F filler)
    QTest::addColumn<QStringList>("rightColumn");

    QTest::newRow("same") << QStringLiteral("a\nb\n") << QStringLiteral("a\nb\n")
                          << QStringList{QStringLiteral("Sa"), QStringLiteral("Sb")}
                          << QStringList{QStringLiteral("Sa"), QStringLiteral("Sb")};
    QTest::newRow("changed line") << QStringLiteral("a\nb\nc\n") << QStringLiteral("a\nB\nc\n")
                                  << QStringList{QStringLiteral("Sa"), QStringLiteral("Rb"), QStringLiteral("Sc")}
                                  << QStringList{QStringLiteral("Sa"), QStringLiteral("AB"), QStringLiteral("Sc")};
    QTest::newRow("insert at top") << QStringLiteral("a\n") << QStringLiteral("x\na\n")
                                   << QStringList{QStringLiteral("F"), QStringLiteral("Sa")}
                                   << QStringList{QStringLiteral("Ax"), QStringLiteral("Sa")};
    QTest::newRow("delete at end") << QStringLiteral("a\nb") << QStringLiteral("a\n")
                                   << QStringList{QStringLiteral("Sa"), QStringLiteral("Rb")}
                                   << QStringList{QStringLiteral("Sa"), QStringLiteral("F")};
    QTest::newRow("empty left") << QString() << QStringLiteral("x\ny\n")
                                << QStringList{QStringLiteral("F"), QStringLiteral("F")}
                                << QStringList{QStringLiteral("Ax"), QStringLiteral("Ay")};
    // Lines far from a change are outside libgit2's hunks and must still be shown, aligned.
    QString longLeft;
    QString longRight;
    QStringList leftColumn;
    QStringList rightColumn;
    for (int i = 0; i < 20; ++i) {
        const QString line = QString::number(i);
        longLeft += line + QLatin1Char('\n');
        longRight += (i == 10 ? QStringLiteral("ten") : line) + QLatin1Char('\n');
        leftColumn.append((i == 10 ? QLatin1Char('R') : QLatin1Char('S')) + line);
        rightColumn.append(i == 10 ? QStringLiteral("Aten") : QLatin1Char('S') + line);
    }
    QTest::newRow("far context") << longLeft << longRight << leftColumn << rightColumn;
}

void TestViews::diffRows()
{
    QFETCH(QString, left);
    QFETCH(QString, right);
    QFETCH(QStringList, leftColumn);
    QFETCH(QStringList, rightColumn);
    const auto letter = [](DiffView::LineKind kind) {
        switch (kind) {
        case DiffView::LineKind::Same: return QLatin1Char('S');
        case DiffView::LineKind::Removed: return QLatin1Char('R');
        case DiffView::LineKind::Added: return QLatin1Char('A');
        case DiffView::LineKind::Filler: return QLatin1Char('F');
        }
        return QLatin1Char('?');
    };
    QStringList gotLeft;
    QStringList gotRight;
    for (const DiffView::Row &row : DiffView::diffRows(left, right)) {
        gotLeft.append(letter(row.leftKind) + row.left);
        gotRight.append(letter(row.rightKind) + row.right);
    }
    QCOMPARE(gotLeft, leftColumn);
    QCOMPARE(gotRight, rightColumn);
}

void TestViews::windowShowsRunConsistently()
{
    auto window = openSample();
    QVERIFY(window);
    auto *tabs = child<QTabWidget>(*window, "centerTabs");
    auto *graph = child<BeamGraphView>(*window, "beamGraph");
    auto *chart = child<LatencyChart>(*window, "latencyChart");
    auto *inspector = window->findChild<CandidateInspector *>();
    QVERIFY(tabs && graph && chart && inspector);
    QCOMPARE(tabs->count(), 4); // graph, tree, chart, menu insights
    QCOMPARE(tabs->currentWidget(), graph);

    QCOMPARE(graph->nodeCount(), 7);
    QCOMPARE(graph->bestPath(), (QList<qint64>{m_ids.root, m_ids.tiled, m_ids.unrolled}));
    QVERIFY(graph->isOnBestPath(m_ids.tiled));
    QVERIFY(!graph->isOnBestPath(m_ids.slow));
    QCOMPARE(graph->nodeState(m_ids.unrolled), BeamGraphView::NodeState::InBeam);
    QCOMPARE(graph->nodeState(m_ids.slow), BeamGraphView::NodeState::Pruned);
    QCOMPARE(graph->nodeState(m_ids.broken), BeamGraphView::NodeState::CompileError);
    QCOMPARE(graph->nodeState(m_ids.wrong), BeamGraphView::NodeState::Incorrect);
    // The run has finished: what was still being planned will not be, until the run is resumed.
    QCOMPARE(graph->nodeState(m_ids.planning), BeamGraphView::NodeState::Cancelled);
    // Columns by iteration.
    QCOMPARE(graph->nodePosition(m_ids.tiled).x(), graph->nodePosition(m_ids.slow).x());
    QVERIFY(graph->nodePosition(m_ids.unrolled).x() > graph->nodePosition(m_ids.tiled).x());
    QVERIFY(graph->nodePosition(m_ids.tiled).x() > graph->nodePosition(m_ids.root).x());

    // Every evaluated candidate is a point; the planning one is not.
    QCOMPARE(chart->pointCount(), 6);
    QCOMPARE(chart->correctPoints().size(), qsizetype(4));
    QCOMPARE(chart->failedPoints().size(), qsizetype(2));
    QCOMPARE(chart->baselineSeries()->count(), 2);
    QCOMPARE(chart->baselineSeries()->at(0).y(), 10.0);
    QCOMPARE(chart->bestSeries()->points().last().y(), 4.0);

    // The run opens on its best candidate, everywhere.
    QCOMPARE(currentTreeCandidate(*window), m_ids.unrolled);
    QCOMPARE(inspector->candidateId(), m_ids.unrolled);
    QCOMPARE(graph->selectedCandidate(), m_ids.unrolled);
    QCOMPARE(chart->selectedCandidate(), m_ids.unrolled);
}

// The Evaluation header states the score with its unit and its context, from the stored figures: the speedups
// over the root (with the interval of the paired timing) and the parent, the share of the roofline; a child within
// noise of its parent says so in the tree and the inspector; every view uses the same status words.
void TestViews::evaluationHeaderGivesContext()
{
    auto window = openSample();
    QVERIFY(window);
    auto *inspector = window->findChild<CandidateInspector *>();
    auto *evaluation = child<QTextBrowser>(*window, "evaluationView");
    auto *tree = child<QTreeView>(*window, "candidateTree");
    auto *graph = child<BeamGraphView>(*window, "beamGraph");
    QVERIFY(inspector && evaluation && tree && graph);
    QCOMPARE(inspector->candidateId(), m_ids.unrolled);

    // Stored: root 10 ms, parent (tiled) 5 ms, unrolled 4 ms with a ratio to the root of 0.38..0.42.
    const Candidate root = *window->store()->candidate(m_ids.root);
    const Candidate parent = *window->store()->candidate(m_ids.tiled);
    const Candidate unrolled = *window->store()->candidate(m_ids.unrolled);
    QCOMPARE(root.score / unrolled.score, 2.5);
    QCOMPARE(parent.score / unrolled.score, 1.25);
    // ± half the width of 10/3.8 .. 10/4.2, the speedup's 95 % interval.
    const double halfWidth = (root.score / (unrolled.score * 0.38 / 0.4) - root.score / (unrolled.score * 0.42 / 0.4))
        / 2;
    QCOMPARE(QString::number(halfWidth, 'g', 3), QStringLiteral("0.125"));
    const QString expected = QStringLiteral(
        "correct · 4.00 ms · 2.50× root (±0.125) · 1.25× parent · 42 % of the roofline "
        "bound (GFLOP/s)");
    QCOMPARE(inspector->evaluationHeadline(), expected);
    QVERIFY2(evaluation->toPlainText().startsWith(expected), qPrintable(evaluation->toPlainText().left(200)));
    // Metrics with their units and their share of the measured roofline.
    QVERIFY2(evaluation->toPlainText().contains(QStringLiteral("0.5089 GB/s")), qPrintable(evaluation->toPlainText()));
    QVERIFY(
        evaluation->toPlainText().contains(QStringLiteral("21.00 GFLOP/s (42 % of the roofline bound, 50.0 GFLOP/s)")));
    QVERIFY(evaluation->toPlainText().contains(QStringLiteral("42.0 %")));

    // A child of the root (no interval: zero width) within noise: muted in the tree, said in the inspector.
    const QModelIndex slow =
        qobject_cast<QSortFilterProxyModel *>(tree->model())
            ->mapFromSource(
                qobject_cast<CandidateTreeModel *>(qobject_cast<QSortFilterProxyModel *>(tree->model())->sourceModel())
                    ->indexOfCandidate(m_ids.slow, CandidateTreeModel::SpeedupColumn));
    QVERIFY(slow.isValid());
    QCOMPARE(slow.data().toString(), QStringLiteral("≈ 1.25×"));
    QVERIFY(slow.data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("Within noise of its parent #%1").arg(m_ids.root)));
    window->selectCandidate(m_ids.slow);
    QCOMPARE(inspector->candidateId(), m_ids.slow);
    QCOMPARE(inspector->evaluationHeadline(),
             QStringLiteral("correct · 8.00 ms · 1.25× root (±0.190) · within noise of #%1").arg(m_ids.root));
    QVERIFY(evaluation->toPlainText().contains(QStringLiteral("within the timing's noise")));
    // The tiled child's interval is zero-width and its score differs: not within noise.
    QVERIFY(!withinNoise(parent, root));

    // One vocabulary: the tree, the graph, the inspector and the filter say "compile error", never "compile_error".
    window->selectCandidate(m_ids.broken);
    QCOMPARE(inspector->evaluationHeadline(), QStringLiteral("compile error"));
    QCOMPARE(qobject_cast<CandidateTreeModel *>(qobject_cast<QSortFilterProxyModel *>(tree->model())->sourceModel())
                 ->indexOfCandidate(m_ids.broken, CandidateTreeModel::StatusColumn)
                 .data()
                 .toString(),
             QStringLiteral("compile error"));
    QVERIFY(graph->nodeSubtitle(m_ids.broken).startsWith(QStringLiteral("compile error")));
    auto *filter = child<QComboBox>(*window, "candidateStatusFilter");
    QVERIFY(filter);
    QCOMPARE(filter->findData(QStringLiteral("compile_error")), -1);
    QVERIFY(filter->findData(QStringLiteral("compile error")) > 0);
    QVERIFY(filter->findData(QStringLiteral("cancelled")) > 0);
    filter->setCurrentIndex(filter->findData(QStringLiteral("compile error")));
    QCOMPARE(tree->model()->rowCount(), 1); // the root, holding the broken child
    filter->setCurrentIndex(0);
}

void TestViews::chartClickSelectsEverywhere()
{
    auto window = openSample();
    QVERIFY(window);
    auto *chart = child<LatencyChart>(*window, "latencyChart");
    auto *graph = child<BeamGraphView>(*window, "beamGraph");
    auto *inspector = window->findChild<CandidateInspector *>();
    QVERIFY(chart && graph && inspector);
    QVERIFY(window->showView(QStringLiteral("chart")));

    QSignalSpy selected(chart, &LatencyChart::candidateSelected);
    const QList<QPointF> points = chart->correctPoints();
    QPointF slowPoint;
    for (const QPointF &point : points)
        if (point.y() == 8.0)
            slowPoint = point;
    QVERIFY(!slowPoint.isNull());
    QCOMPARE(chart->candidateAt(chart->correctSeries(), slowPoint), m_ids.slow);
    Q_EMIT chart->correctSeries()->clicked(slowPoint);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(currentTreeCandidate(*window), m_ids.slow);
    QCOMPARE(inspector->candidateId(), m_ids.slow);
    QCOMPARE(graph->selectedCandidate(), m_ids.slow);
    QCOMPARE(chart->selectedCandidate(), m_ids.slow);

    // The points are painted by the chart, not by Qt Charts: a click with the mouse on one still selects it.
    window->selectCandidate(m_ids.root);
    const QPoint onScreen = chart->chartView()->mapFromScene(
        chart->chartView()->chart()->mapToPosition(slowPoint, chart->correctSeries()));
    QTest::mouseClick(chart->chartView()->viewport(), Qt::LeftButton, {}, onScreen);
    QCOMPARE(currentTreeCandidate(*window), m_ids.slow);
    QCOMPARE(chart->selectedCandidate(), m_ids.slow);

    // A failed candidate's cross selects it too.
    const QPointF cross = chart->failedPoints().at(0);
    const qint64 failedId = chart->candidateAt(chart->failedSeries(), cross);
    QVERIFY(failedId == m_ids.broken || failedId == m_ids.wrong);
    Q_EMIT chart->failedSeries()->clicked(cross);
    QCOMPARE(currentTreeCandidate(*window), failedId);
    QCOMPARE(inspector->candidateId(), failedId);
}

void TestViews::graphClickSelectsEverywhere()
{
    auto window = openSample();
    QVERIFY(window);
    auto *graph = child<BeamGraphView>(*window, "beamGraph");
    auto *chart = child<LatencyChart>(*window, "latencyChart");
    auto *inspector = window->findChild<CandidateInspector *>();
    QVERIFY(graph && chart && inspector);
    QVERIFY(graph->isVisible());

    QSignalSpy selected(graph, &BeamGraphView::candidateSelected);
    const QPoint at = graph->mapFromScene(graph->nodePosition(m_ids.tiled));
    QVERIFY(graph->viewport()->rect().contains(at));
    QTest::mouseClick(graph->viewport(), Qt::LeftButton, {}, at);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.first().first().toLongLong(), m_ids.tiled);
    QCOMPARE(currentTreeCandidate(*window), m_ids.tiled);
    QCOMPARE(inspector->candidateId(), m_ids.tiled);
    QCOMPARE(chart->selectedCandidate(), m_ids.tiled);

    // Selecting from outside does not echo back as a user selection.
    window->selectCandidate(m_ids.root);
    QCOMPARE(graph->selectedCandidate(), m_ids.root);
    QCOMPARE(selected.count(), 1);

    // Fit, zoom in and out change the view's scale.
    const double fitted = graph->transform().m11();
    QTest::mouseClick(child<QToolButton>(*graph, "graphZoomIn"), Qt::LeftButton);
    QVERIFY(graph->transform().m11() > fitted);
    graph->setFocus();
    QTest::keyClick(graph, Qt::Key_F);
    QCOMPARE(graph->transform().m11(), fitted);

    // The legend is a strip below the graph's viewport, never over a node: L (or the Legend button) shows and
    // hides it, and the viewport gives it the room.
    auto *legendButton = child<QToolButton>(*graph, "graphLegend");
    auto *legend = graph->findChild<QWidget *>(QStringLiteral("graphLegendPanel"));
    QVERIFY(legendButton && legend);
    const bool shownAtFirst = legendButton->isChecked();
    QCOMPARE(legend->isVisible(), shownAtFirst);
    QTest::keyClick(graph, Qt::Key_L);
    QCOMPARE(legendButton->isChecked(), !shownAtFirst);
    QCOMPARE(legend->isVisible(), !shownAtFirst);
    if (!legendButton->isChecked())
        QTest::keyClick(graph, Qt::Key_L);
    QVERIFY(legend->isVisible());
    QVERIFY(legend->height() > 0);
    const QRect viewportRect = graph->viewport()->geometry();
    QVERIFY2(!viewportRect.intersects(legend->geometry()), "the legend covers part of the graph's viewport");
    QTest::mouseClick(legendButton, Qt::LeftButton);
    QVERIFY(!legend->isVisible());
    QVERIFY(graph->viewport()->height() > viewportRect.height());

    // The keys walk the tree: Home the root, Right its first child, Left back to the parent, Down and Up along
    // the iteration, End the run's best; the selection follows everywhere.
    graph->setFocus();
    QTest::keyClick(graph, Qt::Key_Home);
    QCOMPARE(graph->selectedCandidate(), m_ids.root);
    QCOMPARE(currentTreeCandidate(*window), m_ids.root);
    QTest::keyClick(graph, Qt::Key_Right);
    const qint64 firstChild = graph->selectedCandidate();
    QCOMPARE(window->store()->candidate(firstChild)->parentId, m_ids.root);
    QCOMPARE(currentTreeCandidate(*window), firstChild);
    QTest::keyClick(graph, Qt::Key_Down);
    const qint64 below = graph->selectedCandidate();
    QVERIFY(below != firstChild);
    QCOMPARE(window->store()->candidate(below)->iteration, window->store()->candidate(firstChild)->iteration);
    QVERIFY(graph->nodePosition(below).y() > graph->nodePosition(firstChild).y());
    QTest::keyClick(graph, Qt::Key_Up);
    QCOMPARE(graph->selectedCandidate(), firstChild);
    QTest::keyClick(graph, Qt::Key_Left);
    QCOMPARE(graph->selectedCandidate(), m_ids.root);
    QTest::keyClick(graph, Qt::Key_Left); // the root has no parent: nothing moves
    QCOMPARE(graph->selectedCandidate(), m_ids.root);
    QTest::keyClick(graph, Qt::Key_End);
    QCOMPARE(graph->selectedCandidate(), window->store()->run(m_ids.run)->bestCandidateId);
    QSignalSpy activated(graph, &BeamGraphView::candidateActivated);
    QTest::keyClick(graph, Qt::Key_Return);
    QCOMPARE(activated.count(), 1);
}

// A right-click on a node that is not selected selects it first, and the menu's actions act on it.
void TestViews::contextMenuActsOnWhatIsUnderThePointer()
{
    auto window = openSample();
    QVERIFY(window);
    auto *graph = child<BeamGraphView>(*window, "beamGraph");
    QVERIFY(graph && graph->isVisible());
    window->selectCandidate(m_ids.root);
    QCOMPARE(graph->selectedCandidate(), m_ids.root);
    const QPoint at = graph->mapFromScene(graph->nodePosition(m_ids.tiled));
    QCOMPARE(graph->candidateAt(at), m_ids.tiled);
    QStringList offered;
    bool saveEnabled = false;
    // The menu is modal: read it and close it once it is up.
    QTimer::singleShot(0, this, [&] {
        auto *menu = qobject_cast<QMenu *>(QApplication::activePopupWidget());
        QVERIFY(menu);
        for (QAction *a : menu->actions()) {
            offered << a->objectName();
            if (a->objectName() == QLatin1String("saveKernelAction"))
                saveEnabled = a->isEnabled();
        }
        menu->close();
    });
    QContextMenuEvent event(QContextMenuEvent::Mouse, at, graph->viewport()->mapToGlobal(at));
    QApplication::sendEvent(graph->viewport(), &event);
    QCOMPARE(graph->selectedCandidate(), m_ids.tiled);
    QCOMPARE(currentTreeCandidate(*window), m_ids.tiled);
    QVERIFY2(offered.contains(QStringLiteral("saveKernelAction")), qPrintable(offered.join(QLatin1Char(','))));
    QVERIFY(offered.contains(QStringLiteral("copyDiffAction")));
    QVERIFY(saveEnabled);
}

// Save Kernel As writes the candidate's exact code; Copy Code and Copy as Diff put the code and a unified diff
// against the root on the clipboard; the run exports are the CLI's own (a JSONL archive that imports back).
void TestViews::resultsGoOut()
{
    auto window = openSample();
    QVERIFY(window);
    ResultActions *results = window->resultActions();
    QVERIFY(results);
    QTemporaryDir dir;
    const Candidate tiled = *window->store()->candidate(m_ids.tiled);
    const Candidate root = *window->store()->candidate(m_ids.root);
    QVERIFY(!tiled.code.isEmpty());
    QString error;
    const QString kernel = dir.filePath(results->suggestedKernelName(tiled));
    QVERIFY2(results->saveKernel(m_ids.tiled, kernel, &error), qPrintable(error));
    QFile saved(kernel);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    QCOMPARE(saved.readAll(), tiled.code.toUtf8());
    QVERIFY(!results->saveKernel(999999, dir.filePath(QStringLiteral("none.cpp")), &error));
    QVERIFY2(error.contains(QStringLiteral("999999")), qPrintable(error));

    window->selectCandidate(m_ids.tiled);
    QVERIFY(results->copyCodeAction()->isEnabled());
    results->copyCodeAction()->trigger();
    QCOMPARE(QGuiApplication::clipboard()->text(), tiled.code);
    results->copyDiffAction()->trigger();
    const QString diff = QGuiApplication::clipboard()->text();
    QVERIFY2(diff.startsWith(QStringLiteral("--- a/")), qPrintable(diff.left(200)));
    QVERIFY2(diff.contains(QStringLiteral("\n@@ -")), qPrintable(diff.left(300)));
    QCOMPARE(diff, results->diffAgainstRoot(m_ids.tiled));
    // Every line of the root's code that changed is a removal, every new one an addition.
    QVERIFY(root.code != tiled.code);
    for (const QString &line : tiled.code.split(QLatin1Char('\n')))
        if (!line.isEmpty() && !root.code.contains(line))
            QVERIFY2(diff.contains(QStringLiteral("\n+") + line), qPrintable(line));

    const QString archive = dir.filePath(QStringLiteral("run.jsonl"));
    QVERIFY2(results->exportRun(m_ids.run, ResultActions::RunFormat::Jsonl, archive, &error), qPrintable(error));
    QVERIFY(QFileInfo(archive).size() > 0);
    const qint64 imported = importRunJsonl(*window->store(), archive, &error);
    QVERIFY2(imported > 0, qPrintable(error));
    QCOMPARE(window->store()->candidates(imported).size(), window->store()->candidates(m_ids.run).size());
    QVERIFY(window->store()->deleteRun(imported));
    const QString autocompDir = dir.filePath(QStringLiteral("autocomp-out"));
    QVERIFY2(results->exportRun(m_ids.run, ResultActions::RunFormat::AutocompDir, autocompDir, &error),
             qPrintable(error));
    QVERIFY(QFileInfo(autocompDir).isDir());
}

// Every code and diff view numbers its lines (a diff side leaves its filler rows blank and counts its own
// lines), Ctrl+F finds in code, and a detached diff window closes with Esc or Ctrl+W.
void TestViews::codeViewsNumberLinesAndFind()
{
    auto window = openSample();
    QVERIFY(window);
    window->selectCandidate(m_ids.tiled);
    QVERIFY(window->showView(QStringLiteral("code")));
    auto *code = window->findChild<CandidateInspector *>()->findChild<CodeView *>();
    QVERIFY(code);
    const Candidate tiled = *window->store()->candidate(m_ids.tiled);
    QCOMPARE(code->toPlainText(), tiled.code);
    QVERIFY(code->gutterWidth() > 0);
    QCOMPARE(code->lineNumberOf(0), 1);
    QCOMPARE(code->lineNumberOf(code->document()->blockCount() - 1), code->document()->blockCount());
    // Ctrl+F opens the find bar; typing finds, Esc closes the bar.
    code->setFocus();
    QTest::keyClick(code, Qt::Key_F, Qt::ControlModifier);
    QVERIFY(code->findField()->isVisible());
    const QString word = tiled.code.split(QRegularExpression(QStringLiteral("\\W+")), Qt::SkipEmptyParts).last();
    QTest::keyClicks(code->findField(), word);
    QCOMPARE(code->textCursor().selectedText(), word);
    QTest::keyClick(code->findField(), Qt::Key_Escape);
    QVERIFY(!code->findField()->isVisible());
    QVERIFY(!code->find(QStringLiteral("no such text anywhere in this kernel")));

    // The diff's sides: the removed lines of the root on the left, blank numbers on filler rows.
    QVERIFY(window->showView(QStringLiteral("diff")));
    auto *left = qobject_cast<CodeView *>(window->diffView()->findChild<QPlainTextEdit *>(QStringLiteral("diffLeft")));
    QVERIFY(left);
    QCOMPARE(left->numbering(), CodeView::Numbering::DiffSide);
    int counted = 0;
    for (QTextBlock block = left->document()->begin(); block.isValid(); block = block.next()) {
        const bool filler = block.blockFormat().property(DiffView::LineKindProperty).toInt()
            == int(DiffView::LineKind::Filler);
        if (filler)
            QCOMPARE(left->lineNumberOf(block.blockNumber()), 0);
        else
            QCOMPARE(left->lineNumberOf(block.blockNumber()), ++counted);
    }
    const Candidate root = *window->store()->candidate(m_ids.root);
    QCOMPARE(counted, int(root.code.split(QLatin1Char('\n')).size() - (root.code.endsWith(QLatin1Char('\n')) ? 1 : 0)));

    for (const QKeySequence &keys : {QKeySequence(Qt::Key_Escape), QKeySequence(Qt::CTRL | Qt::Key_W)}) {
        QPointer<DiffView> detached = window->openDiffWindow();
        QVERIFY(detached);
        QVERIFY(QTest::qWaitForWindowExposed(detached));
        QApplication::setActiveWindow(detached); // the offscreen platform leaves activation to the caller
        QTRY_COMPARE(QApplication::activeWindow(), detached.data());
        QTest::keySequence(detached, keys);
        QTRY_VERIFY2(!detached, qPrintable(keys.toString()));
    }
}

// Switching to the dark theme (as the settings dialog does) repaints the open diff's rows and every chart with dark
// backgrounds at once, with no restart; switching back makes them light again.
void TestViews::themeSwitchRepaintsDiffAndCharts()
{
    auto window = openSample();
    QVERIFY(window);
    window->selectCandidate(m_ids.tiled);
    QVERIFY(window->showView(QStringLiteral("diff")));
    auto *right = window->diffView()->findChild<QPlainTextEdit *>(QStringLiteral("diffRight"));
    QVERIFY(right);
    const auto changedRowBackground = [&]() -> QColor {
        for (QTextBlock block = right->document()->begin(); block.isValid(); block = block.next())
            if (block.blockFormat().property(DiffView::LineKindProperty).toInt() == int(DiffView::LineKind::Added))
                return block.blockFormat().background().color();
        return {};
    };
    auto *insights = window->menuInsights();
    auto *latency = child<LatencyChart>(*window, "latencyChart");
    QVERIFY(insights && latency);
    const auto check = [&](bool dark) {
        const QColor row = changedRowBackground();
        QVERIFY(row.isValid());
        QCOMPARE(row.lightness() < 128, dark);
        QCOMPARE(insights->chart()->theme(), dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
        QCOMPARE(latency->chartView()->chart()->theme(), dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    };
    Theme::apply(QStringLiteral("light"));
    QCoreApplication::processEvents();
    check(false);
    Theme::apply(QStringLiteral("dark"));
    QCoreApplication::processEvents();
    check(true);
    Theme::apply(QStringLiteral("light"));
    QCoreApplication::processEvents();
    check(false);
    Theme::apply(QStringLiteral("system"));
}

void TestViews::diffShowsParentAndChild()
{
    auto window = openSample();
    QVERIFY(window);
    window->selectCandidate(m_ids.tiled);
    QVERIFY(window->showView(QStringLiteral("diff")));
    auto *diff = child<DiffView>(*window, "diffView");
    auto *left = child<QPlainTextEdit>(*window, "diffLeft");
    auto *right = child<QPlainTextEdit>(*window, "diffRight");
    auto *compare = child<QComboBox>(*window, "diffCompareWith");
    QVERIFY(diff && left && right && compare);
    QVERIFY(diff->isVisible());
    QCOMPARE(diff->compareWithId(), m_ids.root);
    QCOMPARE(compare->currentData().toLongLong(), m_ids.root);
    QCOMPARE(left->document()->blockCount(), right->document()->blockCount());
    QVERIFY(left->isReadOnly() && right->isReadOnly());

    const QString oldLine = QStringLiteral("void gemm(int n, const float *a, const float *b, float *c) {");
    const QString newLine = QStringLiteral("void gemm(int n, const float *__restrict a, const float *b, float *c) {");
    const int row = findBlock(left, oldLine);
    QVERIFY(row >= 0);
    QCOMPARE(right->document()->findBlockByNumber(row).text(), newLine);
    QCOMPARE(kindOf(left, row), DiffView::LineKind::Removed);
    QCOMPARE(kindOf(right, row), DiffView::LineKind::Added);
    QVERIFY(left->document()->findBlockByNumber(row).blockFormat().background().style() != Qt::NoBrush);
    QVERIFY(right->document()->findBlockByNumber(row).blockFormat().background().style() != Qt::NoBrush);
    QVERIFY(hasChangedSpan(right, row, QStringLiteral("__restrict")));
    QVERIFY(!hasChangedSpan(right, row, QStringLiteral("gemm")));
    // Unchanged lines carry no highlight.
    const int same = findBlock(left, QStringLiteral("// naive gemm"));
    QCOMPARE(kindOf(left, same), DiffView::LineKind::Same);
    QCOMPARE(left->document()->findBlockByNumber(same).blockFormat().background().style(), Qt::NoBrush);
}

void TestViews::bigGraphIsLaidOutOffTheGuiThread()
{
    // A run of 3,000 candidates: its full layout is computed on the thread pool; a candidate that streams
    // in meanwhile is placed once it is applied.
    BeamGraphView view;
    QList<Candidate> candidates;
    Candidate root;
    root.id = 1;
    root.iteration = 0;
    root.origin = CandidateOrigin::Root;
    root.status = CandidateStatus::Correct;
    root.score = 100;
    candidates << root;
    for (int i = 2; i <= 3000; ++i) {
        Candidate c;
        c.id = i;
        c.parentId = i <= 9 ? 1 : 2 + (i * 7919) % 7; // iteration 1: ids 2-9, then children of those
        c.iteration = i <= 9 ? 1 : 2;
        c.status = CandidateStatus::Correct;
        c.score = 50 + i % 40;
        candidates << c;
    }
    view.setCandidates(candidates);
    QVERIFY(view.isLayoutPending());
    QSignalSpy done(&view, &BeamGraphView::layoutFinished);
    Candidate late;
    late.id = 3001;
    late.parentId = 5;
    late.iteration = 2;
    late.status = CandidateStatus::Coding;
    view.upsertCandidate(late);
    QVERIFY(done.wait(60000));
    QVERIFY(!view.isLayoutPending());
    view.flushPendingUpdates();
    QCOMPARE(view.nodeCount(), 3001);
    // Columns are iterations, and every node has its own place.
    const double column1 = view.nodePosition(2).x();
    QVERIFY(column1 > 0);
    QSet<std::pair<double, double>> places;
    for (qint64 id = 2; id <= 3001; ++id) {
        const QPointF p = view.nodePosition(id);
        QVERIFY2(!p.isNull(), qPrintable(QString::number(id)));
        QCOMPARE(p.x(), id <= 9 ? column1 : 2 * column1);
        places.insert({p.x(), p.y()});
    }
    QCOMPARE(places.size(), 3000);
}

void TestViews::largeDiffLeavesTheGuiThread()
{
    // Two 20,000-line files: diffed on the thread pool while the view says so, then shown.
    DiffView view;
    Candidate parent;
    parent.id = 1;
    Candidate child;
    child.id = 2;
    child.parentId = 1;
    for (int i = 0; i < 20000; ++i) {
        parent.code += QStringLiteral("    c[%1] += a[%1] * b[%1]; // line %1\n").arg(i);
        child.code += i % 1000 == 7 ? QStringLiteral("    c[%1] = fma(a[%1], b[%1], c[%1]); // line %1\n").arg(i)
                                    : QStringLiteral("    c[%1] += a[%1] * b[%1]; // line %1\n").arg(i);
    }
    view.setLookup([parent](qint64 id) { return id == parent.id ? std::optional<Candidate>(parent) : std::nullopt; });
    view.upsertCandidate(parent);
    view.setCandidate(child);
    auto *summary = view.findChild<QLabel *>(QStringLiteral("diffSummary"));
    QVERIFY(summary);
    QVERIFY2(summary->text().startsWith(QStringLiteral("Comparing")), qPrintable(summary->text()));
    QTRY_VERIFY_WITH_TIMEOUT(summary->text().contains(QStringLiteral("20 change")), 60000);
    QVERIFY2(summary->text().contains(QStringLiteral("−20 +20")), qPrintable(summary->text()));
}

void TestViews::diffNavigatesChanges()
{
    auto window = openSample();
    QVERIFY(window);
    window->selectCandidate(m_ids.tiled);
    QVERIFY(window->showView(QStringLiteral("diff")));
    auto *diff = child<DiffView>(*window, "diffView");
    auto *right = child<QPlainTextEdit>(*window, "diffRight");
    auto *next = child<QToolButton>(*window, "diffNext");
    auto *previous = child<QToolButton>(*window, "diffPrevious");
    QVERIFY(diff && right && next && previous);
    const QList<int> changes = diff->changeRows();
    QCOMPARE(changes.size(), 2);

    QTest::mouseClick(next, Qt::LeftButton);
    QCOMPARE(right->textCursor().blockNumber(), changes.at(0));
    QTest::mouseClick(next, Qt::LeftButton);
    QCOMPARE(right->textCursor().blockNumber(), changes.at(1));
    QCOMPARE(right->textCursor().block().text(), QStringLiteral("            c[i * n + j] = 2 * sum;"));
    QTest::mouseClick(next, Qt::LeftButton); // no change after the last
    QCOMPARE(right->textCursor().blockNumber(), changes.at(1));
    QTest::mouseClick(previous, Qt::LeftButton);
    QCOMPARE(right->textCursor().blockNumber(), changes.at(0));

    // The shortcuts do the same while the diff has focus.
    right->setFocus();
    QTest::keyClick(right, Qt::Key_F8);
    QCOMPARE(child<QPlainTextEdit>(*window, "diffLeft")->textCursor().blockNumber(), changes.at(1));
    QTest::keyClick(right, Qt::Key_Up, Qt::ControlModifier | Qt::AltModifier);
    QCOMPARE(right->textCursor().blockNumber(), changes.at(0));
}

void TestViews::diffComparesWithAncestorAndPlan()
{
    auto window = openSample();
    QVERIFY(window);
    window->selectCandidate(m_ids.unrolled);
    QVERIFY(window->showView(QStringLiteral("diff")));
    auto *diff = child<DiffView>(*window, "diffView");
    auto *left = child<QPlainTextEdit>(*window, "diffLeft");
    auto *compare = child<QComboBox>(*window, "diffCompareWith");
    auto *mode = child<QComboBox>(*window, "diffMode");
    QVERIFY(diff && left && compare && mode);
    QCOMPARE(diff->compareWithId(), m_ids.tiled);
    // Parent, root, then every other candidate of the run.
    QVERIFY(compare->findData(m_ids.root) >= 0);
    QVERIFY(compare->findData(m_ids.slow) >= 0);
    QVERIFY(compare->itemText(compare->findData(m_ids.root)).startsWith(QStringLiteral("Root")));

    compare->setCurrentIndex(compare->findData(m_ids.root));
    QCOMPARE(diff->compareWithId(), m_ids.root);
    QVERIFY(findBlock(left, QStringLiteral("            c[i * n + j] = sum;")) >= 0);

    mode->setCurrentIndex(mode->findText(QStringLiteral("Plan")));
    QCOMPARE(diff->mode(), DiffView::Mode::Plan);
    compare->setCurrentIndex(compare->findData(m_ids.tiled));
    auto *right = child<QPlainTextEdit>(*window, "diffRight");
    const int row = findBlock(left, QStringLiteral("Keep B in L1."));
    QVERIFY(row >= 0);
    QCOMPARE(right->document()->findBlockByNumber(row).text(), QStringLiteral("Unroll k by 4."));
    QCOMPARE(kindOf(left, row), DiffView::LineKind::Removed);
}

void TestViews::graphBatchesLiveUpdates()
{
    BeamGraphView graph;
    graph.resize(600, 400);
    graph.show();
    QVERIFY(QTest::qWaitForWindowExposed(&graph));
    Candidate root = make(1, 0, 0, CandidateStatus::Correct, 10, true);
    root.id = 1;
    graph.setCandidates({root});

    for (int i = 0; i < 50; ++i) {
        Candidate c = make(1, 1, 1, CandidateStatus::Compiling, std::nan(""));
        c.id = 100 + i;
        graph.upsertCandidate(c);
    }
    // Appended at once, laid out on the timer.
    QCOMPARE(graph.nodeCount(), 51);
    QCOMPARE(graph.nodePosition(149), QPointF());
    QTRY_VERIFY(!graph.nodePosition(149).isNull());
    QCOMPARE(graph.nodePosition(149).x(), graph.nodePosition(100).x());
    QVERIFY(graph.nodePosition(149).y() > graph.nodePosition(100).y());
    QCOMPARE(graph.nodeState(120), BeamGraphView::NodeState::Compiling);

    Candidate done = make(1, 1, 1, CandidateStatus::Correct, 2, false);
    done.id = 120;
    graph.upsertCandidate(done);
    QTRY_COMPARE(graph.bestPath(), (QList<qint64>{1, 120}));
    QCOMPARE(graph.nodeState(120), BeamGraphView::NodeState::Correct); // its beam selection is still to come
    QCOMPARE(graph.nodeCount(), 51);
}

void TestViews::chartFindsVendorLine()
{
    LatencyChart chart;
    Candidate root = make(1, 0, 0, CandidateStatus::Correct, 10, true);
    root.id = 1;
    chart.setCandidates({root}, QStringLiteral("latency_ms"));
    QCOMPARE(chart.vendorSeries()->count(), 0);

    Candidate child = make(1, 1, 1, CandidateStatus::Correct, 5);
    child.id = 2;
    child.feedback = {
        QStringLiteral("median latency 5 ms at M=512"),
        QStringLiteral(
            "OpenBLAS sgemm: 1.25 ms at K=512,M=512,N=512 on one core; this candidate runs at 0.25x its speed")};
    QString name;
    QCOMPARE(LatencyChart::vendorScoreOf(child, &name), 1.25);
    QCOMPARE(name, QStringLiteral("OpenBLAS sgemm"));
    chart.upsertCandidate(child);
    chart.flushPendingUpdates();
    QCOMPARE(chart.pointCount(), 2);
    QCOMPARE(chart.vendorSeries()->count(), 2);
    QCOMPARE(chart.vendorSeries()->at(0).y(), 1.25);
    QCOMPARE(chart.vendorSeries()->name(), QStringLiteral("OpenBLAS sgemm"));

    chart.setLogScale(true);
    QVERIFY(chart.logScale());
    QCOMPARE(chart.pointCount(), 2);
}

void TestViews::chartAppendsLivePointsInPlace()
{
    LatencyChart chart;
    QList<Candidate> first;
    for (qint64 id = 1; id <= 20; ++id) {
        Candidate c = make(1, id == 1 ? 0 : 1, id == 1 ? 0 : 1,
                           id % 5 == 0 ? CandidateStatus::CompileError : CandidateStatus::Correct,
                           id == 1 ? 100 : 50 + double(id));
        c.id = id;
        first.append(c);
    }
    chart.setCandidates(first, QStringLiteral("latency_ms"));
    const QList<QPointF> correctBefore = chart.correctPoints();
    const QList<QPointF> failedBefore = chart.failedPoints();
    QCOMPARE(chart.pointCount(), 20);

    // A later candidate in the same iteration, a faster one in the next and one still being evaluated.
    Candidate same = make(1, 1, 1, CandidateStatus::Correct, 60);
    same.id = 21;
    Candidate faster = make(1, 2, 2, CandidateStatus::Correct, 10);
    faster.id = 22;
    Candidate coding = make(1, 2, 2, CandidateStatus::Coding, 0);
    coding.id = 23;
    chart.upsertCandidates({same, faster, coding});
    chart.flushPendingUpdates();
    QCOMPARE(chart.pointCount(), 22);
    // The points already plotted keep their places; the new ones come after them, inside their iteration's column.
    QCOMPARE(chart.correctPoints().mid(0, correctBefore.size()), correctBefore);
    QCOMPARE(chart.failedPoints(), failedBefore);
    const QPointF added = chart.correctPoints().last();
    QVERIFY(added.x() > 1.5 && added.x() < 2.5);
    QCOMPARE(chart.candidateAt(chart.correctSeries(), added), 22);
    QCOMPARE(chart.bestSeries()->points().last().y(), 10.0);

    // Finishing the last one adds its cross; toggling the scale moves nothing.
    coding.status = CandidateStatus::Incorrect;
    chart.upsertCandidate(coding);
    chart.flushPendingUpdates();
    QCOMPARE(chart.failedPoints().size(), failedBefore.size() + 1);
    const QList<QPointF> correctNow = chart.correctPoints();
    chart.setLogScale(!chart.logScale());
    QCOMPARE(chart.correctPoints(), correctNow);
    QCOMPARE(chart.pointCount(), 23);
}

// The diff names its hunks as git diff does (ranges, then the enclosing function), in both layouts, scrolls to the
// one picked, and is highlighted in the target's language (plans as markdown).
void TestViews::diffHeadsHunksAndHighlightsTheLanguage()
{
    QString before;
    QString after;
    for (int f = 0; f < 2; ++f) {
        before += QStringLiteral("void kernel%1(float *x, int n) {\n").arg(f);
        after += QStringLiteral("void kernel%1(float *x, int n) {\n").arg(f);
        for (int i = 0; i < 20; ++i) {
            before += QStringLiteral("    x[%1] += 1.0f; // step %1\n").arg(i);
            after += i == 12 ? QStringLiteral("    x[%1] += 2.0f; // step %1, doubled\n").arg(i)
                             : QStringLiteral("    x[%1] += 1.0f; // step %1\n").arg(i);
        }
        before += QStringLiteral("}\n");
        after += QStringLiteral("}\n");
    }
    DiffView view;
    view.resize(900, 300);
    Candidate parent;
    parent.id = 1;
    parent.code = before;
    Candidate changed;
    changed.id = 2;
    changed.parentId = 1;
    changed.code = after;
    changed.plan = QStringLiteral("# Plan\nDouble **step 12**.\n");
    view.setLookup([parent](qint64 id) { return id == parent.id ? std::optional<Candidate>(parent) : std::nullopt; });
    view.upsertCandidate(parent);
    view.setLanguage(QStringLiteral("cpp"));
    view.setCandidate(changed);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));

    // The same headers as the unified patch (libgit2), each on the row of its first line.
    QStringList expected;
    for (const QString &line : DiffView::unifiedPatch(before, after, QStringLiteral("k.cpp"), QStringLiteral("k.cpp"))
                                   .split(QLatin1Char('\n')))
        if (line.startsWith(QLatin1String("@@")))
            expected << line;
    const QList<DiffView::Hunk> hunks = view.hunks();
    QCOMPARE(hunks.size(), 2);
    QCOMPARE(expected.size(), 2);
    auto *right = child<QPlainTextEdit>(view, "diffRight");
    for (int i = 0; i < 2; ++i) {
        QCOMPARE(hunks.at(i).header, expected.at(i));
        QVERIFY2(hunks.at(i).header.startsWith(QStringLiteral("@@ -%1,7 +%1,7 @@").arg(i * 22 + 11)),
                 qPrintable(hunks.at(i).header));
        QVERIFY2(hunks.at(i).header.endsWith(QStringLiteral("void kernel%1(float *x, int n) {").arg(i)),
                 qPrintable(hunks.at(i).header));
        QCOMPARE(right->document()->findBlockByNumber(hunks.at(i).row).text(),
                 QStringLiteral("    x[9] += 1.0f; // step 9"));
    }
    auto *selector = child<QComboBox>(view, "diffHunks");
    QVERIFY(selector && selector->isVisible());
    QCOMPARE(selector->count(), 2);
    QVERIFY(selector->itemText(1).contains(expected.at(1)));
    view.showHunk(1);
    QCOMPARE(view.currentHunk(), 1);
    QCOMPARE(selector->currentIndex(), 1);
    QCOMPARE(right->cursorForPosition(QPoint(0, 0)).blockNumber(), hunks.at(1).row);
    right->verticalScrollBar()->setValue(0); // scrolling back follows in the selector
    QCOMPARE(selector->currentIndex(), 0);

    view.setDiffLayout(DiffView::Layout::Unified);
    QVERIFY(selector->isVisible());
    QCOMPARE(selector->count(), 2);
    auto *unified = child<QPlainTextEdit>(view, "diffUnified");
    view.showHunk(1);
    QCOMPARE(view.currentHunk(), 1);
    QCOMPARE(unified->cursorForPosition(QPoint(0, 0)).block().text(), QStringLiteral("      x[9] += 1.0f; // step 9"));

    // Highlighted as C++: a keyword line carries the highlighter's formats; plans are markdown.
    const auto highlighted = [](QPlainTextEdit *edit, const QString &text) {
        for (QTextBlock block = edit->document()->begin(); block.isValid(); block = block.next())
            if (block.text().contains(text))
                return !block.layout()->formats().isEmpty();
        return false;
    };
    QVERIFY(!unified->document()->findChildren<QSyntaxHighlighter *>().isEmpty());
    QTRY_VERIFY(highlighted(unified, QStringLiteral("void kernel1")));
    view.setDiffLayout(DiffView::Layout::SideBySide);
    QTRY_VERIFY(highlighted(right, QStringLiteral("void kernel0")));
    view.setMode(DiffView::Mode::Plan);
    QTRY_VERIFY(highlighted(right, QStringLiteral("# Plan")));
}

// The Evaluation tab keeps a compiler log's line breaks and links each `candidate.cpp:LINE` to the Code tab, which
// shows and highlights that line; the files' folder is one click away while it exists, and says why when not.
void TestViews::logsLinkToCodeLinesAndTheFolder()
{
    QTemporaryDir job(QDir::tempPath() + QStringLiteral("/autocomp-eval-XXXXXX"));
    QVERIFY(job.isValid());
    QVERIFY(QDir(job.path()).mkpath(QStringLiteral("work")));
    CandidateInspector inspector;
    inspector.resize(800, 600);
    inspector.show();
    QVERIFY(QTest::qWaitForWindowExposed(&inspector));
    Candidate c;
    c.id = 7;
    c.status = CandidateStatus::CompileError;
    c.code = QStringLiteral("void k() {\n  int x;\n  x = 1\n}\n");
    c.error = QStringLiteral("compile failed at candidate.cpp:2:3 (see also other_candidate.cpp:4 and baseline.cpp:5)");
    inspector.setCandidate(c, {}, {compileStep(job.path())}, QStringLiteral("latency_ms"), QStringLiteral("cpp"));
    inspector.setCurrentIndex(CandidateInspector::EvaluationTab);
    auto *evaluation = child<QTextBrowser>(inspector, "evaluationView");
    QVERIFY(evaluation);
    const QString text = evaluation->toPlainText();
    QVERIFY2(text.contains(QStringLiteral("In function 'void k()':\n") + job.path()
                           + QStringLiteral("/work/candidate.cpp:3:7: error")),
             qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("    3 |   x = 1\n")));
    const QString html = evaluation->toHtml();
    QVERIFY(html.contains(QLatin1String("autocomp-line:3")));
    QVERIFY(html.contains(QLatin1String("autocomp-line:2")));
    QVERIFY(!html.contains(QLatin1String("autocomp-line:4"))); // another file's lines are not the candidate's
    QVERIFY(!html.contains(QLatin1String("autocomp-line:5")));

    QVERIFY(clickText(evaluation, QStringLiteral("candidate.cpp:3:7")));
    QCOMPARE(inspector.currentIndex(), int(CandidateInspector::CodeTab));
    QCOMPARE(inspector.highlightedLine(), 3);
    auto *code = child<CodeView>(inspector, "codeView");
    QCOMPARE(code->textCursor().blockNumber(), 2);
    QCOMPARE(code->extraSelections().size(), 1);
    QCOMPARE(code->extraSelections().first().cursor.block().text(), QStringLiteral("  x = 1"));
    inspector.setCurrentIndex(CandidateInspector::EvaluationTab);
    QVERIFY(clickText(evaluation, QStringLiteral("candidate.cpp:2:3")));
    QCOMPARE(inspector.highlightedLine(), 2);
    QVERIFY(!inspector.showCodeLine(99)); // no such line: nothing moves
    QCOMPARE(inspector.highlightedLine(), 2);

    UrlCatcher catcher;
    QDesktopServices::setUrlHandler(QStringLiteral("file"), &catcher, "open");
    const auto unset = qScopeGuard([] { QDesktopServices::unsetUrlHandler(QStringLiteral("file")); });
    inspector.setCurrentIndex(CandidateInspector::EvaluationTab);
    QVERIFY(clickText(evaluation, QStringLiteral("Open the folder of the evaluation's files")));
    QCOMPARE(catcher.urls, QList<QUrl>{QUrl::fromLocalFile(job.path())});

    // Removed (keep_workdirs off): no link, the reason instead.
    QString why;
    QCOMPARE(CandidateInspector::evaluationFolder({compileStep(job.path())}, &why), job.path());
    QVERIFY(job.remove());
    QCOMPARE(CandidateInspector::evaluationFolder({compileStep(job.path())}, &why), QString());
    QVERIFY2(why.contains(QLatin1String("removed")) && why.contains(QLatin1String("keep_workdirs")), qPrintable(why));
    inspector.setCandidate(c, {}, {compileStep(job.path())}, QStringLiteral("latency_ms"), QStringLiteral("cpp"));
    QCOMPARE(inspector.highlightedLine(), 0);
    QVERIFY(evaluation->toPlainText().contains(why));
    QVERIFY(!evaluation->toHtml().contains(QUrl::fromLocalFile(job.path()).toString()));
    QCOMPARE(CandidateInspector::evaluationFolder({}, &why), QString());
    QVERIFY2(why.contains(QLatin1String("Not evaluated")), qPrintable(why));
}

// The candidate menu's Open Folder opens the evaluation's folder of the candidate selected, and is disabled, saying
// why, for one that has none on this machine.
void TestViews::openFolderActsOnTheEvaluationFiles()
{
    auto window = openSample();
    QVERIFY(window);
    QTemporaryDir job(QDir::tempPath() + QStringLiteral("/autocomp-eval-XXXXXX"));
    QVERIFY(job.isValid());
    EvalResult result;
    result.status = QStringLiteral("compile_error");
    result.steps = {compileStep(job.path())};
    QVERIFY2(window->store()->addEvaluation(m_ids.slow, result), qPrintable(window->store()->lastError()));
    QAction *open = window->resultActions()->openFolderAction();
    QVERIFY(open);
    QVERIFY(window->resultActions()->candidateActions().contains(open));
    window->selectCandidate(m_ids.tiled);
    QVERIFY(!open->isEnabled());
    QVERIFY2(open->toolTip().contains(QLatin1String("Not evaluated")), qPrintable(open->toolTip()));
    window->selectCandidate(m_ids.slow);
    QVERIFY(open->isEnabled());
    UrlCatcher catcher;
    QDesktopServices::setUrlHandler(QStringLiteral("file"), &catcher, "open");
    const auto unset = qScopeGuard([] { QDesktopServices::unsetUrlHandler(QStringLiteral("file")); });
    open->trigger();
    QCOMPARE(catcher.urls, QList<QUrl>{QUrl::fromLocalFile(job.path())});
}

QTEST_MAIN(TestViews)
#include "tst_views.moc"
