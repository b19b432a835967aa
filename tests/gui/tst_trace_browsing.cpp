// Browsing traces: runs side by side, search in a run, the diff in the middle or a window of its own
// (side by side, synchronized, or unified), graph nodes named by their strategy, the runs table's columns,
// and PNG/SVG export of the latency chart and the graph; on a store built here through the RunStore API.
#include "charts/beam_graph_view.h"
#include "models/candidate_filter_proxy.h"
#include "editors/diff_view.h"
#include "charts/latency_chart.h"
#include "frame/main_window.h"
#include "models/run_list_model.h"
#include "charts/runs_comparison_view.h"
#include "store/run_store.h"

#include <QChart>
#include <QComboBox>
#include <QFile>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSplitter>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QToolButton>
#include <QTreeView>

using namespace autocomp;

namespace {

const QString Tile = QStringLiteral("Tile the loops for the cache hierarchy (L1/L2) and pack the reused tiles");
const QString Vectorize = QStringLiteral("Vectorize the innermost loop with AVX2/FMA intrinsics, with a scalar tail");

struct Ids
{
    qint64 runA = 0, runB = 0;
    qint64 rootA = 0, tiled = 0, vectorized = 0, broken = 0, best = 0;
};

QString longCode(const QString &marker, int lines)
{
    QString code;
    for (int i = 0; i < lines; ++i)
        code +=
            QStringLiteral("    acc += a[%1] * b[%1]; // line %1%2\n").arg(i).arg(i == lines / 2 ? marker : QString());
    return QStringLiteral("void gemm(const float *a, const float *b, float *c) {\n    float acc = 0;\n") + code
        + QStringLiteral("}\n");
}

Ids build(RunStore &store)
{
    Ids ids;
    const auto run = [&](const QString &target, const QString &problem, double baseline, double best,
                         const QString &config) {
        RunInfo r;
        r.target = target;
        r.problem = problem;
        r.agent = target;
        r.metric = QStringLiteral("latency_ms");
        r.state = RunState::Finished;
        r.baselineScore = baseline;
        r.bestScore = best;
        r.iteration = 2;
        r.configYaml = config;
        r.usd = 0.42;
        r.llmCalls = 12;
        return store.createRun(r);
    };
    const auto add = [&](qint64 runId, qint64 parent, int iteration, CandidateStatus status, double score,
                         const QString &item, const QString &code, const QString &plan = QString()) {
        Candidate c;
        c.runId = runId;
        c.parentId = parent;
        c.iteration = iteration;
        c.origin = parent == 0 ? CandidateOrigin::Root : CandidateOrigin::Llm;
        c.status = status;
        c.score = score;
        c.menuItem = item;
        c.code = code;
        c.plan = plan.isEmpty() ? QStringLiteral("Chosen optimization: ") + item : plan;
        c.planModel = QStringLiteral("vllm::m1");
        c.codeModel = QStringLiteral("vllm::m1");
        return store.addCandidate(c);
    };
    ids.runA = run(
        QStringLiteral("cpu"), QStringLiteral("gemm"), 10, 4,
        QStringLiteral(
            "target: cpu\nproblem: gemm\nmodels: {plan: [\"vllm::m1\"]}\nsearch: {iterations: 2, beam_width: 2}\n"));
    ids.rootA = add(ids.runA, 0, 0, CandidateStatus::Correct, 10, QString(), longCode(QString(), 120));
    ids.tiled = add(ids.runA, ids.rootA, 1, CandidateStatus::Correct, 5, Tile,
                    longCode(QStringLiteral(" tiled 64x64"), 120),
                    QStringLiteral("Block the i and j loops by 64 (blocking factor)."));
    ids.vectorized = add(ids.runA, ids.rootA, 1, CandidateStatus::Incorrect, std::nan(""), Vectorize,
                         longCode(QStringLiteral(" _mm256_fmadd_ps"), 120));
    ids.broken = add(ids.runA, ids.tiled, 2, CandidateStatus::CompileError, std::nan(""), Vectorize,
                     longCode(QStringLiteral(" syntax error"), 120));
    ids.best = add(ids.runA, ids.tiled, 2, CandidateStatus::Correct, 4, Vectorize,
                   longCode(QStringLiteral(" tiled and vectorized"), 120));
    store.setBeam(ids.runA, {ids.best});

    ids.runB = run(
        QStringLiteral("rvv"), QStringLiteral("saxpy"), 200, 100,
        QStringLiteral(
            "target: rvv\nproblem: saxpy\nmodels: {plan: [\"vllm::m2\"]}\nsearch: {iterations: 2, beam_width: 4}\n"));
    const qint64 rootB = add(ids.runB, 0, 0, CandidateStatus::Correct, 200, QString(),
                             QStringLiteral("void saxpy() {}\n"));
    const qint64 b1 = add(ids.runB, rootB, 1, CandidateStatus::Correct, 100, Vectorize,
                          QStringLiteral("void saxpy() { /* v */ }\n"));
    add(ids.runB, b1, 2, CandidateStatus::Correct, 150, Tile, QStringLiteral("void saxpy() { /* t */ }\n"));
    return ids;
}

bool isPng(const QString &path)
{
    QImage image;
    return image.load(path, "PNG") && image.width() > 100 && image.height() > 100;
}

bool isSvgWith(const QString &path, const QString &text)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    const QString svg = QString::fromUtf8(file.readAll());
    return svg.contains(QStringLiteral("<svg")) && svg.contains(text);
}

} // namespace

class TestTraceBrowsing : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void runsSideBySide();
    void searchInARun();
    void diffInTheMiddleAndInAWindow();
    void unifiedDiff();
    void graphNodesSayWhatTheyTried();
    void runsTableColumnsFit();
    void exportChartAndGraph();

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_path;
    Ids m_ids;
    std::unique_ptr<MainWindow> m_window;
};

void TestTraceBrowsing::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    m_dir = std::make_unique<QTemporaryDir>();
    m_path = m_dir->filePath(QStringLiteral("runs.sqlite"));
    QString error;
    auto store = RunStore::open(m_path, &error);
    QVERIFY2(store, qPrintable(error));
    m_ids = build(*store);
}

void TestTraceBrowsing::init()
{
    QString error;
    auto store = RunStore::open(m_path, &error);
    QVERIFY(store);
    m_window = std::make_unique<MainWindow>(std::move(store));
    m_window->resize(1600, 1000);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    QVERIFY(m_window->selectRun(m_ids.runA));
}

void TestTraceBrowsing::cleanup() { m_window.reset(); }

void TestTraceBrowsing::runsSideBySide()
{
    // The curve: best so far after each iteration over the run's own baseline.
    QString error;
    auto store = RunStore::open(m_path, &error);
    QCOMPARE(RunsComparisonView::bestSoFarCurve(store->candidates(m_ids.runA), 10),
             (QList<QPointF>{{0, 1}, {1, 2}, {2, 2.5}}));
    QCOMPARE(RunsComparisonView::bestSoFarCurve(store->candidates(m_ids.runB), 200),
             (QList<QPointF>{{0, 1}, {1, 2}, {2, 2}}));

    RunsComparisonView *view = m_window->openRunsComparison({m_ids.runA, m_ids.runB});
    QVERIFY(view);
    QVERIFY(QTest::qWaitForWindowExposed(view));
    QCOMPARE(view->comparedRuns(), (QList<qint64>{m_ids.runA, m_ids.runB}));
    const auto series = view->chart()->series();
    QCOMPARE(series.size(), 2);
    QHash<QString, QList<QPointF>> curves;
    for (QAbstractSeries *s : series)
        curves.insert(s->name(), static_cast<QLineSeries *>(s)->points());
    QCOMPARE(curves.value(QStringLiteral("run %1 · cpu/gemm").arg(m_ids.runA)),
             (QList<QPointF>{{0, 1}, {1, 2}, {2, 2.5}}));
    QCOMPARE(curves.value(QStringLiteral("run %1 · rvv/saxpy").arg(m_ids.runB)),
             (QList<QPointF>{{0, 1}, {1, 2}, {2, 2}}));
    // The table: one column per run, its settings and results.
    QTableWidget *table = view->table();
    QCOMPARE(table->columnCount(), 2);
    int beamRow = -1, speedupRow = -1, modelRow = -1;
    for (int r = 0; r < table->rowCount(); ++r) {
        const QString name = table->verticalHeaderItem(r)->text();
        beamRow = name == QLatin1String("Beam width") ? r : beamRow;
        speedupRow = name == QLatin1String("Speedup") ? r : speedupRow;
        modelRow = name == QLatin1String("Plan models") ? r : modelRow;
    }
    QVERIFY(beamRow >= 0 && speedupRow >= 0 && modelRow >= 0);
    const int columnA = table->horizontalHeaderItem(0)->text() == QStringLiteral("Run %1").arg(m_ids.runA) ? 0 : 1;
    QCOMPARE(table->item(beamRow, columnA)->text(), QStringLiteral("2"));
    QCOMPARE(table->item(beamRow, 1 - columnA)->text(), QStringLiteral("4"));
    QCOMPARE(table->item(speedupRow, columnA)->text(), QStringLiteral("2.50×"));
    QCOMPARE(table->item(modelRow, 1 - columnA)->text(), QStringLiteral("vllm::m2"));
    // Unticking a run takes its curve and column away.
    QListWidget *list = view->runList();
    for (int i = 0; i < list->count(); ++i)
        if (list->item(i)->data(Qt::UserRole).toLongLong() == m_ids.runB)
            list->item(i)->setCheckState(Qt::Unchecked);
    QCOMPARE(view->chart()->series().size(), 1);
    QCOMPARE(view->table()->columnCount(), 1);
    view->close();
}

void TestTraceBrowsing::searchInARun()
{
    auto *search = m_window->findChild<QLineEdit *>(QStringLiteral("candidateSearch"));
    auto *status = m_window->findChild<QComboBox *>(QStringLiteral("candidateStatusFilter"));
    auto *strategy = m_window->findChild<QComboBox *>(QStringLiteral("candidateStrategyFilter"));
    auto *count = m_window->findChild<QLabel *>(QStringLiteral("candidateSearchCount"));
    QVERIFY(search && status && strategy && count);
    CandidateFilterProxy *proxy = m_window->candidateSearch();
    const auto matches = [&] {
        QList<qint64> ids = proxy->matchingIds();
        std::sort(ids.begin(), ids.end());
        return ids;
    };
    // Text in the code.
    QTest::keyClicks(search, QStringLiteral("_MM256"));
    QCOMPARE(matches(), QList<qint64>{m_ids.vectorized});
    QCOMPARE(count->text(), QStringLiteral("1 of 5"));
    QVERIFY(m_window->beamGraph()->isDimmed(m_ids.tiled));
    QVERIFY(!m_window->beamGraph()->isDimmed(m_ids.vectorized));
    // Text in the plan.
    search->setText(QStringLiteral("blocking factor"));
    QCOMPARE(matches(), QList<qint64>{m_ids.tiled});
    // By status: the tree keeps the ancestors so it still reads as a tree.
    search->clear();
    status->setCurrentIndex(status->findData(QStringLiteral("compile error")));
    QCOMPARE(matches(), QList<qint64>{m_ids.broken});
    auto *tree = m_window->findChild<QTreeView *>(QStringLiteral("candidateTree"));
    QCOMPARE(tree->model()->rowCount(), 1); // the root, on the path to the match
    // By strategy, with the status.
    status->setCurrentIndex(0);
    QVERIFY(strategy->count() == 3); // any + the two strategies of the run
    strategy->setCurrentIndex(strategy->findData(Vectorize));
    QCOMPARE(matches(), (QList<qint64>{m_ids.vectorized, m_ids.broken, m_ids.best}));
    status->setCurrentIndex(status->findData(QStringLiteral("correct")));
    QCOMPARE(matches(), QList<qint64>{m_ids.best});
    // Selecting a candidate the search hides clears the search.
    m_window->selectCandidate(m_ids.vectorized);
    QVERIFY(!proxy->isSearching());
    QVERIFY(count->text().isEmpty());
    QVERIFY(!m_window->beamGraph()->isDimmed(m_ids.tiled));
}

void TestTraceBrowsing::diffInTheMiddleAndInAWindow()
{
    m_window->selectCandidate(m_ids.best);
    DiffView *diff = m_window->diffView();
    QVERIFY(!m_window->diffInCenter());
    auto *move = diff->findChild<QToolButton *>(QStringLiteral("diffMove"));
    QVERIFY(move && move->isVisibleTo(diff));
    const int narrow = diff->width();
    move->click();
    QVERIFY(m_window->diffInCenter());
    QVERIFY(m_window->showView(QStringLiteral("diff")));
    QTRY_VERIFY(diff->isVisible());
    QTRY_VERIFY2(diff->width() > narrow, qPrintable(QStringLiteral("%1 vs %2").arg(diff->width()).arg(narrow)));
    QCOMPARE(diff->candidateId(), m_ids.best); // it still follows the selection
    m_window->selectCandidate(m_ids.tiled);
    QCOMPARE(diff->candidateId(), m_ids.tiled);
    move->click();
    QVERIFY(!m_window->diffInCenter());

    // Its own window: the same comparison, as large as the user likes, scrolling both sides together.
    m_window->selectCandidate(m_ids.best);
    diff->setCompareWith(m_ids.rootA);
    DiffView *window = m_window->openDiffWindow();
    QVERIFY(window->isWindow());
    QVERIFY(QTest::qWaitForWindowExposed(window));
    QCOMPARE(window->candidateId(), m_ids.best);
    QCOMPARE(window->compareWithId(), m_ids.rootA);
    QVERIFY(!window->findChild<QToolButton *>(QStringLiteral("diffOpenWindow"))->isVisibleTo(window));
    auto *left = window->findChild<QPlainTextEdit *>(QStringLiteral("diffLeft"));
    auto *right = window->findChild<QPlainTextEdit *>(QStringLiteral("diffRight"));
    QTRY_VERIFY(right->verticalScrollBar()->maximum() > 10);
    right->verticalScrollBar()->setValue(40);
    QCOMPARE(left->verticalScrollBar()->value(), 40);
    window->close();
}

void TestTraceBrowsing::unifiedDiff()
{
    m_window->selectCandidate(m_ids.tiled);
    DiffView *diff = m_window->diffView();
    auto *layout = diff->findChild<QComboBox *>(QStringLiteral("diffLayout"));
    QVERIFY(layout);
    layout->setCurrentIndex(layout->findData(int(DiffView::Layout::Unified)));
    QCOMPARE(diff->diffLayout(), DiffView::Layout::Unified);
    QVERIFY(diff->findChild<QPlainTextEdit *>(QStringLiteral("diffUnified"))->isVisibleTo(diff));
    QVERIFY(!diff->findChild<QPlainTextEdit *>(QStringLiteral("diffLeft"))->isVisibleTo(diff));
    const QStringList lines = diff->unifiedText().split(QLatin1Char('\n'));
    // The changed line once removed and once added, the others once, unmarked.
    QVERIFY(lines.contains(QStringLiteral("-     acc += a[60] * b[60]; // line 60")));
    QVERIFY(lines.contains(QStringLiteral("+     acc += a[60] * b[60]; // line 60 tiled 64x64")));
    QVERIFY(lines.contains(QStringLiteral("      acc += a[59] * b[59]; // line 59")));
    QCOMPARE(lines.size(), 2 + 120 + 1 + 1); // header lines, 120 body lines, the changed one twice, the brace
    QCOMPARE(diff->changeRows().size(), 1);
    diff->nextChange();
    QCOMPARE(diff->currentChange(), 0);
    auto *unified = diff->findChild<QPlainTextEdit *>(QStringLiteral("diffUnified"));
    QCOMPARE(unified->textCursor().block().text(), QStringLiteral("-     acc += a[60] * b[60]; // line 60"));
    layout->setCurrentIndex(layout->findData(int(DiffView::Layout::SideBySide)));
    QVERIFY(diff->unifiedText().isEmpty());
    QCOMPARE(diff->findChild<QPlainTextEdit *>(QStringLiteral("diffRight"))->document()->blockCount(), 123);
}

void TestTraceBrowsing::graphNodesSayWhatTheyTried()
{
    BeamGraphView *graph = m_window->beamGraph();
    graph->flushPendingUpdates();
    // The strategy's short name, not the start of the plan or the whole menu text.
    QCOMPARE(graph->nodeSubtitle(m_ids.tiled), QStringLiteral("Tile the loops for the cache…"));
    QCOMPARE(graph->nodeSubtitle(m_ids.best), QStringLiteral("Vectorize the innermost loop…"));
    QCOMPARE(graph->nodeSubtitle(m_ids.broken), QStringLiteral("compile error · Vectorize the innermost loop…"));
}

void TestTraceBrowsing::runsTableColumnsFit()
{
    auto *runs = m_window->findChild<QTableView *>(QStringLiteral("runsView"));
    QVERIFY(runs);
    QTRY_VERIFY(runs->isVisible());
    QTRY_COMPARE(runs->horizontalScrollBar()->maximum(), 0); // nothing to scroll to
    for (int column = 0; column < RunListModel::ColumnCount; ++column) {
        const QString text = runs->model()->index(0, column).data().toString();
        const int needed = runs->fontMetrics().horizontalAdvance(text);
        QVERIFY2(runs->columnWidth(column) >= needed,
                 qPrintable(QStringLiteral("column %1: %2 < %3 (%4)")
                                .arg(column)
                                .arg(runs->columnWidth(column))
                                .arg(needed)
                                .arg(text)));
        QVERIFY(runs->columnViewportPosition(column) + runs->columnWidth(column) <= runs->viewport()->width());
    }
}

void TestTraceBrowsing::exportChartAndGraph()
{
    QString error;
    LatencyChart *chart = m_window->latencyChart();
    m_window->showView(QStringLiteral("chart"));
    QVERIFY(chart->exportImage(m_dir->filePath(QStringLiteral("chart.png")), &error));
    QVERIFY(isPng(m_dir->filePath(QStringLiteral("chart.png"))));
    QVERIFY2(chart->exportImage(m_dir->filePath(QStringLiteral("chart.svg")), &error), qPrintable(error));
    QVERIFY(isSvgWith(m_dir->filePath(QStringLiteral("chart.svg")), QStringLiteral("Speedup over the root")));
    BeamGraphView *graph = m_window->beamGraph();
    m_window->showView(QStringLiteral("graph"));
    QVERIFY(graph->exportImage(m_dir->filePath(QStringLiteral("graph.png")), &error));
    QVERIFY(isPng(m_dir->filePath(QStringLiteral("graph.png"))));
    QVERIFY(graph->exportImage(m_dir->filePath(QStringLiteral("graph.svg")), &error));
    // The node labels are text in the drawing.
    QVERIFY(isSvgWith(m_dir->filePath(QStringLiteral("graph.svg")), QStringLiteral("Tile the loops for the cache")));
    QVERIFY(!graph->exportImage(m_dir->filePath(QStringLiteral("graph.bmp")), &error));
    QVERIFY2(error.contains(QStringLiteral(".png or .svg")), qPrintable(error));
    QVERIFY(!graph->exportImage(m_dir->filePath(QStringLiteral("missing/dir/graph.png")), &error));
    QVERIFY2(error.contains(QStringLiteral("missing/dir/graph.png")), qPrintable(error));
}

QTEST_MAIN(TestTraceBrowsing)
#include "tst_trace_browsing.moc"
