// The workbench follows runs that another process drives (issue 19): the real `autocomp` CLI runs searches
// against the local LLM server and the scriptable fake target on the store the window has open, and the
// window's runs list, graph, tree, chart, header and status line follow its commits; Pause, Resume and
// Stop from the window reach the CLI's run through the store; `autocomp runs watch` follows a run too.
#include "../reliability/reliability_harness.h"

#include "charts/beam_graph_view.h"
#include "models/candidate_tree_model.h"
#include "charts/latency_chart.h"
#include "frame/main_window.h"
#include "live/run_actions.h"
#include "models/run_list_model.h"
#include "store/run_store.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStatusBar>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTreeView>

#include <csignal>

using namespace autocomp;
using namespace autocomp::test;

namespace {

constexpr int s_exitStopped = 4; // the CLI's status for a run that was stopped or paused (README)

template<typename T>
T *child(QObject *parent, const char *name)
{
    return parent->findChild<T *>(QLatin1String(name));
}

// A CLI process as a user starts it in a terminal, pointed at the local LLM server.
class Cli
{
public:
    void start(const QStringList &args)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), qEnvironmentVariable("AUTOCOMP_FAKE_DATA"));
        m_process.setProcessEnvironment(env);
        m_process.start(qEnvironmentVariable("AUTOCOMP_CLI"), args);
    }
    bool waitForStarted() { return m_process.waitForStarted(); }
    bool running() const { return m_process.state() != QProcess::NotRunning; }
    qint64 pid() const { return m_process.processId(); }
    int exitCode() const { return m_process.exitStatus() == QProcess::NormalExit ? m_process.exitCode() : -1; }
    QString out()
    {
        m_out += QString::fromUtf8(m_process.readAllStandardOutput());
        return m_out;
    }
    QString describe()
    {
        m_err += QString::fromUtf8(m_process.readAllStandardError());
        return QStringLiteral("exit %1\n--- stdout\n%2\n--- stderr\n%3")
            .arg(exitCode())
            .arg(out().right(3000), m_err.right(4000));
    }
    ~Cli()
    {
        if (running()) {
            m_process.kill();
            m_process.waitForFinished();
        }
    }

private:
    QProcess m_process;
    QString m_out;
    QString m_err;
};

} // namespace

class TestLiveFollow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void followsCliRunPausedAndResumedHere();
    void pauseAndResumeReachTheCli();
    void runsWatchFollowsWhoeverDrives();
    void killedDriverShowsInterrupted();

private:
    QString storePath() const { return m_dir->filePath(QStringLiteral("runs.sqlite")); }
    QString writeConfig(const QString &name, int iterations);
    void openWindow();
    QString cell(qint64 runId, int column, int role = Qt::DisplayRole) const;
    QString statusText() const { return child<QLabel>(m_window.get(), "runStatus")->text(); }
    QString headerText() const { return child<QLabel>(m_window.get(), "runHeader")->text(); }
    int treeCount() const { return m_window->findChild<CandidateTreeModel *>()->candidateCount(); }
    int graphCount() const { return child<BeamGraphView>(m_window.get(), "beamGraph")->nodeCount(); }
    int chartCount() const { return child<LatencyChart>(m_window.get(), "latencyChart")->pointCount(); }
    // The window's views hold exactly the run's stored candidates (and the chart at most its judged ones).
    bool viewsMatchStore(qint64 runId, QString *why);

    QTemporaryDir m_home;
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<FakeLlmServer> m_server;
    std::unique_ptr<MainWindow> m_window;
    std::unique_ptr<QAbstractItemModelTester> m_runsTester;
};

void TestLiveFollow::initTestCase()
{
    QVERIFY(m_home.isValid());
    QVERIFY(!qEnvironmentVariable("AUTOCOMP_CLI").isEmpty());
    QVERIFY(!qEnvironmentVariable("AUTOCOMP_FAKE_DATA").isEmpty());
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_home.filePath(QStringLiteral("config"))));
    qputenv("XDG_DATA_HOME", QFile::encodeName(m_home.filePath(QStringLiteral("data"))));
    qputenv("AUTOCOMP_DATA_DIR", qgetenv("AUTOCOMP_FAKE_DATA"));
}

void TestLiveFollow::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_server = std::make_unique<FakeLlmServer>();
    QVERIFY(m_server->listen());
    QString error;
    // Every answer takes 150 ms: a run lasts seconds, long enough to pause it in the middle.
    QVERIFY2(m_server->loadScriptText(deterministicScript(CodeAnswers::Normal, 0, 150), m_dir->path(), &error),
             qPrintable(error));
    // The CLI (which inherits this environment) and the window, when it drives a run, talk to this server.
    qputenv("VLLM_API_BASE", (m_server->baseUrl().toString() + QStringLiteral("/v1")).toUtf8());
    qputenv("VLLM_API_KEY", "test-key");
}

void TestLiveFollow::cleanup()
{
    m_runsTester.reset();
    m_window.reset();
    m_server.reset();
    m_dir.reset();
}

QString TestLiveFollow::writeConfig(const QString &name, int iterations)
{
    const QString path = m_dir->filePath(name);
    return writeFile(path, runConfig(iterations)) ? path : QString();
}

void TestLiveFollow::openWindow()
{
    QString error;
    std::unique_ptr<RunStore> store = RunStore::open(storePath(), &error);
    QVERIFY2(store, qPrintable(error));
    m_window = std::make_unique<MainWindow>(std::move(store));
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    m_runsTester = std::make_unique<QAbstractItemModelTester>(m_window->findChild<RunListModel *>());
}

QString TestLiveFollow::cell(qint64 runId, int column, int role) const
{
    auto *model = m_window->findChild<RunListModel *>();
    const int row = model->rowOfRun(runId);
    return row < 0 ? QString() : model->index(row, column).data(role).toString();
}

bool TestLiveFollow::viewsMatchStore(qint64 runId, QString *why)
{
    m_window->showView(QStringLiteral("chart")); // a hidden chart only collects
    const QList<Candidate> stored = m_window->store()->candidates(runId);
    // The chart plots judged candidates: correct ones by score, failed ones apart.
    const auto evaluated = std::count_if(stored.cbegin(), stored.cend(),
                                         [](const Candidate &c) { return isFinal(c.status); });
    auto *model = m_window->findChild<CandidateTreeModel *>();
    int sameStatus = 0;
    QStringList differing;
    for (const Candidate &c : stored) {
        const Candidate *shown = model->candidate(model->indexOfCandidate(c.id));
        if (shown && shown->status == c.status && shown->inBeam == c.inBeam)
            ++sameStatus;
        else if (shown)
            differing << QStringLiteral("#%1 shown %2%3, stored %4%5")
                             .arg(c.id)
                             .arg(toString(shown->status), shown->inBeam ? QStringLiteral(" in beam") : QString(),
                                  toString(c.status), c.inBeam ? QStringLiteral(" in beam") : QString());
    }
    *why = QStringLiteral("store %1 candidates (%2 judged); tree %3 (%4 as stored), graph %5, chart %6; ")
               .arg(stored.size())
               .arg(evaluated)
               .arg(treeCount())
               .arg(sameStatus)
               .arg(graphCount())
               .arg(chartCount())
        + differing.join(QStringLiteral("; "));
    return treeCount() == stored.size() && sameStatus == stored.size() && graphCount() == stored.size()
        && chartCount() >= 1 && chartCount() <= evaluated;
}

// A run started with `autocomp run` on the open store appears, fills the views commit by commit, says who
// drives it, takes a plan written here (handed to it through the store) and refuses one once it says it takes
// none (an older version); Pause from the window pauses it (the CLI ends, as it does when its
// runs are paused), and Resume drives it on from the window to its end.
void TestLiveFollow::followsCliRunPausedAndResumedHere()
{
    openWindow();
    RunActions *actions = m_window->runActions();
    const QString config = writeConfig(QStringLiteral("run.yaml"), 4);
    QVERIFY(!config.isEmpty());
    Cli cli;
    cli.start({QStringLiteral("run"), config, QStringLiteral("--store"), storePath()});
    QVERIFY(cli.waitForStarted());

    // The run appears and is shown: the store had none.
    QTRY_VERIFY_WITH_TIMEOUT(m_window->currentRunId() != 0, 20000);
    const qint64 runId = m_window->currentRunId();
    QTRY_COMPARE_WITH_TIMEOUT(cell(runId, RunListModel::StateColumn), QStringLiteral("running"), 10000);
    const QString driver = QStringLiteral("pid %1 on this host").arg(cli.pid());
    // The narrow runs pane says who in a few characters; its tooltip says the rest.
    QTRY_COMPARE_WITH_TIMEOUT(cell(runId, RunListModel::DriverColumn), QStringLiteral("pid %1").arg(cli.pid()), 10000);
    QVERIFY2(cell(runId, RunListModel::DriverColumn, Qt::ToolTipRole).contains(QStringLiteral("Driven by ") + driver),
             qPrintable(cell(runId, RunListModel::DriverColumn, Qt::ToolTipRole)));
    // The column is there while some run has a driver, wide enough to read it.
    auto *runsView = m_window->findChild<QTableView *>(QStringLiteral("runsView"));
    QVERIFY(runsView);
    QVERIFY(!runsView->isColumnHidden(RunListModel::DriverColumn));
    QVERIFY(runsView->columnWidth(RunListModel::DriverColumn)
            >= runsView->fontMetrics().horizontalAdvance(QStringLiteral("pid %1").arg(cli.pid())));
    QTRY_VERIFY2_WITH_TIMEOUT(headerText().contains(QStringLiteral("driven by ") + driver), qPrintable(headerText()),
                              10000);
    QVERIFY(!actions->isDriving(runId));

    // Candidates arrive as the CLI commits them: the tree, the graph and the chart (in front) grow while it runs.
    QVERIFY(m_window->showView(QStringLiteral("chart")));
    QTRY_VERIFY_WITH_TIMEOUT(treeCount() >= 2 && chartCount() >= 1, 30000);
    const int seen = treeCount();
    const int plotted = chartCount();
    QTRY_VERIFY_WITH_TIMEOUT(treeCount() > seen && chartCount() > plotted, 30000);
    QTRY_COMPARE_WITH_TIMEOUT(graphCount(), treeCount(), 10000);
    QVERIFY(m_window->showView(QStringLiteral("graph")));
    QVERIFY(cli.running());
    QTRY_VERIFY2_WITH_TIMEOUT(statusText().contains(QStringLiteral("driven by ") + driver), qPrintable(statusText()),
                              10000);

    // Elapsed time of a run another process drives, from the store's timestamps.
    QTRY_VERIFY2_WITH_TIMEOUT(statusText().contains(QLatin1String(" elapsed")), qPrintable(statusText()), 5000);

    // A plan written here is handed to the CLI through the store: it takes it as its own window's, and the
    // candidates it makes arrive here through the follower.
    const qint64 root = m_window->store()->candidates(runId).first().id;
    m_window->selectCandidate(root);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->store()->candidate(root)->hasScore(), 60000); // the search is past the root
    QTRY_VERIFY2_WITH_TIMEOUT(actions->humanPlanAction()->isEnabled(),
                              qPrintable(actions->humanPlanAction()->statusTip()), 10000);
    QVERIFY(actions->humanCodeAction()->isEnabled());
    HumanInputDialog *dialog = actions->showHumanDialog(HumanInputDialog::Plan);
    QVERIFY(dialog);
    dialog->editor()->setPlainText(QStringLiteral("Tile the loops by hand, 32 by 32."));
    dialog->accept();
    QVERIFY2(m_window->statusBar()->currentMessage().contains(
                 QStringLiteral("sent to run %1's driver, pid %2 on ").arg(runId).arg(cli.pid())),
             qPrintable(m_window->statusBar()->currentMessage()));
    const auto handed = [&] {
        for (const Candidate &c : m_window->store()->candidates(runId))
            if (c.origin == CandidateOrigin::Human && c.parentId == root
                && c.plan.contains(QLatin1String("Tile the loops by hand")))
                return c.id;
        return qint64(0);
    };
    QTRY_VERIFY_WITH_TIMEOUT(handed() != 0, 20000);
    QTRY_VERIFY2_WITH_TIMEOUT(m_window->statusBar()->currentMessage().contains(
                                  QStringLiteral("taken by run %1's driver (pid %2 on ").arg(runId).arg(cli.pid())),
                              qPrintable(m_window->statusBar()->currentMessage()), 10000);
    auto *tree = m_window->findChild<CandidateTreeModel *>();
    QTRY_VERIFY_WITH_TIMEOUT(tree->indexOfCandidate(handed()).isValid(), 10000);
    QVERIFY(tree->candidate(tree->indexOfCandidate(handed()))->origin == CandidateOrigin::Human);

    // A driver that takes no requests (an older version, which leaves lease_inbox empty): refused, with the reason.
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("older_driver"));
        db.setDatabaseName(storePath());
        QVERIFY(db.open());
        QSqlQuery q(db);
        QVERIFY(q.exec(QStringLiteral("UPDATE runs SET lease_inbox='' WHERE id=%1").arg(runId)));
    }
    QSqlDatabase::removeDatabase(QStringLiteral("older_driver"));
    QTRY_VERIFY_WITH_TIMEOUT(!actions->humanPlanAction()->isEnabled(), 10000);
    QVERIFY(!actions->humanCodeAction()->isEnabled());
    QVERIFY2(
        actions->humanPlanAction()->statusTip().contains(QStringLiteral("driven by %1, an older version").arg(driver)),
        qPrintable(actions->humanPlanAction()->statusTip()));
    QVERIFY(actions->showHumanDialog(HumanInputDialog::Plan) == nullptr);

    // Pause from the window: the CLI pauses its run (in-flight work finishes) and ends with status 4.
    QTRY_VERIFY_WITH_TIMEOUT(actions->pauseAction()->isEnabled(), 10000);
    actions->pauseAction()->trigger();
    QTRY_VERIFY2_WITH_TIMEOUT(!cli.running(), qPrintable(cli.describe()), 60000);
    QCOMPARE(cli.exitCode(), s_exitStopped);
    QVERIFY2(cli.describe().contains(QStringLiteral("run %1 paused").arg(runId)), qPrintable(cli.describe()));
    QTRY_COMPARE_WITH_TIMEOUT(cell(runId, RunListModel::StateColumn), QStringLiteral("paused"), 10000);
    QCOMPARE(toString(m_window->store()->run(runId)->state), toString(RunState::Paused));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->driverOf(runId) == std::nullopt, 10000); // the CLI released the run
    QString why;
    QTRY_VERIFY2_WITH_TIMEOUT(viewsMatchStore(runId, &why), qPrintable(why), 10000);
    const qsizetype pausedWith = m_window->store()->candidates(runId).size();

    // Resume: nobody drives it any more, so the window drives it on, to its end.
    QTRY_VERIFY_WITH_TIMEOUT(actions->resumeAction()->isEnabled(), 10000);
    actions->resumeAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(actions->isDriving(runId), 20000);
    QTRY_COMPARE_WITH_TIMEOUT(cell(runId, RunListModel::DriverColumn), QStringLiteral("this workbench"), 10000);
    QTRY_VERIFY_WITH_TIMEOUT(!actions->isDriving(runId), 120000);
    const RunInfo run = *m_window->store()->run(runId);
    QCOMPARE(toString(run.state), toString(RunState::Finished));
    QCOMPARE(run.iteration, 4);
    QVERIFY(m_window->store()->candidates(runId).size() > pausedWith);
    QTRY_COMPARE_WITH_TIMEOUT(cell(runId, RunListModel::StateColumn), QStringLiteral("finished"), 10000);
    QTRY_VERIFY2_WITH_TIMEOUT(viewsMatchStore(runId, &why), qPrintable(why), 10000);
}

// One CLI drives two runs. The window pauses one of them; the CLI keeps the paused run (its other run still
// goes), so Resume is asked of the CLI through the store and the CLI drives the run on to its end.
void TestLiveFollow::pauseAndResumeReachTheCli()
{
    openWindow();
    RunActions *actions = m_window->runActions();
    const QString shortRun = writeConfig(QStringLiteral("a.yaml"), 2);
    const QString longRun = writeConfig(QStringLiteral("b.yaml"), 6);
    Cli cli;
    cli.start({QStringLiteral("run"), shortRun, longRun, QStringLiteral("--store"), storePath()});
    QVERIFY(cli.waitForStarted());
    QTRY_COMPARE_WITH_TIMEOUT(m_window->findChild<RunListModel *>()->rowCount(), 2, 20000);
    const qint64 a = m_window->store()->runs().first().id;
    const qint64 b = m_window->store()->runs().last().id;
    QVERIFY(m_window->selectRun(a));
    QTRY_VERIFY_WITH_TIMEOUT(actions->pauseAction()->isEnabled(), 20000);
    QTRY_VERIFY_WITH_TIMEOUT(treeCount() >= 2, 30000);

    actions->pauseAction()->trigger();
    QTRY_VERIFY2_WITH_TIMEOUT(statusText().contains(QStringLiteral("pausing")), qPrintable(statusText()), 5000);
    QVERIFY(!actions->pauseAction()->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(cell(a, RunListModel::StateColumn), QStringLiteral("paused"), 60000);
    QVERIFY2(cli.running(), qPrintable(cli.describe()));
    QCOMPARE(cell(a, RunListModel::DriverColumn), QStringLiteral("pid %1").arg(cli.pid()));
    QCOMPARE(cell(b, RunListModel::StateColumn), QStringLiteral("running"));

    QTRY_VERIFY_WITH_TIMEOUT(actions->resumeAction()->isEnabled(), 10000);
    actions->resumeAction()->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(cell(a, RunListModel::StateColumn), QStringLiteral("running"), 20000);
    QVERIFY(!actions->isDriving(a)); // the CLI drives it, not this window
    QTRY_COMPARE_WITH_TIMEOUT(cell(a, RunListModel::StateColumn), QStringLiteral("finished"), 120000);
    QString why;
    QTRY_VERIFY2_WITH_TIMEOUT(viewsMatchStore(a, &why), qPrintable(why), 10000);

    // Stop from the window reaches the CLI's other run: it ends stopped, and so does the CLI (status 4).
    QVERIFY(m_window->selectRun(b));
    QTRY_VERIFY_WITH_TIMEOUT(actions->stopAction()->isEnabled(), 10000);
    actions->stopAction()->trigger();
    QTRY_VERIFY2_WITH_TIMEOUT(!cli.running(), qPrintable(cli.describe()), 60000);
    QCOMPARE(cli.exitCode(), s_exitStopped);
    QTRY_COMPARE_WITH_TIMEOUT(cell(b, RunListModel::StateColumn), QStringLiteral("stopped"), 10000);
    QCOMPARE(toString(m_window->store()->run(a)->state), toString(RunState::Finished));
    QVERIFY(!actions->isDriving(a) && !actions->isDriving(b));
}

// `autocomp runs watch RUN_ID` prints the run's progress whichever process drives it, and ends with the run:
// status 4 when its CLI was paused (nobody drives it then), 0 once a resumed run has finished.
void TestLiveFollow::runsWatchFollowsWhoeverDrives()
{
    const QString config = writeConfig(QStringLiteral("run.yaml"), 3);
    const QString store = storePath();
    Cli driver;
    driver.start({QStringLiteral("run"), config, QStringLiteral("--store"), store});
    QVERIFY(driver.waitForStarted());
    qint64 runId = 0;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            std::unique_ptr<RunStore> s = QFileInfo::exists(store)
                ? RunStore::open(store, {.create = false, .check = false}, nullptr)
                : nullptr;
            const QList<RunInfo> runs = s ? s->runs() : QList<RunInfo>{};
            runId = runs.isEmpty() ? 0 : runs.first().id;
            return runId != 0;
        }(),
        20000);
    const QString id = QString::number(runId);
    Cli watch;
    watch.start({QStringLiteral("runs"), QStringLiteral("watch"), id, QStringLiteral("--store"), store});
    QVERIFY(watch.waitForStarted());
    QTRY_VERIFY2_WITH_TIMEOUT(watch.out().contains(QStringLiteral("driven by pid %1").arg(driver.pid())),
                              qPrintable(watch.describe()), 20000);
    // Verdicts of candidates as they are judged.
    QTRY_VERIFY2_WITH_TIMEOUT(watch.out().contains(QLatin1String(" correct ")), qPrintable(watch.describe()), 60000);

    Cli pause;
    pause.start({QStringLiteral("pause"), id, QStringLiteral("--store"), store});
    QTRY_VERIFY_WITH_TIMEOUT(!pause.running(), 60000);
    QCOMPARE(pause.exitCode(), 0);
    QTRY_VERIFY2_WITH_TIMEOUT(!watch.running(), qPrintable(watch.describe()), 30000);
    QCOMPARE(watch.exitCode(), s_exitStopped);
    QVERIFY2(watch.out().contains(QStringLiteral("run %1 paused and no process drives it").arg(runId)),
             qPrintable(watch.describe()));
    QTRY_VERIFY_WITH_TIMEOUT(!driver.running(), 30000);

    Cli resumed;
    resumed.start({QStringLiteral("resume"), id, QStringLiteral("--store"), store});
    QVERIFY(resumed.waitForStarted());
    Cli watchAgain;
    watchAgain.start({QStringLiteral("runs"), QStringLiteral("watch"), id, QStringLiteral("--store"), store,
                      QStringLiteral("--json")});
    QTRY_VERIFY2_WITH_TIMEOUT(!watchAgain.running(), qPrintable(watchAgain.describe()), 120000);
    QTRY_VERIFY_WITH_TIMEOUT(!resumed.running(), 30000);
    QCOMPARE(resumed.exitCode(), 0);
    QCOMPARE(watchAgain.exitCode(), 0);
    // JSON lines: the last one says the run ended finished.
    const QStringList lines = watchAgain.out().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QVERIFY(lines.size() >= 2);
    const QJsonObject last = QJsonDocument::fromJson(lines.last().toUtf8()).object();
    QCOMPARE(last.value(QStringLiteral("event")).toString(), QStringLiteral("ended"));
    QCOMPARE(last.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
    QCOMPARE(last.value(QStringLiteral("run_id")).toInteger(), runId);
}

// A CLI killed while it drives a run leaves the run recorded as running: the window shows it interrupted, the
// dead driver gone, and offers Resume and Stop (which records the run stopped, nobody being left to ask).
void TestLiveFollow::killedDriverShowsInterrupted()
{
    openWindow();
    RunActions *actions = m_window->runActions();
    const QString config = writeConfig(QStringLiteral("run.yaml"), 3);
    QProcess cli;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), qEnvironmentVariable("AUTOCOMP_FAKE_DATA"));
    cli.setProcessEnvironment(env);
    cli.start(qEnvironmentVariable("AUTOCOMP_CLI"),
              {QStringLiteral("run"), config, QStringLiteral("--store"), storePath()});
    QVERIFY(cli.waitForStarted());
    const qint64 pid = cli.processId();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->currentRunId() != 0, 20000);
    const qint64 runId = m_window->currentRunId();
    QTRY_VERIFY_WITH_TIMEOUT(treeCount() >= 2, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(actions->pauseAction()->isEnabled(), 10000);
    QVERIFY(!actions->resumeAction()->isEnabled());

    ::kill(pid_t(pid), SIGKILL);
    QVERIFY(cli.waitForFinished());
    QTRY_COMPARE_WITH_TIMEOUT(cell(runId, RunListModel::StateColumn), QStringLiteral("interrupted"), 10000);
    QCOMPARE(cell(runId, RunListModel::DriverColumn), QStringLiteral("gone: pid %1").arg(pid));
    QVERIFY2(cell(runId, RunListModel::DriverColumn, Qt::ToolTipRole)
                 .contains(QStringLiteral("gone (pid %1 on this host)").arg(pid)),
             qPrintable(cell(runId, RunListModel::DriverColumn, Qt::ToolTipRole)));
    QTRY_VERIFY2_WITH_TIMEOUT(headerText().contains(QLatin1String("interrupted")), qPrintable(headerText()), 5000);
    QTRY_VERIFY2_WITH_TIMEOUT(statusText().contains(QStringLiteral("Run %1: interrupted").arg(runId)),
                              qPrintable(statusText()), 5000);
    QVERIFY(actions->resumeAction()->isEnabled());
    QVERIFY(!actions->pauseAction()->isEnabled());
    QVERIFY(actions->stopAction()->isEnabled());
    // Nobody is left to take a plan: refused, and Resume is offered.
    m_window->selectCandidate(m_window->store()->candidates(runId).first().id);
    QVERIFY(!actions->humanPlanAction()->isEnabled());
    QVERIFY2(actions->humanPlanAction()->statusTip().contains(QStringLiteral("Run %1 was interrupted").arg(runId))
                 && actions->humanPlanAction()->statusTip().contains(QLatin1String("Resume it")),
             qPrintable(actions->humanPlanAction()->statusTip()));
    QCOMPARE(toString(m_window->store()->run(runId)->state), toString(RunState::Running));

    actions->stopAction()->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(cell(runId, RunListModel::StateColumn), QStringLiteral("stopped"), 10000);
    const RunInfo run = *m_window->store()->run(runId);
    QCOMPARE(toString(run.state), toString(RunState::Stopped));
    QVERIFY2(run.stopReason.contains(QLatin1String("no process was driving it")), qPrintable(run.stopReason));
    QVERIFY(actions->resumeAction()->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(cell(runId, RunListModel::DriverColumn), QString(), 5000);
    // Nobody drives a run any more: the empty column gives its room back.
    QVERIFY(m_window->findChild<QTableView *>(QStringLiteral("runsView"))->isColumnHidden(RunListModel::DriverColumn));
}

QTEST_MAIN(TestLiveFollow)
#include "tst_live_follow.moc"
