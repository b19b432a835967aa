// Menu insights: figures checked against a store built here through the RunStore API, in the core query,
// the main window's Menu tab (table, chart, CSV, jump to candidates) and the agent editor's records.
#include "editors/agent_editor.h"
#include "agents/prompt_builder.h"
#include "frame/main_window.h"
#include "models/menu_insights_model.h"
#include "panels/menu_insights_view.h"
#include "models/menu_model.h"
#include "catalog/repository.h"
#include "insights/menu_insights.h"
#include "store/run_store.h"

#include <QAbstractItemModelTester>
#include <QBarSet>
#include <QChart>
#include <QComboBox>
#include <QCryptographicHash>
#include <QFile>
#include <QHorizontalBarSeries>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

using namespace autocomp;

namespace {

// The fake agent's menu texts (tests/support/fake_data/agents/fake).
const QString A = QStringLiteral("alpha: tile the loops");
const QString B = QStringLiteral("beta: vectorize");
const QString C = QStringLiteral("gamma: unroll");
const QString NewIdea = QStringLiteral("new: use a lookup table");

struct Built
{
    qint64 run1 = 0, run2 = 0, run3 = 0;
    QHash<QString, qint64> ids; // candidate name -> id
};

class Builder
{
public:
    explicit Builder(RunStore &store) : m_store(store) {}

    qint64 run(const QString &target, const QString &agent)
    {
        RunInfo r;
        r.target = target;
        r.problem = QStringLiteral("gemm");
        r.agent = agent;
        r.metric = QStringLiteral("latency_ms");
        r.state = RunState::Finished;
        m_run = m_store.createRun(r);
        Candidate root;
        root.runId = m_run;
        root.origin = CandidateOrigin::Root;
        root.status = CandidateStatus::Correct;
        root.iteration = 0;
        root.score = 10;
        root.code = QStringLiteral("void k() {}");
        m_root = m_store.addCandidate(root);
        return m_run;
    }
    qint64 root() const { return m_root; }

    // A plan call whose prompt is the engine's own plan prompt with `offered` as the menu after dropout.
    qint64 plan(const QString &model, const QStringList &offered, const QString &status = QStringLiteral("ok"),
                int sample = 0)
    {
        static const Agent agent = [] {
            Agent a;
            a.architecture = QStringLiteral(
                "## Optimization menu\n\n1. a heading in the agent's documents is not the menu");
            a.menu = {A, B, C};
            return a;
        }();
        Problem problem;
        problem.name = QStringLiteral("gemm");
        Target target;
        target.name = QStringLiteral("cpu");
        target.language = QStringLiteral("cpp");
        target.metric = QStringLiteral("latency_ms");
        Candidate parent;
        parent.code = QStringLiteral("void k() {}");
        PlanPromptInput in;
        in.agent = &agent;
        in.problem = &problem;
        in.target = &target;
        in.parent = &parent;
        for (const QString &item : offered)
            in.menu << MenuEntry{int(agent.menu.indexOf(item)) + 1, item};
        LlmCall call;
        call.runId = m_run;
        call.phase = QStringLiteral("plan");
        call.provider = QStringLiteral("fake");
        call.model = model;
        call.prompt = PromptBuilder::planPrompt(in);
        call.requestHash = QString::fromLatin1(
            QCryptographicHash::hash((model + call.prompt + QString::number(sample)).toUtf8(),
                                     QCryptographicHash::Sha256)
                .toHex());
        call.status = status;
        call.response = QStringLiteral("Chosen optimization: ...");
        return m_store.addLlmCall(call);
    }

    qint64 cand(qint64 parent, int iteration, qint64 planCall, const QString &item, const QString &planModel,
                const QString &codeModel, CandidateStatus status, double score = std::nan(""), bool inBeam = false,
                CandidateOrigin origin = CandidateOrigin::Llm, bool withCode = true)
    {
        Candidate c;
        c.runId = m_run;
        c.parentId = parent;
        c.iteration = iteration;
        c.origin = origin;
        c.status = status;
        c.plan = QStringLiteral("Chosen optimization: ") + item;
        c.menuItem = item;
        c.code = withCode ? QStringLiteral("void k() { /* %1 */ }").arg(item) : QString();
        c.score = score;
        c.planModel = planModel;
        c.codeModel = codeModel;
        c.planCallId = planCall;
        c.inBeam = inBeam;
        return m_store.addCandidate(c);
    }

private:
    RunStore &m_store;
    qint64 m_run = 0;
    qint64 m_root = 0;
};

const QString M1 = QStringLiteral("fake::m1");
const QString M2 = QStringLiteral("fake::m2");

Built buildStore(RunStore &store)
{
    Built b;
    Builder w(store);
    using S = CandidateStatus;
    b.run1 = w.run(QStringLiteral("cpu"), QStringLiteral("fake"));
    const qint64 p1 = w.plan(QStringLiteral("m1"), {A, B});
    const qint64 p2 = w.plan(QStringLiteral("m2"), {A, C});
    const qint64 p3 = w.plan(QStringLiteral("m1"), {B, C});
    const qint64 p4 = w.plan(QStringLiteral("m2"), {A, B, C});
    w.plan(QStringLiteral("m1"), {A, B}, QStringLiteral("cached")); // p1 again on resume: the same offer
    w.plan(QStringLiteral("m1"), {A}, QStringLiteral("error"), 7); // never answered: not an offer
    b.ids[QStringLiteral("c1")] = w.cand(w.root(), 1, p1, A, M1, M1, S::Correct, 5); // gain 2.0
    b.ids[QStringLiteral("c2")] = w.cand(w.root(), 1, p1, A, M1, M2, S::Incorrect);
    b.ids[QStringLiteral("c3")] = w.cand(w.root(), 1, p2, A, M2, M1, S::Correct, 8); // gain 1.25
    b.ids[QStringLiteral("c4")] = w.cand(w.root(), 1, p2, A, M2, M2, S::CompileError);
    b.ids[QStringLiteral("c5")] = w.cand(w.root(), 1, p2, A, M2, M1, S::Correct, 4, true, CandidateOrigin::Fix); // 2.5
    b.ids[QStringLiteral("c6")] = w.cand(w.root(), 1, p3, B, M1, M1, S::Failed, std::nan(""), false,
                                         CandidateOrigin::Llm, false);
    b.ids[QStringLiteral("c8")] = w.cand(w.root(), 1, p4, NewIdea, M2, M2, S::Correct, 12); // gain 0.833
    const qint64 p6 = w.plan(QStringLiteral("m1"), {B, C}, QStringLiteral("ok"), 1);
    b.ids[QStringLiteral("c7")] = w.cand(b.ids[QStringLiteral("c1")], 2, p6, B, M1, M2, S::Correct, 2.5, true); // 2.0

    b.run2 = w.run(QStringLiteral("cpu"), QStringLiteral("fake"));
    const qint64 q1 = w.plan(QStringLiteral("m1"), {A});
    b.ids[QStringLiteral("c9")] = w.cand(w.root(), 1, q1, A, M1, M1, S::Correct, 10 / 1.5); // gain 1.5

    b.run3 = w.run(QStringLiteral("rvv"), QStringLiteral("other"));
    const qint64 r1 = w.plan(QStringLiteral("m1"), {A});
    b.ids[QStringLiteral("c10")] = w.cand(w.root(), 1, r1, A, M1, M1, S::Correct, 1); // another target
    return b;
}

const StrategyRecord *find(const QList<StrategyRecord> &records, const QString &strategy,
                           const QString &model = QString())
{
    for (const StrategyRecord &r : records)
        if (r.strategy == strategy && r.model == model)
            return &r;
    return nullptr;
}

QString cell(const MenuInsightsView *view, const QString &strategy, int column)
{
    const QSortFilterProxyModel *proxy = view->proxy();
    for (int row = 0; row < proxy->rowCount(); ++row)
        if (proxy->index(row, 0).data(MenuInsightsModel::StrategyRole).toString() == strategy)
            return proxy->index(row, column).data().toString();
    return QStringLiteral("<no row>");
}

} // namespace

class TestMenuInsights : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void offeredMenuReadsBackThePrompt();
    void shortNames_data();
    void shortNames();
    void perRunFigures();
    void perModelFigures();
    void acrossRunsOfTarget();
    void csv();
    void menuTab();
    void agentEditorRecords();

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_path;
    Built m_built;
};

void TestMenuInsights::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_path = m_dir->filePath(QStringLiteral("runs.sqlite"));
    QString error;
    auto store = RunStore::open(m_path, &error);
    QVERIFY2(store, qPrintable(error));
    m_built = buildStore(*store);
}

void TestMenuInsights::offeredMenuReadsBackThePrompt()
{
    Agent agent;
    agent.menu = {A, B, C};
    agent.isaDocs = QStringLiteral("## Optimization menu\n\n1. not the menu: this is the ISA\n");
    Problem problem;
    Target target;
    target.language = QStringLiteral("cpp");
    Candidate parent;
    PlanPromptInput in;
    in.agent = &agent;
    in.problem = &problem;
    in.target = &target;
    in.parent = &parent;
    in.menu = {MenuEntry{1, A}, MenuEntry{3, QStringLiteral("two\nlines")}};
    QCOMPARE(PromptBuilder::offeredMenu(PromptBuilder::planPrompt(in)), (QStringList{A, QStringLiteral("two\nlines")}));
    in.translation = true;
    in.menu = {MenuEntry{2, B}};
    QCOMPARE(PromptBuilder::offeredMenu(PromptBuilder::planPrompt(in)), QStringList{B});
    QCOMPARE(PromptBuilder::offeredMenu(QStringLiteral("a prompt from another tool")), QStringList{});
}

void TestMenuInsights::shortNames_data()
{
    QTest::addColumn<QString>("strategy");
    QTest::addColumn<QString>("expected");
    QTest::newRow("named") << QStringLiteral("Register blocking: compute a small tile of outputs in vector registers")
                           << QStringLiteral("Register blocking");
    QTest::newRow("clause") << QStringLiteral("Split reductions into several accumulators, to hide FMA latency")
                            << QStringLiteral("Split reductions into…");
    QTest::newRow("short") << QStringLiteral("beta: vectorize") << QStringLiteral("beta");
    QTest::newRow("new idea") << QStringLiteral("new: Lookup table (precomputed)")
                              << QStringLiteral("new: Lookup table");
}

void TestMenuInsights::shortNames()
{
    QFETCH(QString, strategy);
    QFETCH(QString, expected);
    QCOMPARE(PromptBuilder::shortName(strategy), expected);
}

void TestMenuInsights::perRunFigures()
{
    QString error;
    auto store = RunStore::open(m_path, &error);
    QVERIFY(store);
    const QList<StrategyRecord> records = MenuInsights::compute(*store, {m_built.run1},
                                                                MenuInsights::Grouping::Strategy, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(records.size(), 4);
    const StrategyRecord *a = find(records, A);
    QVERIFY(a);
    QCOMPARE(a->offered, 3);
    QCOMPARE(a->chosen, 2);
    QCOMPARE(a->candidates, 5);
    QCOMPARE(a->compiled, 4);
    QCOMPARE(a->correct, 3);
    QCOMPARE(a->enteredBeam, 2); // c1 (parent of c7) and c5 (in the beam)
    QCOMPARE(a->medianGain, 2.0);
    QCOMPARE(a->bestGain, 2.5);
    QCOMPARE(QSet<qint64>(a->candidateIds.begin(), a->candidateIds.end()),
             (QSet<qint64>{m_built.ids[QStringLiteral("c1")], m_built.ids[QStringLiteral("c2")],
                           m_built.ids[QStringLiteral("c3")], m_built.ids[QStringLiteral("c4")],
                           m_built.ids[QStringLiteral("c5")]}));
    const StrategyRecord *b = find(records, B);
    QVERIFY(b);
    QCOMPARE(b->offered, 4);
    QCOMPARE(b->chosen, 2);
    QCOMPARE(b->candidates, 2);
    QCOMPARE(b->compiled, 1);
    QCOMPARE(b->correct, 1);
    QCOMPARE(b->enteredBeam, 1);
    QCOMPARE(b->bestGain, 2.0);
    const StrategyRecord *c = find(records, C);
    QVERIFY(c);
    QCOMPARE(c->offered, 4);
    QCOMPARE(c->chosen, 0);
    QCOMPARE(c->candidates, 0);
    QVERIFY(std::isnan(c->medianGain));
    const StrategyRecord *n = find(records, NewIdea);
    QVERIFY(n);
    QVERIFY(!n->onMenu);
    QCOMPARE(n->offered, 1); // the request that proposed it: chosen never exceeds offered
    QCOMPARE(n->chosen, 1);
    QCOMPARE(n->correct, 1);
    QVERIFY(qFuzzyCompare(n->bestGain, 10.0 / 12.0));
}

void TestMenuInsights::perModelFigures()
{
    QString error;
    auto store = RunStore::open(m_path, &error);
    QVERIFY(store);
    const QList<StrategyRecord> byPlan = MenuInsights::compute(*store, {m_built.run1},
                                                               MenuInsights::Grouping::PlanModel);
    const StrategyRecord *a1 = find(byPlan, A, M1);
    const StrategyRecord *a2 = find(byPlan, A, M2);
    QVERIFY(a1 && a2);
    QCOMPARE(a1->offered, 1);
    QCOMPARE(a1->chosen, 1);
    QCOMPARE(a1->candidates, 2);
    QCOMPARE(a1->correct, 1);
    QCOMPARE(a2->offered, 2);
    QCOMPARE(a2->chosen, 1);
    QCOMPARE(a2->candidates, 3);
    QCOMPARE(a2->correct, 2);
    QVERIFY(!find(byPlan, A)); // no row without a model when grouped by model

    const QList<StrategyRecord> byCode = MenuInsights::compute(*store, {m_built.run1},
                                                               MenuInsights::Grouping::CodeModel);
    const StrategyRecord *c1 = find(byCode, A, M1);
    const StrategyRecord *c2 = find(byCode, A, M2);
    QVERIFY(c1 && c2);
    QCOMPARE(c1->candidates, 3);
    QCOMPARE(c1->correct, 3);
    QCOMPARE(c1->medianGain, 2.0);
    QCOMPARE(c2->candidates, 2);
    QCOMPARE(c2->compiled, 1);
    QCOMPARE(c2->correct, 0);
    QCOMPARE(c2->offered, 0); // offers belong to plan models
    QCOMPARE(c2->chosen, 0);
}

void TestMenuInsights::acrossRunsOfTarget()
{
    QString error;
    auto store = RunStore::open(m_path, &error);
    QVERIFY(store);
    const QList<qint64> runs = MenuInsights::runsOfTarget(*store, QStringLiteral("cpu"));
    QCOMPARE(runs, (QList<qint64>{m_built.run1, m_built.run2}));
    const QList<StrategyRecord> records = MenuInsights::compute(*store, runs, MenuInsights::Grouping::Strategy);
    const StrategyRecord *a = find(records, A);
    QVERIFY(a);
    QCOMPARE(a->offered, 4);
    QCOMPARE(a->chosen, 3);
    QCOMPARE(a->candidates, 6);
    QCOMPARE(a->correct, 4);
    QCOMPARE(a->medianGain, 1.75); // 1.25, 1.5, 2.0, 2.5
    QCOMPARE(a->bestGain, 2.5);
}

void TestMenuInsights::csv()
{
    StrategyRecord r;
    r.strategy = QStringLiteral("tile, then \"pack\"");
    r.offered = 3;
    r.chosen = 2;
    r.candidates = 4;
    r.compiled = 3;
    r.correct = 2;
    r.enteredBeam = 1;
    r.medianGain = 1.5;
    r.bestGain = 2.25;
    StrategyRecord none;
    none.strategy = QStringLiteral("new: x");
    none.onMenu = false;
    QCOMPARE(
        MenuInsights::toCsv({r, none}),
        QStringLiteral(
            "strategy,model,on_menu,offered,chosen,candidates,compiled,correct,entered_beam,median_gain,best_gain\r\n"
            "\"tile, then \"\"pack\"\"\",,yes,3,2,4,3,2,1,1.5,2.25\r\n"
            "new: x,,no,0,0,0,0,0,0,,\r\n"));
}

void TestMenuInsights::menuTab()
{
    QString error;
    auto store = RunStore::open(m_path, &error);
    QVERIFY(store);
    MainWindow window(std::move(store));
    window.resize(1600, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    MenuInsightsView *view = window.menuInsights();
    QVERIFY(view);
    QAbstractItemModelTester tester(view->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy updated(view, &MenuInsightsView::updated);
    QVERIFY(window.selectRun(m_built.run1));
    QVERIFY(window.showView(QStringLiteral("menu")));
    QTRY_VERIFY_WITH_TIMEOUT(updated.count() >= 1, 10000);
    QCOMPARE(view->coveredRuns(), QList<qint64>{m_built.run1});

    // The table as shown: counts, shares of candidates and gains.
    QCOMPARE(cell(view, A, MenuInsightsModel::OfferedColumn), QStringLiteral("3"));
    QCOMPARE(cell(view, A, MenuInsightsModel::ChosenColumn), QStringLiteral("2"));
    QCOMPARE(cell(view, A, MenuInsightsModel::ChosenRateColumn), QStringLiteral("67%"));
    QCOMPARE(cell(view, A, MenuInsightsModel::CorrectColumn), QStringLiteral("3 (60%)"));
    QCOMPARE(cell(view, A, MenuInsightsModel::BeamColumn), QStringLiteral("2 (40%)"));
    QCOMPARE(cell(view, A, MenuInsightsModel::MedianGainColumn), QStringLiteral("2.00×"));
    QCOMPARE(cell(view, NewIdea, MenuInsightsModel::OfferedColumn), QStringLiteral("—"));
    QCOMPARE(cell(view, C, MenuInsightsModel::MedianGainColumn), QStringLiteral("—"));

    // Sorting by best gain puts A (2.5×) first and C (none) last; the chart follows the table's order.
    view->table()->sortByColumn(MenuInsightsModel::BestGainColumn, Qt::DescendingOrder);
    QCOMPARE(view->proxy()->index(0, 0).data(MenuInsightsModel::StrategyRole).toString(), A);
    QCOMPARE(view->proxy()->index(3, 0).data(MenuInsightsModel::StrategyRole).toString(), C);
    const auto series = view->chart()->series();
    QCOMPARE(series.size(), 1);
    auto *bars = qobject_cast<QHorizontalBarSeries *>(series.first());
    QVERIFY(bars);
    QCOMPARE(bars->count(), 4); // offered, chosen, correct, entered beam
    QCOMPARE(bars->barSets().at(1)->label(), QStringLiteral("chosen"));
    // Bars run bottom-up: the table's first row is the last value.
    QCOMPARE(bars->barSets().at(1)->count(), 4);
    QCOMPARE(bars->barSets().at(1)->at(3), 2.0); // A chosen twice
    QCOMPARE(bars->barSets().at(0)->at(0), 4.0); // C offered four times
    view->setMeasure(MenuInsightsView::Measure::Gains);
    bars = qobject_cast<QHorizontalBarSeries *>(view->chart()->series().first());
    QCOMPARE(bars->count(), 2);
    QCOMPARE(bars->barSets().at(1)->at(3), 2.5); // A's best gain

    // CSV in the table's order.
    const QString csvPath = m_dir->filePath(QStringLiteral("insights.csv"));
    QVERIFY2(view->exportCsv(csvPath, &error), qPrintable(error));
    QFile csvFile(csvPath);
    QVERIFY(csvFile.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csvFile.readAll()).split(QStringLiteral("\r\n"), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 5);
    QCOMPARE(lines.at(1), QStringLiteral("alpha: tile the loops,,yes,3,2,5,4,3,2,2,2.5"));
    QVERIFY(lines.at(4).startsWith(QStringLiteral("gamma: unroll,,yes,4,0,0,0,0,0,,")));
    QVERIFY(!view->exportCsv(m_dir->filePath(QStringLiteral("no/such/folder/x.csv")), &error));
    QVERIFY(error.contains(QStringLiteral("no/such/folder")));

    // From a strategy to its candidates, and from one of them to the graph.
    QVERIFY(view->selectStrategy(A));
    QTreeWidget *list = view->candidateList();
    QCOMPARE(list->topLevelItemCount(), 5);
    QTreeWidgetItem *c5 = nullptr;
    for (int i = 0; i < list->topLevelItemCount(); ++i)
        if (list->topLevelItem(i)->text(0) == QString::number(m_built.ids[QStringLiteral("c5")]))
            c5 = list->topLevelItem(i);
    QVERIFY(c5);
    QCOMPARE(c5->text(3), QStringLiteral("correct"));
    QCOMPARE(c5->text(4), QStringLiteral("2.50×"));
    QSignalSpy current(&window, &MainWindow::currentCandidateChanged);
    Q_EMIT list->itemDoubleClicked(c5, 0);
    QTRY_VERIFY(!current.isEmpty());
    QCOMPARE(current.last().first().toLongLong(), m_built.ids[QStringLiteral("c5")]);

    // Across the runs of the target, and a jump into the other run.
    window.showView(QStringLiteral("menu"));
    updated.clear();
    view->findChild<QComboBox *>(QStringLiteral("insightsScope"))
        ->setCurrentIndex(int(MenuInsightsView::Scope::Target));
    QTRY_VERIFY_WITH_TIMEOUT(updated.count() >= 1, 10000);
    QCOMPARE(view->coveredRuns(), (QList<qint64>{m_built.run1, m_built.run2}));
    QCOMPARE(cell(view, A, MenuInsightsModel::MedianGainColumn), QStringLiteral("1.75×"));
    QCOMPARE(cell(view, A, MenuInsightsModel::CandidatesColumn), QStringLiteral("6"));
    QVERIFY(view->selectStrategy(A));
    QTreeWidgetItem *c9 = nullptr;
    for (int i = 0; i < list->topLevelItemCount(); ++i)
        if (list->topLevelItem(i)->text(0) == QString::number(m_built.ids[QStringLiteral("c9")]))
            c9 = list->topLevelItem(i);
    QVERIFY(c9);
    QCOMPARE(c9->text(1), QString::number(m_built.run2));
    Q_EMIT list->itemDoubleClicked(c9, 0);
    QTRY_COMPARE(window.currentRunId(), m_built.run2);
    QTRY_COMPARE(current.last().first().toLongLong(), m_built.ids[QStringLiteral("c9")]);

    // Grouped by plan model: a Model column, one row per strategy and model.
    window.showView(QStringLiteral("menu"));
    updated.clear();
    view->setGrouping(MenuInsights::Grouping::PlanModel);
    QTRY_VERIFY_WITH_TIMEOUT(updated.count() >= 1, 10000);
    QVERIFY(!view->table()->isColumnHidden(MenuInsightsModel::ModelColumn));
    QVERIFY(view->model()->rowOf(A, M1) >= 0);
    QVERIFY(view->model()->rowOf(A, M2) >= 0);
    QCOMPARE(view->model()->record(view->model()->rowOf(A, M1)).offered, 2); // run 1 and run 2
}

void TestMenuInsights::agentEditorRecords()
{
    AgentEditor editor(Repository{{qEnvironmentVariable("AUTOCOMP_FAKE_DATA")}});
    QSignalSpy records(&editor, &AgentEditor::recordsUpdated);
    QString error;
    QVERIFY2(editor.loadAgent(QStringLiteral("fake"), &error), qPrintable(error));
    editor.setStorePath(m_path);
    QTRY_VERIFY_WITH_TIMEOUT(records.count() >= 1, 10000);
    MenuModel *menu = editor.menuModel();
    int alpha = -1, gamma = -1, theta = -1;
    for (int row = 0; row < menu->rowCount(); ++row) {
        const QString text = menu->items().at(row).text;
        alpha = text == A ? row : alpha;
        gamma = text == C ? row : gamma;
        theta = text.startsWith(QLatin1String("theta")) ? row : theta;
    }
    QVERIFY(alpha >= 0 && gamma >= 0 && theta >= 0);
    // Runs 1 and 2 used the fake agent; run 3 (agent "other") does not count.
    QCOMPARE(menu->index(alpha, MenuModel::RecordColumn).data().toString(),
             QStringLiteral("offered 4 · chosen 3 · 4 of 6 correct · beam 2 · best 2.50×"));
    QCOMPARE(menu->index(gamma, MenuModel::RecordColumn).data().toString(), QStringLiteral("offered 4 · chosen 0"));
    QCOMPARE(menu->index(theta, MenuModel::RecordColumn).data().toString(), QStringLiteral("never offered"));
    // The record column is not editable; the text stays so.
    QVERIFY(!(menu->flags(menu->index(alpha, MenuModel::RecordColumn)) & Qt::ItemIsEditable));
    QVERIFY(menu->flags(menu->index(alpha, MenuModel::TextColumn)) & Qt::ItemIsEditable);
}

QTEST_MAIN(TestMenuInsights)
#include "tst_menu_insights.moc"
