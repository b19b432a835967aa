#include "frame/main_window.h"
#include "catalog/kernelbench_import.h"

#include "charts/beam_graph_view.h"
#include "models/candidate_filter_proxy.h"
#include "panels/candidate_inspector.h"
#include "models/candidate_tree_model.h"
#include "editors/code_highlighter.h"
#include "editors/diff_view.h"
#include "eval/process_runner.h"
#include "charts/latency_chart.h"
#include "panels/menu_insights_view.h"
#include "agents/prompt_builder.h"
#include "catalog/repository.h"
#include "live/result_actions.h"
#include "live/run_actions.h"
#include "live/run_controller.h"
#include "models/run_list_model.h"
#include "charts/runs_comparison_view.h"
#include "panels/study_view.h"
#include "common/status_palette.h"
#include "exchange/autocomp_dir.h"
#include "exchange/run_archive.h"
#include "store/run_store.h"
#include "store/store_follower.h"
#include "common/value_format.h"

#include <QAction>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QTextDocument>
#include <QTimer>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QShortcut>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSet>
#include <QSettings>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
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

QString capitalized(const QString &text) { return text.isEmpty() ? text : text.at(0).toUpper() + text.mid(1); }

} // namespace

MainWindow::MainWindow(std::unique_ptr<RunStore> store, QWidget *parent)
    : QMainWindow(parent)
    , m_store(std::move(store))
    , m_runModel(new RunListModel(this))
    , m_runProxy(new QSortFilterProxyModel(this))
    , m_candidateModel(new CandidateTreeModel(this))
    , m_candidateProxy(new CandidateFilterProxy(this))
{
    Q_ASSERT(m_store);
    initAutocompResources();
    setObjectName(QStringLiteral("mainWindow"));

    m_runProxy->setSourceModel(m_runModel);
    m_runProxy->setSortRole(RunListModel::SortRole);
    m_runProxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_runProxy->setFilterKeyColumn(-1);

    m_candidateProxy->setSourceModel(m_candidateModel);
    m_candidateProxy->setSortRole(CandidateTreeModel::SortRole);
    connect(m_candidateProxy, &CandidateFilterProxy::searchChanged, this, &MainWindow::searchChanged);

    // The runs list across the top, as high as its rows (at most a third of the window); below it the middle
    // (graph, tree, chart, menu) and the inspector share the whole width.
    m_runsSplitter = new QSplitter(Qt::Vertical);
    m_runsSplitter->setObjectName(QStringLiteral("runsSplitter"));
    m_runsSplitter->setChildrenCollapsible(false);
    connect(m_runsSplitter, &QSplitter::splitterMoved, this, [this] { m_userSizedRuns = true; });
    m_splitter = new QSplitter(Qt::Horizontal);
    m_splitter->setObjectName(QStringLiteral("mainSplitter"));
    m_splitter->setChildrenCollapsible(false);
    m_runsSplitter->addWidget(createRunsPane());
    m_runsSplitter->addWidget(m_splitter);
    m_runsSplitter->setStretchFactor(0, 0); // a taller window gives the graph and the inspector the height
    m_runsSplitter->setStretchFactor(1, 1);
    m_splitter->addWidget(createCandidatesPane());
    m_inspector = new CandidateInspector;
    m_diffView = new DiffView;
    m_diffView->setLookup([this](qint64 id) { return m_store->candidate(id); });
    m_inspector->addTab(m_diffView, tr("Diff"));
    connect(m_diffView, &DiffView::moveRequested, this, [this] {
        setDiffInCenter(!diffInCenter());
        m_diffView->setFocus();
    });
    connect(m_diffView, &DiffView::openInWindowRequested, this, &MainWindow::openDiffWindow);
    setDiffInCenter(false);
    m_splitter->addWidget(m_inspector);
    m_splitter->setStretchFactor(0, 5);
    m_splitter->setStretchFactor(1, 4);
    m_splitter->setSizes({700, 560});
    // The splitter keeps the sizes it has whatever the pages of its tabs would like: a page with a wide minimum
    // (a chart, a table) must not move the tab bar when it comes to the front.
    for (QWidget *pane : {m_splitter->widget(0), static_cast<QWidget *>(m_inspector)})
        pane->setMinimumWidth(240);

    m_stack = new QStackedWidget;
    m_stack->addWidget(createWelcomePanel());
    m_stack->addWidget(m_runsSplitter);
    // Without bubblewrap, candidates' code would run with rlimits only: said on every screen, not
    // only in a log (each result is also flagged "unsandboxed").
    auto *central = new QWidget;
    auto *centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    auto *sandboxBanner = new QLabel(
        tr("No sandbox: bubblewrap (bwrap) is missing or cannot create namespaces here, so "
           "candidates' code runs with resource limits and a seccomp filter only. Install "
           "bubblewrap, or set evaluation.sandbox: required to refuse such runs."));
    sandboxBanner->setObjectName(QStringLiteral("sandboxBanner"));
    sandboxBanner->setWordWrap(true);
    sandboxBanner->setStyleSheet(
        QStringLiteral("QLabel#sandboxBanner { background: #b3261e; color: white; padding: 6px; font-weight: bold; }"));
    sandboxBanner->hide();
    centralLayout->addWidget(sandboxBanner);
    centralLayout->addWidget(m_stack, 1);
    setCentralWidget(central);
    QTimer::singleShot(0, sandboxBanner,
                       [sandboxBanner] { sandboxBanner->setVisible(!ProcessRunner::sandboxAvailable()); });

    m_storeLabel = new QLabel;
    m_storeLabel->setObjectName(QStringLiteral("storePathLabel"));
    m_storeLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A normal (not permanent) widget: a temporary message (a request sent, a run's end, the keychain notice)
    // takes its place while shown, instead of being squeezed to nothing beside it.
    statusBar()->addWidget(m_storeLabel, 1);

    m_resultActions = new ResultActions(this);
    createMenus();
    m_runActions = new RunActions(this);
    resize(QSize(1600, 1000).boundedTo(screen()->availableGeometry().size()));
    restoreSettings();
    reloadRuns();
    startFollowing();
}

MainWindow::~MainWindow() = default;

QString MainWindow::exampleRunResource() { return QStringLiteral(":/autocomp/example_run.jsonl"); }

QWidget *MainWindow::createWelcomePanel()
{
    m_welcomePanel = new QWidget;
    m_welcomePanel->setObjectName(QStringLiteral("welcomePanel"));
    auto *outer = new QHBoxLayout(m_welcomePanel);
    auto *column = new QWidget;
    column->setMaximumWidth(760);
    auto *layout = new QVBoxLayout(column);
    outer->addStretch(1);
    outer->addWidget(column, 4);
    outer->addStretch(1);

    auto *text = new QLabel;
    text->setObjectName(QStringLiteral("welcomeText"));
    text->setWordWrap(true);
    text->setTextFormat(Qt::RichText);
    text->setTextInteractionFlags(Qt::TextBrowserInteraction);
    text->setText(
        tr("<h1>Autocomp Workbench</h1>"
           "<p>Optimizes a kernel with an LLM-driven beam search: the LLM plans one optimization at a time, "
           "writes the code, and every candidate is compiled, tested and benchmarked on the target.</p>"
           "<h3>Your first run</h3>"
           "<p>Press <b>New Run…</b> and pick a <b>target</b> (the machine the kernel runs on: <code>cpu</code> "
           "works everywhere) and a <b>problem</b>. Then pick or add a <b>model</b>: the picker shows whether "
           "its API key is stored in the keychain, comes from the environment (<code>OPENAI_API_KEY</code>, "
           "<code>ANTHROPIC_API_KEY</code>, …) or is missing, and a local vLLM or Ollama server needs none. "
           "Keys are stored in Settings. Press <b>Start Run</b>: the candidates appear here as they are "
           "written and measured.</p>"));
    layout->addWidget(text);

    auto *newRun = new QPushButton(tr("New Run…"));
    newRun->setObjectName(QStringLiteral("welcomeNewRunButton"));
    newRun->setDefault(true);
    newRun->setToolTip(tr("Pick a target, a problem and a model, and start a search (Ctrl+N)"));
    connect(newRun, &QPushButton::clicked, this, [this] {
        if (m_runActions)
            m_runActions->startAction()->trigger();
    });
    auto *firstRow = new QHBoxLayout;
    firstRow->addWidget(newRun);
    firstRow->addStretch(1);
    layout->addLayout(firstRow);

    auto *around = new QLabel(tr("<h3>Or look around first</h3>"
                                 "<p>The example run shows what a finished run looks like. Runs started with "
                                 "<code>autocomp run config.yaml</code> appear here too.</p>"));
    around->setObjectName(QStringLiteral("welcomeAroundText"));
    around->setWordWrap(true);
    around->setTextFormat(Qt::RichText);
    layout->addWidget(around);

    auto *buttons = new QHBoxLayout;
    m_loadExampleButton = new QPushButton(tr("Open the example run"));
    m_loadExampleButton->setObjectName(QStringLiteral("loadExampleButton"));
    if (QFile::exists(exampleRunResource())) {
        m_loadExampleButton->setToolTip(tr("Imports a run recorded against the local test LLM server into this store"));
    } else {
        m_loadExampleButton->setEnabled(false);
        m_loadExampleButton->setToolTip(
            tr("This build has no bundled example run (%1 is missing)").arg(exampleRunResource()));
    }
    connect(m_loadExampleButton, &QPushButton::clicked, this, &MainWindow::loadExampleRunClicked);
    auto *importButton = new QPushButton(tr("Import Run Archive…"));
    importButton->setObjectName(QStringLiteral("welcomeImportButton"));
    connect(importButton, &QPushButton::clicked, this, &MainWindow::importArchiveDialog);
    auto *openButton = new QPushButton(tr("Open Store…"));
    openButton->setObjectName(QStringLiteral("welcomeOpenStoreButton"));
    connect(openButton, &QPushButton::clicked, this, &MainWindow::openStoreDialog);
    buttons->addWidget(m_loadExampleButton);
    buttons->addWidget(importButton);
    buttons->addWidget(openButton);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    if (!m_loadExampleButton->isEnabled()) {
        auto *missing = new QLabel(m_loadExampleButton->toolTip());
        missing->setObjectName(QStringLiteral("exampleMissingLabel"));
        missing->setWordWrap(true);
        layout->addWidget(missing);
    }

    m_welcomeStoreLabel = new QLabel;
    m_welcomeStoreLabel->setObjectName(QStringLiteral("welcomeStoreLabel"));
    m_welcomeStoreLabel->setWordWrap(true);
    m_welcomeStoreLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addSpacing(12);
    layout->addWidget(m_welcomeStoreLabel);
    layout->addStretch(1);
    return m_welcomePanel;
}

QWidget *MainWindow::createRunsPane()
{
    auto *pane = new QWidget;
    auto *layout = new QVBoxLayout(pane);
    layout->setContentsMargins(0, 0, 0, 0);

    m_runFilter = new QLineEdit;
    m_runFilter->setObjectName(QStringLiteral("runFilter"));
    m_runFilter->setPlaceholderText(tr("Filter runs (Ctrl+F)"));
    m_runFilter->setClearButtonEnabled(true);
    connect(m_runFilter, &QLineEdit::textChanged, m_runProxy, &QSortFilterProxyModel::setFilterFixedString);
    layout->addWidget(m_runFilter);

    m_runsView = new QTableView;
    m_runsView->setObjectName(QStringLiteral("runsView"));
    m_runsView->setModel(m_runProxy);
    m_runsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    // Several runs can be selected (Ctrl, Shift): Compare Runs ticks them; the current one is shown.
    m_runsView->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_runsView->setSortingEnabled(true);
    m_runsView->sortByColumn(RunListModel::IdColumn, Qt::DescendingOrder);
    m_runsView->verticalHeader()->hide();
    m_runsView->setWordWrap(false);
    m_runsView->horizontalHeader()->setStretchLastSection(true);
    m_runsView->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_runsView->horizontalHeader()->setMinimumSectionSize(36);
    m_runsView->setColumnWidth(RunListModel::IdColumn, 52);
    m_runsView->setColumnWidth(RunListModel::TargetColumn, 54);
    m_runsView->setColumnWidth(RunListModel::ProblemColumn, 96);
    m_runsView->setColumnWidth(RunListModel::StateColumn, 66);
    m_runsView->setColumnWidth(RunListModel::SpeedupColumn, 64);
    m_runsView->setColumnWidth(RunListModel::DollarsColumn, 56);
    m_runsView->verticalHeader()->setDefaultSectionSize(m_runsView->fontMetrics().height() + 8);
    // "Driven by" only while some run has a driver: empty, it would only take room from the others.
    m_runsView->setColumnHidden(RunListModel::DriverColumn, !m_runModel->hasDrivers());
    connect(m_runModel, &RunListModel::hasDriversChanged, this, [this](bool shown) {
        m_runsView->setColumnHidden(RunListModel::DriverColumn, !shown);
        if (shown) {
            m_runsView->resizeColumnToContents(RunListModel::DriverColumn);
            m_runsView->setColumnWidth(RunListModel::DriverColumn,
                                       m_runsView->columnWidth(RunListModel::DriverColumn) + 6);
        }
        // Panes this window sized itself are sized again for the column; sizes the user chose stay.
        if (m_runsPaneFitted && !m_layoutRestored && !m_userSizedRuns)
            fitRunsPane();
    });
    connect(m_runsView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                if (current.isValid())
                    showRun(current.data(RunListModel::RunIdRole).toLongLong());
            });
    m_runsView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_runsView, &QWidget::customContextMenuRequested, this, &MainWindow::runsContextMenu);
    layout->addWidget(m_runsView);
    return pane;
}

QWidget *MainWindow::createSearchBar()
{
    auto *bar = new QWidget;
    auto *layout = new QHBoxLayout(bar);
    layout->setContentsMargins(2, 0, 2, 0);
    m_searchText = new QLineEdit;
    m_searchText->setObjectName(QStringLiteral("candidateSearch"));
    m_searchText->setPlaceholderText(tr("Search plans and code (Ctrl+Shift+F)"));
    m_searchText->setClearButtonEnabled(true);
    m_searchStatus = new QComboBox;
    m_searchStatus->setObjectName(QStringLiteral("candidateStatusFilter"));
    m_searchStatus->addItem(tr("Any status"), QString());
    // The words every view and the CLI use (statusWord), never the stored enum names.
    for (const char *word : {"correct", "incorrect", "compile error", "crash", "timeout", "rejected", "duplicate",
                             "error (machine)", "cancelled", "no hardware", "no code", "planning", "coding", "pending",
                             "compiling", "testing", "benchmarking"})
        m_searchStatus->addItem(tr(word), QString::fromLatin1(word));
    m_searchStrategy = new QComboBox;
    m_searchStrategy->setObjectName(QStringLiteral("candidateStrategyFilter"));
    m_searchStrategy->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_searchStrategy->setMinimumContentsLength(10);
    m_searchStatus->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_searchStatus->setMinimumContentsLength(8);
    m_searchStrategy->addItem(tr("Any strategy"), QString());
    m_searchCount = new QLabel;
    m_searchCount->setObjectName(QStringLiteral("candidateSearchCount"));
    layout->addWidget(m_searchText, 3);
    layout->addWidget(m_searchStatus);
    layout->addWidget(m_searchStrategy, 2);
    layout->addWidget(m_searchCount);
    connect(m_searchText, &QLineEdit::textChanged, m_candidateProxy, &CandidateFilterProxy::setSearchText);
    connect(m_searchStatus, &QComboBox::currentIndexChanged, this,
            [this] { m_candidateProxy->setStatusFilter(m_searchStatus->currentData().toString()); });
    connect(m_searchStrategy, &QComboBox::currentIndexChanged, this,
            [this] { m_candidateProxy->setStrategyFilter(m_searchStrategy->currentData().toString()); });
    return bar;
}

void MainWindow::fillStrategyFilter(const QList<Candidate> &candidates)
{
    const QString current = m_searchStrategy->currentData().toString();
    QStringList strategies;
    for (const Candidate &c : candidates)
        if (!c.menuItem.isEmpty() && !strategies.contains(c.menuItem))
            strategies << c.menuItem;
    strategies.sort(Qt::CaseInsensitive);
    const QSignalBlocker blocker(m_searchStrategy);
    while (m_searchStrategy->count() > 1)
        m_searchStrategy->removeItem(1);
    for (const QString &strategy : std::as_const(strategies)) {
        m_searchStrategy->addItem(PromptBuilder::shortName(strategy, 40), strategy);
        m_searchStrategy->setItemData(m_searchStrategy->count() - 1, strategy, Qt::ToolTipRole);
    }
    const int index = m_searchStrategy->findData(current);
    m_searchStrategy->setCurrentIndex(std::max(0, index));
    if (index < 0)
        m_candidateProxy->setStrategyFilter(QString());
}

void MainWindow::searchCandidates(const QString &text, const QString &status, const QString &strategy)
{
    m_searchText->setText(text);
    m_searchStatus->setCurrentIndex(std::max(0, m_searchStatus->findData(status)));
    if (!strategy.isEmpty() && m_searchStrategy->findData(strategy) < 0)
        m_searchStrategy->addItem(PromptBuilder::shortName(strategy, 40), strategy);
    m_searchStrategy->setCurrentIndex(std::max(0, m_searchStrategy->findData(strategy)));
}

void MainWindow::searchChanged()
{
    if (!m_candidateProxy->isSearching()) {
        m_searchCount->clear();
        m_beamGraph->setSearchMatches(std::nullopt);
        return;
    }
    const QList<qint64> ids = m_candidateProxy->matchingIds();
    m_searchCount->setText(tr("%1 of %2").arg(ids.size()).arg(m_candidateModel->candidateCount()));
    m_beamGraph->setSearchMatches(QSet<qint64>(ids.begin(), ids.end()));
    m_candidateTree->expandAll();
}

QWidget *MainWindow::createCandidatesPane()
{
    auto *pane = new QWidget;
    auto *layout = new QVBoxLayout(pane);
    layout->setContentsMargins(0, 0, 0, 0);

    m_headerTimer = new QTimer(this);
    m_headerTimer->setSingleShot(true);
    m_headerTimer->setInterval(HeaderUpdateMs);
    connect(m_headerTimer, &QTimer::timeout, this, &MainWindow::updateRunHeader);
    m_runHeader = new QLabel;
    m_runHeader->setObjectName(QStringLiteral("runHeader"));
    m_runHeader->setWordWrap(true);
    m_runHeader->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse
                                         | Qt::LinksAccessibleByKeyboard);
    m_runHeader->setContentsMargins(4, 4, 4, 4);
    connect(m_runHeader, &QLabel::linkActivated, this, [this](const QString &link) {
        if (link == QLatin1String("#stop-reason"))
            showStopReasonDetails();
        else if (link == QLatin1String("#save-best") && m_run.bestCandidateId != 0)
            m_resultActions->saveKernelWithDialog(m_run.bestCandidateId);
    });
    layout->addWidget(m_runHeader);

    m_labelBanner = new QLabel;
    m_labelBanner->setObjectName(QStringLiteral("runLabelBanner"));
    m_labelBanner->setWordWrap(true);
    m_labelBanner->setTextFormat(Qt::PlainText);
    m_labelBanner->hide();
    // An amber note that reads on light and dark palettes alike.
    const bool dark = StatusPalette::isDark(QApplication::palette());
    m_labelBanner->setStyleSheet(
        QStringLiteral("QLabel#runLabelBanner { background: %1; color: %2; border: 1px solid %3;"
                       " border-radius: 4px; padding: 6px; }")
            .arg(dark ? QStringLiteral("#4a3b12") : QStringLiteral("#fff4cc"),
                 dark ? QStringLiteral("#ffe9a8") : QStringLiteral("#4d3800"),
                 dark ? QStringLiteral("#8a6d1f") : QStringLiteral("#e0c060")));
    layout->addWidget(m_labelBanner);
    layout->addWidget(createSearchBar());

    m_candidateTree = new QTreeView;
    m_candidateTree->setObjectName(QStringLiteral("candidateTree"));
    m_candidateTree->setModel(m_candidateProxy);
    m_candidateTree->setUniformRowHeights(true);
    m_candidateTree->setIndentation(14);
    m_candidateTree->setAlternatingRowColors(true);
    m_candidateTree->setSortingEnabled(true);
    m_candidateTree->sortByColumn(CandidateTreeModel::IdColumn, Qt::AscendingOrder);
    m_candidateTree->header()->setStretchLastSection(false);
    m_candidateTree->header()->setSectionResizeMode(QHeaderView::Interactive);
    connect(m_candidateTree->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                if (current.isValid())
                    showCandidate(current.data(CandidateTreeModel::CandidateIdRole).toLongLong());
            });

    m_beamGraph = new BeamGraphView;
    connect(m_beamGraph, &BeamGraphView::candidateSelected, this, &MainWindow::selectCandidate);
    connect(m_beamGraph, &BeamGraphView::candidateActivated, this, [this](qint64 id) {
        selectCandidate(id);
        m_inspector->setFocus(Qt::OtherFocusReason);
    });
    m_latencyChart = new LatencyChart;
    connect(m_latencyChart, &LatencyChart::candidateSelected, this, &MainWindow::selectCandidate);
    m_centerTabs = new QTabWidget;
    m_centerTabs->setObjectName(QStringLiteral("centerTabs"));
    m_centerTabs->setDocumentMode(true);
    m_centerTabs->setElideMode(Qt::ElideRight); // a narrow middle elides its tab titles; each has its tooltip
    m_centerTabs->addTab(m_beamGraph, tr("Graph"));
    m_centerTabs->addTab(m_candidateTree, tr("Tree"));
    m_centerTabs->addTab(m_latencyChart, tr("Chart"));
    m_centerTabs->setTabToolTip(0, tr("The search as a graph: an iteration per column, the beam and the best path"));
    m_centerTabs->setTabToolTip(1, tr("The candidates as a tree, sortable by column"));
    m_centerTabs->setTabToolTip(2, tr("Each candidate's score by iteration"));
    m_insights = new MenuInsightsView;
    connect(m_insights, &MenuInsightsView::candidateActivated, this, [this](qint64 runId, qint64 candidateId) {
        if (runId != m_run.id && !selectRun(runId))
            return;
        selectCandidate(candidateId);
        showView(QStringLiteral("graph"));
    });
    // In a scroll area: its table, chart and notes want more height than a laptop leaves the middle, and a page's
    // minimum would otherwise push the window past the screen.
    auto *insightsScroll = new QScrollArea;
    insightsScroll->setObjectName(QStringLiteral("menuInsightsScroll"));
    insightsScroll->setWidgetResizable(true);
    insightsScroll->setFrameShape(QFrame::NoFrame);
    insightsScroll->setWidget(m_insights);
    m_insightsScroll = insightsScroll;
    m_centerTabs->addTab(m_insightsScroll, tr("Menu"));
    connect(m_insights, &MenuInsightsView::strategyActivated, this, [this](const QString &strategy) {
        searchCandidates(QString(), QString(), strategy);
        showView(QStringLiteral("tree"));
    });
    m_centerTabs->setTabToolTip(m_centerTabs->indexOf(m_insightsScroll),
                                tr("What the run taught about its optimization menu"));
    layout->addWidget(m_centerTabs, 1);
    return pane;
}

void MainWindow::createMenus()
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
    m_runsView->addAction(m_deleteRun);
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);

    QMenu *view = menuBar()->addMenu(tr("&View"));
    QAction *reload = view->addAction(tr("&Reload Runs"), this, &MainWindow::reloadRuns);
    reload->setShortcut(QKeySequence::Refresh);
    QAction *filter = view->addAction(tr("&Filter Runs"), this, [this] {
        m_runFilter->setFocus(Qt::ShortcutFocusReason);
        m_runFilter->selectAll();
    });
    filter->setShortcut(QKeySequence::Find);
    QAction *search = view->addAction(tr("&Search Candidates"), this, [this] {
        m_searchText->setFocus(Qt::ShortcutFocusReason);
        m_searchText->selectAll();
    });
    search->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F));
    view->addAction(tr("C&ompare Runs…"), this, [this] { openRunsComparison(selectedRunIds()); })
        ->setObjectName(QStringLiteral("compareRunsAction"));
    view->addAction(tr("Parameter S&tudies…"), this, [this] { openStudyView(); })
        ->setObjectName(QStringLiteral("studiesAction"));
    view->addAction(tr("&Diff in the Middle"), this, [this] { setDiffInCenter(!diffInCenter()); })
        ->setObjectName(QStringLiteral("diffInCenterAction"));
    view->addSeparator();
    view->addAction(tr("&Expand Tree"), m_candidateTree, &QTreeView::expandAll);
    view->addAction(tr("&Collapse Tree"), m_candidateTree, &QTreeView::collapseAll);

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
    const qint64 previous = m_run.id;
    const QList<RunInfo> runs = m_store->runs();
    m_runModel->setRuns(runs);
    // A run recorded as running whose process is gone (killed) says so, and can be resumed.
    QHash<qint64, QString> shown;
    for (const RunInfo &run : runs)
        if (run.state == RunState::Running && !(m_runActions && m_runActions->isDriving(run.id))
            && m_store->isInterrupted(run))
            shown.insert(run.id, m_store->displayState(run));
    m_runModel->setDisplayStates(shown);
    for (auto it = m_live.cbegin(); it != m_live.cend(); ++it)
        updateLiveState(it.key());
    if (m_follower)
        m_follower->refresh();
    updateStoreViews();
    if (m_runModel->rowCount() == 0) {
        m_run = {};
        m_candidateBacklog.clear();
        m_candidateModel->clear();
        m_inspector->clear();
        m_beamGraph->clear();
        m_latencyChart->clear();
        m_insights->clear();
        m_diffView->clear();
        updateRunHeader();
        return;
    }
    if (!m_layoutRestored && !m_runsPaneFitted && isVisible()) {
        m_runsPaneFitted = true;
        fitRunsPane();
    }
    if (!(previous != 0 && selectRun(previous)))
        m_runsView->setCurrentIndex(m_runProxy->index(0, 0));
}

void MainWindow::runsContextMenu(const QPoint &pos)
{
    const QModelIndex index = m_runsView->indexAt(pos);
    if (!index.isValid())
        return;
    // A row of a multiple selection keeps the selection (Compare ticks them all); another row is selected alone.
    if (m_runsView->selectionModel()->isRowSelected(index.row(), index.parent()))
        m_runsView->selectionModel()->setCurrentIndex(index, QItemSelectionModel::NoUpdate);
    else
        m_runsView->setCurrentIndex(index);
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
    menu.exec(m_runsView->viewport()->mapToGlobal(pos));
}

void MainWindow::deleteRunClicked()
{
    const RunInfo run = m_run;
    if (run.id == 0)
        return;
    const QString title = tr("Delete Run");
    if (m_runActions->isDriving(run.id)) {
        QMessageBox::information(
            this, title, tr("Run %1 is running in this window and cannot be deleted. Stop it first.").arg(run.id));
        return;
    }
    const int candidates = m_candidateModel->candidateCount();
    const QString question =
        tr("Delete run %1 (%2 on %3, %n candidate(s))?", nullptr, candidates).arg(run.id).arg(run.problem, run.target)
        + QStringLiteral("\n\n")
        + tr("Its candidates, evaluations and LLM calls are removed from the store. This cannot be undone.");
    if (QMessageBox::question(this, title, question, QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel)
        != QMessageBox::Yes)
        return;

    // The row that takes the deleted one's place is selected next, else the one above it.
    const int row = m_runsView->currentIndex().row();
    qint64 next = 0;
    for (int candidateRow : {row + 1, row - 1})
        if (const QModelIndex index = m_runProxy->index(candidateRow, 0); index.isValid()) {
            next = index.data(RunListModel::RunIdRole).toLongLong();
            break;
        }
    if (!m_store->deleteRun(run.id)) {
        QMessageBox::warning(this, title, tr("Run %1 could not be deleted:\n%2").arg(run.id).arg(m_store->lastError()));
        return;
    }
    m_run = {};
    m_runModel->removeRun(run.id);
    statusBar()->showMessage(tr("Run %1 deleted").arg(run.id), 5000);
    if (next == 0 || !selectRun(next))
        reloadRuns();
    updateStoreViews();
}

void MainWindow::updateStoreViews()
{
    if (m_insights)
        m_insights->setStorePath(m_store->path());
    const QString path = QDir::toNativeSeparators(m_store->path());
    m_storeLabel->setText(tr("Store: %1 · %n run(s)", nullptr, m_runModel->rowCount()).arg(path));
    m_welcomeStoreLabel->setText(tr("The run store %1 has no runs yet.").arg(path));
    setWindowTitle(tr("Autocomp Workbench — %1").arg(QFileInfo(m_store->path()).fileName()));
    m_stack->setCurrentWidget(m_runModel->rowCount() == 0 ? m_welcomePanel : static_cast<QWidget *>(m_runsSplitter));
}

bool MainWindow::selectRun(qint64 runId)
{
    const int row = m_runModel->rowOfRun(runId);
    if (row < 0)
        return false;
    const QModelIndex index = m_runProxy->mapFromSource(m_runModel->index(row, 0));
    if (!index.isValid()) {
        if (m_runFilter->text().isEmpty())
            return false;
        m_runFilter->clear(); // the filter hid the run
        return selectRun(runId);
    }
    m_runsView->setCurrentIndex(index);
    if (m_run.id != runId)
        showRun(runId);
    return true;
}

void MainWindow::showRun(qint64 runId)
{
    const std::optional<RunInfo> run = m_store->run(runId);
    if (!run) {
        statusBar()->showMessage(tr("Run %1 is no longer in the store").arg(runId), 5000);
        return;
    }
    m_run = *run;
    m_runLanguage = languageOfTarget(m_run.target);
    m_runModel->upsertRun(m_run);
    m_inspector->clear();
    m_candidateModel->setMetric(m_run.metric);
    m_shownCandidate = 0;
    m_candidateBacklog.clear(); // of the run shown before
    m_requestsInFlight = 0;
    m_evaluationsInFlight = 0;
    // Rows written from here on reach the views through the follower (this read may miss them).
    m_runLoadedAt = QDateTime::currentDateTimeUtc();
    const QList<Candidate> candidates = settled(m_store->candidates(runId));
    m_candidateModel->setCandidates(candidates);
    m_beamGraph->setCandidates(candidates, m_run.bestCandidateId);
    m_latencyChart->setCandidates(candidates, m_run.metric, m_run.baselineScore);
    m_diffView->setRunCandidates(candidates);
    m_diffView->setLanguage(m_runLanguage);
    m_insights->setRun(runId, m_run.target);
    fillStrategyFilter(candidates);
    searchChanged();
    m_candidateTree->expandAll();
    // Columns fitted to the run, unless the widths the user left last time were restored.
    if (!m_treeHeaderRestored) {
        for (int column = 0; column < CandidateTreeModel::ColumnCount; ++column)
            if (column != CandidateTreeModel::MenuItemColumn)
                m_candidateTree->resizeColumnToContents(column);
        m_candidateTree->setColumnWidth(CandidateTreeModel::MenuItemColumn, 190);
    }
    updateRunHeader();
    if (m_follower)
        m_follower->follow(runId, m_runLoadedAt, m_candidateModel->lastCandidateId());

    // Start on the best candidate so the result of the run is one glance away.
    QModelIndex start = m_candidateModel->indexOfCandidate(m_run.bestCandidateId);
    if (!start.isValid() && m_candidateModel->rowCount() > 0)
        start = m_candidateModel->index(0, 0);
    if (start.isValid()) {
        const QModelIndex proxyIndex = m_candidateProxy->mapFromSource(start);
        m_candidateTree->setCurrentIndex(proxyIndex);
        m_candidateTree->scrollTo(proxyIndex);
    }
    Q_EMIT currentRunChanged(runId);
}

void MainWindow::scheduleRunHeader()
{
    // The header is word-wrapped rich text: each new text lays out the pane again. A followed run commits many
    // times a second; the header catches up a few times a second.
    if (!m_headerTimer->isActive())
        m_headerTimer->start();
}

void MainWindow::updateRunHeader()
{
    m_headerTimer->stop();
    m_deleteRun->setEnabled(m_run.id != 0);
    if (m_run.id == 0) {
        m_runHeader->clear();
        m_labelBanner->hide();
        return;
    }
    QString header = tr("<b>Run %1</b> · %2 on %3 · agent %4 · %5")
                         .arg(m_run.id)
                         .arg(m_run.problem.toHtmlEscaped(), m_run.target.toHtmlEscaped(), m_run.agent.toHtmlEscaped(),
                              m_runActions && m_runActions->isDriving(m_run.id) ? toString(m_run.state)
                                                                                : m_store->displayState(m_run));
    if (const QString driver = driverText(m_run.id);
        !driver.isEmpty() && (m_run.state == RunState::Running || m_run.state == RunState::Paused))
        header += tr(" · driven by %1").arg(driver.toHtmlEscaped());
    header += QStringLiteral("<br>")
        + tr("%n candidate(s), iteration %1", nullptr, m_candidateModel->candidateCount()).arg(m_run.iteration);
    if (m_run.bestScore > 0 && m_run.baselineScore > 0) {
        header += tr(" · best %1 vs %2 (%3)")
                      .arg(ValueFormat::score(m_run.bestScore, m_run.metric),
                           ValueFormat::score(m_run.baselineScore, m_run.metric),
                           ValueFormat::speedup(m_run.speedup()));
        if (m_run.bestCandidateId != 0)
            header += QStringLiteral(" <a href=\"#save-best\">%1</a>").arg(tr("Save kernel…"));
        // A best whose code repeats an earlier candidate's (an imported or older run): its figure is another
        // measurement of that code, not the effect of a change, and the header says so.
        if (const Candidate *best = m_candidateModel->candidate(
                m_candidateModel->indexOfCandidate(m_run.bestCandidateId))) {
            if (const qint64 original = best->metrics.value(QStringLiteral("duplicate_of")).toInteger(); original > 0)
                header += tr(" · <span style=\"color: %3;\">#%1 has the code of #%2: its figure is another "
                             "measurement, not a "
                             "change</span>")
                              .arg(best->id)
                              .arg(original)
                              .arg(StatusPalette::isDark(palette()) ? QStringLiteral("#ff8fb0")
                                                                    : QStringLiteral("#9c1b4a"));
        }
    }
    header += tr(" · %1 in %2 LLM calls").arg(ValueFormat::dollars(m_run.usd)).arg(m_run.llmCalls);
    if (!m_run.stopReason.isEmpty()) {
        // A reason with a log (a start that could not be evaluated) shows its first line; the log is one click away.
        bool more = false;
        header += QStringLiteral("<br>")
            + tr("Reason: %1").arg(ValueFormat::summary(m_run.stopReason, &more).toHtmlEscaped());
        if (more)
            header += QStringLiteral(" <a href=\"#stop-reason\">%1</a>").arg(tr("Details…"));
    }
    if (m_runHeader->text() != header) {
        m_runHeader->setText(header);
        // Wrapped, never cut; the whole of it also as a tooltip (a long label or stop reason).
        QTextDocument plain;
        plain.setHtml(header);
        m_runHeader->setToolTip(plain.toPlainText());
    }

    m_labelBanner->setVisible(!m_run.label.isEmpty());
    m_labelBanner->setText(capitalized(m_run.label));
    m_labelBanner->setToolTip(
        tr("This run carries a label; its results may not come from a real LLM or real hardware."));
}

QDialog *MainWindow::showStopReasonDetails()
{
    if (m_run.id == 0 || m_run.stopReason.isEmpty())
        return nullptr;
    auto *dialog = new QDialog(this);
    dialog->setObjectName(QStringLiteral("stopReasonDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Run %1 %2").arg(m_run.id).arg(toString(m_run.state)));
    auto *summary = new QLabel(ValueFormat::summary(m_run.stopReason));
    summary->setWordWrap(true);
    summary->setTextFormat(Qt::PlainText);
    summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *log = new QPlainTextEdit(m_run.stopReason);
    log->setObjectName(QStringLiteral("stopReasonLog"));
    log->setReadOnly(true);
    log->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    log->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    auto *layout = new QVBoxLayout(dialog);
    layout->addWidget(summary);
    layout->addWidget(log, 1);
    layout->addWidget(buttons);
    dialog->resize(900, 520);
    dialog->show();
    return dialog;
}

void MainWindow::showCandidate(qint64 candidateId)
{
    m_shownCandidate = candidateId;
    // The copy the tree and the graph show, so the inspector never states another status or beam membership; the
    // store's for a candidate they do not hold.
    const auto known = [this](qint64 id) -> std::optional<Candidate> {
        if (id == 0)
            return std::nullopt;
        if (const Candidate *c = m_candidateModel->candidate(m_candidateModel->indexOfCandidate(id)))
            return *c;
        return m_store->candidate(id);
    };
    const std::optional<Candidate> candidate = known(candidateId);
    if (!candidate) {
        m_inspector->clear();
        return;
    }
    // The score's context: the speedups over the run's root and the candidate's parent.
    const std::optional<Candidate> root = known(m_candidateModel->rootCandidateId());
    m_inspector->setCandidate(*candidate, m_store->llmCallsForCandidate(candidateId),
                              m_store->evaluationSteps(candidateId), m_run.metric, m_runLanguage, root,
                              known(candidate->parentId));
    m_diffView->setCandidate(*candidate);
    m_beamGraph->selectCandidate(candidateId);
    m_latencyChart->selectCandidate(candidateId);
    Q_EMIT currentCandidateChanged(candidateId);
}

void MainWindow::selectCandidate(qint64 candidateId)
{
    // The tree's current row drives showCandidate(), which updates the graph, the chart and the inspector.
    const QModelIndex source = m_candidateModel->indexOfCandidate(candidateId);
    QModelIndex index = m_candidateProxy->mapFromSource(source);
    if (source.isValid() && !index.isValid()) {
        searchCandidates(QString()); // the search hid it
        index = m_candidateProxy->mapFromSource(source);
    }
    if (!index.isValid())
        return;
    if (m_candidateTree->currentIndex().siblingAtColumn(0) == index) {
        showCandidate(candidateId);
        return;
    }
    m_candidateTree->setCurrentIndex(index);
    m_candidateTree->scrollTo(index);
}

bool MainWindow::diffInCenter() const { return m_centerTabs->indexOf(m_diffView) >= 0; }

void MainWindow::setDiffInCenter(bool center)
{
    QTabWidget *from = center ? static_cast<QTabWidget *>(m_inspector) : m_centerTabs;
    QTabWidget *to = center ? m_centerTabs : static_cast<QTabWidget *>(m_inspector);
    if (const int at = from->indexOf(m_diffView); at >= 0)
        from->removeTab(at);
    if (to->indexOf(m_diffView) < 0)
        to->addTab(m_diffView, tr("Diff"));
    to->setCurrentWidget(m_diffView);
    // Widened, the middle takes the room: the inspector keeps a narrow strip (its minimum) and the diff gets the
    // rest; moved back, the sizes from before come back.
    if (center && !m_sizesBeforeWiden) {
        m_sizesBeforeWiden = m_splitter->sizes();
        const int total = m_splitter->width() > 0 ? m_splitter->width() : 1260;
        const int inspector = std::max(m_inspector->minimumWidth(), total / 5);
        m_splitter->setSizes({total - inspector, inspector});
    } else if (!center && m_sizesBeforeWiden) {
        m_splitter->setSizes(*std::exchange(m_sizesBeforeWiden, std::nullopt));
    }
    m_diffView->setMoveButton(center ? tr("To Inspector") : tr("Widen"),
                              center ? tr("Moves the diff back beside the candidate inspector")
                                     : tr("Moves the diff to the middle area, where it has room"));
}

QList<qint64> MainWindow::selectedRunIds() const
{
    QList<qint64> ids;
    if (m_run.id != 0)
        ids << m_run.id;
    const QModelIndexList rows = m_runsView->selectionModel()->selectedRows();
    QList<QModelIndex> sorted(rows.cbegin(), rows.cend());
    std::sort(sorted.begin(), sorted.end(),
              [](const QModelIndex &a, const QModelIndex &b) { return a.row() < b.row(); });
    for (const QModelIndex &row : std::as_const(sorted))
        if (const qint64 id = row.data(RunListModel::RunIdRole).toLongLong(); id != 0 && !ids.contains(id))
            ids << id;
    return ids;
}

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
    view->setStore(m_store.get());
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
    view->setStore(m_store.get());
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

DiffView *MainWindow::openDiffWindow()
{
    auto *window = new DiffView;
    window->setAttribute(Qt::WA_DeleteOnClose);
    window->setWindowFlag(Qt::Window);
    window->setObjectName(QStringLiteral("diffWindow"));
    window->setParent(this, Qt::Window);
    window->setOpenInWindowVisible(false);
    window->setLookup([this](qint64 id) { return m_store->candidate(id); });
    window->setRunCandidates(m_store->candidates(m_run.id));
    window->setLanguage(m_runLanguage);
    if (const auto candidate = m_store->candidate(m_diffView->candidateId())) {
        window->setCandidate(*candidate);
        window->setCompareWith(m_diffView->compareWithId());
        window->setWindowTitle(tr("Diff of #%1 — run %2").arg(candidate->id).arg(m_run.id));
    }
    window->setMode(m_diffView->mode());
    window->setDiffLayout(m_diffView->diffLayout());
    window->resize(size() * 0.8);
    closableByKeys(window);
    window->show();
    return window;
}

bool MainWindow::showView(const QString &name)
{
    const QString key = name.toLower();
    const QList<std::pair<QString, QWidget *>> center = {{QStringLiteral("graph"), m_beamGraph},
                                                         {QStringLiteral("tree"), m_candidateTree},
                                                         {QStringLiteral("chart"), m_latencyChart},
                                                         {QStringLiteral("menu"), m_insightsScroll}};
    for (const auto &[viewName, widget] : center)
        if (key == viewName) {
            m_centerTabs->setCurrentWidget(widget);
            return true;
        }
    const QStringList inspectorTabs = {QStringLiteral("plan"), QStringLiteral("code"), QStringLiteral("evaluation"),
                                       QStringLiteral("prompts"), QStringLiteral("llm")};
    if (const qsizetype tab = inspectorTabs.indexOf(key); tab >= 0) {
        m_inspector->setCurrentIndex(int(tab));
        return true;
    }
    if (key == QLatin1String("diff")) {
        (diffInCenter() ? m_centerTabs : static_cast<QTabWidget *>(m_inspector))->setCurrentWidget(m_diffView);
        return true;
    }
    return false;
}

QString MainWindow::languageOfTarget(const QString &target)
{
    QString error;
    if (const std::optional<Target> known = Repository().target(target, &error))
        return known->language;
    return CodeHighlighter::languageForTarget(target);
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
    m_store = std::move(store);
    m_run = {};
    m_live.clear();
    m_runFilter->clear();
    reloadRuns();
    startFollowing();
}

void MainWindow::startFollowing()
{
    delete m_follower;
    m_follower = new StoreFollower(m_store->path(), this);
    connect(m_follower, &StoreFollower::changed, this, &MainWindow::applyStoreChanges);
    connect(m_follower, &StoreFollower::failed, this, [this](const QString &error) {
        statusBar()->showMessage(tr("Runs of other processes are not followed: %1").arg(error), 15000);
    });
    if (m_run.id != 0)
        m_follower->follow(m_run.id, m_runLoadedAt, m_candidateModel->lastCandidateId());
}

std::optional<RunLease> MainWindow::driverOf(qint64 runId) const
{
    const auto it = m_live.constFind(runId);
    return it == m_live.constEnd() ? std::nullopt : it->lease;
}

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

void MainWindow::updateLiveState(qint64 runId)
{
    const auto it = m_live.constFind(runId);
    if (it == m_live.constEnd())
        return;
    const bool driving = m_runActions && m_runActions->isDriving(runId);
    const QString state = !driving && it->interrupted() ? QStringLiteral("interrupted") : QString();
    QString driver = driverText(runId);
    // A lease left by a process that ended cleanly is not news once the run has ended.
    if (!driving && it->lease && !it->lease->alive && it->run.state != RunState::Running)
        driver.clear();
    const QString tip = it->lease && !driver.isEmpty() ? tr("Driven by %1 (%2)").arg(driver, it->lease->describe())
                                                       : QString();
    // The runs pane is narrow: the column says who in a few characters, the tooltip says the rest.
    QString compact;
    if (driving || (it->lease && it->lease->isThisProcess()))
        compact = tr("this workbench");
    else if (it->lease && !driver.isEmpty())
        compact = it->lease->onThisHost() ? tr("pid %1").arg(it->lease->pid)
                                          : tr("pid %1 @ %2").arg(it->lease->pid).arg(it->lease->host);
    if (!compact.isEmpty() && it->lease && !it->lease->alive && !driving)
        compact = tr("gone: %1").arg(compact);
    m_runModel->setLiveState(runId, state, driver.isEmpty() ? QString() : compact, tip);
}

void MainWindow::applyStoreChanges(const StoreChanges &changes)
{
    bool newRuns = false;
    for (const RunSnapshot &snapshot : changes.runs) {
        const qint64 id = snapshot.run.id;
        newRuns = newRuns || m_runModel->rowOfRun(id) < 0;
        m_live.insert(id, snapshot);
        m_runModel->upsertRun(snapshot.run);
        updateLiveState(id);
        if (id == m_run.id && !m_runActions->isDriving(id)) {
            m_run = snapshot.run;
            scheduleRunHeader();
            settleInFlight();
        }
    }
    bool shownRemoved = false;
    for (qint64 id : changes.removedRuns) {
        m_live.remove(id);
        m_runModel->removeRun(id);
        shownRemoved = shownRemoved || id == m_run.id;
    }
    if (shownRemoved) {
        m_run = {};
        reloadRuns();
    } else if (newRuns || !changes.removedRuns.isEmpty()) {
        updateStoreViews();
        // New runs: the list grows with its rows (up to a third of the window) until the user sizes it.
        if (newRuns && !m_layoutRestored && !m_userSizedRuns && isVisible()) {
            m_runsPaneFitted = true;
            fitRunsPane();
        }
        // A store that had no run shown shows the first run that appears in it.
        if (m_run.id == 0 && m_runModel->rowCount() > 0)
            m_runsView->setCurrentIndex(m_runProxy->index(0, 0));
    }
    if (changes.followedRunId != 0 && changes.followedRunId == m_run.id && !m_runActions->isDriving(m_run.id)) {
        m_requestsInFlight = changes.requestsInFlight;
        m_evaluationsInFlight = changes.evaluationsInFlight;
        if (!changes.candidates.isEmpty()) {
            // Applied in slices, one per turn of the event loop: a big burst (a long-unfollowed run catching
            // up) never holds the window for long.
            const bool idle = m_candidateBacklog.isEmpty();
            for (const Candidate &c : changes.candidates) {
                // The follower sends again the rows written just before the run was read: those shown as they are are
                // not news (while a backlog waits, a row is compared with nothing: an older version may be queued).
                const Candidate *shown = idle ? m_candidateModel->candidate(m_candidateModel->indexOfCandidate(c.id))
                                              : nullptr;
                if (!(shown && shown->sameContent(c)))
                    m_candidateBacklog << c;
            }
            if (idle && !m_candidateBacklog.isEmpty())
                QMetaObject::invokeMethod(this, &MainWindow::applyCandidateBacklog, Qt::QueuedConnection);
        }
        // The inspector shows the selected candidate's calls and evaluation steps: read again when they changed.
        const bool reshown = std::any_of(changes.candidates.cbegin(), changes.candidates.cend(),
                                         [this](const Candidate &c) { return c.id == m_shownCandidate; });
        if (m_shownCandidate != 0 && !reshown) {
            const Candidate *shown = m_candidateModel->candidate(m_candidateModel->indexOfCandidate(m_shownCandidate));
            if (changes.touchedCandidates.contains(m_shownCandidate)
                || (shown && changes.touchedCalls.contains(shown->planCallId)))
                showCandidate(m_shownCandidate);
        }
    }
    Q_EMIT storeChanged(changes);
}

void MainWindow::applyCandidateBacklog()
{
    if (m_candidateBacklog.isEmpty())
        return;
    const qsizetype n = std::min<qsizetype>(m_candidateBacklog.size(), CandidatesPerTurn);
    applyCandidates(m_candidateBacklog.first(n));
    m_candidateBacklog.remove(0, n);
    scheduleRunHeader();
    if (!m_candidateBacklog.isEmpty())
        QMetaObject::invokeMethod(this, &MainWindow::applyCandidateBacklog, Qt::QueuedConnection);
}

void MainWindow::applyBeam(const QList<qint64> &beam)
{
    QList<Candidate> changed;
    const auto update = [&](qint64 id, bool inBeam) {
        if (const Candidate *c = m_candidateModel->candidate(m_candidateModel->indexOfCandidate(id));
            c && c->inBeam != inBeam) {
            changed << *c;
            changed.last().inBeam = inBeam;
        }
    };
    for (qint64 id : m_candidateModel->beamIds())
        if (!beam.contains(id))
            update(id, false);
    for (qint64 id : beam)
        update(id, true);
    if (!changed.isEmpty())
        applyCandidates(changed);
}

QList<Candidate> MainWindow::settled(QList<Candidate> candidates) const
{
    if (m_run.state == RunState::Running || m_run.state == RunState::Paused)
        return candidates;
    for (Candidate &c : candidates)
        if (!isFinal(c.status) && c.status != CandidateStatus::Cancelled)
            c.status = CandidateStatus::Cancelled;
    return candidates;
}

void MainWindow::settleInFlight()
{
    if (m_run.state == RunState::Running || m_run.state == RunState::Paused)
        return;
    QList<Candidate> changed;
    for (qint64 id : m_candidateModel->inFlightIds())
        if (const Candidate *shown = m_candidateModel->candidate(m_candidateModel->indexOfCandidate(id)))
            changed << m_store->candidate(id).value_or(*shown); // the store may hold its verdict by now
    if (!changed.isEmpty())
        applyCandidates(changed);
}

void MainWindow::applyCandidates(const QList<Candidate> &unsettled)
{
    const QList<Candidate> candidates = settled(unsettled);
    const int before = m_candidateModel->candidateCount();
    m_candidateModel->upsertCandidates(candidates);
    m_beamGraph->upsertCandidates(candidates);
    m_latencyChart->upsertCandidates(candidates);
    for (const Candidate &c : candidates)
        m_diffView->upsertCandidate(c);
    if (m_candidateModel->candidateCount() != before) {
        // New children show up expanded under their parents.
        for (const Candidate &c : candidates) {
            const QModelIndex parent = m_candidateModel->indexOfCandidate(c.parentId);
            if (parent.isValid())
                m_candidateTree->expand(m_candidateProxy->mapFromSource(parent));
        }
    }
    for (const Candidate &c : candidates)
        if (c.id == m_shownCandidate) {
            showCandidate(c.id);
            break;
        }
}

qint64 MainWindow::importRunArchive(const QString &path, QString *error)
{
    const qint64 runId = QFileInfo(path).isDir() ? importAutocompDir(*m_store, path, error)
                                                 : importRunJsonl(*m_store, path, error);
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
    // Checking a big store (SQLite's quick_check, a schema upgrade) takes seconds: it runs on the thread
    // pool through a connection of its own, which cannot cross threads; the window then opens the checked
    // store without checking it again.
    statusBar()->showMessage(tr("Checking %1…").arg(QDir::toNativeSeparators(path)));
    auto *watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher, path] {
        watcher->deleteLater();
        QString error = watcher->result();
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
    const QFuture<QString> future = QtConcurrent::run([path] {
        QString error;
        return RunStore::open(path, {.create = false}, &error) ? QString() : error;
    });
    watcher->setFuture(future);
    return future;
}

void MainWindow::openStoreDialog()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Run Store"),
                                                      QFileInfo(m_store->path()).absolutePath(),
                                                      tr("Run stores (*.sqlite *.db);;All files (*)"));
    if (!path.isEmpty())
        openStoreInBackground(path);
}

QFuture<std::pair<qint64, QString>> MainWindow::importInBackground(const QString &path, const QString &title)
{
    // Parsing and writing a large archive is CPU and disk work: it runs on the thread pool through a
    // connection of its own to the same store (SQLite in WAL mode; the import is one transaction), and
    // the window shows the run once it is committed.
    const QString storePath = m_store->path();
    statusBar()->showMessage(tr("Importing %1…").arg(QDir::toNativeSeparators(path)));
    auto *watcher = new QFutureWatcher<std::pair<qint64, QString>>(this);
    connect(watcher, &QFutureWatcher<std::pair<qint64, QString>>::finished, this, [this, watcher, title, storePath] {
        watcher->deleteLater();
        const auto [runId, error] = watcher->result();
        if (runId == 0) {
            statusBar()->clearMessage();
            QMessageBox::warning(this, title, error);
            return;
        }
        if (m_store->path() != storePath)
            return; // another store was opened meanwhile
        statusBar()->showMessage(tr("Run %1 imported").arg(runId), 5000);
        reloadRuns();
        selectRun(runId);
    });
    const QFuture<std::pair<qint64, QString>> future = QtConcurrent::run([storePath, path] {
        QString error;
        std::unique_ptr<RunStore> store = RunStore::open(storePath, &error);
        if (!store)
            return std::make_pair(qint64(0), error);
        const qint64 runId = QFileInfo(path).isDir() ? importAutocompDir(*store, path, &error)
                                                     : importRunJsonl(*store, path, &error);
        return std::make_pair(runId, error);
    });
    watcher->setFuture(future);
    return future;
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
    // Each file's reference is run at several sizes to pick its scale: seconds to minutes, off the
    // GUI thread.
    statusBar()->showMessage(
        tr("Importing KernelBench problems from %1… (each reference is measured to pick its size scale)")
            .arg(QDir::toNativeSeparators(paths.join(QLatin1String(", ")))));
    auto *watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher] {
        watcher->deleteLater();
        statusBar()->showMessage(tr("KernelBench import finished"), 5000);
        // Not exec(): the window goes on updating while the report is open.
        auto *box = new QMessageBox(QMessageBox::Information, tr("Import KernelBench Problems"), watcher->result(),
                                    QMessageBox::Ok, this);
        box->setObjectName(QStringLiteral("kernelBenchImportReport"));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
    const QFuture<QString> future = QtConcurrent::run([paths] {
        QStringList notFound;
        const QStringList files = kernelBenchFiles(paths, &notFound);
        if (files.isEmpty())
            return tr("No KernelBench problem files (class Model, get_inputs, get_init_inputs) under %1.")
                .arg(paths.join(QLatin1String(", ")));
        QString error;
        const QList<KernelBenchImported> imported = importKernelBench(Repository(), files, {}, {}, &error);
        QStringList made, skipped;
        for (const KernelBenchImported &item : imported) {
            if (item.error.isEmpty())
                made << tr("%1 (scale %2)").arg(item.id).arg(item.scale, 0, 'g', 4);
            else
                skipped << item.error;
        }
        QString text = made.isEmpty() ? tr("No problem was imported.")
                                      : tr("Imported for target kernelbench:\n%1").arg(made.join(u'\n'));
        if (!skipped.isEmpty())
            text += tr("\n\nSkipped:\n%1").arg(skipped.join(u'\n'));
        if (!error.isEmpty())
            text += QStringLiteral("\n\n") + error;
        return text;
    });
    watcher->setFuture(future);
    return future;
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
                                QDir::toNativeSeparators(m_store->path()).toHtmlEscaped()));
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
    // Widened, the sizes to keep are those from before (the next start shows the diff beside the candidate).
    if (m_sizesBeforeWiden) {
        QSplitter copy(Qt::Horizontal);
        for (int i = 0; i < m_splitter->count(); ++i)
            copy.addWidget(new QWidget);
        copy.setSizes(*m_sizesBeforeWiden);
        settings.setValue(SettingsKeys::splitter(), copy.saveState());
    } else {
        settings.setValue(SettingsKeys::splitter(), m_splitter->saveState());
    }
    settings.setValue(SettingsKeys::runsSplitter(), m_runsSplitter->saveState());
    settings.setValue(SettingsKeys::runsHeader(), m_runsView->horizontalHeader()->saveState());
    settings.setValue(SettingsKeys::treeHeader(), m_candidateTree->header()->saveState());
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    if (settings.value(SettingsKeys::version()).toInt() != SettingsKeys::Version)
        return;
    restoreGeometry(settings.value(SettingsKeys::geometry()).toByteArray());
    restoreState(settings.value(SettingsKeys::state()).toByteArray(), SettingsKeys::Version);
    m_splitter->restoreState(settings.value(SettingsKeys::splitter()).toByteArray());
    m_runsSplitter->restoreState(settings.value(SettingsKeys::runsSplitter()).toByteArray());
    m_runsView->horizontalHeader()->restoreState(settings.value(SettingsKeys::runsHeader()).toByteArray());
    m_treeHeaderRestored = m_candidateTree->header()->restoreState(
        settings.value(SettingsKeys::treeHeader()).toByteArray());
    m_runsView->setColumnHidden(RunListModel::DriverColumn, !m_runModel->hasDrivers());
    m_layoutRestored = true;
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    // Sized once the window has its real size and fonts (a hidden splitter rescales what it was given).
    if (!m_layoutRestored && !m_runsPaneFitted && m_runModel->rowCount() > 0) {
        m_runsPaneFitted = true;
        QTimer::singleShot(0, this, &MainWindow::fitRunsPane);
    }
}

void MainWindow::fitRunsPane()
{
    // Every column readable without scrolling (sized to its contents and header, the last one stretched), and
    // the list as high as its rows, at most a third of the window: the graph and the inspector are where the
    // work is. The rest of the height goes to them.
    QHeaderView *header = m_runsView->horizontalHeader();
    header->setStretchLastSection(false);
    m_runsView->resizeColumnsToContents();
    for (int column = 0; column < RunListModel::ColumnCount; ++column)
        if (!m_runsView->isColumnHidden(column))
            m_runsView->setColumnWidth(column, m_runsView->columnWidth(column) + 6);
    header->setStretchLastSection(true);
    const int rows = std::max(1, m_runProxy->rowCount());
    const int rowsHeight = rows * m_runsView->verticalHeader()->defaultSectionSize();
    // The filter line, the table's header and frame, a horizontal scroll bar should it appear, and a little air.
    const int chrome = m_runFilter->sizeHint().height() + header->sizeHint().height() + 2 * m_runsView->frameWidth()
        + m_runsView->horizontalScrollBar()->sizeHint().height() + 6;
    const QList<int> sizes = m_runsSplitter->sizes();
    int total = 0;
    for (int size : sizes)
        total += size;
    if (total <= 0)
        total = 800;
    const int limit = std::max(height(), total) / 3;
    const int wanted = std::min(rowsHeight + chrome, limit);
    m_runsSplitter->setSizes({wanted, std::max(1, total - wanted)});
}

} // namespace autocomp
