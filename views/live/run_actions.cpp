#include "live/run_actions.h"

#include "editors/agent_editor.h"
#include "dialogs/new_target_wizard.h"
#include "charts/beam_graph_view.h"
#include "panels/candidate_inspector.h"
#include "frame/main_window.h"
#include "dialogs/new_run_dialog.h"
#include "live/engine_host.h"
#include "live/run_controller.h"
#include "live/result_actions.h"
#include "live/run_status_widget.h"
#include "live/shown_run.h"
#include "live/store_session.h"
#include "agents/prompt_builder.h"
#include "search/run_setup.h"
#include "insights/menu_insights.h"
#include "common/settings.h"
#include "dialogs/settings_dialog.h"
#include "common/value_format.h"
#include "store/run_store.h"

#include <QAction>
#include <QApplication>
#include <QCoreApplication>
#include <QGraphicsView>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QSysInfo>
#include <QSystemTrayIcon>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QTreeView>

namespace autocomp {

namespace {

QString lastConfigKey() { return QStringLiteral("newRun/lastConfig"); }

bool isFailure(RunState state) { return state == RunState::Failed; }

} // namespace

RunActions::RunActions(MainWindow *window)
    : QObject(window)
    , m_window(window)
    , m_host(new EngineHost(this))
    , m_settings(new Settings(this))
{
    setObjectName(QStringLiteral("runActions"));
    RunController *first = addController();
    m_status = new RunStatusWidget(first);
    createActions();
    m_window->statusBar()->addPermanentWidget(m_status);
    // The whole line went to stderr; the status bar says it in words that fit a laptop's width.
    connect(m_host, &EngineHost::keychainUnavailable, this, [this](const QString &) {
        m_window->statusBar()->showMessage(
            tr("No keychain here (no D-Bus session bus): API keys come from environment variables such as "
               "OPENAI_API_KEY; Settings lists them"),
            30000);
    });
    // The status bar follows the shown run: its controller when this window drives it.
    connect(m_window, &MainWindow::currentRunChanged, this, &RunActions::updateStatusWidget);
    connect(m_window, &MainWindow::storeChanged, this, &RunActions::storeChanged);
    connect(m_window, &MainWindow::currentRunChanged, this, &RunActions::updateActions);
    connect(m_window, &MainWindow::currentCandidateChanged, this, [this](qint64 id) {
        m_currentCandidate = id;
        updateActions();
    });
    connect(m_window, &MainWindow::currentRunChanged, this, [this] { m_currentCandidate = 0; });

    m_window->candidateTree()->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_window->candidateTree(), &QWidget::customContextMenuRequested, this, &RunActions::candidateContextMenu);
    // The graph offers the same actions for the node under the pointer, which it selects first.
    BeamGraphView *graph = m_window->beamGraph();
    graph->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(graph, &QWidget::customContextMenuRequested, this, [this, graph](const QPoint &pos) {
        const qint64 id = graph->candidateAt(pos);
        if (id == 0)
            return;
        m_window->selectCandidate(id);
        m_currentCandidate = id;
        showCandidateMenu(graph->viewport()->mapToGlobal(pos));
    });
    updateActions();
}

RunController *RunActions::addController()
{
    // A controller that never drove a run is reused.
    for (RunController *c : std::as_const(m_controllers))
        if (!c->isActive() && c->runId() == 0 && c->status().state == RunState::Created)
            return c;
    auto *c = new RunController(this, m_host);
    m_controllers << c;
    connect(c, &RunController::started, this, [this, c](qint64 runId) {
        m_status->clearExternal();
        m_status->setController(c);
        runStarted(runId);
    });
    connect(c, &RunController::startFailed, this, [this](const QString &error) {
        notify(tr("The run did not start"), error, true);
        updateActions();
    });
    // The engine's candidates and beam go to the shown run, which the views follow; the run's row here.
    ShownRun *shown = m_window->shownRun();
    connect(c, &RunController::candidatesChanged, shown, &ShownRun::applyEngineCandidates);
    connect(c, &RunController::beamChanged, shown, &ShownRun::applyEngineBeam);
    connect(c, &RunController::candidatesChanged, this, [this](qint64 runId) {
        if (runId == m_window->currentRunId())
            refreshShownRun();
    });
    connect(c, &RunController::stateChanged, this, [this, c] {
        if (c->runId() != 0 && c->runId() != m_window->currentRunId())
            m_window->updateRunRow(m_window->store()->run(c->runId()).value_or(RunInfo{}));
        refreshShownRun();
        updateActions();
    });
    connect(c, &RunController::iterationFinished, this, [this](qint64 runId, int) {
        if (runId != m_window->currentRunId()) {
            if (const std::optional<RunInfo> run = m_window->store()->run(runId))
                m_window->updateRunRow(*run); // the runs list shows every live run
        }
        refreshShownRun();
    });
    connect(c, &RunController::finished, this, &RunActions::runFinished);
    connect(c, &RunController::humanCandidateAdded, this,
            [this](qint64 id) { m_window->statusBar()->showMessage(tr("Candidate %1 added by hand").arg(id), 5000); });
    connect(c, &RunController::humanInputFailed, this, [this](const QString &error) {
        m_window->statusBar()->showMessage(tr("Not added: %1").arg(error), 10000);
    });
    return c;
}

RunController *RunActions::controllerFor(qint64 runId) const
{
    if (runId == 0)
        return nullptr;
    for (RunController *c : m_controllers)
        if (c->runId() == runId)
            return c;
    return nullptr;
}

RunController *RunActions::controller() const
{
    if (RunController *c = controllerFor(m_window->currentRunId()))
        return c;
    // Else the one started last (or the idle first one).
    for (auto it = m_controllers.crbegin(); it != m_controllers.crend(); ++it)
        if ((*it)->isActive())
            return *it;
    return m_controllers.constLast();
}

bool RunActions::isDriving(qint64 runId) const
{
    const RunController *c = controllerFor(runId);
    return c && c->isActive();
}

int RunActions::activeRuns() const
{
    return int(std::count_if(m_controllers.cbegin(), m_controllers.cend(),
                             [](const RunController *c) { return c->isActive(); }));
}

void RunActions::createActions()
{
    QStyle *style = m_window->style();
    m_start = new QAction(style->standardIcon(QStyle::SP_FileDialogNewFolder), tr("Start &New Run…"), this);
    m_start->setObjectName(QStringLiteral("startRunAction"));
    m_start->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_N));
    connect(m_start, &QAction::triggered, this, &RunActions::showNewRunDialog);
    m_pause = new QAction(style->standardIcon(QStyle::SP_MediaPause), tr("&Pause"), this);
    m_pause->setObjectName(QStringLiteral("pauseRunAction"));
    m_pause->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
    m_pause->setToolTip(tr("Pause: requests and evaluations in flight finish, nothing new starts"));
    connect(m_pause, &QAction::triggered, this, [this] {
        if (RunController *c = controllerFor(m_window->currentRunId()); c && c->isActive())
            c->pause();
        else if (drivenElsewhere(m_window->currentRunId()))
            requestOfDriver(m_window->currentRunId(), QStringLiteral("pause"));
    });
    m_resume = new QAction(style->standardIcon(QStyle::SP_MediaPlay), tr("&Resume"), this);
    m_resume->setObjectName(QStringLiteral("resumeRunAction"));
    m_resume->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_resume->setToolTip(tr("Resume the paused run, or continue the selected stopped or interrupted run"));
    connect(m_resume, &QAction::triggered, this, &RunActions::resumeClicked);
    m_stop = new QAction(style->standardIcon(QStyle::SP_MediaStop), tr("&Stop"), this);
    m_stop->setObjectName(QStringLiteral("stopRunAction"));
    m_stop->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    m_stop->setToolTip(tr("Stop: cancel the work in flight; the run can be resumed later"));
    connect(m_stop, &QAction::triggered, this, [this] {
        const qint64 id = m_window->currentRunId();
        if (RunController *c = controllerFor(id); c && c->isActive())
            c->stop();
        else if (drivenElsewhere(id))
            requestOfDriver(id, QStringLiteral("stop"));
        else
            stopUndriven(id);
    });

    m_humanPlan = new QAction(tr("&Write a Plan Here…"), this);
    m_humanPlan->setObjectName(QStringLiteral("humanPlanAction"));
    m_humanPlan->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    connect(m_humanPlan, &QAction::triggered, this, [this] { showHumanDialog(HumanInputDialog::Plan); });
    m_humanCode = new QAction(tr("&Edit Code and Evaluate…"), this);
    m_humanCode->setObjectName(QStringLiteral("humanCodeAction"));
    m_humanCode->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    connect(m_humanCode, &QAction::triggered, this, [this] { showHumanDialog(HumanInputDialog::Code); });

    m_agentEditor = new QAction(tr("&Agent Editor…"), this);
    m_agentEditor->setObjectName(QStringLiteral("agentEditorAction"));
    m_agentEditor->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));
    connect(m_agentEditor, &QAction::triggered, this, &RunActions::showAgentEditor);
    auto *newTarget = new QAction(tr("&New Target from Documents…"), this);
    newTarget->setObjectName(QStringLiteral("newTargetAction"));
    connect(newTarget, &QAction::triggered, this, &RunActions::showNewTargetWizard);
    m_settingsAction = new QAction(tr("&Settings…"), this);
    m_settingsAction->setObjectName(QStringLiteral("settingsAction"));
    m_settingsAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Comma));
    m_settingsAction->setMenuRole(QAction::PreferencesRole);
    connect(m_settingsAction, &QAction::triggered, this, [this] {
        auto *dialog = new SettingsDialog(m_settings, m_window);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->open();
    });

    // Insert the Run and Tools menus before Help.
    QMenuBar *bar = m_window->menuBar();
    QAction *before = nullptr;
    for (QAction *a : bar->actions())
        if (a->menu() && a->text().remove(QLatin1Char('&')) == tr("Help"))
            before = a;
    auto *run = new QMenu(tr("&Run"), m_window);
    run->setObjectName(QStringLiteral("runMenu"));
    run->addActions({m_start, m_pause, m_resume, m_stop});
    run->addSeparator();
    run->addActions({m_humanPlan, m_humanCode});
    run->addSeparator();
    QAction *focusRuns = run->addAction(tr("Go to &Runs"), this,
                                        [this] { m_window->runsView()->setFocus(Qt::ShortcutFocusReason); });
    focusRuns->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_1));
    QAction *focusTree = run->addAction(tr("Go to &Candidates"), this,
                                        [this] { m_window->candidateTree()->setFocus(Qt::ShortcutFocusReason); });
    focusTree->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_2));
    QAction *focusInspector = run->addAction(tr("Go to the &Inspector"), this,
                                             [this] { m_window->inspector()->setFocus(Qt::ShortcutFocusReason); });
    focusInspector->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_3));
    QAction *parent = run->addAction(tr("Go to the &Parent Candidate"), this, &RunActions::goToParent);
    parent->setObjectName(QStringLiteral("goToParentAction"));
    parent->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
    QAction *best = run->addAction(tr("Go to the &Best Candidate"), this, &RunActions::goToBest);
    best->setObjectName(QStringLiteral("goToBestAction"));
    best->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    auto *tools = new QMenu(tr("&Tools"), m_window);
    tools->setObjectName(QStringLiteral("toolsMenu"));
    tools->addActions({m_agentEditor, newTarget, m_settingsAction});
    bar->insertMenu(before, run);
    bar->insertMenu(before, tools);

    auto *toolbar = m_window->addToolBar(tr("Run"));
    toolbar->setObjectName(QStringLiteral("runToolBar"));
    toolbar->addActions({m_start, m_pause, m_resume, m_stop});
    for (QAction *a : {m_start, m_pause, m_resume, m_stop})
        a->setToolTip(QStringLiteral("%1 (%2)").arg(a->toolTip(), a->shortcut().toString(QKeySequence::NativeText)));
}

void RunActions::updateActions()
{
    // The actions apply to the shown run; other runs go on whatever is done to it.
    const RunInfo &shown = m_window->shownRun()->run();
    RunController *c = controllerFor(shown.id);
    const bool active = c && c->isActive();
    const RunController::Status s = c ? c->status() : RunController::Status{};
    const bool elsewhere = drivenElsewhere(shown.id);
    const QString request = m_requests.value(shown.id);
    const bool live = shown.state == RunState::Running || shown.state == RunState::Paused;
    const bool shownStoredResumable = !active && !elsewhere && shown.id != 0
        && (shown.state == RunState::Stopped || shown.state == RunState::Paused || shown.state == RunState::Running);
    m_start->setEnabled(true);
    if (elsewhere) {
        // Another process drives it: asked through the store, as `autocomp pause|resume|stop` do.
        m_pause->setEnabled(shown.state == RunState::Running && request.isEmpty());
        m_resume->setEnabled(shown.state == RunState::Paused && request.isEmpty());
        m_stop->setEnabled(live && request != QLatin1String("stop"));
    } else {
        m_pause->setEnabled(active && s.state == RunState::Running);
        m_resume->setEnabled((active && s.state == RunState::Paused) || shownStoredResumable);
        // A paused or interrupted run nobody drives is stopped by recording it, as `autocomp stop` does.
        m_stop->setEnabled(active || (shown.id != 0 && live));
    }
    const bool human = (active || handsOff(shown.id)) && m_currentCandidate != 0;
    m_humanPlan->setEnabled(human);
    m_humanCode->setEnabled(human);
    for (QAction *a : {m_humanPlan, m_humanCode})
        a->setStatusTip(a->isEnabled() ? QString() : humanRefusal());
    updateStatusWidget();
}

QString RunActions::humanRefusal() const
{
    const RunInfo &shown = m_window->shownRun()->run();
    if (isDriving(shown.id) || handsOff(shown.id))
        return tr("Select a candidate of run %1").arg(shown.id);
    if (drivenElsewhere(shown.id))
        return tr("Run %1 is driven by %2, an older version that takes no plans or edits from other processes: pause "
                  "it "
                  "here, then resume it to drive it from this workbench")
            .arg(shown.id)
            .arg(m_window->driverText(shown.id));
    const std::optional<RunLease> lease = m_window->driverOf(shown.id);
    if (shown.state == RunState::Running && !(lease && lease->alive))
        return tr("Run %1 was interrupted: its driver (%2) is gone. Resume it to drive it from this workbench")
            .arg(shown.id)
            .arg(lease ? lease->describe() : tr("no process"));
    return tr("Run %1 is not driven by this window; start or resume it").arg(shown.id);
}

bool RunActions::handsOff(qint64 runId) const
{
    const std::optional<RunLease> lease = m_window->driverOf(runId);
    return drivenElsewhere(runId) && lease && lease->takesRequests;
}

void RunActions::handToDriver(HumanInputDialog::Kind kind, qint64 parentId, const QString &text)
{
    const qint64 runId = m_window->currentRunId();
    const QString what = kind == HumanInputDialog::Plan ? tr("Plan") : tr("Edited code");
    if (!handsOff(runId)) {
        m_window->statusBar()->showMessage(tr("%1 not sent: %2").arg(what, humanRefusal()), 10000);
        return;
    }
    RunRequest request;
    request.runId = runId;
    request.kind = kind == HumanInputDialog::Plan ? RunRequest::Kind::Plan : RunRequest::Kind::Code;
    request.parentId = parentId;
    request.text = text;
    RunStore *store = m_window->store();
    request.id = store->addRunRequest(request);
    if (request.id == 0) {
        notify(tr("%1 not sent to run %2's driver").arg(what).arg(runId), store->lastError(), true);
        return;
    }
    m_sentRequests.insert(request.id, request);
    const std::optional<RunLease> lease = m_window->driverOf(runId);
    m_window->statusBar()->showMessage(
        tr("%1 for candidate %2 sent to run %3's driver, pid %4 on %5; waiting for it to take it")
            .arg(what)
            .arg(parentId)
            .arg(runId)
            .arg(lease ? lease->pid : 0)
            .arg(lease ? lease->host : QString()));
    m_window->storeSession()->refresh();
}

void RunActions::requestSettled(const RunRequest &request)
{
    if (!m_sentRequests.remove(request.id))
        return;
    const QString what = request.kind == RunRequest::Kind::Plan ? tr("Plan") : tr("Edited code");
    const QString driver = tr("pid %1 on %2").arg(request.driverPid).arg(request.driverHost);
    if (request.state == RunRequest::State::Taken) {
        m_window->statusBar()->showMessage(tr("%1 for candidate %2 taken by run %3's driver (%4): candidate %5")
                                               .arg(what)
                                               .arg(request.parentId)
                                               .arg(request.runId)
                                               .arg(driver)
                                               .arg(request.candidateId),
                                           15000);
        return;
    }
    notify(tr("%1 for candidate %2 not taken").arg(what).arg(request.parentId),
           tr("Run %1's driver (%2) refused it: %3").arg(request.runId).arg(driver, request.reason), true);
}

bool RunActions::drivenElsewhere(qint64 runId) const
{
    if (runId == 0 || isDriving(runId))
        return false;
    const std::optional<RunLease> lease = m_window->driverOf(runId);
    return lease && lease->alive && !lease->isThisProcess();
}

void RunActions::requestOfDriver(qint64 runId, const QString &request)
{
    RunStore *store = m_window->store();
    if (!store->requestState(runId, request)) {
        notify(tr("Run %1 was not asked to %2").arg(runId).arg(request), store->lastError(), true);
        return;
    }
    m_requests.insert(runId, request);
    const QString driver = m_window->driverText(runId);
    QString message = request == QLatin1String("pause")
        ? tr("Asked %1 to pause run %2: requests and evaluations in flight finish first")
        : request == QLatin1String("stop") ? tr("Asked %1 to stop run %2")
                                           : tr("Asked %1 to resume run %2");
    m_window->statusBar()->showMessage(message.arg(driver).arg(runId), 10000);
    m_window->storeSession()->refresh();
    updateActions();
}

void RunActions::stopUndriven(qint64 runId)
{
    RunStore *store = m_window->store();
    const std::optional<RunInfo> before = store->run(runId);
    if (!before || (before->state != RunState::Paused && before->state != RunState::Running))
        return;
    // The lease is read again in the transaction that writes: a process that took the run over since is
    // asked instead.
    RunInfo run;
    switch (store->recordUndrivenState(runId, RunState::Stopped,
                                       tr("stopped in the workbench while no process was driving it"), &run)) {
    case RunStore::UndrivenWrite::TakenOver: requestOfDriver(runId, QStringLiteral("stop")); return;
    case RunStore::UndrivenWrite::Failed:
        notify(tr("Run %1 was not stopped").arg(runId), store->lastError(), true);
        return;
    case RunStore::UndrivenWrite::Recorded: break;
    }
    m_window->updateRunRow(run);
    m_window->statusBar()->showMessage(tr("Run %1 stopped; Resume continues it").arg(runId), 10000);
    m_window->storeSession()->refresh();
    updateActions();
}

void RunActions::storeChanged(const StoreChanges &changes)
{
    for (const RunRequest &request : changes.requests)
        if (!request.isPending())
            requestSettled(request);
    // A driver that ended before taking what this window sent will not take it: recorded as refused, and said.
    for (const RunSnapshot &snapshot : changes.runs) {
        if (snapshot.lease && snapshot.lease->alive)
            continue;
        const QList<RunRequest> sent = m_sentRequests.values();
        for (const RunRequest &request : sent) {
            if (request.runId != snapshot.run.id)
                continue;
            RunStore *store = m_window->store();
            const QString reason = tr(
                "its driver ended before taking it; resume the run to drive it from this workbench");
            if (store->settleRunRequest(request.id, 0, reason)) {
                RunRequest settled = request;
                settled.state = RunRequest::State::Refused;
                settled.reason = reason;
                settled.driverPid = QCoreApplication::applicationPid();
                settled.driverHost = QSysInfo::machineHostName();
                requestSettled(settled);
            } else if (const std::optional<RunRequest> stored = store->runRequest(request.id);
                       stored && !stored->isPending()) {
                requestSettled(*stored); // settled meanwhile, by the driver or a new one
            }
        }
    }
    for (const RunSnapshot &snapshot : changes.runs) {
        const qint64 id = snapshot.run.id;
        const auto it = m_requests.constFind(id);
        if (it == m_requests.constEnd())
            continue;
        const QString &request = *it;
        const RunState state = snapshot.run.state;
        const bool ended = state == RunState::Finished || state == RunState::Failed || state == RunState::Stopped;
        const bool done = ended || (request == QLatin1String("pause") && state == RunState::Paused)
            || (request == QLatin1String("resume") && state == RunState::Running);
        const bool driverGone = !(snapshot.lease && snapshot.lease->alive);
        if (done) {
            m_requests.remove(id);
            m_window->statusBar()->showMessage(tr("Run %1 %2").arg(id).arg(toString(state)), 10000);
        } else if (driverGone) {
            // Its process ended before it acted on the request (a CLI ends once its runs are paused).
            m_requests.remove(id);
            if (request == QLatin1String("resume") && state == RunState::Paused)
                resumeHere(snapshot.run);
        }
    }
    updateActions();
}

void RunActions::updateStatusWidget()
{
    const RunInfo &shown = m_window->shownRun()->run();
    // The status bar speaks of the run shown: its controller when this window drove it, else the run as stored
    // (never another run's controller, which would say "Run 6: finished" while run 2 is shown).
    if (shown.id == 0 || controllerFor(shown.id)) {
        m_status->clearExternal();
        m_status->setController(controller());
        return;
    }
    RunController::Status s;
    s.runId = shown.id;
    s.state = shown.state;
    s.reason = shown.stopReason;
    s.iteration = shown.iteration;
    s.tokensIn = shown.tokensIn;
    s.tokensOut = shown.tokensOut;
    s.usd = shown.usd;
    s.calls = shown.llmCalls;
    s.inFlightRequests = m_window->requestsInFlight();
    s.inFlightEvaluations = m_window->evaluationsInFlight();
    if (!m_configs.contains(shown.id)) {
        QStringList ignored;
        const auto config = RunConfig::fromYaml(shown.configYaml.toUtf8(), tr("run %1's configuration").arg(shown.id),
                                                &ignored);
        m_configs.insert(shown.id,
                         config ? std::make_pair(config->search.iterations, config->budget.maxUsd)
                                : std::make_pair(0, std::optional<double>{}));
    }
    s.iterations = m_configs.value(shown.id).first;
    s.maxUsd = m_configs.value(shown.id).second;
    const std::optional<RunLease> lease = m_window->driverOf(shown.id);
    m_status->setExternal(s, lease ? m_window->driverText(shown.id) : QString(), m_requests.value(shown.id),
                          shown.createdAt, shown.updatedAt);
}

NewRunDialog *RunActions::showNewRunDialog()
{
    auto *dialog = new NewRunDialog(controller()->repository(), m_window->store()->path(), m_window);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    // The last configuration started from the dialog comes back, else the defaults with the preferred sandbox.
    // A configuration that never named Slurm settings gets the Settings dialog's (partition, GRES, time),
    // seen as soon as the executor is switched to slurm; a Slurm configuration keeps its own.
    auto withSlurmDefaults = [this](RunConfig config) {
        EvaluationConfig &e = config.evaluation;
        if (e.executor != QLatin1String("slurm") && e.slurmPartition.isEmpty() && e.slurmGres.isEmpty()
            && e.slurmTime.isEmpty()) {
            e.slurmPartition = m_settings->slurmPartition();
            e.slurmGres = m_settings->slurmGres();
            e.slurmTime = m_settings->slurmTime();
        }
        return config;
    };
    QStringList ignored;
    const QByteArray last = QSettings().value(lastConfigKey()).toByteArray();
    if (const auto config = last.isEmpty() ? std::nullopt
                                           : RunConfig::fromYaml(last, QStringLiteral("last run"), &ignored)) {
        dialog->setConfig(withSlurmDefaults(*config));
    } else {
        RunConfig defaults = dialog->config();
        defaults.evaluation.sandbox = m_settings->sandboxMode();
        dialog->setConfig(withSlurmDefaults(defaults));
    }
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        const std::optional<RunSetup> setup = dialog->setup();
        if (!setup)
            return;
        QSettings().setValue(lastConfigKey(), setup->configYaml);
        QString error;
        if (!addController()->start(*setup, &error))
            notify(tr("The run did not start"), error, true);
        updateActions();
    });
    dialog->open();
    return dialog;
}

void RunActions::resumeClicked()
{
    const RunInfo run = m_window->shownRun()->run();
    if (RunController *c = controllerFor(run.id); c && c->isActive()) {
        c->resumeWork();
        return;
    }
    if (run.id == 0)
        return;
    // A paused run whose process waits (another workbench, a CLI driving other runs too) is resumed by it; a
    // run nobody drives is driven from here.
    if (drivenElsewhere(run.id)) {
        requestOfDriver(run.id, QStringLiteral("resume"));
        return;
    }
    resumeHere(run);
}

void RunActions::resumeHere(const RunInfo &run)
{
    QStringList errors;
    const QByteArray yaml = run.configYaml.toUtf8();
    std::optional<RunSetup> setup;
    if (const auto config = RunConfig::fromYaml(yaml, tr("run %1's configuration").arg(run.id), &errors))
        setup = prepareRun(*config, yaml, controller()->repository(), m_window->store()->path(), &errors);
    QString error = errors.join(QLatin1Char('\n'));
    if (!setup || !addController()->resume(run.id, *setup, &error))
        notify(tr("Run %1 cannot be resumed").arg(run.id), error, true);
    updateActions();
}

void RunActions::runStarted(qint64 runId)
{
    m_window->reloadRuns();
    m_window->selectRun(runId);
    m_window->statusBar()->showMessage(tr("Run %1 started").arg(runId), 5000);
    updateActions();
}

void RunActions::refreshShownRun()
{
    const qint64 id = m_window->currentRunId();
    if (id == 0 || !isDriving(id)) {
        updateActions();
        return;
    }
    if (const std::optional<RunInfo> run = m_window->store()->run(id))
        m_window->updateRunRow(*run);
    updateActions();
}

void RunActions::runFinished(const RunInfo &run)
{
    if (run.id == m_window->currentRunId()) {
        m_window->updateRunRow(m_window->store()->run(run.id).value_or(run)); // work in flight reads cancelled
    } else {
        m_window->reloadRuns();
    }
    QString message = tr("Run %1 (%2/%3) %4").arg(run.id).arg(run.problem, run.target, toString(run.state));
    if (run.bestScore > 0 && run.baselineScore > 0)
        message += tr(", %1x faster than the starting code").arg(run.speedup(), 0, 'f', 2);
    // A reason with a log (the start could not be evaluated) is not flattened into the notification: its first
    // line, and the whole log behind Details… in the run header (or a click on the notification).
    bool more = false;
    if (!run.stopReason.isEmpty())
        message += QStringLiteral(": ") + ValueFormat::summary(run.stopReason, &more);
    if (more)
        message += tr(" (the whole log: Details… in the run header)");
    m_notifiedRun = more ? run.id : 0;
    notify(isFailure(run.state) ? tr("Run failed") : tr("Run ended"), message, isFailure(run.state));
    updateActions();
}

void RunActions::notify(const QString &title, const QString &message, bool failure)
{
    if (QSystemTrayIcon::isSystemTrayAvailable() && QSystemTrayIcon::supportsMessages()) {
        if (!m_tray) {
            m_tray = new QSystemTrayIcon(
                m_window->windowIcon().isNull() ? QApplication::windowIcon() : m_window->windowIcon(), this);
            m_tray->setToolTip(QApplication::applicationDisplayName());
            connect(m_tray, &QSystemTrayIcon::messageClicked, this, [this] {
                if (m_notifiedRun != 0 && m_window->selectRun(m_notifiedRun))
                    m_window->showStopReasonDetails();
            });
        }
        m_tray->show();
        m_tray->showMessage(title, message, failure ? QSystemTrayIcon::Critical : QSystemTrayIcon::Information);
    }
    m_window->statusBar()->showMessage(QStringLiteral("%1: %2").arg(title, message), 15000);
    QApplication::alert(m_window);
}

void RunActions::candidateContextMenu(const QPoint &pos)
{
    QTreeView *tree = m_window->candidateTree();
    const QModelIndex index = tree->indexAt(pos);
    if (!index.isValid())
        return;
    tree->setCurrentIndex(index);
    showCandidateMenu(tree->viewport()->mapToGlobal(pos));
}

void RunActions::showCandidateMenu(const QPoint &globalPos)
{
    // The candidate under the pointer was selected first: every action acts on it.
    updateActions();
    m_window->resultActions()->updateActions();
    QMenu menu;
    menu.setToolTipsVisible(true); // a disabled action says why
    menu.addActions({m_humanPlan, m_humanCode});
    menu.addSeparator();
    menu.addActions(m_window->resultActions()->candidateActions());
    menu.exec(globalPos);
}

HumanInputDialog *RunActions::showHumanDialog(HumanInputDialog::Kind kind)
{
    const qint64 parentId = m_currentCandidate;
    if (parentId == 0 || !(isDriving(m_window->currentRunId()) || handsOff(m_window->currentRunId()))) {
        m_window->statusBar()->showMessage(tr("Not added: %1").arg(humanRefusal()), 10000);
        return nullptr;
    }
    const std::optional<Candidate> parent = m_window->store()->candidate(parentId);
    const QString text = kind == HumanInputDialog::Code && parent ? parent->code : QString();
    auto *dialog = new HumanInputDialog(kind, parentId, text, m_window->shownRun()->language(), m_window);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    if (kind == HumanInputDialog::Plan && parent)
        dialog->setPlanContext(planContext(*parent));
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        if (!isDriving(m_window->currentRunId())) {
            handToDriver(dialog->kind(), dialog->parentId(), dialog->text());
            return;
        }
        RunController *c = controllerFor(m_window->currentRunId());
        if (!c)
            return;
        if (dialog->kind() == HumanInputDialog::Plan)
            c->addHumanPlan(dialog->parentId(), dialog->text());
        else
            c->addHumanCode(dialog->parentId(), dialog->text());
    });
    dialog->open();
    return dialog;
}

HumanInputDialog::PlanContext RunActions::planContext(const Candidate &parent) const
{
    RunStore *store = m_window->store();
    const RunInfo &run = m_window->shownRun()->run();
    HumanInputDialog::PlanContext context;
    context.parent = parent;
    std::optional<Candidate> root;
    const QList<Candidate> candidates = store->candidates(run.id);
    for (const Candidate &c : candidates)
        if (c.origin == CandidateOrigin::Root)
            root = c;
    context.figures = tr("Measured: %1")
                          .arg(CandidateInspector::headline(parent, run.metric, root, store->candidate(parent.parentId),
                                                            run.metricUnit));
    if (const std::optional<ScoreInterval> interval = scoreInterval(parent); interval && interval->high > interval->low)
        context.figures += tr(" · 95 % interval %1 to %2")
                               .arg(ValueFormat::figure(interval->low, run.metric, run.metricUnit),
                                    ValueFormat::figure(interval->high, run.metric, run.metricUnit));

    // The run's own setup (its configuration against the agents and targets here), as the engine has it.
    QStringList errors;
    const QByteArray yaml = run.configYaml.toUtf8();
    std::optional<RunSetup> setup;
    if (const auto config = RunConfig::fromYaml(yaml, tr("run %1's configuration").arg(run.id), &errors))
        setup = prepareRun(*config, yaml, controller()->repository(), store->path(), &errors);
    if (!setup) {
        const QString error = errors.join(QLatin1Char('\n'));
        context.prompt = [error](const QString &, QString *why) {
            *why = error;
            return QString();
        };
        return context;
    }
    if (!parent.metrics.isEmpty())
        context.metrics = PromptBuilder::describeMetrics(parent.metrics, setup->target.metric,
                                                         setup->target.metricUnit);
    // What the engine sends for a human plan (SearchEngine::requestCode): the code prompt with the plan.
    context.prompt = [setup = *setup, code = parent.code](const QString &plan, QString *) {
        return PromptBuilder::codePrompt(setup.agent, setup.problem, setup.target, code, plan,
                                         setup.config.search.editMode);
    };

    // Each menu item's record over this agent's runs: how often it was chosen, how often its correct candidates
    // beat their parent (beyond the timing's noise), its best gain.
    const QString agent = setup->config.effectiveAgent();
    const QList<qint64> runs = MenuInsights::runsOfAgent(*store, agent);
    context.runs = int(runs.size());
    const QList<StrategyRecord> records = MenuInsights::compute(*store, runs, MenuInsights::Grouping::Strategy,
                                                                &context.recordsError);
    QHash<qint64, Candidate> byId;
    for (qint64 runId : runs)
        for (const Candidate &c : runId == run.id ? candidates : store->candidates(runId))
            byId.insert(c.id, c);
    for (const QString &item : setup->agent.menu) {
        HumanInputDialog::MenuEntry entry;
        entry.text = item;
        for (const StrategyRecord &record : records) {
            if (record.strategy != item || !record.onMenu)
                continue;
            entry.chosen = record.chosen;
            entry.bestGain = record.bestGain;
            for (qint64 id : record.candidateIds) {
                const Candidate c = byId.value(id);
                const auto p = byId.constFind(c.parentId);
                if (c.status == CandidateStatus::Correct && c.hasScore() && p != byId.constEnd() && p->hasScore()
                    && c.score < p->score && !withinNoise(c, *p))
                    ++entry.improved;
            }
        }
        context.menu << entry;
    }
    return context;
}

AgentEditor *RunActions::showAgentEditor()
{
    // One editor, kept when closed, so unsaved edits survive closing it.
    if (!m_agentEditorDialog)
        m_agentEditorDialog = new AgentEditor(controller()->repository(), m_window);
    AgentEditor *editor = m_agentEditorDialog;
    editor->setStorePath(m_window->store()->path());
    // The preview starts from the selected candidate of the shown run, with that run's settings.
    const RunInfo &run = m_window->shownRun()->run();
    if (run.id != 0 && m_currentCandidate != 0) {
        QStringList ignored;
        const auto config = RunConfig::fromYaml(run.configYaml.toUtf8(), QStringLiteral("run"), &ignored);
        const auto candidate = m_window->store()->candidate(m_currentCandidate);
        if (config && candidate) {
            QString error;
            if (editor->agentName() != config->effectiveAgent())
                editor->loadAgent(config->effectiveAgent(), &error);
            editor->setPreviewContext(*candidate, *config);
        }
    }
    editor->show();
    editor->raise();
    editor->activateWindow();
    return editor;
}

NewTargetWizard *RunActions::showNewTargetWizard()
{
    auto *wizard = new NewTargetWizard(m_window->store(), m_host->keysReady() ? m_host->keyLookup() : nullptr,
                                       m_window);
    wizard->setAttribute(Qt::WA_DeleteOnClose);
    connect(wizard, &NewTargetWizard::agentBuilt, this, [this](const QString &name) {
        AgentEditor *editor = showAgentEditor();
        QString error;
        if (editor->loadAgent(name, &error))
            editor->showPreview();
    });
    wizard->show();
    return wizard;
}

void RunActions::goToParent()
{
    if (const Candidate *c = m_window->shownRun()->find(m_currentCandidate))
        m_window->selectCandidate(c->parentId);
}

void RunActions::goToBest() { m_window->selectCandidate(m_window->shownRun()->run().bestCandidateId); }

void RunActions::shutdown()
{
    for (RunController *c : std::as_const(m_controllers))
        if (c->isActive())
            c->stop(tr("the workbench was closed"));
}

} // namespace autocomp
