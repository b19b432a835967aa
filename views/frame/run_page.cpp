#include "frame/run_page.h"

#include "agents/prompt_builder.h"
#include "charts/beam_graph_view.h"
#include "charts/latency_chart.h"
#include "common/status_palette.h"
#include "common/value_format.h"
#include "editors/diff_view.h"
#include "frame/main_window.h"
#include "live/result_actions.h"
#include "live/shown_run.h"
#include "models/candidate_filter_proxy.h"
#include "models/candidate_tree_model.h"
#include "panels/candidate_inspector.h"
#include "panels/menu_insights_view.h"
#include "store/run_store.h"

#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QSet>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTabWidget>
#include <QTextDocument>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

namespace autocomp {

namespace {

QString capitalized(const QString &text) { return text.isEmpty() ? text : text.at(0).toUpper() + text.mid(1); }

} // namespace

RunPage::RunPage(ShownRun *shown, ResultActions *results, std::function<QString(qint64)> driverText, QWidget *parent)
    : QWidget(parent)
    , m_shown(shown)
    , m_results(results)
    , m_driverText(std::move(driverText))
    , m_candidateModel(new CandidateTreeModel(this))
    , m_candidateProxy(new CandidateFilterProxy(this))
{
    setObjectName(QStringLiteral("runPage"));
    m_candidateProxy->setSourceModel(m_candidateModel);
    m_candidateProxy->setSortRole(CandidateTreeModel::SortRole);
    connect(m_candidateProxy, &CandidateFilterProxy::searchChanged, this, &RunPage::searchChanged);

    m_splitter = new QSplitter(Qt::Horizontal);
    m_splitter->setObjectName(QStringLiteral("mainSplitter"));
    m_splitter->setChildrenCollapsible(false);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_splitter);
    m_splitter->addWidget(createCandidatesPane());
    m_inspector = new CandidateInspector;
    m_diffView = new DiffView;
    m_inspector->addTab(m_diffView, tr("Diff"));
    connect(m_diffView, &DiffView::moveRequested, this, [this] {
        setDiffInCenter(!diffInCenter());
        m_diffView->setFocus();
    });
    connect(m_diffView, &DiffView::openInWindowRequested, this, &RunPage::openDiffWindow);
    setDiffInCenter(false);
    m_splitter->addWidget(m_inspector);
    m_splitter->setStretchFactor(0, 5);
    m_splitter->setStretchFactor(1, 4);
    m_splitter->setSizes({700, 560});
    // The splitter keeps the sizes it has whatever the pages of its tabs would like: a page with a wide minimum
    // (a chart, a table) must not move the tab bar when it comes to the front.
    for (QWidget *pane : {m_splitter->widget(0), static_cast<QWidget *>(m_inspector)})
        pane->setMinimumWidth(240);

    // The views of candidates follow the shown run themselves, the inspector first (a new run clears it before
    // the others fill), as showing a candidate did before.
    m_inspector->setShownRun(m_shown);
    m_candidateModel->setShownRun(m_shown);
    m_diffView->setShownRun(m_shown);
    m_beamGraph->setShownRun(m_shown);
    m_latencyChart->setShownRun(m_shown);
    connect(m_shown, &ShownRun::candidatesChanged, this, [this](const QList<Candidate> &candidates, bool added) {
        if (added)
            expandParentsOf(candidates);
        scheduleRunHeader();
    });
    connect(m_shown, &ShownRun::runChanged, this, &RunPage::scheduleRunHeader);
    connect(m_shown, &ShownRun::shown, this, [this](const QList<Candidate> &candidates) {
        if (m_shown->id() == 0) {
            m_insights->clear();
            updateRunHeader();
        } else {
            m_insights->setRun(m_shown->id(), m_shown->run().target);
            fillStrategyFilter(candidates);
            searchChanged();
        }
    });
}

void RunPage::runShown()
{
    m_candidateTree->expandAll();
    // Columns fitted to the run, unless the widths the user left last time were restored.
    if (!m_treeHeaderRestored) {
        for (int column = 0; column < CandidateTreeModel::ColumnCount; ++column)
            if (column != CandidateTreeModel::MenuItemColumn)
                m_candidateTree->resizeColumnToContents(column);
        m_candidateTree->setColumnWidth(CandidateTreeModel::MenuItemColumn, 190);
    }
    updateRunHeader();

    // Start on the best candidate so the result of the run is one glance away.
    QModelIndex start = m_candidateModel->indexOfCandidate(m_shown->run().bestCandidateId);
    if (!start.isValid() && m_candidateModel->rowCount() > 0)
        start = m_candidateModel->index(0, 0);
    if (start.isValid()) {
        const QModelIndex proxyIndex = m_candidateProxy->mapFromSource(start);
        m_candidateTree->setCurrentIndex(proxyIndex);
        m_candidateTree->scrollTo(proxyIndex);
    }
}

void RunPage::expandParentsOf(const QList<Candidate> &candidates)
{
    // New children show up expanded under their parents.
    for (const Candidate &c : candidates) {
        const QModelIndex parent = m_candidateModel->indexOfCandidate(c.parentId);
        if (parent.isValid())
            m_candidateTree->expand(m_candidateProxy->mapFromSource(parent));
    }
}

QWidget *RunPage::createSearchBar()
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

void RunPage::focusSearch()
{
    m_searchText->setFocus(Qt::ShortcutFocusReason);
    m_searchText->selectAll();
}

void RunPage::fillStrategyFilter(const QList<Candidate> &candidates)
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

void RunPage::searchCandidates(const QString &text, const QString &status, const QString &strategy)
{
    m_searchText->setText(text);
    m_searchStatus->setCurrentIndex(std::max(0, m_searchStatus->findData(status)));
    if (!strategy.isEmpty() && m_searchStrategy->findData(strategy) < 0)
        m_searchStrategy->addItem(PromptBuilder::shortName(strategy, 40), strategy);
    m_searchStrategy->setCurrentIndex(std::max(0, m_searchStrategy->findData(strategy)));
}

void RunPage::searchChanged()
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

void RunPage::createRunHeader()
{
    m_headerTimer = new QTimer(this);
    m_headerTimer->setSingleShot(true);
    m_headerTimer->setInterval(HeaderUpdateMs);
    connect(m_headerTimer, &QTimer::timeout, this, &RunPage::updateRunHeader);
    m_runHeader = new QLabel;
    m_runHeader->setObjectName(QStringLiteral("runHeader"));
    m_runHeader->setWordWrap(true);
    m_runHeader->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse
                                         | Qt::LinksAccessibleByKeyboard);
    m_runHeader->setContentsMargins(4, 4, 4, 4);
    connect(m_runHeader, &QLabel::linkActivated, this, [this](const QString &link) {
        if (link == QLatin1String("#stop-reason"))
            showStopReasonDetails();
        else if (link == QLatin1String("#save-best") && m_shown->run().bestCandidateId != 0)
            m_results->saveKernelWithDialog(m_shown->run().bestCandidateId);
    });

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
}

QWidget *RunPage::createCandidatesPane()
{
    auto *pane = new QWidget;
    auto *layout = new QVBoxLayout(pane);
    layout->setContentsMargins(0, 0, 0, 0);
    createRunHeader();
    layout->addWidget(m_runHeader);
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
                    m_shown->select(current.data(CandidateTreeModel::CandidateIdRole).toLongLong());
            });
    layout->addWidget(createCenterTabs(), 1);
    return pane;
}

QWidget *RunPage::createCenterTabs()
{
    m_beamGraph = new BeamGraphView;
    connect(m_beamGraph, &BeamGraphView::candidateSelected, this, &RunPage::selectCandidate);
    connect(m_beamGraph, &BeamGraphView::candidateActivated, this, [this](qint64 id) {
        selectCandidate(id);
        m_inspector->setFocus(Qt::OtherFocusReason);
    });
    m_latencyChart = new LatencyChart;
    connect(m_latencyChart, &LatencyChart::candidateSelected, this, &RunPage::selectCandidate);
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
    connect(m_insights, &MenuInsightsView::candidateActivated, this, &RunPage::candidateOfRunActivated);
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
    return m_centerTabs;
}

void RunPage::setStorePath(const QString &path) { m_insights->setStorePath(path); }

void RunPage::scheduleRunHeader()
{
    // The header is word-wrapped rich text: each new text lays out the pane again. A followed run commits many
    // times a second; the header catches up a few times a second.
    if (!m_headerTimer->isActive())
        m_headerTimer->start();
}

QString RunPage::headerText() const
{
    const RunInfo &run = m_shown->run();
    const bool drivenHere = m_shown->driver() == ShownRun::Driver::ThisProcess;
    QString header = tr("<b>Run %1</b> · %2 on %3 · agent %4 · %5")
                         .arg(run.id)
                         .arg(run.problem.toHtmlEscaped(), run.target.toHtmlEscaped(), run.agent.toHtmlEscaped(),
                              drivenHere ? toString(run.state) : m_shown->store()->displayState(run));
    if (const QString driver = m_driverText(run.id);
        !driver.isEmpty() && (run.state == RunState::Running || run.state == RunState::Paused))
        header += tr(" · driven by %1").arg(driver.toHtmlEscaped());
    header += QStringLiteral("<br>")
        + tr("%n candidate(s), iteration %1", nullptr, m_candidateModel->candidateCount()).arg(run.iteration);
    if (run.bestScore > 0 && run.baselineScore > 0) {
        header += tr(" · best %1 vs %2 (%3)")
                      .arg(ValueFormat::score(run.bestScore, run.metric, run.metricUnit),
                           ValueFormat::score(run.baselineScore, run.metric, run.metricUnit),
                           ValueFormat::speedup(run.speedup()));
        if (run.bestCandidateId != 0)
            header += QStringLiteral(" <a href=\"#save-best\">%1</a>").arg(tr("Save kernel…"));
        // A best whose code repeats an earlier candidate's (an imported or older run): its figure is another
        // measurement of that code, not the effect of a change, and the header says so.
        if (const Candidate *best = m_shown->find(run.bestCandidateId)) {
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
    header += tr(" · %1 in %2 LLM calls").arg(ValueFormat::dollars(run.usd)).arg(run.llmCalls);
    if (!run.stopReason.isEmpty()) {
        // A reason with a log (a start that could not be evaluated) shows its first line; the log is one click away.
        bool more = false;
        header += QStringLiteral("<br>")
            + tr("Reason: %1").arg(ValueFormat::summary(run.stopReason, &more).toHtmlEscaped());
        if (more)
            header += QStringLiteral(" <a href=\"#stop-reason\">%1</a>").arg(tr("Details…"));
    }
    return header;
}

void RunPage::updateRunHeader()
{
    m_headerTimer->stop();
    const RunInfo &run = m_shown->run();
    if (run.id == 0) {
        m_runHeader->clear();
        m_labelBanner->hide();
        return;
    }
    if (const QString header = headerText(); m_runHeader->text() != header) {
        m_runHeader->setText(header);
        // Wrapped, never cut; the whole of it also as a tooltip (a long label or stop reason).
        QTextDocument plain;
        plain.setHtml(header);
        m_runHeader->setToolTip(plain.toPlainText());
    }
    m_labelBanner->setVisible(!run.label.isEmpty());
    m_labelBanner->setText(capitalized(run.label));
    m_labelBanner->setToolTip(
        tr("This run carries a label; its results may not come from a real LLM or real hardware."));
}

QDialog *RunPage::showStopReasonDetails()
{
    const RunInfo &run = m_shown->run();
    if (run.id == 0 || run.stopReason.isEmpty())
        return nullptr;
    auto *dialog = new QDialog(window());
    dialog->setObjectName(QStringLiteral("stopReasonDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Run %1 %2").arg(run.id).arg(toString(run.state)));
    auto *summary = new QLabel(ValueFormat::summary(run.stopReason));
    summary->setWordWrap(true);
    summary->setTextFormat(Qt::PlainText);
    summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *log = new QPlainTextEdit(run.stopReason);
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

void RunPage::selectCandidate(qint64 candidateId)
{
    // The tree's current row selects in the shown run, which the graph, the chart and the inspector follow.
    const QModelIndex source = m_candidateModel->indexOfCandidate(candidateId);
    QModelIndex index = m_candidateProxy->mapFromSource(source);
    if (source.isValid() && !index.isValid()) {
        searchCandidates(QString()); // the search hid it
        index = m_candidateProxy->mapFromSource(source);
    }
    if (!index.isValid())
        return;
    if (m_candidateTree->currentIndex().siblingAtColumn(0) == index) {
        m_shown->select(candidateId);
        return;
    }
    m_candidateTree->setCurrentIndex(index);
    m_candidateTree->scrollTo(index);
}

bool RunPage::diffInCenter() const { return m_centerTabs->indexOf(m_diffView) >= 0; }

void RunPage::setDiffInCenter(bool center)
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

QByteArray RunPage::splitterState() const
{
    if (!m_sizesBeforeWiden)
        return m_splitter->saveState();
    QSplitter copy(Qt::Horizontal);
    for (int i = 0; i < m_splitter->count(); ++i)
        copy.addWidget(new QWidget);
    copy.setSizes(*m_sizesBeforeWiden);
    return copy.saveState();
}

DiffView *RunPage::openDiffWindow()
{
    auto *window = new DiffView;
    window->setAttribute(Qt::WA_DeleteOnClose);
    window->setWindowFlag(Qt::Window);
    window->setObjectName(QStringLiteral("diffWindow"));
    window->setParent(this->window(), Qt::Window);
    window->setOpenInWindowVisible(false);
    RunStore *store = m_shown->store();
    window->setLookup([store](qint64 id) { return store->candidate(id); });
    window->setRunCandidates(store->candidates(m_shown->id()));
    window->setLanguage(m_shown->language());
    if (const auto candidate = store->candidate(m_diffView->candidateId())) {
        window->setCandidate(*candidate);
        window->setCompareWith(m_diffView->compareWithId());
        window->setWindowTitle(tr("Diff of #%1 — run %2").arg(candidate->id).arg(m_shown->id()));
    }
    window->setMode(m_diffView->mode());
    window->setDiffLayout(m_diffView->diffLayout());
    window->resize(this->window()->size() * 0.8);
    MainWindow::closableByKeys(window);
    window->show();
    return window;
}

bool RunPage::showView(const QString &name)
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

} // namespace autocomp
