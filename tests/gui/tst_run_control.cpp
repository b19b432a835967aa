// Run control from the real window: a run started through the New Run dialog against the local LLM
// server and the scriptable fake target, paused, resumed and finished with the tree filled live; the
// dialog's executor fields (local, ssh hosts, Slurm) validated and round-tripped through YAML; an
// agent edited and saved in the agent editor reaching the next plan prompt; a human's edited code
// evaluated inside a running search, and a human's plan written with the menu picker sent in the prompt it previews. A
// newcomer's first run from the empty store's page; the dialog's model picker with each provider's key state, its
// estimate, and its errors shown only once Start is pressed; a run whose start cannot be evaluated on this machine,
// with its whole log one click away.
#include "editors/agent_editor.h"
#include "charts/beam_graph_view.h"
#include "panels/candidate_inspector.h"
#include "models/candidate_tree_model.h"
#include "editors/code_view.h"
#include "fake_llm_server.h"
#include "dialogs/human_input_dialog.h"
#include "frame/main_window.h"
#include "models/menu_model.h"
#include "dialogs/new_run_dialog.h"
#include "live/run_actions.h"
#include "live/run_controller.h"
#include "common/settings.h"
#include "store/run_store.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFontInfo>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QTableWidget>
#include <QScopeGuard>
#include <QStatusBar>
#include <QTreeWidget>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include <algorithm>

using namespace autocomp;

namespace {

QString yamlString(const QString &text)
{
    QString escaped = text;
    escaped.replace(QLatin1Char('\\'), QStringLiteral("\\\\"))
        .replace(QLatin1Char('"'), QStringLiteral("\\\""))
        .replace(QLatin1Char('\n'), QStringLiteral("\\n"));
    return QLatin1Char('"') + escaped + QLatin1Char('"');
}

QString codeAnswer(int latencyMs)
{
    return QStringLiteral(
               "Here is the code.\n```cpp\n// fake: status=ok latency_ms=%1 bench_ms=200;\nvoid kernel() {}\n```\n")
        .arg(latencyMs);
}

// Plans and code answered after `delayMs`, the code's benchmark taking 200 ms: slow enough to pause in.
QByteArray script(int delayMs)
{
    QString out = QStringLiteral(
        "rules:\n  - name: code\n    match: 'Optimized code:\\s*$'\n    cycle: true\n    responses:\n");
    for (int latency : {90, 80, 95, 70})
        out += QStringLiteral("      - content: %1\n        delay_ms: %2\n")
                   .arg(yamlString(codeAnswer(latency)))
                   .arg(delayMs);
    out += QStringLiteral("  - name: plan\n    match: 'Plan:\\s*$'\n    cycle: true\n    responses:\n");
    out += QStringLiteral("      - content: %1\n        delay_ms: %2\n")
               .arg(yamlString(QStringLiteral("Chosen optimization: 1. alpha: tile the loops\nTile it.")))
               .arg(delayMs);
    return out.toUtf8();
}

template<typename T>
T *child(QObject *parent, const char *name)
{
    return parent->findChild<T *>(QLatin1String(name));
}

} // namespace

class TestRunControl : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void menuModelIsSound();
    void firstRunFromEmptyStore();
    void newRunDialogShowsKeyStates();
    void machineFailureShowsWholeLog();
    void newRunDialogCarriesEvaluationOptions();
    void newRunDialogShowsAbsentTarget();
    void newRunDialogEditsTheExecutor();
    void settingsFillSlurmFieldsOfNewRuns();
    void newRunDialogFitsASmallScreen();
    void startPauseResumeFinish();
    void stopCancelsWorkInFlight();
    void editedMenuReachesPlanPrompt();
    void humanCodeIsEvaluated();
    void humanPlanNamesThePickedMenuItem();
    void twoRunsAtOncePauseOne();

private:
    // Fills the New Run dialog through its widgets and starts the run; returns the run id (0 on failure).
    qint64 startRun(int iterations, int plansPerParent, const QString &target = QStringLiteral("fake"));
    // The run's starting candidate as the store has it; 0 before it is stored.
    qint64 rootOf(qint64 runId) const;
    bool waitUntilEnded(int timeoutMs);
    QString statusText() const { return child<QLabel>(m_window.get(), "runStatus")->text(); }

    QTemporaryDir m_home;
    QTemporaryDir m_runtime;
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<test::FakeLlmServer> m_server;
    std::unique_ptr<MainWindow> m_window;
};

void TestRunControl::initTestCase()
{
    QVERIFY(m_home.isValid());
    QVERIFY(!qEnvironmentVariable("AUTOCOMP_FAKE_EVAL").isEmpty());
    QVERIFY(!qEnvironmentVariable("AUTOCOMP_FAKE_DATA").isEmpty());
    // Settings and agent copies stay inside the test.
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_home.filePath(QStringLiteral("config"))));
    qputenv("XDG_DATA_HOME", QFile::encodeName(m_home.filePath(QStringLiteral("data"))));
    qputenv("AUTOCOMP_DATA_DIR", qgetenv("AUTOCOMP_FAKE_DATA"));
    // No keychain (no session bus): every key state is known at once, and no test reads the user's keyring.
    QVERIFY(m_runtime.isValid());
    qunsetenv("DBUS_SESSION_BUS_ADDRESS");
    qunsetenv("DISPLAY");
    qputenv("XDG_RUNTIME_DIR", QFile::encodeName(m_runtime.path()));
    for (const char *variable : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"})
        qunsetenv(variable);
}

void TestRunControl::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_server = std::make_unique<test::FakeLlmServer>();
    QVERIFY(m_server->listen());
    QString error;
    QVERIFY2(m_server->loadScriptText(script(150), m_dir->path(), &error), qPrintable(error));
    std::unique_ptr<RunStore> store = RunStore::open(m_dir->filePath(QStringLiteral("runs.sqlite")), &error);
    QVERIFY2(store, qPrintable(error));
    m_window = std::make_unique<MainWindow>(std::move(store));
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
}

void TestRunControl::cleanup()
{
    m_window.reset(); // stops an active run and joins the engine thread
    m_server.reset();
    m_dir.reset();
}

qint64 TestRunControl::rootOf(qint64 runId) const
{
    for (const Candidate &c : m_window->store()->candidates(runId))
        if (c.origin == CandidateOrigin::Root)
            return c.id;
    return 0;
}

qint64 TestRunControl::startRun(int iterations, int plansPerParent, const QString &target)
{
    RunActions *actions = m_window->runActions();
    if (!actions->startAction()->isEnabled()) {
        qWarning("Start New Run is disabled");
        return 0;
    }
    const qint64 shownBefore = m_window->currentRunId();
    actions->startAction()->trigger();
    auto *dialog = m_window->findChild<NewRunDialog *>();
    if (!dialog || !dialog->isVisible()) {
        qWarning("no New Run dialog");
        return 0;
    }
    child<QComboBox>(dialog, "targetCombo")->setCurrentText(target);
    child<QComboBox>(dialog, "problemCombo")->setCurrentText(QStringLiteral("kernel"));
    child<QComboBox>(dialog, "agentCombo")->setCurrentText(QStringLiteral("fake"));
    auto *planModels = child<QListWidget>(dialog, "planModels");
    planModels->clear();
    child<QPushButton>(dialog, "planModelsAddButton")->click();
    planModels->item(0)->setText(
        QStringLiteral("openai-compatible@%1/v1::test-model").arg(m_server->baseUrl().toString()));
    child<QListWidget>(dialog, "codeModels")->clear();
    child<QSpinBox>(dialog, "iterations")->setValue(iterations);
    child<QSpinBox>(dialog, "beamWidth")->setValue(2);
    child<QSpinBox>(dialog, "plansPerParent")->setValue(plansPerParent);
    child<QSpinBox>(dialog, "codePerPlan")->setValue(1);
    child<QSpinBox>(dialog, "fixAttempts")->setValue(0);
    child<QDoubleSpinBox>(dialog, "menuDropout")->setValue(0); // every plan prompt shows the whole menu
    child<QComboBox>(dialog, "sandboxCombo")->setCurrentText(QStringLiteral("off"));
    auto *start = child<QPushButton>(dialog, "startButton");
    // Validation runs after a short pause in typing.
    if (!QTest::qWaitFor([&] { return start->isEnabled(); }, 5000)) {
        qWarning() << "Start stays disabled:" << dialog->errors();
        return 0;
    }
    start->click();
    // The new run is shown once it has started (a run started earlier may be shown until then).
    if (!QTest::qWaitFor(
            [&] {
                return m_window->currentRunId() != shownBefore && actions->controller()->runId() != 0
                    && m_window->currentRunId() == actions->controller()->runId();
            },
            10000)) {
        qWarning() << "the run did not start:" << statusText();
        return 0;
    }
    return actions->controller()->runId();
}

// Two searches at once in one window (one engine thread, one LLM client, one evaluator): pausing one
// leaves the other going to its end; the paused one then resumes and ends too.
void TestRunControl::twoRunsAtOncePauseOne()
{
    RunActions *actions = m_window->runActions();
    const qint64 a = startRun(3, 2);
    QVERIFY(a);
    const qint64 b = startRun(3, 2);
    QVERIFY(b);
    QVERIFY(a != b);
    QCOMPARE(actions->activeRuns(), 2);
    QCOMPARE(m_window->currentRunId(), b);

    // Both are live in the runs list.
    auto *runs = child<QAbstractItemView>(m_window.get(), "runsView");
    QVERIFY(runs);
    QTRY_VERIFY_WITH_TIMEOUT(runs->model()->rowCount() >= 2, 5000);

    m_window->selectRun(a);
    QCOMPARE(m_window->currentRunId(), a);
    QTRY_VERIFY_WITH_TIMEOUT(actions->pauseAction()->isEnabled(), 20000);
    actions->pauseAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(actions->controllerFor(a)->status().state == RunState::Paused, 60000);
    QTRY_VERIFY_WITH_TIMEOUT(statusText().contains(QLatin1String("paused")), 5000);
    QVERIFY2(statusText().contains(QStringLiteral("Run %1").arg(a)), qPrintable(statusText()));
    const qsizetype candidatesOfA = m_window->store()->candidates(a).size();

    // The other run is not held back: it goes to its end while the first stays paused.
    QTRY_VERIFY_WITH_TIMEOUT(!actions->isDriving(b), 120000);
    QCOMPARE(toString(m_window->store()->run(b)->state), toString(RunState::Finished));
    QVERIFY(m_window->store()->run(b)->bestCandidateId != 0);
    QCOMPARE(toString(actions->controllerFor(a)->status().state), toString(RunState::Paused));
    QCOMPARE(m_window->store()->candidates(a).size(), candidatesOfA);

    m_window->selectRun(a);
    QTRY_VERIFY_WITH_TIMEOUT(actions->resumeAction()->isEnabled(), 5000);
    actions->resumeAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(!actions->isDriving(a), 120000);
    for (const qint64 id : {a, b}) {
        const RunInfo run = *m_window->store()->run(id);
        QCOMPARE(toString(run.state), toString(RunState::Finished));
        QCOMPARE(run.iteration, 3);
        QVERIFY2(run.speedup() > 1.0, qPrintable(QString::number(run.speedup())));
        for (const Candidate &c : m_window->store()->candidates(id))
            QVERIFY2(
                isFinal(c.status), // a verdict (a duplicate shares its original's)
                qPrintable(QStringLiteral("run %1 candidate %2 left %3").arg(id).arg(c.id).arg(toString(c.status))));
    }
    QCOMPARE(actions->activeRuns(), 0);
}

bool TestRunControl::waitUntilEnded(int timeoutMs)
{
    return QTest::qWaitFor([&] { return !m_window->runActions()->controller()->isActive(); }, timeoutMs);
}

// The evaluation options of the form reach the configuration it starts and saves, both ways.
void TestRunControl::newRunDialogCarriesEvaluationOptions()
{
    NewRunDialog dialog{Repository{}, QString{}};
    RunConfig config = dialog.config();
    config.evaluation.profile = true;
    config.evaluation.sandbox = QStringLiteral("required");
    dialog.setConfig(config);
    auto *profile = child<QCheckBox>(&dialog, "profile");
    QVERIFY(profile->isChecked());
    QCOMPARE(dialog.config().evaluation.profile, true);
    profile->setChecked(false);
    QCOMPARE(dialog.config().evaluation.profile, false);
    QCOMPARE(dialog.config().evaluation.sandbox, QStringLiteral("required"));
}

// A target whose tools are missing is shown as absent with what it lacks, and the run cannot start.
// The Slurm partition, GRES and time set in Settings fill a new run's Slurm fields; a configuration
// that has its own Slurm settings (the last one started) keeps them.
// With an ssh or slurm executor the form is taller than a 1280x800 screen: it scrolls, and Start and Cancel stay
// in reach, inside the dialog and inside the screen.
void TestRunControl::newRunDialogFitsASmallScreen()
{
    QSettings().remove(QStringLiteral("newRun/lastConfig"));
    NewRunDialog *dialog = m_window->runActions()->showNewRunDialog();
    QVERIFY(dialog && dialog->isVisible());
    for (const QString &executor : {QStringLiteral("ssh"), QStringLiteral("slurm")}) {
        child<QComboBox>(dialog, "executorCombo")->setCurrentText(executor);
        // As a window manager would on a 1280x800 screen: the dialog is at most that high.
        dialog->resize(std::min(dialog->width(), 1280), std::min(dialog->height(), 760));
        QCoreApplication::processEvents();
        QVERIFY(dialog->height() <= 760);
        auto *scroll = dialog->findChild<QScrollArea *>(QStringLiteral("newRunScroll"));
        QVERIFY(scroll);
        QVERIFY2(scroll->widget()->sizeHint().height() > 0, "the form has no size");
        for (QPushButton *button : dialog->findChildren<QPushButton *>()) {
            const QString text = button->text().remove(QLatin1Char('&'));
            if (text != QLatin1String("Start Run") && text != QLatin1String("Cancel"))
                continue;
            QVERIFY2(button->isVisible(), qPrintable(text));
            const QRect inDialog(button->mapTo(dialog, QPoint(0, 0)), button->size());
            QVERIFY2(dialog->rect().contains(inDialog),
                     qPrintable(QStringLiteral("%1 (%2) at %3,%4 in a %5x%6 dialog")
                                    .arg(text, executor)
                                    .arg(inDialog.x())
                                    .arg(inDialog.y())
                                    .arg(dialog->width())
                                    .arg(dialog->height())));
            QVERIFY(!scroll->isAncestorOf(button)); // pinned below the form, not scrolled with it
        }
    }
    dialog->close();
    QTRY_VERIFY(!m_window->findChild<NewRunDialog *>());
}

void TestRunControl::settingsFillSlurmFieldsOfNewRuns()
{
    Settings settings;
    settings.setSlurmPartition(QStringLiteral("debug"));
    settings.setSlurmGres(QStringLiteral("gpu:a100:1"));
    settings.setSlurmTime(QStringLiteral("01:00:00"));
    QSettings().remove(QStringLiteral("newRun/lastConfig"));
    auto shown = [this](const QString &name) {
        return child<QLineEdit>(m_window->findChild<NewRunDialog *>(), name.toLatin1().constData())->text();
    };
    NewRunDialog *dialog = m_window->runActions()->showNewRunDialog();
    QVERIFY(dialog && dialog->isVisible());
    child<QComboBox>(dialog, "executorCombo")->setCurrentText(QStringLiteral("slurm"));
    QCOMPARE(shown(QStringLiteral("slurmPartition")), QStringLiteral("debug"));
    QCOMPARE(shown(QStringLiteral("slurmGres")), QStringLiteral("gpu:a100:1"));
    QCOMPARE(shown(QStringLiteral("slurmTime")), QStringLiteral("01:00:00"));
    QCOMPARE(dialog->config().evaluation.slurmPartition, QStringLiteral("debug"));
    RunConfig last = dialog->config();
    dialog->close();
    QTRY_VERIFY(!m_window->findChild<NewRunDialog *>());

    // The last configuration named its own partition and no GRES: both kept.
    last.planModels = {QStringLiteral("vllm::m")};
    last.evaluation.slurmPartition = QStringLiteral("h100");
    last.evaluation.slurmGres.clear();
    QStringList errors;
    QVERIFY2(RunConfig::fromYaml(last.toYaml(), QStringLiteral("last"), &errors),
             qPrintable(errors.join(QLatin1Char('\n'))));
    QSettings().setValue(QStringLiteral("newRun/lastConfig"), last.toYaml());
    dialog = m_window->runActions()->showNewRunDialog();
    QVERIFY(dialog);
    QCOMPARE(child<QComboBox>(dialog, "executorCombo")->currentText(), QStringLiteral("slurm"));
    QCOMPARE(shown(QStringLiteral("slurmPartition")), QStringLiteral("h100"));
    QCOMPARE(shown(QStringLiteral("slurmGres")), QString());
    dialog->close();
    QTRY_VERIFY(!m_window->findChild<NewRunDialog *>());
    QSettings().remove(QStringLiteral("newRun/lastConfig"));
    settings.setSlurmPartition({});
    settings.setSlurmGres({});
    settings.setSlurmTime({});
}

void TestRunControl::newRunDialogShowsAbsentTarget()
{
    QTemporaryDir dir;
    auto write = [&](const QString &name, const QByteArray &text) {
        QDir().mkpath(QFileInfo(dir.filePath(name)).absolutePath());
        QFile file(dir.filePath(name));
        return file.open(QIODevice::WriteOnly) && file.write(text) == text.size();
    };
    QVERIFY(
        write(QStringLiteral("backends/ghost/backend.yaml"),
              "description: a simulator that is not installed\nrequires: \"ghost-sim 2.0\"\n"
              "available_if: [ghost-sim-not-installed]\nsteps:\n  - {name: run, run: [ghost-sim-not-installed]}\n"));
    QVERIFY(write(QStringLiteral("sols/ghost/p/problem.yaml"), "start: s.cpp\nreference: r.cpp\nshapes: [{n: 1}]\n"));
    QVERIFY(write(QStringLiteral("sols/ghost/p/s.cpp"), "int s;\n")
            && write(QStringLiteral("sols/ghost/p/r.cpp"), "int r;\n"));
    QVERIFY(write(QStringLiteral("agents/ghost/agent_config.yaml"), "name: ghost\n"));
    QVERIFY(write(QStringLiteral("agents/ghost/optimization_menu.yaml"), "optimizations:\n  - strategy: \"unroll\"\n"));
    NewRunDialog dialog{Repository{{dir.path()}}, dir.filePath(QStringLiteral("runs.sqlite"))};
    RunConfig config = dialog.config();
    config.target = QStringLiteral("ghost");
    config.problem = QStringLiteral("p");
    config.planModels = {QStringLiteral("vllm::m")};
    dialog.setConfig(config);
    auto *combo = child<QComboBox>(&dialog, "targetCombo");
    QCOMPARE(combo->currentText(), QStringLiteral("ghost"));
    QVERIFY(combo->itemData(combo->currentIndex(), Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("ghost-sim-not-installed")));
    const QString state = child<QLabel>(&dialog, "targetState")->text();
    QVERIFY2(state.contains(QStringLiteral("Absent")) && state.contains(QStringLiteral("ghost-sim-not-installed"))
                 && state.contains(QStringLiteral("ghost-sim 2.0")),
             qPrintable(state));
    // Said next to the target once Start is pressed; the dialog stays open.
    dialog.show();
    auto *targetErrors = child<QLabel>(&dialog, "targetErrors");
    QVERIFY(!targetErrors->isVisible());
    child<QPushButton>(&dialog, "startButton")->click();
    QVERIFY(dialog.isVisible());
    QCOMPARE(dialog.result(), int(QDialog::Rejected));
    QVERIFY(targetErrors->isVisible());
    QVERIFY2(targetErrors->text().contains(QStringLiteral("absent on this machine")), qPrintable(targetErrors->text()));
    QVERIFY(!dialog.setup());
}

// Where evaluations run, edited in the New Run dialog: only the chosen executor's fields are shown,
// a value the configuration cannot take is an error naming its key (and Start stays off), and what
// the form holds is what Save YAML writes and Load YAML reads back.
void TestRunControl::newRunDialogEditsTheExecutor()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    NewRunDialog dialog{Repository{}, dir.filePath(QStringLiteral("runs.sqlite"))};
    RunConfig config = dialog.config();
    config.planModels = {QStringLiteral("vllm::m")};
    dialog.setConfig(config);
    dialog.validateNow();
    QVERIFY2(dialog.errors().isEmpty(), qPrintable(dialog.errors().join(QLatin1Char('\n'))));
    auto *executor = child<QComboBox>(&dialog, "executorCombo");
    QCOMPARE(executor->currentText(), QStringLiteral("local"));
    QVERIFY(!child<QWidget>(&dialog, "slurmGroup")->isVisibleTo(&dialog));
    QVERIFY(!child<QWidget>(&dialog, "sshGroup")->isVisibleTo(&dialog));
    QVERIFY(!child<QWidget>(&dialog, "remoteGroup")->isVisibleTo(&dialog));

    // Slurm.
    executor->setCurrentText(QStringLiteral("slurm"));
    QVERIFY(child<QWidget>(&dialog, "slurmGroup")->isVisibleTo(&dialog));
    QVERIFY(child<QWidget>(&dialog, "remoteGroup")->isVisibleTo(&dialog));
    QVERIFY(!child<QWidget>(&dialog, "sshGroup")->isVisibleTo(&dialog));
    QTest::keyClicks(child<QLineEdit>(&dialog, "slurmPartition"), QStringLiteral("gpu"));
    QTest::keyClicks(child<QLineEdit>(&dialog, "slurmGres"), QStringLiteral("gpu 1"));
    child<QLineEdit>(&dialog, "slurmTime")->setText(QStringLiteral("00:30:00"));
    child<QLineEdit>(&dialog, "slurmMem")->setText(QStringLiteral("8G"));
    child<QSpinBox>(&dialog, "slurmSlots")->setValue(3);
    child<QSpinBox>(&dialog, "slurmCpus")->setValue(2);
    child<QSpinBox>(&dialog, "slurmBatch")->setValue(4);
    child<QSpinBox>(&dialog, "slurmBatchWait")->setValue(1500);
    child<QLineEdit>(&dialog, "slurmSharedDir")->setText(QStringLiteral("/shared/autocomp"));
    child<QLineEdit>(&dialog, "remoteCommand")->setText(QStringLiteral("/opt/autocomp/bin/autocomp"));
    child<QComboBox>(&dialog, "placementCombo")->setCurrentText(QStringLiteral("compile_local"));
    // Errors are shown next to the executor once Start was pressed; it does not start while they stand.
    auto *errors = child<QLabel>(&dialog, "executorErrors");
    auto *start = child<QPushButton>(&dialog, "startButton");
    QVERIFY(errors->text().isEmpty());
    start->click();
    QCOMPARE(dialog.result(), int(QDialog::Rejected));
    QTRY_VERIFY(errors->text().contains(QStringLiteral("'evaluation.slurm.gres'"))
                && errors->text().contains(QStringLiteral("'gpu 1'")));
    QVERIFY(!dialog.setup());
    child<QLineEdit>(&dialog, "slurmGres")->setText(QStringLiteral("gpu:1"));
    child<QLineEdit>(&dialog, "slurmSharedDir")->setText(QStringLiteral("relative/dir"));
    QTRY_VERIFY(errors->text().contains(QStringLiteral("'evaluation.slurm.shared_dir' must be an absolute path")));
    QVERIFY(!errors->text().contains(QStringLiteral("gres")));
    QVERIFY(!dialog.setup());
    child<QLineEdit>(&dialog, "slurmSharedDir")->setText(QStringLiteral("/shared/autocomp"));
    dialog.validateNow();
    QVERIFY2(dialog.errors().isEmpty(), qPrintable(dialog.errors().join(QLatin1Char('\n'))));
    QVERIFY(start->isEnabled());
    const QString slurmYaml = dir.filePath(QStringLiteral("slurm.yaml"));
    QString error;
    QVERIFY2(dialog.saveYaml(slurmYaml, &error), qPrintable(error));
    QStringList loadErrors;
    const auto slurm = RunConfig::fromFile(slurmYaml, &loadErrors);
    QVERIFY2(slurm, qPrintable(loadErrors.join(QLatin1Char('\n'))));
    const EvaluationConfig &e = slurm->evaluation;
    QCOMPARE(e.executor, QStringLiteral("slurm"));
    QCOMPARE(e.slurmPartition, QStringLiteral("gpu"));
    QCOMPARE(e.slurmGres, QStringLiteral("gpu:1"));
    QCOMPARE(e.slurmTime, QStringLiteral("00:30:00"));
    QCOMPARE(e.slurmMem, QStringLiteral("8G"));
    QCOMPARE(e.slurmSlots, 3);
    QCOMPARE(e.slurmCpus, 2);
    QCOMPARE(e.slurmBatch, 4);
    QCOMPARE(e.slurmBatchWaitMs, 1500);
    QCOMPARE(e.slurmSharedDir, QStringLiteral("/shared/autocomp"));
    QCOMPARE(e.remoteCommand, QStringLiteral("/opt/autocomp/bin/autocomp"));
    QCOMPARE(e.placementFor(QStringLiteral("cpu")), QStringLiteral("compile_local"));

    // SSH: hosts with their slots, each row's fields checked.
    executor->setCurrentText(QStringLiteral("ssh"));
    QVERIFY(child<QWidget>(&dialog, "sshGroup")->isVisibleTo(&dialog));
    QVERIFY(!child<QWidget>(&dialog, "slurmGroup")->isVisibleTo(&dialog));
    QTRY_VERIFY(errors->text().contains(QStringLiteral("'evaluation.hosts' names no host")));
    QVERIFY(!dialog.setup());
    auto *hosts = child<QTableWidget>(&dialog, "sshHosts");
    QTest::mouseClick(child<QPushButton>(&dialog, "addHostButton"), Qt::LeftButton);
    QTest::mouseClick(child<QPushButton>(&dialog, "addHostButton"), Qt::LeftButton);
    QCOMPARE(hosts->rowCount(), 2);
    hosts->item(0, 0)->setText(QStringLiteral("gpu-box"));
    hosts->item(0, 1)->setText(QStringLiteral("me"));
    hosts->item(0, 2)->setText(QStringLiteral("22x"));
    hosts->item(0, 3)->setText(QStringLiteral("4"));
    hosts->item(1, 0)->setText(QStringLiteral("10.0.0.7"));
    hosts->item(1, 3)->setText(QStringLiteral("0"));
    QTRY_VERIFY(errors->text().contains(
        QStringLiteral("'evaluation.hosts[1].port' must be a number between 1 and 65535, got '22x'")));
    QVERIFY2(errors->text().contains(QStringLiteral("'evaluation.hosts[2].slots'")), qPrintable(errors->text()));
    QVERIFY(!errors->text().contains(QStringLiteral("hosts[1].slots"))
            && !errors->text().contains(QStringLiteral("hosts[2].port")));
    QVERIFY(!dialog.setup());
    hosts->item(0, 2)->setText(QStringLiteral("2222"));
    hosts->item(1, 3)->setText(QStringLiteral("2"));
    child<QLineEdit>(&dialog, "sshKnownHosts")->setText(QStringLiteral("/home/me/.ssh/known_hosts"));
    child<QLineEdit>(&dialog, "sshIdentity")->setText(QStringLiteral("/home/me/.ssh/id_ed25519"));
    child<QLineEdit>(&dialog, "remoteWorkdir")->setText(QStringLiteral("/scratch"));
    dialog.validateNow();
    QVERIFY2(dialog.errors().isEmpty(), qPrintable(dialog.errors().join(QLatin1Char('\n'))));
    QVERIFY(start->isEnabled());
    const QString sshYaml = dir.filePath(QStringLiteral("ssh.yaml"));
    QVERIFY2(dialog.saveYaml(sshYaml, &error), qPrintable(error));
    // Loaded into a fresh dialog, the form shows the same, and writes the same again.
    NewRunDialog again{Repository{}, dir.filePath(QStringLiteral("runs.sqlite"))};
    QVERIFY2(again.loadYaml(sshYaml, &loadErrors), qPrintable(loadErrors.join(QLatin1Char('\n'))));
    QCOMPARE(child<QComboBox>(&again, "executorCombo")->currentText(), QStringLiteral("ssh"));
    auto *loadedHosts = child<QTableWidget>(&again, "sshHosts");
    QCOMPARE(loadedHosts->rowCount(), 2);
    QCOMPARE(loadedHosts->item(0, 0)->text(), QStringLiteral("gpu-box"));
    QCOMPARE(loadedHosts->item(0, 1)->text(), QStringLiteral("me"));
    QCOMPARE(loadedHosts->item(0, 2)->text(), QStringLiteral("2222"));
    QCOMPARE(loadedHosts->item(0, 3)->text(), QStringLiteral("4"));
    QCOMPARE(loadedHosts->item(1, 0)->text(), QStringLiteral("10.0.0.7"));
    QCOMPARE(loadedHosts->item(1, 2)->text(), QStringLiteral("22"));
    QCOMPARE(loadedHosts->item(1, 3)->text(), QStringLiteral("2"));
    QCOMPARE(child<QLineEdit>(&again, "sshIdentity")->text(), QStringLiteral("/home/me/.ssh/id_ed25519"));
    QCOMPARE(child<QLineEdit>(&again, "remoteWorkdir")->text(), QStringLiteral("/scratch"));
    QCOMPARE(child<QComboBox>(&again, "placementCombo")->currentText(), QStringLiteral("compile_local"));
    QCOMPARE(again.config().toYaml(), dialog.config().toYaml());
    QFile saved(sshYaml);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    QCOMPARE(again.config().toYaml(), saved.readAll());
}

// A newcomer's first run: the empty store's page leads to the New Run dialog, which opens without errors,
// shows what is missing next to the field once Start is pressed, offers the models with their key state and
// estimates the work; the run started from it against the local LLM server reaches `finished`.
void TestRunControl::firstRunFromEmptyStore()
{
    QSettings().remove(QStringLiteral("newRun/lastConfig"));
    auto *welcome = child<QWidget>(m_window.get(), "welcomePanel");
    QVERIFY(welcome && welcome->isVisible());
    QVERIFY(child<QLabel>(m_window.get(), "welcomeText")->text().contains(QStringLiteral("New Run")));
    auto *newRun = child<QPushButton>(m_window.get(), "welcomeNewRunButton");
    QVERIFY(newRun && newRun->isVisible());
    QTest::mouseClick(newRun, Qt::LeftButton);
    auto *dialog = m_window->findChild<NewRunDialog *>();
    QVERIFY(dialog && dialog->isVisible());
    const QList<const char *> errorLabels{"validationErrors", "targetErrors", "modelErrors",
                                          "searchErrors",     "limitsErrors", "executorErrors"};
    for (const char *name : errorLabels)
        QVERIFY2(!child<QLabel>(dialog, name)->isVisible(), name);

    child<QComboBox>(dialog, "targetCombo")->setCurrentText(QStringLiteral("fake"));
    child<QComboBox>(dialog, "problemCombo")->setCurrentText(QStringLiteral("kernel"));
    child<QComboBox>(dialog, "agentCombo")->setCurrentText(QStringLiteral("fake"));
    auto *planModels = child<QListWidget>(dialog, "planModels");
    planModels->clear();
    child<QListWidget>(dialog, "codeModels")->clear();
    auto *start = child<QPushButton>(dialog, "startButton");
    dialog->validateNow();
    for (const char *name : errorLabels)
        QVERIFY2(!child<QLabel>(dialog, name)->isVisible(), name);

    // Start without a model: the dialog stays, and says so next to the models.
    QVERIFY(start->isEnabled());
    start->click();
    QVERIFY(dialog->isVisible());
    auto *modelErrors = child<QLabel>(dialog, "modelErrors");
    QVERIFY(modelErrors->isVisible());
    QVERIFY2(modelErrors->text().contains(QStringLiteral("models.plan")), qPrintable(modelErrors->text()));
    QVERIFY(!child<QLabel>(dialog, "targetErrors")->isVisible());

    // The picker: a local OpenAI-compatible server needs no key.
    auto *provider = child<QComboBox>(dialog, "modelProviderCombo");
    const int local = provider->findData(QStringLiteral("openai-compatible"));
    QVERIFY(local >= 0);
    QVERIFY2(provider->itemText(local).contains(QStringLiteral("no key needed")),
             qPrintable(provider->itemText(local)));
    provider->setCurrentIndex(local);
    const QString url = m_server->baseUrl().toString() + QStringLiteral("/v1");
    child<QComboBox>(dialog, "modelNameCombo")->setEditText(url + QStringLiteral("::test-model"));
    QTest::mouseClick(child<QPushButton>(dialog, "planModelsAddButton"), Qt::LeftButton);
    QCOMPARE(planModels->count(), 1);
    QCOMPARE(planModels->item(0)->text(), QStringLiteral("openai-compatible@%1::test-model").arg(url));

    child<QSpinBox>(dialog, "iterations")->setValue(2);
    child<QSpinBox>(dialog, "beamWidth")->setValue(1);
    child<QSpinBox>(dialog, "plansPerParent")->setValue(2);
    child<QSpinBox>(dialog, "codePerPlan")->setValue(1);
    child<QSpinBox>(dialog, "fixAttempts")->setValue(1);
    child<QDoubleSpinBox>(dialog, "menuDropout")->setValue(0);
    child<QComboBox>(dialog, "sandboxCombo")->setCurrentText(QStringLiteral("off"));
    dialog->validateNow();
    QVERIFY(!modelErrors->isVisible());
    QVERIFY2(child<QLabel>(dialog, "modelKeyStatus")->text().contains(QStringLiteral("no key needed")),
             qPrintable(child<QLabel>(dialog, "modelKeyStatus")->text()));
    const QString estimate = child<QLabel>(dialog, "runEstimate")->text();
    QVERIFY2(estimate.contains(QStringLiteral("1×2×1 = 2 candidates"))
                 && estimate.contains(QStringLiteral("2 plan + 2 code = 4 LLM calls"))
                 && estimate.contains(QStringLiteral("(2 more)"))
                 && estimate.contains(QStringLiteral("up to 4 candidates and 8 LLM calls"))
                 && estimate.contains(QStringLiteral("12 with every fix")),
             qPrintable(estimate));
    QVERIFY(start->isEnabled());
    start->click();
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->findChild<NewRunDialog *>(), 5000);

    RunActions *actions = m_window->runActions();
    QTRY_VERIFY_WITH_TIMEOUT(actions->controller()->runId() != 0, 10000);
    const qint64 runId = actions->controller()->runId();
    QTRY_COMPARE_WITH_TIMEOUT(m_window->currentRunId(), runId, 10000);
    QVERIFY(!welcome->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(!actions->isDriving(runId), 120000);
    const RunInfo run = *m_window->store()->run(runId);
    QCOMPARE(toString(run.state), toString(RunState::Finished));
    QCOMPARE(run.iteration, 2);
    QTRY_VERIFY(child<QLabel>(m_window.get(), "runHeader")->text().contains(QStringLiteral("finished")));
}

// Which models can run: each provider's key state in the picker, Start disabled with the reason while a chosen
// model has no key, enabled for one whose key comes from the environment or that needs none.
void TestRunControl::newRunDialogShowsKeyStates()
{
    qputenv("ANTHROPIC_API_KEY", "sk-ant-from-environment-123");
    const auto restore = qScopeGuard([] { qunsetenv("ANTHROPIC_API_KEY"); });
    QTemporaryDir dir;
    NewRunDialog dialog{Repository{}, dir.filePath(QStringLiteral("runs.sqlite"))};
    RunConfig config = dialog.config();
    config.planModels = {QStringLiteral("openai::gpt-5.2")};
    config.codeModels = {QStringLiteral("anthropic::claude-opus-4-5")};
    dialog.setConfig(config);
    dialog.show();
    auto *provider = child<QComboBox>(&dialog, "modelProviderCombo");
    const auto itemOf = [provider](const char *name) {
        return provider->itemText(provider->findData(QLatin1String(name)));
    };
    QTRY_VERIFY(itemOf("openai").contains(QStringLiteral("key missing")));
    QVERIFY2(itemOf("openai").contains(QStringLiteral("OPENAI_API_KEY")), qPrintable(itemOf("openai")));
    QVERIFY2(itemOf("anthropic").contains(QStringLiteral("key from ANTHROPIC_API_KEY")),
             qPrintable(itemOf("anthropic")));
    QVERIFY2(itemOf("vllm").contains(QStringLiteral("no key needed")), qPrintable(itemOf("vllm")));
    QVERIFY2(itemOf("ollama").contains(QStringLiteral("no key needed")), qPrintable(itemOf("ollama")));

    auto *start = child<QPushButton>(&dialog, "startButton");
    QTRY_VERIFY(!start->isEnabled());
    QVERIFY2(start->toolTip().contains(QStringLiteral("openai::gpt-5.2"))
                 && start->toolTip().contains(QStringLiteral("OPENAI_API_KEY")),
             qPrintable(start->toolTip()));
    QVERIFY(!start->toolTip().contains(QStringLiteral("anthropic")));
    const QString keys = child<QLabel>(&dialog, "modelKeyStatus")->text();
    QVERIFY2(keys.contains(QStringLiteral("openai::gpt-5.2"))
                 && keys.contains(QStringLiteral("key from ANTHROPIC_API_KEY")),
             qPrintable(keys));
    for (const char *name : {"validationErrors", "targetErrors", "modelErrors", "searchErrors", "executorErrors"})
        QVERIFY2(!child<QLabel>(&dialog, name)->isVisible(), name);

    // A model served on this machine needs no key, whatever protocol it speaks.
    child<QListWidget>(&dialog, "planModels")
        ->item(0)
        ->setText(QStringLiteral("openai@http://127.0.0.1:9/v1::local-model"));
    QTRY_VERIFY(start->isEnabled());
    QVERIFY(start->toolTip().isEmpty());
    child<QListWidget>(&dialog, "planModels")->item(0)->setText(QStringLiteral("vllm::m"));
    dialog.validateNow();
    QVERIFY(start->isEnabled());

    // Every search field explains itself; the seed of a schedule reads as two words.
    for (const char *name : {"beamWidth", "plansPerParent", "codePerPlan", "iterations", "menuDropout", "fixAttempts",
                             "editMode", "feedback", "translateIters", "seed", "scheduleSeed"})
        QVERIFY2(!child<QWidget>(&dialog, name)->toolTip().isEmpty(), name);
    QStringList labels;
    for (const QLabel *label : dialog.findChildren<QLabel *>())
        labels << label->text();
    // Its mnemonic takes: the label has the field as its buddy, so the '&' is not shown.
    bool found = false;
    for (const QLabel *label : dialog.findChildren<QLabel *>())
        if (label->text() == QStringLiteral("Sched&ule seed:")) {
            found = true;
            QCOMPARE(label->buddy(), child<QWidget>(&dialog, "scheduleSeed"));
        }
    QVERIFY2(found, qPrintable(labels.join(QLatin1Char('|'))));
}

// A run whose start cannot be evaluated for a reason of this machine (here a setup step that fails) says so in
// the run header and the notification, one line each, with the whole log one click away.
void TestRunControl::machineFailureShowsWholeLog()
{
    QTemporaryDir data;
    QVERIFY(data.isValid());
    const QDir fake(qEnvironmentVariable("AUTOCOMP_FAKE_DATA"));
    auto copy = [&](const QString &from, const QString &to) {
        QDir().mkpath(QFileInfo(data.filePath(to)).absolutePath());
        return QFile::copy(fake.filePath(from), data.filePath(to));
    };
    for (const QString &file : QDir(fake.filePath(QStringLiteral("agents/fake"))).entryList(QDir::Files))
        QVERIFY(copy(QStringLiteral("agents/fake/") + file, QStringLiteral("agents/fake/") + file));
    QVERIFY(copy(QStringLiteral("sols/fake/kernel/problem.yaml"),
                 QStringLiteral("sols/fake-setup-fails/kernel/problem.yaml")));
    QVERIFY(
        copy(QStringLiteral("sols/fake/kernel/start.cpp"), QStringLiteral("sols/fake-setup-fails/kernel/start.cpp")));
    QFile original(fake.filePath(QStringLiteral("backends/fake/backend.yaml")));
    QVERIFY(original.open(QIODevice::ReadOnly));
    QByteArray yaml = original.readAll();
    yaml.replace("name: fake\n", "name: fake-setup-fails\n");
    yaml.replace("steps:\n",
                 "setup:\n  - {name: probe_build, run: [sh, -c, \"echo 'probe.cpp:1: first line of the log'; "
                 "echo 'probe.cpp:2: second line of the log' >&2; exit 3\"], timeout_s: 30}\nsteps:\n");
    QDir().mkpath(data.filePath(QStringLiteral("backends/fake-setup-fails")));
    QFile backend(data.filePath(QStringLiteral("backends/fake-setup-fails/backend.yaml")));
    QVERIFY(backend.open(QIODevice::WriteOnly) && backend.write(yaml) == yaml.size());
    backend.close();

    // A window whose runs see that data directory.
    const QByteArray dataDir = qgetenv("AUTOCOMP_DATA_DIR");
    const auto restore = qScopeGuard([dataDir] { qputenv("AUTOCOMP_DATA_DIR", dataDir); });
    qputenv("AUTOCOMP_DATA_DIR", QFile::encodeName(data.path()));
    m_window.reset();
    QString error;
    std::unique_ptr<RunStore> store = RunStore::open(m_dir->filePath(QStringLiteral("machine.sqlite")), &error);
    QVERIFY2(store, qPrintable(error));
    m_window = std::make_unique<MainWindow>(std::move(store));
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));

    const qint64 runId = startRun(1, 1, QStringLiteral("fake-setup-fails"));
    QVERIFY(runId);
    RunActions *actions = m_window->runActions();
    QTRY_VERIFY_WITH_TIMEOUT(!actions->isDriving(runId), 60000);
    const RunInfo run = *m_window->store()->run(runId);
    QCOMPARE(toString(run.state), toString(RunState::Failed));
    QVERIFY2(run.stopReason.contains(QStringLiteral("second line of the log")), qPrintable(run.stopReason));
    // Nothing was asked of the LLM: no plan, and no fix for a fault that is not the code's.
    QCOMPARE(m_server->requests().size(), 0);

    // The header: the first line, not the log flattened into it, and a link to the whole log.
    auto *header = child<QLabel>(m_window.get(), "runHeader");
    QTRY_VERIFY(header->text().contains(QStringLiteral("Details…")));
    QVERIFY2(!header->text().contains(QStringLiteral("second line of the log")), qPrintable(header->text()));
    // The notification (the status bar's line where no tray shows it): one line, pointing at the log.
    const QString notice = m_window->statusBar()->currentMessage();
    QVERIFY2(notice.contains(QStringLiteral("Run %1").arg(runId)) && notice.contains(QStringLiteral("Details…")),
             qPrintable(notice));
    QVERIFY2(!notice.contains(QLatin1Char('\n')) && !notice.contains(QStringLiteral("second line of the log")),
             qPrintable(notice));

    QVERIFY(QMetaObject::invokeMethod(header, "linkActivated", Q_ARG(QString, QStringLiteral("#stop-reason"))));
    auto *details = m_window->findChild<QDialog *>(QStringLiteral("stopReasonDialog"));
    QVERIFY(details && details->isVisible());
    auto *log = child<QPlainTextEdit>(details, "stopReasonLog");
    QVERIFY(log->isReadOnly());
    QVERIFY(QFontInfo(log->font()).fixedPitch());
    const QStringList lines = log->toPlainText().split(QLatin1Char('\n'));
    QVERIFY2(lines.size() > 2, qPrintable(log->toPlainText()));
    QVERIFY2(std::any_of(lines.cbegin(), lines.cend(),
                         [](const QString &l) { return l.endsWith(QStringLiteral("first line of the log")); }),
             qPrintable(log->toPlainText()));
    QVERIFY2(std::any_of(lines.cbegin(), lines.cend(),
                         [](const QString &l) { return l.endsWith(QStringLiteral("second line of the log")); }),
             qPrintable(log->toPlainText()));
    details->close();

    // The machine is named as the cause, not the starting code.
    QVERIFY2(header->text().contains(QStringLiteral("could not be evaluated on this machine")),
             qPrintable(header->text()));
    QVERIFY2(notice.contains(QStringLiteral("could not be evaluated on this machine")), qPrintable(notice));
}

void TestRunControl::menuModelIsSound()
{
    MenuModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setItems({{QStringLiteral("a"), true}, {QStringLiteral("b"), false}, {QStringLiteral("c"), true}});
    QVERIFY(model.setData(model.index(0, MenuModel::TextColumn), QStringLiteral("a2")));
    QVERIFY(model.setData(model.index(2, MenuModel::EnabledColumn), Qt::Unchecked, Qt::CheckStateRole));
    QCOMPARE(model.addItem(QStringLiteral("d")), 3);
    QVERIFY(model.moveItem(3, -1));
    QVERIFY(model.moveItem(0, +1));
    QVERIFY(!model.moveItem(0, -1));
    QCOMPARE(model.enabledItems(), (QStringList{QStringLiteral("a2"), QStringLiteral("d")}));
    QCOMPARE(model.disabledItems(), (QStringList{QStringLiteral("b"), QStringLiteral("c")}));
    QVERIFY(model.removeRows(1, 2));
    QCOMPARE(model.rowCount(), 2);
}

void TestRunControl::startPauseResumeFinish()
{
    RunActions *actions = m_window->runActions();
    QVERIFY(!actions->pauseAction()->isEnabled());
    const qint64 runId = startRun(3, 2);
    QVERIFY(runId);
    QTRY_VERIFY_WITH_TIMEOUT(statusText().contains(QLatin1String("running")), 10000);
    QVERIFY(actions->startAction()->isEnabled()); // several runs may go at once

    // Pause once the search is under way: work in flight finishes, then nothing new is sent.
    QTRY_VERIFY_WITH_TIMEOUT(m_server->requestCount() >= 2, 20000);
    QTRY_VERIFY_WITH_TIMEOUT(actions->pauseAction()->isEnabled(), 5000);
    actions->pauseAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(statusText().contains(QLatin1String("paused")), 30000);
    QVERIFY(actions->resumeAction()->isEnabled());
    QVERIFY(!actions->pauseAction()->isEnabled());
    const int requestsAtPause = m_server->requestCount();
    QTest::qWait(1500);
    QCOMPARE(m_server->requestCount(), requestsAtPause);
    QVERIFY(actions->controller()->isActive());

    actions->resumeAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(m_server->requestCount() > requestsAtPause, 20000);
    QVERIFY(waitUntilEnded(120000));
    QTRY_VERIFY_WITH_TIMEOUT(statusText().contains(QLatin1String("finished")), 5000);
    QVERIFY2(statusText().contains(QLatin1String("iteration 3/3")), qPrintable(statusText()));

    // The live tree holds exactly what the store holds, and nothing is left in progress.
    const QList<Candidate> stored = m_window->store()->candidates(runId);
    QVERIFY(stored.size() >= 1 + 3 * 2);
    auto *tree = child<QTreeView>(m_window.get(), "candidateTree");
    auto *proxy = qobject_cast<QSortFilterProxyModel *>(tree->model());
    QVERIFY(proxy);
    auto *model = qobject_cast<CandidateTreeModel *>(proxy->sourceModel());
    QVERIFY(model);
    QCOMPARE(model->candidateCount(), stored.size());
    for (const Candidate &c : stored) {
        const Candidate *shown = model->candidate(model->indexOfCandidate(c.id));
        QVERIFY(shown);
        QCOMPARE(toString(shown->status), toString(c.status));
        QVERIFY(isFinal(shown->status));
    }
    QCOMPARE(toString(m_window->store()->run(runId)->state), QStringLiteral("finished"));
    QVERIFY(actions->startAction()->isEnabled());
    QVERIFY(!actions->stopAction()->isEnabled());
}

// Work in flight when the run is stopped reads "cancelled" in the tree, the graph and the inspector alike: no view
// keeps "compiling" or "benchmarking" while another says "pending".
void TestRunControl::stopCancelsWorkInFlight()
{
    RunActions *actions = m_window->runActions();
    const qint64 runId = startRun(3, 2);
    QVERIFY(runId);
    auto *tree = child<QTreeView>(m_window.get(), "candidateTree");
    auto *model = qobject_cast<CandidateTreeModel *>(
        qobject_cast<QSortFilterProxyModel *>(tree->model())->sourceModel());
    auto *graph = m_window->findChild<BeamGraphView *>(QStringLiteral("beamGraph"));
    auto *inspector = m_window->findChild<CandidateInspector *>();
    QVERIFY(model && graph && inspector);
    // Stop while a child of the root is being planned, coded or evaluated.
    QTRY_VERIFY_WITH_TIMEOUT(m_server->requestCount() >= 2, 20000);
    QTRY_VERIFY_WITH_TIMEOUT(!model->inFlightIds().isEmpty(), 20000);
    QTRY_VERIFY_WITH_TIMEOUT(actions->stopAction()->isEnabled(), 5000);
    actions->stopAction()->trigger();
    QVERIFY(waitUntilEnded(60000));
    QCOMPARE(toString(m_window->store()->run(runId)->state), QStringLiteral("stopped"));
    QTRY_VERIFY_WITH_TIMEOUT(statusText().contains(QLatin1String("stopped")), 5000);

    const QStringList inFlightWords{QStringLiteral("planning"), QStringLiteral("coding"),
                                    QStringLiteral("pending"),  QStringLiteral("compiling"),
                                    QStringLiteral("testing"),  QStringLiteral("benchmarking")};
    QTRY_VERIFY_WITH_TIMEOUT(model->inFlightIds().isEmpty(), 5000);
    for (const Candidate &stored : m_window->store()->candidates(runId)) {
        const QModelIndex row = model->indexOfCandidate(stored.id, CandidateTreeModel::StatusColumn);
        QVERIFY(row.isValid());
        const QString word = row.data().toString();
        QVERIFY2(!inFlightWords.contains(word), qPrintable(QStringLiteral("#%1 %2").arg(stored.id).arg(word)));
        // The graph and the inspector say the same word.
        QVERIFY2(graph->nodeSubtitle(stored.id).startsWith(word)
                     || graph->nodeState(stored.id) == BeamGraphView::NodeState::InBeam
                     || graph->nodeState(stored.id) == BeamGraphView::NodeState::Pruned
                     || graph->nodeState(stored.id) == BeamGraphView::NodeState::Correct,
                 qPrintable(
                     QStringLiteral("#%1 tree %2, graph %3").arg(stored.id).arg(word, graph->nodeSubtitle(stored.id))));
        m_window->selectCandidate(stored.id);
        QCOMPARE(inspector->candidateId(), stored.id);
        QVERIFY2(
            inspector->evaluationHeadline().startsWith(word),
            qPrintable(
                QStringLiteral("#%1 tree %2, inspector %3").arg(stored.id).arg(word, inspector->evaluationHeadline())));
        if (word == QLatin1String("cancelled"))
            QCOMPARE(graph->nodeState(stored.id), BeamGraphView::NodeState::Cancelled);
    }
}

void TestRunControl::editedMenuReachesPlanPrompt()
{
    RunActions *actions = m_window->runActions();
    actions->agentEditorAction()->trigger();
    auto *editor = m_window->findChild<AgentEditor *>();
    QVERIFY(editor);
    QVERIFY(editor->isVisible());
    child<QComboBox>(editor, "agentCombo")->setCurrentText(QStringLiteral("fake"));
    QCOMPARE(editor->agentName(), QStringLiteral("fake"));
    QVERIFY(!editor->isUserCopy());

    auto *table = child<QTableView>(editor, "menuTable");
    QAbstractItemModel *menu = table->model();
    QCOMPARE(menu->rowCount(), 8);
    const QString edited = QStringLiteral("alpha: tile the loops in 64x64 blocks (edited in the workbench)");
    QVERIFY(menu->setData(menu->index(0, MenuModel::TextColumn), edited));
    QVERIFY(menu->setData(menu->index(7, MenuModel::EnabledColumn), Qt::Unchecked, Qt::CheckStateRole));

    // An empty item is refused in place, and Save stays disabled until it is fixed.
    QVERIFY(menu->setData(menu->index(1, MenuModel::TextColumn), QString()));
    auto *save = child<QPushButton>(editor, "saveAgentButton");
    QTRY_VERIFY(!save->isEnabled());
    QVERIFY(child<QLabel>(editor, "agentValidation")->text().contains(QLatin1String("empty")));
    QVERIFY(menu->setData(menu->index(1, MenuModel::TextColumn), QStringLiteral("beta: vectorize")));
    QTRY_VERIFY(save->isEnabled());

    // The preview is the plan prompt with this menu, before anything is saved.
    RunConfig noDropout;
    noDropout.target = QStringLiteral("fake");
    noDropout.problem = QStringLiteral("kernel");
    noDropout.search.menuDropout = 0;
    Candidate root;
    root.origin = CandidateOrigin::Root;
    root.code = QStringLiteral("void kernel() {}\n");
    editor->setPreviewContext(root, noDropout);
    QString error;
    const std::optional<QString> preview = editor->previewPlanPrompt(&error);
    QVERIFY2(preview, qPrintable(error));
    QVERIFY(preview->contains(edited));
    QVERIFY(!preview->contains(QLatin1String("theta: thread")));

    save->click();
    QVERIFY(editor->isUserCopy());
    const QString dir = AgentEditor::userAgentDir(QStringLiteral("fake"));
    QFile menuFile(dir + QStringLiteral("/optimization_menu.yaml"));
    QVERIFY(menuFile.open(QIODevice::ReadOnly));
    const QByteArray menuText = menuFile.readAll();
    QVERIFY(menuText.startsWith("optimizations:\n  - strategy: "));
    QVERIFY(menuText.contains(edited.toUtf8()));
    QVERIFY(!menuText.contains("theta: thread"));
    QFile disabledFile(dir + QStringLiteral("/optimization_menu.disabled.yaml"));
    QVERIFY(disabledFile.open(QIODevice::ReadOnly));
    QVERIFY(disabledFile.readAll().contains("theta: thread"));
    editor->close();

    const qint64 runId = startRun(1, 2);
    QVERIFY(runId);
    QVERIFY(waitUntilEnded(120000));
    int plans = 0;
    for (const test::RecordedRequest &r : m_server->requests()) {
        if (r.ruleName != QLatin1String("plan"))
            continue;
        ++plans;
        QVERIFY2(r.prompt.contains(edited), qPrintable(r.prompt));
        QVERIFY(!r.prompt.contains(QLatin1String("theta: thread")));
    }
    QCOMPARE(plans, 2);

    // With the run's settings and its root as the parent, the preview is exactly the first plan prompt sent.
    actions->agentEditorAction()->trigger();
    editor = m_window->findChild<AgentEditor *>();
    QVERIFY(editor);
    QVERIFY(editor->isUserCopy());
    QStringList errors;
    const auto runConfig = RunConfig::fromYaml(m_window->store()->run(runId)->configYaml.toUtf8(),
                                               QStringLiteral("run"), &errors);
    QVERIFY2(runConfig, qPrintable(errors.join(QLatin1Char('\n'))));
    for (const Candidate &c : m_window->store()->candidates(runId))
        if (c.origin == CandidateOrigin::Root)
            editor->setPreviewContext(c, *runConfig);
    const std::optional<QString> exact = editor->previewPlanPrompt(&error);
    QVERIFY2(exact, qPrintable(error));
    bool found = false;
    for (const test::RecordedRequest &r : m_server->requests())
        found = found || (r.ruleName == QLatin1String("plan") && r.lastUserMessage == *exact);
    QVERIFY2(found, qPrintable(*exact));
    editor->close();

    // Reset to shipped removes the copy; the next run would see the shipped menu again.
    actions->agentEditorAction()->trigger();
    editor = m_window->findChild<AgentEditor *>();
    QVERIFY(editor);
    QVERIFY(editor->resetToShipped(&error));
    QVERIFY(!QFileInfo::exists(dir));
    QCOMPARE(editor->menuModel()->items().first().text, QStringLiteral("alpha: tile the loops"));
    editor->close();
}

void TestRunControl::humanCodeIsEvaluated()
{
    RunActions *actions = m_window->runActions();
    QVERIFY(!actions->humanCodeAction()->isEnabled()); // nothing runs yet
    const qint64 runId = startRun(3, 2);
    QVERIFY(runId);
    // The first plan request means the starting code was evaluated and iteration 1 began.
    QTRY_VERIFY_WITH_TIMEOUT(m_server->requestCount() >= 1, 20000);
    const qint64 rootId = rootOf(runId);
    QVERIFY(rootId);
    m_window->selectCandidate(rootId);
    QTRY_VERIFY(actions->humanCodeAction()->isEnabled());
    actions->humanCodeAction()->trigger();
    auto *dialog = m_window->findChild<HumanInputDialog *>(QStringLiteral("humanCodeDialog"));
    QVERIFY(dialog);
    auto *edit = child<QPlainTextEdit>(dialog, "humanCodeEdit");
    QVERIFY(edit->toPlainText().contains(QLatin1String("latency_ms=100"))); // prefilled with the parent's code
    edit->setPlainText(
        QStringLiteral("// fake: status=ok latency_ms=42 bench_ms=50;\nvoid kernel() { /* by hand */ }\n"));
    child<QPushButton>(dialog, "submitHumanButton")->click();

    auto *tree = child<QTreeView>(m_window.get(), "candidateTree");
    auto *model = qobject_cast<CandidateTreeModel *>(
        qobject_cast<QSortFilterProxyModel *>(tree->model())->sourceModel());
    QVERIFY(model);
    const auto humanCandidate = [&]() -> std::optional<Candidate> {
        for (const Candidate &c : m_window->store()->candidates(runId))
            if (c.origin == CandidateOrigin::Human) {
                const Candidate *shown = model->candidate(model->indexOfCandidate(c.id));
                return shown ? std::optional<Candidate>(*shown) : std::nullopt;
            }
        return std::nullopt;
    };
    QTRY_VERIFY_WITH_TIMEOUT(humanCandidate() && humanCandidate()->status == CandidateStatus::Correct, 30000);
    QCOMPARE(humanCandidate()->parentId, rootId);
    QCOMPARE(humanCandidate()->score, 42.0);

    actions->stopAction()->trigger();
    QVERIFY(waitUntilEnded(30000));
    QCOMPARE(toString(m_window->store()->run(runId)->state), QStringLiteral("stopped"));
    QVERIFY(!actions->humanCodeAction()->isEnabled());
    QVERIFY(actions->resumeAction()->isEnabled()); // a stopped run can be continued
}

// Write a Plan under a candidate of a running search: the dialog shows the parent's code and figures and the
// agent's menu; picking an item writes the plan's "Chosen optimization" line, the preview is the exact prompt
// the code model then receives, and the new candidate is a child of that parent recording the item.
void TestRunControl::humanPlanNamesThePickedMenuItem()
{
    RunActions *actions = m_window->runActions();
    const qint64 runId = startRun(3, 2);
    QVERIFY(runId);
    // Once a plan of the run chose "alpha" (the script's planner always does), its record counts it.
    const auto alphaChosen = [&] {
        for (const Candidate &c : m_window->store()->candidates(runId))
            if (c.menuItem == QLatin1String("alpha: tile the loops"))
                return true;
        return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(alphaChosen(), 20000);
    const qint64 rootId = rootOf(runId);
    QVERIFY(rootId);
    m_window->selectCandidate(rootId);
    QTRY_VERIFY(actions->humanPlanAction()->isEnabled());
    actions->humanPlanAction()->trigger();
    auto *dialog = m_window->findChild<HumanInputDialog *>(QStringLiteral("humanPlanDialog"));
    QVERIFY(dialog);
    QVERIFY(QTest::qWaitForWindowExposed(dialog));

    // The parent's code with line numbers, its measured figures, and the whole menu of the agent.
    auto *parentCode = child<CodeView>(dialog, "humanPlanParentCode");
    QVERIFY(parentCode);
    QVERIFY(parentCode->toPlainText().contains(QLatin1String("latency_ms=100")));
    QVERIFY(parentCode->gutterWidth() > 0);
    const QString figures = child<QLabel>(dialog, "humanPlanFigures")->text();
    QVERIFY2(figures.contains(QLatin1String("correct")) && figures.contains(QLatin1String("100")), qPrintable(figures));
    auto *menu = child<QTreeWidget>(dialog, "humanPlanMenu");
    QVERIFY(menu);
    QCOMPARE(menu->topLevelItemCount(), 8);
    QCOMPARE(menu->topLevelItem(2)->text(1), QStringLiteral("gamma: unroll"));
    QVERIFY2(menu->topLevelItem(0)->text(2).toInt() >= 1, qPrintable(menu->topLevelItem(0)->text(2)));
    QCOMPARE(menu->topLevelItem(2)->text(2), QStringLiteral("0"));

    // Picking the third item names it in the plan; the user's own words follow it.
    menu->setCurrentItem(menu->topLevelItem(2));
    auto *edit = child<QPlainTextEdit>(dialog, "humanPlanEdit");
    QCOMPARE(edit->toPlainText(), QStringLiteral("Chosen optimization: 3. gamma: unroll\n"));
    edit->moveCursor(QTextCursor::End);
    edit->insertPlainText(QStringLiteral("Unroll the inner loop by 8, by hand."));
    const QString preview = dialog->promptPreview();
    QVERIFY2(
        preview.contains(QLatin1String("Chosen optimization: 3. gamma: unroll\nUnroll the inner loop by 8, by hand.")),
        qPrintable(preview));
    QVERIFY(preview.contains(QLatin1String("latency_ms=100"))); // the parent's code is what the model rewrites
    QVERIFY(child<QLabel>(dialog, "humanPlanPromptError")->isHidden());
    auto *submit = child<QPushButton>(dialog, "submitHumanButton");
    QVERIFY(submit->isEnabled());
    submit->click();

    // The plan reaches the code model in exactly the previewed prompt, and its candidate hangs under the parent.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (const test::RecordedRequest &r : m_server->requests())
                if (r.lastUserMessage == preview)
                    return true;
            return false;
        }(),
        30000);
    std::optional<Candidate> human;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (const Candidate &c : m_window->store()->candidates(runId))
                if (c.origin == CandidateOrigin::Human)
                    human = c;
            return human.has_value();
        }(),
        10000);
    QCOMPARE(human->parentId, rootId);
    QCOMPARE(human->menuItem, QStringLiteral("gamma: unroll"));
    QVERIFY(human->plan.contains(QLatin1String("Unroll the inner loop by 8")));
    auto *tree = child<QTreeView>(m_window.get(), "candidateTree");
    auto *model = qobject_cast<CandidateTreeModel *>(
        qobject_cast<QSortFilterProxyModel *>(tree->model())->sourceModel());
    QVERIFY(model);
    QTRY_VERIFY(model->indexOfCandidate(human->id).isValid());
    QCOMPARE(model->indexOfCandidate(human->id).parent(), model->indexOfCandidate(rootId));

    // Edit Code and Evaluate opens the same parent's code with line numbers.
    m_window->selectCandidate(rootId);
    actions->humanCodeAction()->trigger();
    auto *codeDialog = m_window->findChild<HumanInputDialog *>(QStringLiteral("humanCodeDialog"));
    QVERIFY(codeDialog);
    QVERIFY(QTest::qWaitForWindowExposed(codeDialog));
    auto *codeEdit = child<CodeView>(codeDialog, "humanCodeEdit");
    QVERIFY(codeEdit);
    QCOMPARE(codeEdit->toPlainText(), m_window->store()->candidate(rootId)->code);
    QCOMPARE(codeEdit->numbering(), CodeView::Numbering::Plain);
    QVERIFY(codeEdit->gutterWidth() > 0);
    QCOMPARE(codeEdit->lineNumberOf(1), 2);
    codeDialog->reject();

    actions->stopAction()->trigger();
    QVERIFY(waitUntilEnded(30000));
}

QTEST_MAIN(TestRunControl)
#include "tst_run_control.moc"
