// The Study view on a store of hand-made study runs (labelled as `autocomp study` labels them): the grid's
// progress, the curves and the quality-against-cost scatter with its Pareto front on known numbers, a run
// opened from the grid and from the scatter, PNG and SVG export, and the View menu's way in.
#include "frame/main_window.h"
#include "store/run_store.h"
#include "study/study_config.h"
#include "panels/study_view.h"

#include <QAction>
#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace autocomp;

namespace {

struct Made
{
    qint64 a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, other = 0;
};

// scores[i]: the best correct score of iteration i+1 (NaN: a compile error there).
qint64 makeRun(RunStore &store, const QString &label, RunState state, double usd, qint64 tokensIn,
               const QList<double> &scores)
{
    RunInfo r;
    r.target = QStringLiteral("cpu");
    r.problem = QStringLiteral("gemm");
    r.agent = QStringLiteral("cpu");
    r.metric = QStringLiteral("latency_ms");
    r.label = label;
    r.state = state;
    r.usd = usd;
    r.tokensIn = tokensIn;
    r.tokensOut = 100;
    r.llmCalls = 4;
    r.iteration = int(scores.size());
    const qint64 run = store.createRun(r);
    Candidate root;
    root.runId = run;
    root.origin = CandidateOrigin::Root;
    root.status = CandidateStatus::Correct;
    root.score = 10;
    root.code = QStringLiteral("void k() {}");
    qint64 parent = store.addCandidate(root);
    for (int i = 0; i < scores.size(); ++i) {
        Candidate c;
        c.runId = run;
        c.parentId = parent;
        c.iteration = i + 1;
        c.menuItem = QStringLiteral("tile");
        c.code = QStringLiteral("void k() { /* %1 %2 */ }").arg(run).arg(i);
        c.status = std::isnan(scores.at(i)) ? CandidateStatus::CompileError : CandidateStatus::Correct;
        c.score = scores.at(i);
        const qint64 id = store.addCandidate(c);
        if (!std::isnan(scores.at(i)))
            parent = id;
    }
    return run;
}

QString label(const QString &width, quint64 seed)
{
    return StudyLabel::format(QStringLiteral("beam"), QStringLiteral("cpu/gemm"),
                              StudyPoint{{{QStringLiteral("beam_width"), width}}}, seed);
}

} // namespace

class TestStudyView : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_path;
    Made m_made;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_path = m_dir.filePath(QStringLiteral("runs.sqlite"));
        QString error;
        auto store = RunStore::open(m_path, {.create = true}, &error);
        QVERIFY2(store, qPrintable(error));
        const double nan = std::nan("");
        // beam_width=1: best 6 and 7 (mean 6.5) for $0.01 and $0.03 (mean $0.02).
        m_made.a = makeRun(*store, label(QStringLiteral("1"), 5), RunState::Finished, 0.01, 1000, {8, 6});
        m_made.b = makeRun(*store, label(QStringLiteral("1"), 6), RunState::Finished, 0.03, 1100, {7, nan});
        // beam_width=2: best 4 and 5 (mean 4.5) for a mean of $0.06.
        m_made.c = makeRun(*store, label(QStringLiteral("2"), 5), RunState::Finished, 0.05, 2000, {5, 4});
        m_made.d = makeRun(*store, label(QStringLiteral("2"), 6), RunState::Finished, 0.07, 2100, {nan, 5});
        // beam_width=4: best 5 and 6 (mean 5.5) for a mean of $0.08: worse and dearer than beam_width=2.
        m_made.e = makeRun(*store, label(QStringLiteral("4"), 5), RunState::Finished, 0.07, 3000, {6, 5});
        m_made.f = makeRun(*store, label(QStringLiteral("4"), 6), RunState::Stopped, 0.09, 3100, {6});
        // Not a study's run: left out.
        m_made.other = makeRun(*store, QString(), RunState::Finished, 0.5, 10, {1});
    }

    void gridCurvesAndFront()
    {
        QString error;
        auto store = RunStore::open(m_path, &error);
        QVERIFY(store);
        StudyView view;
        view.setStore(store.get());
        view.resize(1280, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.study(), QStringLiteral("beam"));
        QCOMPARE(view.problem(), QStringLiteral("cpu/gemm"));
        QCOMPARE(view.results().size(), 6);

        // The grid: a row per point, a column per seed with the run and its state.
        QTableWidget *grid = view.grid();
        QCOMPARE(grid->rowCount(), 3);
        QCOMPARE(grid->horizontalHeaderItem(2)->text(), QStringLiteral("Seed 5"));
        QCOMPARE(grid->horizontalHeaderItem(3)->text(), QStringLiteral("Seed 6"));
        QCOMPARE(grid->item(0, 1)->text(), QStringLiteral("beam_width=1"));
        QCOMPARE(grid->item(0, 2)->text(), QStringLiteral("#%1 finished").arg(m_made.a));
        QCOMPARE(grid->item(2, 3)->text(), QStringLiteral("#%1 stopped").arg(m_made.f));
        const int front = grid->columnCount() - 1;
        QCOMPARE(grid->item(0, front)->text(), QStringLiteral("on the front"));
        QCOMPARE(grid->item(1, front)->text(), QStringLiteral("on the front"));
        QCOMPARE(grid->item(2, front)->text(), QString());

        // The aggregates behind it.
        const QList<StudyPointSummary> points = view.points();
        QCOMPARE(points.size(), 3);
        QCOMPARE(points.at(0).meanBest, 6.5);
        QCOMPARE(points.at(1).meanBest, 4.5);
        QCOMPARE(points.at(2).meanBest, 5.5);
        QVERIFY(qFuzzyCompare(points.at(0).meanUsd, 0.02));
        QVERIFY(qFuzzyCompare(points.at(1).meanUsd, 0.06));
        QCOMPARE(points.at(1).correctRate, 3.0 / 4.0);
        QCOMPARE(points.at(2).ended, 1);

        // Curves: one per point, the mean best so far by iteration.
        QList<QLineSeries *> curves;
        for (QAbstractSeries *s : view.chart(StudyView::Chart::Curves)->series())
            curves << qobject_cast<QLineSeries *>(s);
        QCOMPARE(curves.size(), 3);
        QCOMPARE(curves.at(0)->name(), QStringLiteral("beam_width=1"));
        QCOMPARE(curves.at(0)->points(), (QList<QPointF>{{0, 10}, {1, 7.5}, {2, 6.5}}));
        // beam_width=2: after iteration 1, run c's best is 5 and run d's still its start (10, a compile error
        // in between); after 2, c has 4 and d 5.
        QCOMPARE(curves.at(1)->points(), (QList<QPointF>{{0, 10}, {1, 7.5}, {2, 4.5}}));

        // Scatter: runs per point, the means, and the front through the two non-dominated means by cost.
        QLineSeries *frontLine = nullptr;
        QScatterSeries *means = nullptr;
        for (QAbstractSeries *s : view.chart(StudyView::Chart::Scatter)->series()) {
            if (s->name() == QLatin1String("Pareto front"))
                frontLine = qobject_cast<QLineSeries *>(s);
            if (s->name() == QLatin1String("point means"))
                means = qobject_cast<QScatterSeries *>(s);
        }
        QVERIFY(frontLine && means);
        QCOMPARE(means->count(), 3);
        QCOMPARE(frontLine->count(), 2);
        QVERIFY(qFuzzyCompare(frontLine->at(0).x(), 0.02) && frontLine->at(0).y() == 6.5);
        QVERIFY(qFuzzyCompare(frontLine->at(1).x(), 0.06) && frontLine->at(1).y() == 4.5);
        // A click on a run's marker opens that run; on a point's mean, its best run.
        QCOMPARE(view.runAt(QPointF(0.01, 6)), m_made.a);
        QCOMPARE(view.runAt(QPointF(0.06, 4.5)), m_made.c);
        QCOMPARE(view.runAt(QPointF(0.5, 100)), qint64(0));

        QSignalSpy activated(&view, &StudyView::runActivated);
        // Through the mouse: a double-click on a seed's cell...
        const QRect cell = grid->visualItemRect(grid->item(1, 3));
        // (a press first: the view opens what the press of the double-click landed on)
        QTest::mousePress(grid->viewport(), Qt::LeftButton, {}, cell.center());
        QTest::mouseRelease(grid->viewport(), Qt::LeftButton, {}, cell.center());
        QTest::mouseDClick(grid->viewport(), Qt::LeftButton, {}, cell.center());
        QTRY_COMPARE(activated.size(), 1);
        QCOMPARE(activated.last().at(0).toLongLong(), m_made.d);
        // ...and a click on run b's marker in the scatter.
        QChart *scatter = view.chart(StudyView::Chart::Scatter);
        QAbstractSeries *runsOf1 = scatter->series().first();
        QCOMPARE(runsOf1->name(), QStringLiteral("beam_width=1"));
        const QPointF inChart = scatter->mapToPosition(QPointF(0.03, 7), runsOf1);
        QChartView *scatterView = view.chartView(StudyView::Chart::Scatter);
        const QPoint inView = scatterView->mapFromScene(scatter->mapToScene(inChart));
        QTest::mouseClick(scatterView->viewport(), Qt::LeftButton, {}, inView);
        QTRY_COMPARE(activated.size(), 2);
        QCOMPARE(activated.last().at(0).toLongLong(), m_made.b);
    }

    void exportsPngAndSvg()
    {
        QString error;
        auto store = RunStore::open(m_path, &error);
        StudyView view;
        view.setStore(store.get());
        view.resize(1280, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QString png = m_dir.filePath(QStringLiteral("curves.png"));
        const QString svg = m_dir.filePath(QStringLiteral("scatter.svg"));
        QVERIFY2(view.exportChart(StudyView::Chart::Curves, png, &error), qPrintable(error));
        QVERIFY2(view.exportChart(StudyView::Chart::Scatter, svg, &error), qPrintable(error));
        QImage image(png);
        QVERIFY(!image.isNull() && image.width() > 300);
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        QVERIFY(text.contains("<svg"));
        QVERIFY(text.contains("Pareto front"));
    }

    void openedFromTheViewMenu()
    {
        QString error;
        auto store = RunStore::open(m_path, &error);
        QVERIFY(store);
        MainWindow window(std::move(store));
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto *action = window.findChild<QAction *>(QStringLiteral("studiesAction"));
        QVERIFY(action);
        action->trigger();
        StudyView *view = window.findChild<StudyView *>();
        QVERIFY(view);
        QTRY_VERIFY(view->isVisible());
        QCOMPARE(view->study(), QStringLiteral("beam"));
        // A run asked for by the view is shown in the main window.
        Q_EMIT view->runActivated(m_made.e);
        QTRY_COMPARE(window.currentRunId(), m_made.e);
    }
};

QTEST_MAIN(TestStudyView)
#include "tst_study_view.moc"
