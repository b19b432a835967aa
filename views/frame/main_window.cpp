#include "frame/main_window.h"

#include "charts/runs_comparison_view.h"
#include "eval/process_runner.h"
#include "exchange/autocomp_dir.h"
#include "exchange/run_archive.h"
#include "frame/run_page.h"
#include "frame/runs_pane.h"
#include "frame/welcome_page.h"
#include "live/result_actions.h"
#include "live/run_actions.h"
#include "live/shown_run.h"
#include "live/store_session.h"
#include "models/candidate_tree_model.h"
#include "models/run_list_model.h"
#include "panels/study_view.h"
#include "store/run_store.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QSettings>
#include <QShortcut>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

// Q_INIT_RESOURCE must be used outside a namespace; the resources live in a static library, so they are
// registered explicitly rather than by a static initializer the linker might drop.
static void initAutocompResources() { Q_INIT_RESOURCE(resources); }

namespace autocomp {

namespace {

namespace SettingsKeys {
// Bumped when the layout changes so that stale splitter or header state is not applied.
// 4: the runs list above the middle and the inspector, as high as its rows.
constexpr int Version =
    4; // 2: the runs pane is as wide as its columns, a Menu tab; 3: the runs list gained "Driven by"
QString version() { return QStringLiteral("mainWindow/version"); }
QString geometry() { return QStringLiteral("mainWindow/geometry"); }
QString state() { return QStringLiteral("mainWindow/state"); }
QString splitter() { return QStringLiteral("mainWindow/splitter"); }
QString runsSplitter() { return QStringLiteral("mainWindow/runsSplitter"); }
QString runsHeader() { return QStringLiteral("mainWindow/runsHeader"); }
QString treeHeader() { return QStringLiteral("mainWindow/treeHeader"); }
} // namespace SettingsKeys

} // namespace

MainWindow::MainWindow(std::unique_ptr<RunStore> store, QWidget *parent)
    : QMainWindow(parent)
    , m_session(new StoreSession(std::move(store), this))
    , m_shownRun(new ShownRun(m_session, this))
{
    initAutocompResources();
    setObjectName(QStringLiteral("mainWindow"));

    m_resultActions = new ResultActions(this);
    // The runs list across the top, as high as its rows (at most a third of the window); below it the run page.
    m_runsSplitter = new QSplitter(Qt::Vertical);
    m_runsSplitter->setObjectName(QStringLiteral("runsSplitter"));
    m_runsSplitter->setChildrenCollapsible(false);
    connect(m_runsSplitter, &QSplitter::splitterMoved, this, [this] { m_userSizedRuns = true; });
    m_runPage = new RunPage(m_shownRun, m_resultActions, [this](qint64 id) { return driverText(id); });
    connect(m_runPage, &RunPage::candidateOfRunActivated, this, [this](qint64 runId, qint64 candidateId) {
        if (runId != currentRunId() && !selectRun(runId))
            return;
        selectCandidate(candidateId);
        showView(QStringLiteral("graph"));
    });
    connect(m_shownRun, &ShownRun::candidateSelected, this,
            [this](const Candidate &candidate) { Q_EMIT currentCandidateChanged(candidate.id); });
    connect(m_shownRun, &ShownRun::shown, this, [this] { m_deleteRun->setEnabled(m_shownRun->id() != 0); });
    const auto drivenHere = [this](qint64 id) { return m_runActions && m_runActions->isDriving(id); };
    m_runsPane = new RunsPane(m_session, drivenHere, [this](qint64 id) { return driverText(id); });
    connect(m_runsPane, &RunsPane::runActivated, this, &MainWindow::showRun);
    connect(m_runsPane->view(), &QWidget::customContextMenuRequested, this, &MainWindow::runsContextMenu);
    connect(m_runsPane, &RunsPane::driverColumnChanged, this, [this] {
        // Panes this window sized itself are sized again for the column; sizes the user chose stay.
        if (m_runsPaneFitted && !m_layoutRestored && !m_userSizedRuns)
            fitRunsPane();
    });
    m_runsSplitter->addWidget(m_runsPane);
    m_runsSplitter->addWidget(m_runPage);
    m_runsSplitter->setStretchFactor(0, 0); // a taller window gives the graph and the inspector the height
    m_runsSplitter->setStretchFactor(1, 1);

    m_welcomePage = new WelcomePage(exampleRunResource());
    connect(m_welcomePage, &WelcomePage::newRunRequested, this, [this] {
        if (m_runActions)
            m_runActions->startAction()->trigger();
    });
    connect(m_welcomePage, &WelcomePage::exampleRequested, this, &MainWindow::loadExampleRunClicked);
    connect(m_welcomePage, &WelcomePage::importRequested, this, &MainWindow::importArchiveDialog);
    connect(m_welcomePage, &WelcomePage::openStoreRequested, this, &MainWindow::openStoreDialog);
    m_stack = new QStackedWidget;
    m_stack->addWidget(m_welcomePage);
    m_stack->addWidget(m_runsSplitter);
    auto *central = new QWidget;
    auto *centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    centralLayout->addWidget(createSandboxBanner());
    centralLayout->addWidget(m_stack, 1);
    setCentralWidget(central);

    m_storeLabel = new QLabel;
    m_storeLabel->setObjectName(QStringLiteral("storePathLabel"));
    m_storeLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A normal (not permanent) widget: a temporary message (a request sent, a run's end, the keychain notice)
    // takes its place while shown, instead of being squeezed to nothing beside it.
    statusBar()->addWidget(m_storeLabel, 1);

    connect(m_session, &StoreSession::changed, this, &MainWindow::applyStoreChanges);
    connect(m_session, &StoreSession::followFailed, this, [this](const QString &error) {
        statusBar()->showMessage(tr("Runs of other processes are not followed: %1").arg(error), 15000);
    });
    createMenus();
    m_runActions = new RunActions(this);
    m_shownRun->setDrivenHere([this](qint64 id) { return m_runActions->isDriving(id); });
    resize(QSize(1600, 1000).boundedTo(screen()->availableGeometry().size()));
    restoreSettings();
    reloadRuns();
}

MainWindow::~MainWindow() = default;

QWidget *MainWindow::createSandboxBanner()
{
    // Without bubblewrap, candidates' code would run with rlimits only: said on every screen, not
    // only in a log (each result is also flagged "unsandboxed").
    auto *banner = new QLabel(tr("No sandbox: bubblewrap (bwrap) is missing or cannot create namespaces here, so "
                                 "candidates' code runs with resource limits and a seccomp filter only. Install "
                                 "bubblewrap, or set evaluation.sandbox: required to refuse such runs."));
    banner->setObjectName(QStringLiteral("sandboxBanner"));
    banner->setWordWrap(true);
    banner->setStyleSheet(
        QStringLiteral("QLabel#sandboxBanner { background: #b3261e; color: white; padding: 6px; font-weight: bold; }"));
    banner->hide();
    QTimer::singleShot(0, banner, [banner] { banner->setVisible(!ProcessRunner::sandboxAvailable()); });
    return banner;
}

QString MainWindow::exampleRunResource() { return QStringLiteral(":/autocomp/example_run.jsonl"); }

RunStore *MainWindow::store() const { return m_session->store(); }
qint64 MainWindow::currentRunId() const { return m_shownRun->id(); }
MenuInsightsView *MainWindow::menuInsights() const { return m_runPage->menuInsights(); }
DiffView *MainWindow::diffView() const { return m_runPage->diffView(); }
BeamGraphView *MainWindow::beamGraph() const { return m_runPage->beamGraph(); }
LatencyChart *MainWindow::latencyChart() const { return m_runPage->latencyChart(); }
CandidateFilterProxy *MainWindow::candidateSearch() const { return m_runPage->candidateProxy(); }
QTableView *MainWindow::runsView() const { return m_runsPane->view(); }
QTreeView *MainWindow::candidateTree() const { return m_runPage->candidateTree(); }
CandidateInspector *MainWindow::inspector() const { return m_runPage->inspector(); }
int MainWindow::requestsInFlight() const { return m_shownRun->requestsInFlight(); }
int MainWindow::evaluationsInFlight() const { return m_shownRun->evaluationsInFlight(); }
StoreFollower *MainWindow::storeFollower() const { return m_session->follower(); }
void MainWindow::selectCandidate(qint64 candidateId) { m_runPage->selectCandidate(candidateId); }
void MainWindow::setDiffInCenter(bool center) { m_runPage->setDiffInCenter(center); }
bool MainWindow::diffInCenter() const { return m_runPage->diffInCenter(); }
DiffView *MainWindow::openDiffWindow() { return m_runPage->openDiffWindow(); }
bool MainWindow::showView(const QString &name) { return m_runPage->showView(name); }
QDialog *MainWindow::showStopReasonDetails() { return m_runPage->showStopReasonDetails(); }

void MainWindow::searchCandidates(const QString &text, const QString &status, const QString &strategy)
{
    m_runPage->searchCandidates(text, status, strategy);
}

void MainWindow::createFileMenu()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *open = file->addAction(tr("&Open Store…"), this, &MainWindow::openStoreDialog);
    open->setShortcut(QKeySequence::Open);
    QAction *import = file->addAction(tr("&Import Run Archive…"), this, &MainWindow::importArchiveDialog);
    import->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
    file->addAction(tr("Import A&utocomp Output Directory…"), this, &MainWindow::importAutocompDirDialog)
        ->setObjectName(QStringLiteral("importAutocompDirAction"));
    file->addAction(tr("Import &KernelBench Problems…"), this, &MainWindow::importKernelBenchDialog)
        ->setObjectName(QStringLiteral("importKernelBenchAction"));
    file->addSeparator();
    file->addMenu(m_resultActions->exportMenu());
    file->addAction(m_resultActions->saveBestKernelAction());
    file->addAction(m_resultActions->saveKernelAction());
    file->addSeparator();
    m_deleteRun = file->addAction(tr("&Delete Run…"), this, &MainWindow::deleteRunClicked);
    m_deleteRun->setObjectName(QStringLiteral("deleteRunAction"));
    // Delete acts in the runs table only; elsewhere (the filter, an editor) the key keeps its meaning.
    m_deleteRun->setShortcut(QKeySequence::Delete);
    m_deleteRun->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_deleteRun->setEnabled(false);
    m_runsPane->view()->addAction(m_deleteRun);
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);
}

void MainWindow::createMenus()
{
    createFileMenu();
    QMenu *view = menuBar()->addMenu(tr("&View"));
    QAction *reload = view->addAction(tr("&Reload Runs"), this, &MainWindow::reloadRuns);
    reload->setShortcut(QKeySequence::Refresh);
    QAction *filter = view->addAction(tr("&Filter Runs"), m_runsPane, &RunsPane::focusFilter);
    filter->setShortcut(QKeySequence::Find);
    QAction *search = view->addAction(tr("&Search Candidates"), m_runPage, &RunPage::focusSearch);
    search->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F));
    view->addAction(tr("C&ompare Runs…"), this, [this] { openRunsComparison(selectedRunIds()); })
        ->setObjectName(QStringLiteral("compareRunsAction"));
    view->addAction(tr("Parameter S&tudies…"), this, [this] { openStudyView(); })
        ->setObjectName(QStringLiteral("studiesAction"));
    view->addAction(tr("&Diff in the Middle"), this, [this] { setDiffInCenter(!diffInCenter()); })
        ->setObjectName(QStringLiteral("diffInCenterAction"));
    view->addSeparator();
    view->addAction(tr("&Expand Tree"), candidateTree(), &QTreeView::expandAll);
    view->addAction(tr("&Collapse Tree"), candidateTree(), &QTreeView::collapseAll);

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("Open the &Example Run"), this, &MainWindow::loadExampleRunClicked)
        ->setEnabled(QFile::exists(exampleRunResource()));
    help->addSeparator();
    QAction *about = help->addAction(tr("&About Autocomp Workbench"), this, &MainWindow::showAbout);
    about->setMenuRole(QAction::AboutRole);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::reloadRuns()
{
    const qint64 previous = currentRunId();
    m_runsPane->reload();
    m_session->refresh();
    updateStoreViews();
    if (m_runsPane->model()->rowCount() == 0) {
        m_shownRun->clear();
        return;
    }
    if (!m_layoutRestored && !m_runsPaneFitted && isVisible()) {
        m_runsPaneFitted = true;
        fitRunsPane();
    }
    if (!(previous != 0 && selectRun(previous)))
        m_runsPane->selectFirst();
}

void MainWindow::runsContextMenu(const QPoint &pos)
{
    QTableView *runs = m_runsPane->view();
    const QModelIndex index = runs->indexAt(pos);
    if (!index.isValid())
        return;
    // A row of a multiple selection keeps the selection (Compare ticks them all); another row is selected alone.
    if (runs->selectionModel()->isRowSelected(index.row(), index.parent()))
        runs->selectionModel()->setCurrentIndex(index, QItemSelectionModel::NoUpdate);
    else
        runs->setCurrentIndex(index);
    QMenu menu;
    const QList<qint64> selected = selectedRunIds();
    menu.addAction(selected.size() > 1 ? tr("Compare the %1 Selected Runs…").arg(selected.size())
                                       : tr("Compare with Other Runs…"),
                   this, [this, selected] { openRunsComparison(selected); })
        ->setObjectName(QStringLiteral("compareSelectedRunsAction"));
    menu.addSeparator();
    menu.addMenu(m_resultActions->exportMenu());
    menu.addAction(m_resultActions->saveBestKernelAction());
    menu.addSeparator();
    menu.addAction(m_deleteRun);
    menu.exec(runs->viewport()->mapToGlobal(pos));
}

void MainWindow::deleteRunClicked()
{
    const RunInfo run = m_shownRun->run();
    if (run.id == 0)
        return;
    const QString title = tr("Delete Run");
    if (m_runActions->isDriving(run.id)) {
        QMessageBox::information(
            this, title, tr("Run %1 is running in this window and cannot be deleted. Stop it first.").arg(run.id));
        return;
    }
    const int candidates = m_shownRun->candidateCount();
    const QString question =
        tr("Delete run %1 (%2 on %3, %n candidate(s))?", nullptr, candidates).arg(run.id).arg(run.problem, run.target)
        + QStringLiteral("\n\n")
        + tr("Its candidates, evaluations and LLM calls are removed from the store. This cannot be undone.");
    if (QMessageBox::question(this, title, question, QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel)
        != QMessageBox::Yes)
        return;

    // The row that takes the deleted one's place is selected next, else the one above it.
    qint64 next = m_runsPane->runBesideCurrent(1);
    if (next == 0)
        next = m_runsPane->runBesideCurrent(-1);
    if (!store()->deleteRun(run.id)) {
        QMessageBox::warning(this, title, tr("Run %1 could not be deleted:\n%2").arg(run.id).arg(store()->lastError()));
        return;
    }
    m_shownRun->forget();
    m_runsPane->model()->removeRun(run.id);
    statusBar()->showMessage(tr("Run %1 deleted").arg(run.id), 5000);
    if (next == 0 || !selectRun(next))
        reloadRuns();
    updateStoreViews();
}

void MainWindow::updateStoreViews()
{
    m_runPage->setStorePath(store()->path());
    const QString path = QDir::toNativeSeparators(store()->path());
    m_storeLabel->setText(tr("Store: %1 · %n run(s)", nullptr, m_runsPane->model()->rowCount()).arg(path));
    m_welcomePage->setStorePath(path);
    setWindowTitle(tr("Autocomp Workbench — %1").arg(QFileInfo(store()->path()).fileName()));
    m_stack->setCurrentWidget(m_runsPane->model()->rowCount() == 0 ? static_cast<QWidget *>(m_welcomePage)
                                                                   : static_cast<QWidget *>(m_runsSplitter));
}

bool MainWindow::selectRun(qint64 runId)
{
    if (!m_runsPane->select(runId))
        return false;
    if (currentRunId() != runId)
        showRun(runId);
    return true;
}

void MainWindow::showRun(qint64 runId)
{
    if (!m_shownRun->show(runId)) {
        statusBar()->showMessage(tr("Run %1 is no longer in the store").arg(runId), 5000);
        return;
    }
    m_runsPane->model()->upsertRun(m_shownRun->run());
    m_session->follow(runId, m_shownRun->loadedAt(), m_runPage->candidateModel()->lastCandidateId());
    m_runPage->runShown();
    Q_EMIT currentRunChanged(runId);
}

void MainWindow::updateRunRow(const RunInfo &run)
{
    m_runsPane->model()->upsertRun(run);
    if (run.id == 0 || run.id != currentRunId())
        return;
    m_shownRun->updateRun(run);
    m_runPage->updateRunHeader();
    m_deleteRun->setEnabled(true);
}

QList<qint64> MainWindow::selectedRunIds() const { return m_runsPane->selectedRunIds(currentRunId()); }

void MainWindow::closableByKeys(QWidget *window)
{
    // A detached window closes with Esc or Ctrl+W (the platform's Close key), as its own shortcuts, so they act
    // wherever the focus is inside it and never reach the main window. Esc leaves a find bar first (CodeView).
    // Each key once: where the platform's Close is Ctrl+W, two shortcuts on it would be ambiguous and neither fires.
    QList<QKeySequence> keys = QKeySequence::keyBindings(QKeySequence::Close);
    for (const QKeySequence &more : {QKeySequence(Qt::Key_Escape), QKeySequence(Qt::CTRL | Qt::Key_W)})
        if (!keys.contains(more))
            keys << more;
    for (const QKeySequence &key : std::as_const(keys)) {
        auto *shortcut = new QShortcut(key, window);
        shortcut->setContext(Qt::WindowShortcut);
        connect(shortcut, &QShortcut::activated, window, &QWidget::close);
    }
}

RunsComparisonView *MainWindow::openRunsComparison(const QList<qint64> &runIds)
{
    auto *view = new RunsComparisonView;
    view->setAttribute(Qt::WA_DeleteOnClose);
    view->setParent(this, Qt::Window);
    view->setWindowTitle(tr("Compare Runs"));
    view->setStore(store());
    view->setComparedRuns(runIds);
    view->resize(QSize(1200, 760).boundedTo(screen()->availableGeometry().size()));
    closableByKeys(view);
    view->show();
    return view;
}

StudyView *MainWindow::openStudyView(const QString &study)
{
    auto *view = new StudyView;
    view->setAttribute(Qt::WA_DeleteOnClose);
    view->setParent(this, Qt::Window);
    view->setWindowTitle(tr("Parameter Studies"));
    view->setStore(store());
    view->setStudy(study);
    connect(view, &StudyView::runActivated, this, [this](qint64 runId) {
        selectRun(runId);
        raise();
        activateWindow();
    });
    view->resize(QSize(1200, 760).boundedTo(screen()->availableGeometry().size()));
    closableByKeys(view);
    view->show();
    return view;
}

bool MainWindow::openStore(const QString &path, QString *error)
{
    std::unique_ptr<RunStore> store = RunStore::open(path, error);
    if (!store)
        return false;
    setStore(std::move(store));
    return true;
}

void MainWindow::setStore(std::unique_ptr<RunStore> store)
{
    m_session->replace(std::move(store));
    m_shownRun->forget();
    m_runsPane->clearFilter();
    reloadRuns();
}

std::optional<RunLease> MainWindow::driverOf(qint64 runId) const { return m_session->driverOf(runId); }

QString MainWindow::driverText(qint64 runId) const
{
    if (m_runActions && m_runActions->isDriving(runId))
        return tr("this workbench");
    const std::optional<RunLease> lease = driverOf(runId);
    if (!lease)
        return {};
    const QString who = lease->isThisProcess() ? tr("this workbench")
        : lease->onThisHost()                  ? tr("pid %1 on this host").arg(lease->pid)
                                               : tr("pid %1 on %2").arg(lease->pid).arg(lease->host);
    return lease->alive ? who : tr("gone (%1)").arg(who);
}

void MainWindow::applyStoreChanges(const StoreChanges &changes)
{
    // The shown run took its part of `changes` already (ShownRun follows the session itself); here: the runs list.
    bool newRuns = false;
    for (const RunSnapshot &snapshot : changes.runs) {
        const qint64 id = snapshot.run.id;
        newRuns = newRuns || m_runsPane->model()->rowOfRun(id) < 0;
        m_runsPane->model()->upsertRun(snapshot.run);
        m_runsPane->updateLiveState(id);
    }
    bool shownRemoved = false;
    for (qint64 id : changes.removedRuns) {
        m_runsPane->model()->removeRun(id);
        shownRemoved = shownRemoved || id == currentRunId();
    }
    if (shownRemoved) {
        m_shownRun->forget();
        reloadRuns();
    } else if (newRuns || !changes.removedRuns.isEmpty()) {
        updateStoreViews();
        // New runs: the list grows with its rows (up to a third of the window) until the user sizes it.
        if (newRuns && !m_layoutRestored && !m_userSizedRuns && isVisible()) {
            m_runsPaneFitted = true;
            fitRunsPane();
        }
        // A store that had no run shown shows the first run that appears in it.
        if (currentRunId() == 0 && m_runsPane->model()->rowCount() > 0)
            m_runsPane->selectFirst();
    }
    Q_EMIT storeChanged(changes);
}

qint64 MainWindow::importRunArchive(const QString &path, QString *error)
{
    const qint64 runId = QFileInfo(path).isDir() ? importAutocompDir(*store(), path, error)
                                                 : importRunJsonl(*store(), path, error);
    if (runId == 0)
        return 0;
    reloadRuns();
    selectRun(runId);
    return runId;
}

qint64 MainWindow::importExampleRun(QString *error)
{
    // The importer reads a file path; resources are copied out first.
    QTemporaryDir dir;
    const QString copy = dir.filePath(QStringLiteral("example_run.jsonl"));
    if (!dir.isValid() || !QFile::copy(exampleRunResource(), copy)) {
        *error = tr("The example run could not be unpacked to a temporary directory.");
        return 0;
    }
    return importRunArchive(copy, error);
}

void MainWindow::loadExampleRunClicked()
{
    QString error;
    if (importExampleRun(&error) == 0)
        QMessageBox::warning(this, tr("Example Run"), tr("The example run could not be imported:\n%1").arg(error));
}

QFuture<QString> MainWindow::openStoreInBackground(const QString &path)
{
    // The window then opens the checked store without checking it again.
    statusBar()->showMessage(tr("Checking %1…").arg(QDir::toNativeSeparators(path)));
    return m_session->checkInBackground(path, [this, path](QString error) {
        if (error.isEmpty()) {
            std::unique_ptr<RunStore> store = RunStore::open(path, {.create = false, .check = false}, &error);
            if (store) {
                statusBar()->clearMessage();
                setStore(std::move(store));
                return;
            }
        }
        statusBar()->clearMessage();
        QMessageBox::warning(this, tr("Open Run Store"), error);
    });
}

void MainWindow::openStoreDialog()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Run Store"),
                                                      QFileInfo(store()->path()).absolutePath(),
                                                      tr("Run stores (*.sqlite *.db);;All files (*)"));
    if (!path.isEmpty())
        openStoreInBackground(path);
}

QFuture<std::pair<qint64, QString>> MainWindow::importInBackground(const QString &path, const QString &title)
{
    statusBar()->showMessage(tr("Importing %1…").arg(QDir::toNativeSeparators(path)));
    return m_session->importInBackground(path, [this, title](qint64 runId, const QString &error, bool sameStore) {
        if (runId == 0) {
            statusBar()->clearMessage();
            QMessageBox::warning(this, title, error);
            return;
        }
        if (!sameStore)
            return; // another store was opened meanwhile
        statusBar()->showMessage(tr("Run %1 imported").arg(runId), 5000);
        reloadRuns();
        selectRun(runId);
    });
}

void MainWindow::importArchiveDialog()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Import Run Archive"), QDir::homePath(),
                                                      tr("Run archives (*.jsonl);;All files (*)"));
    if (!path.isEmpty())
        importInBackground(path, tr("Import Run Archive"));
}

void MainWindow::importAutocompDirDialog()
{
    const QString path = QFileDialog::getExistingDirectory(this, tr("Import Autocomp Output Directory"),
                                                           QDir::homePath());
    if (!path.isEmpty())
        importInBackground(path, tr("Import Autocomp Output Directory"));
}

void MainWindow::importKernelBenchDialog()
{
    const QString path = QFileDialog::getExistingDirectory(
        this, tr("Import KernelBench Problems (a folder such as KernelBench/level1)"), QDir::homePath());
    if (!path.isEmpty())
        importKernelBenchInBackground({path});
}

QFuture<QString> MainWindow::importKernelBenchInBackground(const QStringList &paths)
{
    // Each file's reference is run at several sizes to pick its scale: seconds to minutes.
    statusBar()->showMessage(
        tr("Importing KernelBench problems from %1… (each reference is measured to pick its size scale)")
            .arg(QDir::toNativeSeparators(paths.join(QLatin1String(", ")))));
    return m_session->importKernelBenchInBackground(paths, [this](const QString &report) {
        statusBar()->showMessage(tr("KernelBench import finished"), 5000);
        // Not exec(): the window goes on updating while the report is open.
        auto *box = new QMessageBox(QMessageBox::Information, tr("Import KernelBench Problems"), report,
                                    QMessageBox::Ok, this);
        box->setObjectName(QStringLiteral("kernelBenchImportReport"));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About Autocomp Workbench"),
                       tr("<h3>Autocomp Workbench %1</h3>"
                          "<p>Optimizes kernels for accelerators, GPUs and CPUs with an LLM-driven beam search, "
                          "after the Autocomp paper (Hong, Bhatia, Cheung, Shao: <i>Autocomp: A Powerful and Portable "
                          "Code Optimizer for Tensor Accelerators</i>, arXiv 2505.18574).</p>"
                          "<p>Store: %2</p>")
                           .arg(QCoreApplication::applicationVersion().toHtmlEscaped(),
                                QDir::toNativeSeparators(store()->path()).toHtmlEscaped()));
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    saveSettings();
    m_runActions->shutdown();
    QMainWindow::closeEvent(event);
}

void MainWindow::saveSettings() const
{
    QSettings settings;
    settings.setValue(SettingsKeys::version(), SettingsKeys::Version);
    settings.setValue(SettingsKeys::geometry(), saveGeometry());
    settings.setValue(SettingsKeys::state(), saveState(SettingsKeys::Version));
    settings.setValue(SettingsKeys::splitter(), m_runPage->splitterState());
    settings.setValue(SettingsKeys::runsSplitter(), m_runsSplitter->saveState());
    settings.setValue(SettingsKeys::runsHeader(), m_runsPane->view()->horizontalHeader()->saveState());
    settings.setValue(SettingsKeys::treeHeader(), candidateTree()->header()->saveState());
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    if (settings.value(SettingsKeys::version()).toInt() != SettingsKeys::Version)
        return;
    restoreGeometry(settings.value(SettingsKeys::geometry()).toByteArray());
    restoreState(settings.value(SettingsKeys::state()).toByteArray(), SettingsKeys::Version);
    m_runPage->splitter()->restoreState(settings.value(SettingsKeys::splitter()).toByteArray());
    m_runsSplitter->restoreState(settings.value(SettingsKeys::runsSplitter()).toByteArray());
    m_runsPane->view()->horizontalHeader()->restoreState(settings.value(SettingsKeys::runsHeader()).toByteArray());
    m_runPage->setTreeHeaderRestored(
        candidateTree()->header()->restoreState(settings.value(SettingsKeys::treeHeader()).toByteArray()));
    m_runsPane->view()->setColumnHidden(RunListModel::DriverColumn, !m_runsPane->model()->hasDrivers());
    m_layoutRestored = true;
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    // Sized once the window has its real size and fonts (a hidden splitter rescales what it was given).
    if (!m_layoutRestored && !m_runsPaneFitted && m_runsPane->model()->rowCount() > 0) {
        m_runsPaneFitted = true;
        QTimer::singleShot(0, this, &MainWindow::fitRunsPane);
    }
}

void MainWindow::fitRunsPane()
{
    // The list as high as its rows, at most a third of the window: the graph and the inspector are where the
    // work is. The rest of the height goes to them.
    const int rowsHeight = m_runsPane->fitToRows();
    const QList<int> sizes = m_runsSplitter->sizes();
    int total = 0;
    for (int size : sizes)
        total += size;
    if (total <= 0)
        total = 800;
    const int limit = std::max(height(), total) / 3;
    const int wanted = std::min(rowsHeight, limit);
    m_runsSplitter->setSizes({wanted, std::max(1, total - wanted)});
}

} // namespace autocomp
