// Drives the real main window on stores built through the RunStore API.
#include "charts/beam_graph_view.h"
#include "panels/candidate_inspector.h"
#include "models/candidate_tree_model.h"
#include "editors/diff_view.h"
#include "frame/main_window.h"
#include "catalog/repository.h"
#include "live/run_actions.h"
#include "models/run_list_model.h"
#include "charts/runs_comparison_view.h"
#include "exchange/run_archive.h"
#include "store/run_store.h"

#include <QAction>
#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QListWidget>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QTabBar>
#include <QTabWidget>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>
#include <QToolButton>
#include <QTreeView>

using namespace autocomp;

namespace {

struct SampleStore
{
    qint64 runId = 0;
    qint64 labelledRunId = 0;
    qint64 root = 0;
    qint64 tiled = 0; // correct, in the beam, 2x faster than the root
    qint64 failed = 0; // timed out
    qint64 broken = 0; // child of `tiled`, did not compile
};

const QString s_rootCode = QStringLiteral("// naive gemm\nvoid gemm(const float *a, const float *b, float *c) {}\n");
const QString s_tiledCode = QStringLiteral(
    "// tiled gemm\nvoid gemm(const float *a, const float *b, float *c) { /* 64x64 tiles */ }\n");
const QString s_tiledPlan = QStringLiteral(
    "# Tile the loops\n\nBlock **i** and **j** by 64 so a tile of B stays in L1.");
const QString s_label = QStringLiteral(
    "example run recorded with the local test server's scripted responses, not a real LLM");

Candidate candidate(qint64 runId, qint64 parentId, int iteration, CandidateOrigin origin, CandidateStatus status,
                    double score)
{
    Candidate c;
    c.runId = runId;
    c.parentId = parentId;
    c.iteration = iteration;
    c.origin = origin;
    c.status = status;
    c.score = score;
    return c;
}

SampleStore fillStore(RunStore &store)
{
    SampleStore ids;
    RunInfo run;
    run.target = QStringLiteral("cpu");
    run.problem = QStringLiteral("gemm");
    run.agent = QStringLiteral("cpu");
    run.state = RunState::Finished;
    run.metric = QStringLiteral("latency_ms");
    run.createdAt = QDateTime::currentDateTimeUtc();
    run.baselineScore = 10;
    run.bestScore = 5;
    run.usd = 0.12;
    ids.runId = store.createRun(run);
    Q_ASSERT(ids.runId > 0);

    Candidate root = candidate(ids.runId, 0, 0, CandidateOrigin::Root, CandidateStatus::Correct, 10);
    root.code = s_rootCode;
    root.metrics = QJsonObject{
        {QStringLiteral("latency_ms"), QJsonObject{{QStringLiteral("median"), 10.0}, {QStringLiteral("n"), 20}}}};
    ids.root = store.addCandidate(root);

    Candidate tiled = candidate(ids.runId, ids.root, 1, CandidateOrigin::Llm, CandidateStatus::Correct, 5);
    tiled.plan = s_tiledPlan;
    tiled.menuItem = QStringLiteral("loop tiling / cache blocking");
    tiled.code = s_tiledCode;
    tiled.inBeam = true;
    tiled.planModel = QStringLiteral("vllm::test-model");
    tiled.codeModel = QStringLiteral("vllm::test-model");
    tiled.metrics = QJsonObject{
        {QStringLiteral("latency_ms"), QJsonObject{{QStringLiteral("median"), 5.0}, {QStringLiteral("p99"), 5.5}}},
        {QStringLiteral("gflops"), 107.4}};
    tiled.feedback = QStringList{QStringLiteral("D1 miss rate 3%")};
    tiled.flags = QStringList{QStringLiteral("speedup above roofline bound")};
    ids.tiled = store.addCandidate(tiled);

    Candidate failed = candidate(ids.runId, ids.root, 1, CandidateOrigin::Llm, CandidateStatus::Failed, qQNaN());
    failed.plan = QStringLiteral("Unroll everything.");
    failed.code = QStringLiteral("void gemm() { for (;;) {} }");
    failed.error = QStringLiteral("timeout: bench step timed out after 300 s"); // as the engine writes it
    ids.failed = store.addCandidate(failed);

    Candidate broken = candidate(ids.runId, ids.tiled, 2, CandidateOrigin::Llm, CandidateStatus::CompileError, qQNaN());
    broken.code = QStringLiteral("void gemm( {");
    broken.error = QStringLiteral("expected ')'");
    ids.broken = store.addCandidate(broken);

    LlmCall plan;
    plan.runId = ids.runId;
    plan.candidateId = ids.tiled;
    plan.phase = QStringLiteral("plan");
    plan.provider = QStringLiteral("vllm");
    plan.model = QStringLiteral("test-model");
    plan.prompt = QStringLiteral("Choose exactly one optimization from the menu.");
    plan.response = s_tiledPlan;
    plan.reasoning = QStringLiteral("The B matrix is streamed from memory each time.");
    plan.tokensIn = 1200;
    plan.tokensOut = 300;
    plan.usd = 0.01;
    plan.latencyMs = 1500;
    plan.status = QStringLiteral("ok");
    LlmCall code = plan;
    code.phase = QStringLiteral("code");
    code.prompt = QStringLiteral("Implement the plan.");
    code.response = s_tiledCode;
    code.reasoning.clear();
    code.retries = 1;
    store.addLlmCall(plan);
    store.addLlmCall(code);

    EvalResult eval;
    eval.status = QStringLiteral("ok");
    eval.correct = true;
    for (const QString &name : {QStringLiteral("compile"), QStringLiteral("test"), QStringLiteral("bench")}) {
        StepResult step;
        step.name = name;
        step.command = QStringList{QStringLiteral("run-") + name};
        step.exitCode = 0;
        step.durationMs = 1234;
        step.log = name + QStringLiteral(" log line");
        eval.steps.append(step);
    }
    store.addEvaluation(ids.tiled, eval);

    RunInfo labelled = run;
    labelled.problem = QStringLiteral("conv2d");
    labelled.label = s_label;
    ids.labelledRunId = store.createRun(labelled);
    Candidate labelledRoot = candidate(ids.labelledRunId, 0, 0, CandidateOrigin::Root, CandidateStatus::Correct, 3);
    labelledRoot.code = QStringLiteral("void conv() {}");
    store.addCandidate(labelledRoot);
    return ids;
}

template<typename T>
T *widgetNamed(QWidget &window, const char *name)
{
    T *widget = window.findChild<T *>(QString::fromLatin1(name));
    if (!widget)
        qWarning("no widget named %s", name);
    return widget;
}

// Depth-first search for the index whose `role` holds `value`.
QModelIndex findIndex(const QAbstractItemModel *model, int role, const QVariant &value, const QModelIndex &parent = {})
{
    for (int row = 0; row < model->rowCount(parent); ++row) {
        const QModelIndex index = model->index(row, 0, parent);
        if (index.data(role) == value)
            return index;
        const QModelIndex found = findIndex(model, role, value, index);
        if (found.isValid())
            return found;
    }
    return {};
}

int countRows(const QAbstractItemModel *model, const QModelIndex &parent = {})
{
    int count = 0;
    for (int row = 0; row < model->rowCount(parent); ++row)
        count += 1 + countRows(model, model->index(row, 0, parent));
    return count;
}

bool selectRun(QWidget &window, qint64 runId)
{
    auto *runs = widgetNamed<QTableView>(window, "runsView");
    if (!runs)
        return false;
    const QModelIndex index = findIndex(runs->model(), RunListModel::RunIdRole, runId);
    if (!index.isValid())
        return false;
    runs->setCurrentIndex(index);
    return true;
}

bool selectCandidate(QWidget &window, qint64 candidateId)
{
    auto *tree = widgetNamed<QTreeView>(window, "candidateTree");
    if (!tree)
        return false;
    const QModelIndex index = findIndex(tree->model(), CandidateTreeModel::CandidateIdRole, candidateId);
    if (!index.isValid())
        return false;
    tree->setCurrentIndex(index);
    return true;
}

// Answers the next message box with `button` once it is up, keeping the text it showed in `text`.
void answerNextMessageBox(QMessageBox::StandardButton button, QString *text)
{
    auto *poll = new QTimer;
    poll->setInterval(10);
    QObject::connect(poll, &QTimer::timeout, poll, [poll, button, text] {
        auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
        if (!box)
            return;
        poll->deleteLater();
        poll->stop();
        *text = box->text();
        if (QAbstractButton *answer = box->button(button))
            answer->click();
        else
            box->reject();
    });
    poll->start();
}

} // namespace

class TestMainWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void showsRunTree();
    void showsSelectedCandidate();
    void showsFailedCandidate();
    void filtersRuns();
    void showsRunLabel();
    void welcomePanelForEmptyStore();
    void importsRunArchive();
    void importsKernelBenchProblems();
    void opensStoreInBackground();
    void showsInterruptedRun();
    void deletesRunAfterConfirming();
    void refusesCorruptStore();
    void refusesToStartWithoutDisplay();
    void openE2EStore();
    void fitsLaptopScreen();
    void splitterHoldsAcrossTabs();
    void runsListSizedToRows();
    void widenTakesTheMiddle();
    void compareTicksSelectedRuns();
    void restoresLayoutAtNextStart();
    void graphCollapsesPrunedSubtrees();
    void graphLabelsByLevelOfDetail();

private:
    std::unique_ptr<MainWindow> showSample(QSize size = QSize(1280, 800));
    std::unique_ptr<MainWindow> openSample();

    QTemporaryDir m_configDir;
    std::unique_ptr<QTemporaryDir> m_dir;
    SampleStore m_ids;
};

void TestMainWindow::initTestCase()
{
    // Window state must not leak into, or come from, the user's configuration.
    QVERIFY(m_configDir.isValid());
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_configDir.path()));
    QStandardPaths::setTestModeEnabled(true);
}

void TestMainWindow::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

void TestMainWindow::cleanup() { m_dir.reset(); }

std::unique_ptr<MainWindow> TestMainWindow::openSample()
{
    QString error;
    std::unique_ptr<RunStore> store = RunStore::open(m_dir->filePath(QStringLiteral("runs.sqlite")), &error);
    if (!store) {
        qWarning("%s", qPrintable(error));
        return {};
    }
    m_ids = fillStore(*store);
    return std::make_unique<MainWindow>(std::move(store));
}

std::unique_ptr<MainWindow> TestMainWindow::showSample(QSize size)
{
    QSettings().clear(); // nothing saved by an earlier test is restored
    auto window = openSample();
    if (!window)
        return {};
    window->resize(size);
    window->show();
    if (!QTest::qWaitForWindowExposed(window.get()))
        return {};
    QTest::qWait(50); // the runs list is fitted once the window has its size
    return window;
}

void TestMainWindow::showsRunTree()
{
    auto window = openSample();
    QVERIFY(window);
    auto *welcome = widgetNamed<QWidget>(*window, "welcomePanel");
    auto *runs = widgetNamed<QTableView>(*window, "runsView");
    auto *tree = widgetNamed<QTreeView>(*window, "candidateTree");
    QVERIFY(welcome && runs && tree);
    QVERIFY(!welcome->isVisibleTo(window.get()));
    QVERIFY(runs->isVisibleTo(window.get()));
    QCOMPARE(runs->model()->rowCount(), 2);

    QVERIFY(selectRun(*window, m_ids.runId));
    QCOMPARE(window->currentRunId(), m_ids.runId);
    const QAbstractItemModel *model = tree->model();
    QCOMPARE(countRows(model), 4);
    QCOMPARE(model->rowCount(), 1);
    const QModelIndex root = model->index(0, 0);
    QCOMPARE(root.data(CandidateTreeModel::CandidateIdRole).toLongLong(), m_ids.root);
    QCOMPARE(model->rowCount(root), 2);

    const QModelIndex tiled = findIndex(model, CandidateTreeModel::CandidateIdRole, m_ids.tiled);
    QCOMPARE(tiled.parent(), root);
    QCOMPARE(model->rowCount(tiled), 1);
    QCOMPARE(model->index(0, 0, tiled).data(CandidateTreeModel::CandidateIdRole).toLongLong(), m_ids.broken);
    QVERIFY(tree->isExpanded(root));
    QVERIFY(tree->isExpanded(tiled));

    QCOMPARE(tiled.siblingAtColumn(CandidateTreeModel::ScoreColumn).data().toString(), QStringLiteral("5.000 ms"));
    QCOMPARE(tiled.siblingAtColumn(CandidateTreeModel::SpeedupColumn).data().toString(), QStringLiteral("2.00×"));
    QVERIFY(tiled.data(Qt::FontRole).value<QFont>().bold());
    const QModelIndex failed = findIndex(model, CandidateTreeModel::CandidateIdRole, m_ids.failed);
    QCOMPARE(failed.parent(), root);
    QCOMPARE(failed.data(CandidateTreeModel::StatusRole).toInt(), int(CandidateStatus::Failed));
    const QColor failedColor =
        failed.siblingAtColumn(CandidateTreeModel::StatusColumn).data(Qt::ForegroundRole).value<QColor>();
    QVERIFY(failedColor.isValid());
    QVERIFY(failedColor.red() > failedColor.green());
    const QColor correctColor =
        tiled.siblingAtColumn(CandidateTreeModel::StatusColumn).data(Qt::ForegroundRole).value<QColor>();
    QVERIFY(correctColor.green() > correctColor.red());

    auto *storeLabel = widgetNamed<QLabel>(*window, "storePathLabel");
    QVERIFY(storeLabel);
    QVERIFY(storeLabel->text().contains(QStringLiteral("runs.sqlite")));
}

void TestMainWindow::showsSelectedCandidate()
{
    auto window = openSample();
    QVERIFY(window);
    QVERIFY(selectRun(*window, m_ids.runId));
    auto *code = widgetNamed<QPlainTextEdit>(*window, "codeView");
    auto *plan = widgetNamed<QTextBrowser>(*window, "planView");
    auto *evaluation = widgetNamed<QTextBrowser>(*window, "evaluationView");
    auto *prompts = widgetNamed<QTextBrowser>(*window, "promptsView");
    auto *llm = widgetNamed<QTableWidget>(*window, "llmView");
    auto *menuItem = widgetNamed<QLabel>(*window, "menuItemLabel");
    QVERIFY(code && plan && evaluation && prompts && llm && menuItem);

    QVERIFY(selectCandidate(*window, m_ids.root));
    QCOMPARE(code->toPlainText(), s_rootCode);

    QVERIFY(selectCandidate(*window, m_ids.tiled));
    QCOMPARE(code->toPlainText(), s_tiledCode);
    QVERIFY(code->isReadOnly());
    QVERIFY(plan->toPlainText().contains(QStringLiteral("Tile the loops")));
    QVERIFY(!plan->toPlainText().contains(QStringLiteral("**"))); // rendered as Markdown, not shown raw
    QVERIFY(menuItem->text().contains(QStringLiteral("loop tiling / cache blocking")));

    const QString evaluationText = evaluation->toPlainText();
    QVERIFY2(evaluationText.contains(QStringLiteral("median 5.000 ms")), qPrintable(evaluationText));
    QVERIFY(evaluationText.contains(QStringLiteral("107.4 GFLOP/s")));
    QVERIFY(evaluationText.contains(QStringLiteral("D1 miss rate 3%")));
    QVERIFY(evaluationText.contains(QStringLiteral("speedup above roofline bound")));
    QVERIFY(evaluationText.contains(QStringLiteral("bench log line")));

    const QString promptsText = prompts->toPlainText();
    QVERIFY(promptsText.contains(QStringLiteral("Choose exactly one optimization from the menu.")));
    QVERIFY(promptsText.contains(QStringLiteral("The B matrix is streamed from memory each time.")));
    QVERIFY(promptsText.contains(QStringLiteral("Implement the plan.")));

    QCOMPARE(llm->rowCount(), 3); // two calls and the total
    QCOMPARE(llm->item(2, 3)->text(), QStringLiteral("2400"));
    QCOMPARE(llm->item(2, 7)->text(), QStringLiteral("1"));
}

void TestMainWindow::showsFailedCandidate()
{
    auto window = openSample();
    QVERIFY(window);
    QVERIFY(selectRun(*window, m_ids.runId));
    QVERIFY(selectCandidate(*window, m_ids.failed));
    auto *evaluation = widgetNamed<QTextBrowser>(*window, "evaluationView");
    auto *llm = widgetNamed<QTableWidget>(*window, "llmView");
    QVERIFY(evaluation && llm);
    QVERIFY(evaluation->toPlainText().startsWith(QStringLiteral("timeout"))); // the status word, not "failed"
    QVERIFY(evaluation->toPlainText().contains(QStringLiteral("bench step timed out after 300 s")));
    QCOMPARE(llm->rowCount(), 0);
}

void TestMainWindow::filtersRuns()
{
    auto window = openSample();
    QVERIFY(window);
    auto *filter = widgetNamed<QLineEdit>(*window, "runFilter");
    auto *runs = widgetNamed<QTableView>(*window, "runsView");
    QVERIFY(filter && runs);
    QTest::keyClicks(filter, QStringLiteral("conv2d"));
    QCOMPARE(runs->model()->rowCount(), 1);
    QCOMPARE(runs->model()->index(0, 0).data(RunListModel::RunIdRole).toLongLong(), m_ids.labelledRunId);
    filter->clear();
    QCOMPARE(runs->model()->rowCount(), 2);
}

void TestMainWindow::showsRunLabel()
{
    auto window = openSample();
    QVERIFY(window);
    auto *banner = widgetNamed<QLabel>(*window, "runLabelBanner");
    QVERIFY(banner);
    QVERIFY(selectRun(*window, m_ids.labelledRunId));
    QVERIFY(banner->isVisibleTo(window.get()));
    QVERIFY(banner->text().contains(QStringLiteral("scripted responses, not a real LLM")));
    QVERIFY(selectRun(*window, m_ids.runId));
    QVERIFY(!banner->isVisibleTo(window.get()));

    auto *runs = widgetNamed<QTableView>(*window, "runsView");
    const QModelIndex labelled = findIndex(runs->model(), RunListModel::RunIdRole, m_ids.labelledRunId);
    QVERIFY(labelled.data(Qt::ToolTipRole).toString().contains(s_label));
}

void TestMainWindow::welcomePanelForEmptyStore()
{
    QString error;
    std::unique_ptr<RunStore> store = RunStore::open(m_dir->filePath(QStringLiteral("empty.sqlite")), &error);
    QVERIFY2(store, qPrintable(error));
    MainWindow window(std::move(store));
    auto *welcome = widgetNamed<QWidget>(window, "welcomePanel");
    auto *runs = widgetNamed<QTableView>(window, "runsView");
    auto *button = widgetNamed<QPushButton>(window, "loadExampleButton");
    QVERIFY(welcome && runs && button);
    QVERIFY(welcome->isVisibleTo(&window));
    QVERIFY(!runs->isVisibleTo(&window));

    if (!QFile::exists(MainWindow::exampleRunResource())) {
        QVERIFY(!button->isEnabled());
        QVERIFY(button->toolTip().contains(QStringLiteral("no bundled example run")));
        return;
    }
    QVERIFY(button->isEnabled());
    QTest::mouseClick(button, Qt::LeftButton);
    QVERIFY(!welcome->isVisibleTo(&window));
    QCOMPARE(runs->model()->rowCount(), 1);
    QVERIFY(window.currentRunId() != 0);
    auto *tree = widgetNamed<QTreeView>(window, "candidateTree");
    QVERIFY(tree);
    QVERIFY(countRows(tree->model()) > 1);
    auto *banner = widgetNamed<QLabel>(window, "runLabelBanner");
    QVERIFY(banner && banner->isVisibleTo(&window));
}

void TestMainWindow::showsInterruptedRun()
{
    // A run recorded as running that no process drives (its process was killed) reads "interrupted".
    QString error;
    std::unique_ptr<RunStore> store = RunStore::open(m_dir->filePath(QStringLiteral("interrupted.sqlite")), &error);
    QVERIFY2(store, qPrintable(error));
    const qint64 runId = importRunJsonl(*store, QFINDTESTDATA("data/sample_run.jsonl"), &error);
    QVERIFY2(runId > 0, qPrintable(error));
    RunInfo run = *store->run(runId);
    run.state = RunState::Running;
    QVERIFY(store->updateRun(run));
    MainWindow window(std::move(store));
    QVERIFY(window.selectRun(runId));
    auto *runs = widgetNamed<QTableView>(window, "runsView");
    QVERIFY(runs);
    QAbstractItemModel *model = runs->model();
    bool found = false;
    for (int row = 0; row < model->rowCount(); ++row)
        if (model->index(row, RunListModel::IdColumn).data().toLongLong() == runId) {
            QCOMPARE(model->index(row, RunListModel::StateColumn).data().toString(), QStringLiteral("interrupted"));
            found = true;
        }
    QVERIFY(found);
    auto *header = widgetNamed<QLabel>(window, "runHeader");
    QVERIFY(header);
    QVERIFY2(header->text().contains(QStringLiteral("interrupted")), qPrintable(header->text()));
    QVERIFY(window.runActions()->resumeAction()->isEnabled());
}

void TestMainWindow::opensStoreInBackground()
{
    // File > Open Store: checked on the thread pool, then shown.
    QString error;
    const QString otherPath = m_dir->filePath(QStringLiteral("other.sqlite"));
    {
        std::unique_ptr<RunStore> other = RunStore::open(otherPath, &error);
        QVERIFY2(other, qPrintable(error));
        QVERIFY2(importRunJsonl(*other, QFINDTESTDATA("data/sample_run.jsonl"), &error) > 0, qPrintable(error));
    }
    std::unique_ptr<RunStore> store = RunStore::open(m_dir->filePath(QStringLiteral("empty.sqlite")), &error);
    QVERIFY2(store, qPrintable(error));
    MainWindow window(std::move(store));
    auto *welcome = widgetNamed<QWidget>(window, "welcomePanel");
    QVERIFY(welcome && welcome->isVisibleTo(&window));
    const QFuture<QString> opened = window.openStoreInBackground(otherPath);
    QTRY_VERIFY_WITH_TIMEOUT(opened.isFinished(), 30000);
    QVERIFY2(opened.result().isEmpty(), qPrintable(opened.result()));
    QTRY_COMPARE_WITH_TIMEOUT(QFileInfo(window.store()->path()).fileName(), QStringLiteral("other.sqlite"), 10000);
    QVERIFY(!welcome->isVisibleTo(&window));
}

void TestMainWindow::importsRunArchive()
{
    const QString archive = QFINDTESTDATA("data/sample_run.jsonl");
    QVERIFY(!archive.isEmpty());
    QString error;
    std::unique_ptr<RunStore> store = RunStore::open(m_dir->filePath(QStringLiteral("import.sqlite")), &error);
    QVERIFY2(store, qPrintable(error));
    MainWindow window(std::move(store));
    auto *welcome = widgetNamed<QWidget>(window, "welcomePanel");
    auto *tree = widgetNamed<QTreeView>(window, "candidateTree");
    auto *code = widgetNamed<QPlainTextEdit>(window, "codeView");
    QVERIFY(welcome && tree && code);
    QVERIFY(welcome->isVisibleTo(&window));

    const qint64 runId = window.importRunArchive(archive, &error);
    QVERIFY2(runId > 0, qPrintable(error));
    QCOMPARE(window.currentRunId(), runId);
    QVERIFY(!welcome->isVisibleTo(&window));
    QCOMPARE(countRows(tree->model()), 7);
    // The window opens a run on its best candidate.
    QVERIFY(tree->currentIndex().isValid());
    QCOMPARE(tree->currentIndex().siblingAtColumn(CandidateTreeModel::SpeedupColumn).data().toString(),
             QStringLiteral("8.41×"));
    QVERIFY(code->toPlainText().contains(QStringLiteral("constexpr std::size_t TK = 64, TN = 256;")));

    // The same off the GUI thread (File > Import): the window shows the run once it is committed.
    const QFuture<std::pair<qint64, QString>> background = window.importInBackground(archive, QStringLiteral("Import"));
    QTRY_VERIFY_WITH_TIMEOUT(background.isFinished(), 30000);
    const qint64 second = background.result().first;
    QVERIFY2(second > runId, qPrintable(background.result().second));
    QTRY_COMPARE_WITH_TIMEOUT(window.currentRunId(), second, 10000);
    QCOMPARE(countRows(tree->model()), 7);

    QVERIFY(window.importRunArchive(m_dir->filePath(QStringLiteral("missing.jsonl")), &error) == 0);
    QVERIFY(!error.isEmpty());
}

// File > Import KernelBench Problems: the files are measured off the GUI thread and become problems of
// the kernelbench target; the report names them. Needs torch (install-deps.sh --kernelbench).
void TestMainWindow::importsKernelBenchProblems()
{
    const Repository repository;
    QString error;
    const auto target = repository.target(QStringLiteral("kernelbench"), &error);
    QVERIFY2(target, qPrintable(error));
    if (!target->available())
        QSKIP(qPrintable(target->absenceReason()));
    const QString file = m_dir->filePath(QStringLiteral("KernelBench/level2/41_Scale_Shift_Clamp_Square.py"));
    QDir().mkpath(QFileInfo(file).absolutePath());
    QVERIFY(QFile::copy(qEnvironmentVariable("AUTOCOMP_DATA_DIR")
                            + QStringLiteral("/sols/kernelbench/level2/1_ScaleShiftClampSquare/model.py"),
                        file));
    auto store = RunStore::open(m_dir->filePath(QStringLiteral("runs.sqlite")), &error);
    QVERIFY2(store, qPrintable(error));
    MainWindow window(std::move(store));
    window.show();
    const QFuture<QString> future = window.importKernelBenchInBackground(
        {m_dir->filePath(QStringLiteral("KernelBench"))});
    QTRY_VERIFY_WITH_TIMEOUT(future.isFinished(), 600000);
    QVERIFY2(future.result().contains(QStringLiteral("level2/41_Scale_Shift_Clamp_Square (scale")),
             qPrintable(future.result()));
    QTRY_VERIFY(window.findChild<QMessageBox *>(QStringLiteral("kernelBenchImportReport")));
    const auto problem = Repository().problem(QStringLiteral("kernelbench"),
                                              QStringLiteral("level2/41_Scale_Shift_Clamp_Square"), &error);
    QVERIFY2(problem, qPrintable(error));
    QCOMPARE(problem->referenceFile, file);
    QDir(QFileInfo(problem->dir).absolutePath()).removeRecursively(); // the test-mode data dir is shared between runs
}

void TestMainWindow::refusesCorruptStore()
{
    const QString gui = qEnvironmentVariable("AUTOCOMP_GUI");
    if (gui.isEmpty())
        QSKIP("AUTOCOMP_GUI is not set; run through ctest");
    const QString path = m_dir->filePath(QStringLiteral("corrupt.sqlite"));
    const QByteArray garbage = QByteArray("this is not a database\n").repeated(200);
    {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(garbage);
    }
    QProcess process;
    process.start(gui, {QStringLiteral("--store"), path});
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 1);
    QVERIFY(process.readAllStandardError().contains("corrupt.sqlite"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), garbage);
}

void TestMainWindow::refusesToStartWithoutDisplay()
{
    const QString gui = qEnvironmentVariable("AUTOCOMP_GUI");
    if (gui.isEmpty())
        QSKIP("AUTOCOMP_GUI is not set; run through ctest");
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const QString &name :
         {QStringLiteral("DISPLAY"), QStringLiteral("WAYLAND_DISPLAY"), QStringLiteral("QT_QPA_PLATFORM")})
        environment.remove(name);
    QProcess process;
    process.setProcessEnvironment(environment);
    process.start(gui, {QStringLiteral("--store"), m_dir->filePath(QStringLiteral("unused.sqlite"))});
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitCode(), 2);
    const QByteArray error = process.readAllStandardError();
    QVERIFY2(error.contains("no display"), error.constData());
    QVERIFY(error.contains("autocomp run CONFIG.yaml"));
    QVERIFY(!QFile::exists(m_dir->filePath(QStringLiteral("unused.sqlite"))));
}

void TestMainWindow::openE2EStore()
{
    const QString path = qEnvironmentVariable("AUTOCOMP_E2E_STORE");
    if (path.isEmpty())
        QSKIP("AUTOCOMP_E2E_STORE is not set: it names the store written by the end-to-end test (CTest fixture)");
    QVERIFY2(QFile::exists(path), qPrintable(QStringLiteral("AUTOCOMP_E2E_STORE names a missing file: ") + path));
    QString error;
    std::unique_ptr<RunStore> store = RunStore::open(path, &error);
    QVERIFY2(store, qPrintable(error));
    const QList<RunInfo> runs = store->runs();
    QVERIFY(!runs.isEmpty());
    RunStore *raw = store.get();
    MainWindow window(std::move(store));

    QVERIFY(selectRun(window, runs.first().id));
    auto *tree = widgetNamed<QTreeView>(window, "candidateTree");
    auto *code = widgetNamed<QPlainTextEdit>(window, "codeView");
    QVERIFY(tree && code);
    QVERIFY(countRows(tree->model()) > 1);

    const QList<Candidate> candidates = raw->candidates(runs.first().id);
    const auto withCode = std::find_if(candidates.crbegin(), candidates.crend(),
                                       [](const Candidate &c) { return c.parentId != 0 && !c.code.isEmpty(); });
    QVERIFY2(withCode != candidates.crend(), "the end-to-end run has no generated candidate with code");
    QVERIFY(selectCandidate(window, withCode->id));
    QCOMPARE(code->toPlainText(), withCode->code);
}

void TestMainWindow::deletesRunAfterConfirming()
{
    auto window = openSample();
    QVERIFY(window);
    window->show();
    QVERIFY(QTest::qWaitForWindowExposed(window.get()));
    auto *runs = widgetNamed<QTableView>(*window, "runsView");
    auto *del = window->findChild<QAction *>(QStringLiteral("deleteRunAction"));
    auto *welcome = widgetNamed<QWidget>(*window, "welcomePanel");
    QVERIFY(runs && del && welcome);
    // Newest first: the labelled run above the sample run.
    QVERIFY(selectRun(*window, m_ids.runId));
    QVERIFY(del->isEnabled());

    // Cancel keeps the run; the question names it.
    QString question;
    answerNextMessageBox(QMessageBox::Cancel, &question);
    del->trigger();
    QVERIFY2(question.contains(QStringLiteral("run %1").arg(m_ids.runId)), qPrintable(question));
    QVERIFY2(question.contains(QStringLiteral("gemm on cpu")), qPrintable(question));
    QVERIFY2(question.contains(QStringLiteral("4 candidate")), qPrintable(question));
    QVERIFY(window->store()->run(m_ids.runId));
    QCOMPARE(runs->model()->rowCount(), 2);
    QCOMPARE(window->currentRunId(), m_ids.runId);

    // Yes removes it with its candidates; the run above it becomes the selection.
    answerNextMessageBox(QMessageBox::Yes, &question);
    del->trigger();
    QVERIFY(!question.isEmpty());
    QVERIFY(!window->store()->run(m_ids.runId));
    QVERIFY(window->store()->candidates(m_ids.runId).isEmpty());
    QVERIFY(window->store()->llmCalls(m_ids.runId).isEmpty());
    QCOMPARE(runs->model()->rowCount(), 1);
    QVERIFY(!findIndex(runs->model(), RunListModel::RunIdRole, m_ids.runId).isValid());
    QCOMPARE(window->currentRunId(), m_ids.labelledRunId);
    QCOMPARE(runs->currentIndex().data(RunListModel::RunIdRole).toLongLong(), m_ids.labelledRunId);

    // The Delete key in the runs table asks too; deleting the last run brings back the welcome panel.
    window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(window.get()));
    runs->setFocus();
    question.clear();
    answerNextMessageBox(QMessageBox::Yes, &question);
    QTest::keyClick(runs, Qt::Key_Delete);
    QVERIFY2(question.contains(QStringLiteral("conv2d on cpu")), qPrintable(question));
    QVERIFY(window->store()->runs().isEmpty());
    QCOMPARE(runs->model()->rowCount(), 0);
    QCOMPARE(window->currentRunId(), 0);
    QVERIFY(welcome->isVisibleTo(window.get()));
    QVERIFY(!del->isEnabled());
}

// The window fits a 1280x800 laptop screen: its minimum size leaves room for a title bar and a panel.
void TestMainWindow::fitsLaptopScreen()
{
    auto window = showSample();
    QVERIFY(window);
    QVERIFY2(window->minimumSizeHint().height() <= 720,
             qPrintable(QString::number(window->minimumSizeHint().height())));
    QVERIFY2(window->minimumSizeHint().width() <= 1200, qPrintable(QString::number(window->minimumSizeHint().width())));
    QCOMPARE(window->size(), QSize(1280, 800));
}

// Bringing another page of the middle or the inspector to the front never resizes the panes: the tab bars stay
// where they are under the mouse.
void TestMainWindow::splitterHoldsAcrossTabs()
{
    auto window = showSample();
    QVERIFY(window);
    auto *splitter = widgetNamed<QSplitter>(*window, "mainSplitter");
    auto *runsSplitter = widgetNamed<QSplitter>(*window, "runsSplitter");
    auto *tabs = widgetNamed<QTabWidget>(*window, "centerTabs");
    QVERIFY(splitter && runsSplitter && tabs);
    QVERIFY(selectRun(*window, m_ids.runId));
    QVERIFY(selectCandidate(*window, m_ids.tiled));
    // The user's own sizes.
    splitter->setSizes({760, 500});
    QApplication::processEvents();
    const QList<int> sizes = splitter->sizes();
    const QList<int> runsSizes = runsSplitter->sizes();
    const QPoint tabBarAt = tabs->tabBar()->mapTo(window.get(), QPoint(0, 0));
    for (const QString &view :
         {QStringLiteral("tree"), QStringLiteral("chart"), QStringLiteral("menu"), QStringLiteral("graph"),
          QStringLiteral("code"), QStringLiteral("evaluation"), QStringLiteral("llm"), QStringLiteral("diff"),
          QStringLiteral("prompts"), QStringLiteral("plan"), QStringLiteral("menu")}) {
        QVERIFY(window->showView(view));
        QTest::qWait(20);
        QCOMPARE(splitter->sizes(), sizes);
        QCOMPARE(runsSplitter->sizes(), runsSizes);
        QCOMPARE(tabs->tabBar()->mapTo(window.get(), QPoint(0, 0)), tabBarAt);
    }
}

// The runs list is as high as its rows, at most a third of the window, and the height the user gives it is
// kept at the next start.
void TestMainWindow::runsListSizedToRows()
{
    auto window = showSample();
    QVERIFY(window);
    auto *runs = widgetNamed<QTableView>(*window, "runsView");
    auto *runsSplitter = widgetNamed<QSplitter>(*window, "runsSplitter");
    QVERIFY(runs && runsSplitter);
    QCOMPARE(runs->model()->rowCount(), 2);
    QTRY_VERIFY(runs->height() > 0);
    QVERIFY2(runsSplitter->sizes().first() <= window->height() / 3,
             qPrintable(QString::number(runsSplitter->sizes().first())));
    // Every row in view without scrolling, and not much more than that.
    QCOMPARE(runs->verticalScrollBar()->maximum(), 0);
    const int rowsHeight = 2 * runs->rowHeight(0) + runs->horizontalHeader()->height();
    QVERIFY2(runs->height() <= rowsHeight + 3 * runs->rowHeight(0),
             qPrintable(QStringLiteral("%1 > %2").arg(runs->height()).arg(rowsHeight)));

    // Many runs: a third of the window at most.
    QString error;
    for (int i = 0; i < 30; ++i) {
        RunInfo run = window->store()->run(m_ids.runId).value();
        run.id = 0;
        window->store()->createRun(run);
    }
    window->reloadRuns();
    window->close();
    QSettings().clear();
    auto crowded = std::make_unique<MainWindow>(RunStore::open(m_dir->filePath(QStringLiteral("runs.sqlite")), &error));
    crowded->resize(1280, 800);
    crowded->show();
    QVERIFY(QTest::qWaitForWindowExposed(crowded.get()));
    auto *crowdedSplitter = widgetNamed<QSplitter>(*crowded, "runsSplitter");
    QTRY_VERIFY(crowdedSplitter->sizes().first() > 0);
    QTest::qWait(50);
    QVERIFY2(crowdedSplitter->sizes().first() <= crowded->height() / 3,
             qPrintable(QString::number(crowdedSplitter->sizes().first())));
    QVERIFY(crowdedSplitter->sizes().first() >= crowded->height() / 3 - 10);

    // The user's height is remembered.
    crowdedSplitter->setSizes({120, crowdedSplitter->sizes().at(1) + crowdedSplitter->sizes().at(0) - 120});
    const QList<int> chosen = crowdedSplitter->sizes();
    crowded->close();
    crowded.reset();
    auto again = std::make_unique<MainWindow>(RunStore::open(m_dir->filePath(QStringLiteral("runs.sqlite")), &error));
    again->show();
    QVERIFY(QTest::qWaitForWindowExposed(again.get()));
    QTest::qWait(50);
    QCOMPARE(widgetNamed<QSplitter>(*again, "runsSplitter")->sizes(), chosen);
}

// Widen moves the diff to the middle and gives the middle the room; To Inspector brings the sizes back.
void TestMainWindow::widenTakesTheMiddle()
{
    auto window = showSample();
    QVERIFY(window);
    auto *splitter = widgetNamed<QSplitter>(*window, "mainSplitter");
    QVERIFY(splitter);
    QVERIFY(selectRun(*window, m_ids.runId));
    QVERIFY(selectCandidate(*window, m_ids.tiled));
    const QList<int> before = splitter->sizes();
    window->setDiffInCenter(true);
    QVERIFY(window->diffInCenter());
    QApplication::processEvents();
    const QList<int> widened = splitter->sizes();
    QVERIFY2(widened.at(0) >= (widened.at(0) + widened.at(1)) * 3 / 4,
             qPrintable(QStringLiteral("%1 / %2").arg(widened.at(0)).arg(widened.at(1))));
    QVERIFY(window->diffView()->width() >= widened.at(0) - 10);
    window->setDiffInCenter(false);
    QApplication::processEvents();
    QCOMPARE(splitter->sizes(), before);
}

// Compare Runs ticks every run selected in the runs list, and its chart takes most of the height.
void TestMainWindow::compareTicksSelectedRuns()
{
    auto window = showSample();
    QVERIFY(window);
    auto *runs = widgetNamed<QTableView>(*window, "runsView");
    QVERIFY(runs);
    QVERIFY(selectRun(*window, m_ids.runId));
    const QModelIndex other = findIndex(runs->model(), RunListModel::RunIdRole, m_ids.labelledRunId);
    QVERIFY(other.isValid());
    QTest::mouseClick(runs->viewport(), Qt::LeftButton, Qt::ControlModifier, runs->visualRect(other).center());
    QCOMPARE(runs->selectionModel()->selectedRows().size(), 2);
    const QList<qint64> selectedIds = window->selectedRunIds();
    QCOMPARE(QSet<qint64>(selectedIds.cbegin(), selectedIds.cend()), (QSet<qint64>{m_ids.runId, m_ids.labelledRunId}));

    auto *action = window->findChild<QAction *>(QStringLiteral("compareRunsAction"));
    QVERIFY(action);
    action->trigger();
    RunsComparisonView *view = nullptr;
    QTRY_VERIFY((view = window->findChild<RunsComparisonView *>()) != nullptr);
    QVERIFY(QTest::qWaitForWindowExposed(view));
    auto *list = view->findChild<QListWidget *>(QStringLiteral("compareRunList"));
    QVERIFY(list);
    QSet<qint64> ticked;
    for (int row = 0; row < list->count(); ++row)
        if (list->item(row)->checkState() == Qt::Checked)
            ticked.insert(list->item(row)->data(Qt::UserRole).toLongLong());
    QCOMPARE(ticked, (QSet<qint64>{m_ids.runId, m_ids.labelledRunId}));
    auto *chart = view->findChild<QWidget *>(QStringLiteral("compareChartView"));
    QVERIFY(chart);
    QVERIFY2(chart->height() >= view->height() / 2,
             qPrintable(QStringLiteral("%1 of %2").arg(chart->height()).arg(view->height())));
    view->close();
}

// Window geometry, both splitters and the tree's columns come back at the next start from the settings; a fresh
// configuration restores nothing.
void TestMainWindow::restoresLayoutAtNextStart()
{
    auto window = showSample(QSize(1100, 700));
    QVERIFY(window);
    auto *splitter = widgetNamed<QSplitter>(*window, "mainSplitter");
    auto *runsSplitter = widgetNamed<QSplitter>(*window, "runsSplitter");
    auto *tree = widgetNamed<QTreeView>(*window, "candidateTree");
    QVERIFY(splitter && runsSplitter && tree);
    splitter->setSizes({800, 300});
    runsSplitter->setSizes({150, runsSplitter->sizes().at(0) + runsSplitter->sizes().at(1) - 150});
    tree->header()->resizeSection(0, 211);
    QApplication::processEvents();
    const QList<int> sizes = splitter->sizes();
    const QList<int> runsSizes = runsSplitter->sizes();
    QVERIFY(std::abs(sizes.at(0) - 800) < 10);
    window->close(); // saves
    window.reset();

    QString error;
    auto again = std::make_unique<MainWindow>(RunStore::open(m_dir->filePath(QStringLiteral("runs.sqlite")), &error));
    again->show();
    QVERIFY(QTest::qWaitForWindowExposed(again.get()));
    QTest::qWait(50);
    QCOMPARE(again->size(), QSize(1100, 700));
    QCOMPARE(widgetNamed<QSplitter>(*again, "mainSplitter")->sizes(), sizes);
    QCOMPARE(widgetNamed<QSplitter>(*again, "runsSplitter")->sizes(), runsSizes);
    QCOMPARE(widgetNamed<QTreeView>(*again, "candidateTree")->header()->sectionSize(0), 211);
    again->close();
    again.reset();

    // A fresh configuration: the window's own layout.
    QSettings().clear();
    auto fresh = std::make_unique<MainWindow>(RunStore::open(m_dir->filePath(QStringLiteral("runs.sqlite")), &error));
    fresh->resize(1100, 700);
    fresh->show();
    QVERIFY(QTest::qWaitForWindowExposed(fresh.get()));
    QTest::qWait(50);
    QVERIFY(widgetNamed<QSplitter>(*fresh, "mainSplitter")->sizes() != sizes);
    QVERIFY(widgetNamed<QTreeView>(*fresh, "candidateTree")->header()->sectionSize(0) != 211);
}

namespace {

Candidate graphNode(qint64 id, qint64 parentId, int iteration, CandidateStatus status, double score,
                    bool inBeam = false)
{
    Candidate c;
    c.id = id;
    c.parentId = parentId;
    c.iteration = iteration;
    c.status = status;
    c.score = score;
    c.inBeam = inBeam;
    c.origin = parentId == 0 ? CandidateOrigin::Root : CandidateOrigin::Llm;
    c.menuItem = QStringLiteral("loop tiling / cache blocking");
    return c;
}

// A run of 61: the root; 20 children in iteration 1 (2 kept in the beam, 12 pruned, 6 failed); 20 children of
// each beam member in iteration 2, one of them the best (the rest pruned or failed).
QList<Candidate> prunedRun()
{
    QList<Candidate> run{graphNode(1, 0, 0, CandidateStatus::Correct, 100)};
    qint64 id = 2;
    for (int i = 0; i < 20; ++i, ++id)
        run << (i < 2 ? graphNode(id, 1, 1, CandidateStatus::Correct, 50 + i)
                    : i < 14
                    ? graphNode(id, 1, 1, CandidateStatus::Correct, 80 + i)
                    : graphNode(id, 1, 1, i % 2 ? CandidateStatus::CompileError : CandidateStatus::Incorrect, qQNaN()));
    for (qint64 parent : {2, 3})
        for (int i = 0; i < 20; ++i, ++id)
            run << (i == 0 && parent == 2 ? graphNode(id, parent, 2, CandidateStatus::Correct, 20, true)
                        : i < 3           ? graphNode(id, parent, 2, CandidateStatus::Correct, 30 + i, true)
                                : graphNode(id, parent, 2, i % 3 ? CandidateStatus::Correct : CandidateStatus::Failed,
                                            i % 3 ? 40 + i : qQNaN()));
    return run;
}

} // namespace

// Above CollapseAbove candidates, each parent's pruned and failed children are one count node; a click, Enter or
// the context action opens it, C collapses it again, and selecting a hidden candidate opens its group.
void TestMainWindow::graphCollapsesPrunedSubtrees()
{
    BeamGraphView graph;
    graph.resize(1000, 600);
    graph.show();
    QVERIFY(QTest::qWaitForWindowExposed(&graph));
    const QList<Candidate> run = prunedRun();
    QVERIFY(run.size() > BeamGraphView::CollapseAbove);
    graph.setCandidates(run);
    graph.flushPendingUpdates();
    QCOMPARE(graph.nodeCount(), 61);
    QVERIFY(graph.collapsesByDefault());
    auto *collapse = graph.findChild<QToolButton *>(QStringLiteral("graphCollapse"));
    QVERIFY(collapse && collapse->isChecked());
    // The root's 18 pruned or failed children: one node. The beam members and the best path stay.
    QCOMPARE(graph.hiddenCount(1), 18);
    QCOMPARE(graph.groupLabel(1), QStringLiteral("+18 pruned or failed"));
    QVERIFY(graph.isHidden(10));
    QVERIFY(graph.nodePosition(10).isNull());
    QVERIFY(!graph.isHidden(2) && !graph.isHidden(3));
    QCOMPARE(graph.hiddenCount(2), 17);
    QCOMPARE(graph.hiddenCount(3), 17);
    QVERIFY(graph.groupLabel(2).startsWith(QStringLiteral("+17 ")));
    QCOMPARE(graph.bestPath().last(), 22);
    QVERIFY(!graph.isHidden(22));
    const QList<qint64> groups = graph.collapsedGroups();
    QCOMPARE(QSet<qint64>(groups.cbegin(), groups.cend()), (QSet<qint64>{1, 2, 3}));

    // A click on the count node opens it and selects its first candidate.
    QSignalSpy selected(&graph, &BeamGraphView::candidateSelected);
    graph.centerOn(graph.groupPosition(1));
    const QPoint at = graph.mapFromScene(graph.groupPosition(1));
    QCOMPARE(graph.groupAt(at), 1);
    QCOMPARE(graph.candidateAt(at), 0);
    QTest::mouseClick(graph.viewport(), Qt::LeftButton, {}, at);
    QCOMPARE(graph.hiddenCount(1), 0);
    QVERIFY(!graph.isHidden(10));
    QVERIFY(!graph.nodePosition(10).isNull());
    QCOMPARE(selected.count(), 1);
    const qint64 first = selected.first().first().toLongLong();
    QCOMPARE(graph.selectedCandidate(), first);
    QCOMPARE(run.at(int(first) - 1).parentId, 1);

    // C on one of them collapses the group again; the count node is selected; Enter opens it.
    graph.setFocus();
    QTest::keyClick(&graph, Qt::Key_C);
    QCOMPARE(graph.hiddenCount(1), 18);
    QCOMPARE(graph.selectedGroup(), 1);
    QCOMPARE(graph.selectedCandidate(), 0);
    QTest::keyClick(&graph, Qt::Key_Return);
    QCOMPARE(graph.hiddenCount(1), 0);
    QCOMPARE(graph.selectedCandidate(), first);

    // The keys walk onto a count node: Down from the last beam member of iteration 2 reaches a group.
    graph.setGroupCollapsed(1, true);
    QVERIFY(graph.selectCandidate(2));
    QTest::keyClick(&graph, Qt::Key_Right);
    QVERIFY(graph.selectedCandidate() > 0 || graph.selectedGroup() == 2);
    for (int i = 0; i < 5 && graph.selectedGroup() == 0; ++i)
        QTest::keyClick(&graph, Qt::Key_Down);
    QVERIFY(graph.selectedGroup() != 0);

    // Selecting a hidden candidate (from the tree, a search) opens its group.
    QVERIFY(graph.isHidden(10));
    QVERIFY(graph.selectCandidate(10));
    QVERIFY(!graph.isHidden(10));
    QCOMPARE(graph.hiddenCount(1), 0);

    // The Collapse button: everything shown, then collapsed again.
    collapse->click();
    QVERIFY(!graph.collapsesByDefault());
    QVERIFY(graph.collapsedGroups().isEmpty());
    for (const Candidate &c : run)
        QVERIFY(!graph.nodePosition(c.id).isNull() || c.id == 1);
    collapse->click();
    QCOMPARE(graph.collapsedGroups().size(), 3);

    // A small run shows every node.
    graph.setCandidates(run.mid(0, 21));
    graph.flushPendingUpdates();
    graph.setCollapseByDefault(false);
    QVERIFY(graph.collapsedGroups().isEmpty());
}

// Labels are drawn at the detail the box has room for, in the view's font: the strategy goes first, then the id;
// the score of a correct candidate stays while any text is drawn.
void TestMainWindow::graphLabelsByLevelOfDetail()
{
    BeamGraphView graph;
    graph.resize(1000, 600);
    graph.show();
    QVERIFY(QTest::qWaitForWindowExposed(&graph));
    graph.setCandidates(prunedRun());
    graph.flushPendingUpdates();
    // The default fit keeps the id and the score readable, however big the run.
    QVERIFY(graph.labelDetail() == BeamGraphView::LabelDetail::IdAndScore
            || graph.labelDetail() == BeamGraphView::LabelDetail::Full);
    QStringList text = graph.nodeText(22);
    QCOMPARE(text.first(), QStringLiteral("#22  5.00×"));

    const auto zoomTo = [&graph](double scale) { graph.setTransform(QTransform::fromScale(scale, scale)); };
    zoomTo(1.2);
    QCOMPARE(graph.labelDetail(), BeamGraphView::LabelDetail::Full);
    text = graph.nodeText(22);
    QCOMPARE(text.size(), 2);
    QCOMPARE(text.at(0), QStringLiteral("#22  5.00×"));
    QCOMPARE(text.at(1), graph.nodeSubtitle(22));
    QCOMPARE(graph.nodeText(1).first(), QStringLiteral("#1 root  1.00×"));

    // Zooming out: the subtitle goes, then the id; the score never while text is drawn at all.
    bool sawIdAndScore = false, sawScoreOnly = false;
    for (double scale = 1.2; scale > 0.05; scale *= 0.9) {
        zoomTo(scale);
        const BeamGraphView::LabelDetail detail = graph.labelDetail();
        const QStringList lines = graph.nodeText(22);
        if (detail == BeamGraphView::LabelDetail::None) {
            QVERIFY(lines.isEmpty());
            QVERIFY(40 * scale < BeamGraphView::MinTextHeight);
            continue;
        }
        QVERIFY2(!lines.isEmpty() && lines.first().contains(QStringLiteral("5.00×")),
                 qPrintable(lines.join(QLatin1Char('|'))));
        if (lines.size() == 1 && lines.first().startsWith(QLatin1Char('#')))
            sawIdAndScore = true;
        if (lines == QStringList{QStringLiteral("5.00×")})
            sawScoreOnly = true;
        if (detail != BeamGraphView::LabelDetail::Full)
            QCOMPARE(lines.size(), 1);
    }
    QVERIFY(sawIdAndScore);
    QVERIFY(sawScoreOnly);
    // A pruned node keeps its score; a failed one has none (its glyph, if its kind has one: a compile error has not).
    graph.setGroupCollapsed(1, false);
    zoomTo(0.25);
    QCOMPARE(graph.labelDetail(), BeamGraphView::LabelDetail::ScoreOnly);
    QCOMPARE(graph.nodeText(10), QStringList{QStringLiteral("1.14×")});
    QCOMPARE(graph.nodeText(17), QStringList{QString()});
}

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
