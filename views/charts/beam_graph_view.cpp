#include "charts/beam_graph_view.h"

#include "agents/prompt_builder.h"
#include "charts/beam_graph_edges.h"
#include "charts/beam_graph_grid.h"
#include "charts/beam_graph_legend.h"
#include "charts/beam_graph_nodes.h"
#include "charts/image_export.h"
#include "common/status_palette.h"
#include "common/value_format.h"
#include "live/shown_run.h"

#include <QApplication>
#include <QContextMenuEvent>
#include <QGraphicsScene>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QPainter>
#include <QSet>
#include <QTimer>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QToolButton>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace autocomp {

using namespace beam_graph;

namespace {

constexpr int s_relayoutDelayMs = 50;

} // namespace

BeamGraphView::BeamGraphView(QWidget *parent)
    : QGraphicsView(parent)
    , m_scene(new QGraphicsScene(this))
    , m_edges(new BeamGraphEdges(this))
    , m_nodeLayer(new BeamGraphNodes(this))
    , m_relayoutTimer(new QTimer(this))
    , m_fitButton(new QToolButton(this))
    , m_zoomInButton(new QToolButton(this))
    , m_zoomOutButton(new QToolButton(this))
    , m_exportButton(new QToolButton(this))
    , m_legendButton(new QToolButton(this))
    , m_legend(new BeamGraphLegend(this))
    , m_collapseButton(new QToolButton(this))
{
    setObjectName(QStringLiteral("beamGraph"));
    // Two items whose bounds change with every burst: an index would only be rebuilt.
    m_scene->setItemIndexMethod(QGraphicsScene::NoIndex);
    m_edges->setZValue(-1);
    m_scene->addItem(m_edges);
    m_scene->addItem(m_nodeLayer);
    setScene(m_scene);
    setRenderHint(QPainter::Antialiasing);
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setViewportUpdateMode(QGraphicsView::MinimalViewportUpdate);
    setOptimizationFlags(QGraphicsView::DontSavePainterState);
    setFocusPolicy(Qt::StrongFocus);
    setToolTip(
        tr("Wheel or Ctrl +/- to zoom, drag to pan, F to fit, L for the legend; arrows walk parent, child and "
           "neighbours, Home the root, End the best, Enter opens; a count node (+17 pruned) opens with a click or "
           "Enter, and C on one of its candidates collapses them again"));

    m_relayoutTimer->setSingleShot(true);
    m_relayoutTimer->setInterval(s_relayoutDelayMs);
    connect(m_relayoutTimer, &QTimer::timeout, this, [this] { relayout(false); });

    const auto setUpButton = [this](QToolButton *button, const QString &name, const QString &text, const QString &tip,
                                    void (BeamGraphView::*slot)()) {
        button->setObjectName(name);
        button->setText(text);
        button->setToolTip(tip);
        button->setAutoRaise(false);
        button->setCursor(Qt::ArrowCursor);
        connect(button, &QToolButton::clicked, this, slot);
    };
    setUpButton(m_fitButton, QStringLiteral("graphFit"), tr("Fit"), tr("Fit the whole graph (F)"),
                &BeamGraphView::fitAll);
    setUpButton(m_zoomInButton, QStringLiteral("graphZoomIn"), QStringLiteral("+"), tr("Zoom in (Ctrl++)"),
                &BeamGraphView::zoomIn);
    setUpButton(m_zoomOutButton, QStringLiteral("graphZoomOut"), QStringLiteral("−"), tr("Zoom out (Ctrl+-)"),
                &BeamGraphView::zoomOut);
    setUpButton(m_exportButton, QStringLiteral("graphExport"), tr("Export…"), tr("Save the whole graph as PNG or SVG"),
                &BeamGraphView::exportClicked);
    m_legendButton->setObjectName(QStringLiteral("graphLegend"));
    m_legendButton->setText(tr("Legend"));
    m_legendButton->setToolTip(tr("Show or hide what the colours and marks mean (L); the graph is fitted above it"));
    m_legendButton->setCheckable(true);
    m_legendButton->setCursor(Qt::ArrowCursor);
    m_legend->hide();
    m_collapseButton->setObjectName(QStringLiteral("graphCollapse"));
    m_collapseButton->setText(tr("Collapse"));
    m_collapseButton->setToolTip(tr("Draw each parent's pruned and failed children as one count node (+17 pruned); "
                                    "by default on above %1 candidates")
                                     .arg(CollapseAbove));
    m_collapseButton->setCheckable(true);
    m_collapseButton->setCursor(Qt::ArrowCursor);
    connect(m_collapseButton, &QToolButton::clicked, this, [this](bool checked) { setCollapseByDefault(checked); });
    connect(m_legendButton, &QToolButton::clicked, this, [this] { m_legendChosen = true; });
    connect(m_legendButton, &QToolButton::toggled, this, [this] {
        placeButtons();
        if (m_autoFit)
            fitAll();
    });
    placeButtons();
}

BeamGraphView::~BeamGraphView() = default;

QString BeamGraphView::stateName(NodeState state)
{
    switch (state) {
    case NodeState::Planning: return tr("planning");
    case NodeState::Coding: return tr("coding");
    case NodeState::Compiling: return tr("compiling");
    case NodeState::Testing: return tr("testing");
    case NodeState::Benchmarking: return tr("benchmarking");
    case NodeState::Failed: return tr("crash, timeout…");
    case NodeState::CompileError: return tr("compile error");
    case NodeState::Incorrect: return tr("incorrect");
    case NodeState::Correct: return tr("correct");
    case NodeState::InBeam: return tr("in beam");
    case NodeState::Duplicate: return tr("duplicate");
    case NodeState::Cancelled: return tr("cancelled");
    case NodeState::NoHardware: return tr("no hardware");
    case NodeState::Pruned: return tr("pruned");
    }
    return {};
}

QString BeamGraphView::glyphOf(const QString &word)
{
    if (word == QLatin1String("crash"))
        return QStringLiteral("✕");
    if (word == QLatin1String("timeout"))
        return QStringLiteral("◷");
    if (word == QLatin1String("rejected"))
        return QStringLiteral("⊘");
    if (word == QLatin1String("error (machine)"))
        return QStringLiteral("!");
    if (word == QLatin1String("no code"))
        return QStringLiteral("∅");
    return {};
}

QColor BeamGraphView::stateColor(NodeState state, const QPalette &palette)
{
    const bool dark = StatusPalette::isDark(palette);
    switch (state) {
    case NodeState::Planning: return dark ? QColor(0x3a, 0x4a, 0x66) : QColor(0xd6, 0xe2, 0xf5);
    case NodeState::Coding: return dark ? QColor(0x34, 0x52, 0x80) : QColor(0xb4, 0xcb, 0xf0);
    case NodeState::Compiling: return dark ? QColor(0x55, 0x43, 0x7a) : QColor(0xdc, 0xcf, 0xf3);
    case NodeState::Testing: return dark ? QColor(0x6b, 0x5e, 0x25) : QColor(0xf5, 0xe9, 0xb5);
    case NodeState::Benchmarking: return dark ? QColor(0x7a, 0x4e, 0x1c) : QColor(0xf8, 0xd3, 0xa4);
    case NodeState::Failed: return dark ? QColor(0x70, 0x2a, 0x40) : QColor(0xf0, 0xbf, 0xcd);
    case NodeState::CompileError: return dark ? QColor(0x7a, 0x3d, 0x12) : QColor(0xf2, 0xb8, 0x8a);
    case NodeState::Incorrect: return dark ? QColor(0x8a, 0x2f, 0x2a) : QColor(0xf4, 0xa4, 0x9a);
    case NodeState::Correct: return dark ? QColor(0x2f, 0x5e, 0x3a) : QColor(0xcd, 0xee, 0xcd);
    case NodeState::InBeam: return dark ? QColor(0x23, 0x8a, 0x3e) : QColor(0x7c, 0xd0, 0x88);
    case NodeState::Duplicate: return dark ? QColor(0x2e, 0x55, 0x5a) : QColor(0xc8, 0xe6, 0xe8);
    case NodeState::Cancelled: return dark ? QColor(0x3a, 0x3a, 0x3a) : QColor(0xf7, 0xf7, 0xf7);
    case NodeState::NoHardware: return dark ? QColor(0x4a, 0x45, 0x60) : QColor(0xe8, 0xe4, 0xf0);
    case NodeState::Pruned: return dark ? QColor(0x45, 0x48, 0x4d) : QColor(0xe3, 0xe4, 0xe6);
    }
    return {};
}

bool BeamGraphView::isWithinNoise(const Node &node) const
{
    // The same rule as withinNoise(): both intervals known and overlapping (zero-width ones only when equal).
    const auto parent = m_nodeOfId.constFind(node.parentId);
    if (!node.interval || parent == m_nodeOfId.constEnd())
        return false;
    const std::optional<ScoreInterval> &other = m_nodes.at(*parent).interval;
    if (!other)
        return false;
    if (node.interval->low == node.interval->high && other->low == other->high)
        return node.interval->low == other->low;
    return node.interval->low <= other->high && other->low <= node.interval->high;
}

void BeamGraphView::clear()
{
    m_relayoutTimer->stop();
    ++m_layoutGeneration; // a full layout still running on the pool is for nodes that are gone
    m_layoutPending = false;
    m_nodes.clear();
    m_nodeOfId.clear();
    m_columns.clear();
    m_shown.clear();
    m_groups.clear();
    m_groupOfParent.clear();
    m_membersOf.clear();
    m_collapseChoice.clear();
    m_bestPath.clear();
    m_onBestPath.clear();
    m_selected = 0;
    m_nodeLayer->setBounds({});
    m_explicitBest = 0;
    m_rootId = 0;
    m_rootScore = 0;
    m_latestBeamIteration = -1;
    m_edges->setEdges({}, {});
    m_scene->setSceneRect(QRectF());
    m_autoFit = true;
}

void BeamGraphView::setShownRun(const ShownRun *run)
{
    connect(run, &ShownRun::shown, this, [this, run](const QList<Candidate> &candidates) {
        if (run->id() == 0)
            clear();
        else
            setCandidates(candidates, run->run().bestCandidateId);
    });
    connect(run, &ShownRun::candidatesChanged, this,
            [this](const QList<Candidate> &candidates) { upsertCandidates(candidates); });
    connect(run, &ShownRun::candidateSelected, this, [this](const Candidate &c) { selectCandidate(c.id); });
}

void BeamGraphView::setCandidates(const QList<Candidate> &candidates, qint64 bestCandidateId)
{
    clear();
    m_explicitBest = bestCandidateId;
    m_nodes.reserve(candidates.size());
    m_nodeOfId.reserve(candidates.size());
    for (const Candidate &candidate : candidates)
        store(candidate);
    relayout(true);
}

void BeamGraphView::upsertCandidate(const Candidate &candidate)
{
    store(candidate);
    scheduleRelayout();
}

void BeamGraphView::upsertCandidates(const QList<Candidate> &candidates)
{
    for (const Candidate &candidate : candidates)
        store(candidate);
    scheduleRelayout();
}

void BeamGraphView::setBestCandidate(qint64 candidateId)
{
    m_explicitBest = candidateId;
    scheduleRelayout();
}

void BeamGraphView::flushPendingUpdates()
{
    if (std::exchange(m_relayoutWhenShown, false)) {
        relayout(false);
        return;
    }
    if (m_relayoutTimer->isActive()) {
        m_relayoutTimer->stop();
        relayout(false);
    }
}

void BeamGraphView::store(const Candidate &candidate)
{
    auto it = m_nodeOfId.find(candidate.id);
    if (it == m_nodeOfId.end()) {
        it = m_nodeOfId.insert(candidate.id, int(m_nodes.size()));
        m_nodes.append(Node{});
    }
    Node &node = m_nodes[*it];
    node.id = candidate.id;
    node.parentId = candidate.parentId;
    node.iteration = candidate.iteration;
    node.status = candidate.status;
    node.origin = candidate.origin;
    node.score = candidate.hasScore() ? candidate.score : 0;
    node.inBeam = candidate.inBeam;
    node.word = statusWord(candidate);
    node.interval = scoreInterval(candidate);
    if (node.menuItem != candidate.menuItem) {
        node.menuItem = candidate.menuItem;
        node.shortName = PromptBuilder::shortName(candidate.menuItem);
    }
    if (candidate.parentId == 0 && (m_rootId == 0 || candidate.origin == CandidateOrigin::Root)) {
        m_rootId = candidate.id;
        m_rootScore = node.score;
    }
}

void BeamGraphView::scheduleRelayout()
{
    // A hidden graph lays out when it is shown again, not on every burst of updates.
    if (!isVisible()) {
        m_relayoutWhenShown = true;
        return;
    }
    if (!m_relayoutTimer->isActive()) {
        // Each relayout walks every node: on big runs bursts are gathered for longer.
        m_relayoutTimer->setInterval(m_nodes.size() >= 2000 ? 250 : s_relayoutDelayMs);
        m_relayoutTimer->start();
    }
}

void BeamGraphView::showEvent(QShowEvent *event)
{
    QGraphicsView::showEvent(event);
    if (std::exchange(m_relayoutWhenShown, false))
        relayout(false);
}

BeamGraphView::NodeState BeamGraphView::stateOf(const Node &node) const
{
    switch (node.status) {
    case CandidateStatus::Planning: return NodeState::Planning;
    case CandidateStatus::Coding: return NodeState::Coding;
    case CandidateStatus::Pending:
    case CandidateStatus::Compiling: return NodeState::Compiling;
    case CandidateStatus::Testing: return NodeState::Testing;
    case CandidateStatus::Benchmarking: return NodeState::Benchmarking;
    case CandidateStatus::Incorrect: return NodeState::Incorrect;
    case CandidateStatus::NoHardware: return NodeState::NoHardware;
    case CandidateStatus::Duplicate: return NodeState::Duplicate;
    case CandidateStatus::Cancelled: return NodeState::Cancelled;
    case CandidateStatus::CompileError: return NodeState::CompileError;
    case CandidateStatus::Failed:
        return node.word == QLatin1String("cancelled") ? NodeState::Cancelled : NodeState::Failed;
    case CandidateStatus::Correct:
        if (node.inBeam)
            return NodeState::InBeam;
        // A beam member from this iteration or a later one means this iteration's selection is over.
        return node.iteration <= m_latestBeamIteration ? NodeState::Pruned : NodeState::Correct;
    }
    return NodeState::Planning;
}

BeamGraphView::NodeState BeamGraphView::nodeState(qint64 candidateId) const
{
    const auto it = m_nodeOfId.constFind(candidateId);
    return it == m_nodeOfId.constEnd() ? NodeState::Planning : stateOf(m_nodes.at(*it));
}

void BeamGraphView::updateBestPath()
{
    m_bestPath.clear();
    qint64 best = m_explicitBest;
    if (!m_nodeOfId.contains(best)) {
        best = 0;
        double bestScore = 0;
        for (const Node &node : std::as_const(m_nodes))
            if (node.status == CandidateStatus::Correct && node.score > 0 && (best == 0 || node.score < bestScore)) {
                best = node.id;
                bestScore = node.score;
            }
    }
    // Walk up to the root; the guard stops a malformed store with a parent cycle.
    for (qint64 id = best; id != 0 && m_bestPath.size() <= m_nodes.size();) {
        const auto it = m_nodeOfId.constFind(id);
        if (it == m_nodeOfId.constEnd())
            break;
        m_bestPath.prepend(id);
        id = m_nodes.at(*it).parentId;
    }
    m_onBestPath = QSet<qint64>(m_bestPath.cbegin(), m_bestPath.cend());
}

QList<qint64> BeamGraphView::bestPath() const { return m_bestPath; }

bool BeamGraphView::isOnBestPath(qint64 candidateId) const { return m_onBestPath.contains(candidateId); }

QPointF BeamGraphView::centerOf(const Node &node) const
{
    return QPointF(node.column * s_columnPitch, node.row * s_rowPitch);
}

void BeamGraphView::openGroup(qint64 parentId, bool selectFirst)
{
    const auto it = m_groupOfParent.constFind(parentId);
    if (it == m_groupOfParent.constEnd())
        return;
    const qint64 first = m_nodes.at(m_groups.at(*it).first).id;
    setGroupCollapsed(parentId, false);
    if (selectFirst && selectCandidate(first))
        Q_EMIT candidateSelected(first);
}

void BeamGraphView::selectEntry(qint64 entry)
{
    if (entry > 0) {
        selectCandidate(entry);
        return;
    }
    const auto it = m_groupOfParent.constFind(-entry);
    if (it == m_groupOfParent.constEnd())
        return;
    m_selected = entry;
    m_nodeLayer->update();
    const QPointF center = centerOfGroup(m_groups.at(*it));
    ensureVisible(QRectF(center - QPointF(s_nodeWidth / 2, s_nodeHeight / 2), QSizeF(s_nodeWidth, s_nodeHeight)), 40,
                  40);
}

qint64 BeamGraphView::candidateAt(const QPoint &viewportPos) const
{
    const int index = nodeAt(mapToScene(viewportPos));
    return index >= 0 ? m_nodes.at(index).id : 0;
}

qint64 BeamGraphView::groupAt(const QPoint &viewportPos) const
{
    const int entry = entryAt(mapToScene(viewportPos));
    return entry != NoEntry && entry < 0 ? m_groups.at(~entry).parentId : 0;
}

int BeamGraphView::entryAt(const QPointF &scenePoint) const
{
    const int column = int(std::lround(scenePoint.x() / s_columnPitch));
    const int row = int(std::lround(scenePoint.y() / s_rowPitch));
    if (column < 0 || column >= m_shown.size() || row < 0 || row >= m_shown.at(column).size())
        return NoEntry;
    const QRectF box(QPointF(column * s_columnPitch, row * s_rowPitch) - QPointF(s_nodeWidth / 2, s_nodeHeight / 2),
                     QSizeF(s_nodeWidth, s_nodeHeight));
    return box.contains(scenePoint) ? m_shown.at(column).at(row) : NoEntry;
}

int BeamGraphView::nodeAt(const QPointF &scenePoint) const
{
    const int entry = entryAt(scenePoint);
    return entry >= 0 ? entry : -1;
}

void BeamGraphView::setSearchMatches(const std::optional<QSet<qint64>> &matches)
{
    m_matches = matches;
    m_nodeLayer->update();
}

void BeamGraphView::exportClicked()
{
    flushPendingUpdates();
    ImageExport::saveWithDialog(this, scene(), scene()->itemsBoundingRect().adjusted(-16, -16, 16, 16),
                                QStringLiteral("beam-graph.png"), palette().color(QPalette::Base));
}

bool BeamGraphView::exportImage(const QString &path, QString *error)
{
    flushPendingUpdates();
    const QRectF source = scene()->itemsBoundingRect().adjusted(-16, -16, 16, 16);
    return ImageExport::save(scene(), source, path, palette().color(QPalette::Base), error);
}

void BeamGraphView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        const int entry = entryAt(mapToScene(event->position().toPoint()));
        if (entry != NoEntry && entry < 0) {
            openGroup(m_groups.at(~entry).parentId, true);
            event->accept();
            return;
        }
        const int index = entry >= 0 ? entry : -1;
        if (index >= 0) {
            const qint64 id = m_nodes.at(index).id;
            selectCandidate(id);
            Q_EMIT candidateSelected(id);
            event->accept();
            return;
        }
    }
    QGraphicsView::mousePressEvent(event); // pans from the background
}

bool BeamGraphView::selectCandidate(qint64 candidateId)
{
    flushPendingUpdates();
    const auto it = m_nodeOfId.constFind(candidateId);
    if (it == m_nodeOfId.constEnd() || m_nodes.at(*it).column < 0)
        return false;
    if (m_nodes.at(*it).row < 0) { // inside a collapsed group: it opens
        m_collapseChoice.insert(m_nodes.at(*it).groupParent, false);
        arrange();
    }
    m_selected = candidateId;
    m_nodeLayer->update();
    const QPointF center = centerOf(m_nodes.at(*it));
    ensureVisible(QRectF(center - QPointF(s_nodeWidth / 2, s_nodeHeight / 2), QSizeF(s_nodeWidth, s_nodeHeight)), 40,
                  40);
    return true;
}

qint64 BeamGraphView::neighbour(int key)
{
    flushPendingUpdates();
    if (m_nodes.isEmpty())
        return 0;
    if (key == Qt::Key_Home) {
        for (const Node &node : std::as_const(m_nodes))
            if (node.parentId == 0 && node.column >= 0)
                return node.id;
        return 0;
    }
    if (key == Qt::Key_End)
        return m_bestPath.isEmpty() ? 0 : m_bestPath.last();
    // Where the selection is drawn: a node, or a count node.
    int column = -1, row = -1;
    qint64 self = 0, parentId = 0;
    if (const auto it = m_nodeOfId.constFind(m_selected);
        m_selected > 0 && it != m_nodeOfId.constEnd() && m_nodes.at(*it).row >= 0) {
        const Node &node = m_nodes.at(*it);
        column = node.column;
        row = node.row;
        self = node.id;
        parentId = node.parentId;
    } else if (const auto group = m_groupOfParent.constFind(-m_selected);
               m_selected < 0 && group != m_groupOfParent.constEnd()) {
        column = m_groups.at(*group).column;
        row = m_groups.at(*group).row;
        parentId = m_groups.at(*group).parentId;
    }
    if (column < 0) {
        // Nothing selected yet: any arrow starts at the root.
        return key == Qt::Key_Left || key == Qt::Key_Right || key == Qt::Key_Up || key == Qt::Key_Down
            ? neighbour(Qt::Key_Home)
            : 0;
    }
    const auto idOf = [this](int entry) { return entry >= 0 ? m_nodes.at(entry).id : -m_groups.at(~entry).parentId; };
    const QList<int> &shown = m_shown.at(column);
    switch (key) {
    case Qt::Key_Left: // the parent
        return m_nodeOfId.contains(parentId) ? parentId : 0;
    case Qt::Key_Right: // the first child, top to bottom (a count node of its children too)
        if (self != 0 && column + 1 < m_shown.size())
            for (int entry : m_shown.at(column + 1))
                if ((entry >= 0 ? m_nodes.at(entry).parentId : m_groups.at(~entry).parentId) == self)
                    return idOf(entry);
        return 0;
    case Qt::Key_Up: // the node above, in the same iteration
        return row > 0 ? idOf(shown.at(row - 1)) : 0;
    case Qt::Key_Down: return row + 1 < shown.size() ? idOf(shown.at(row + 1)) : 0;
    default: return 0;
    }
}

qint64 BeamGraphView::selectedCandidate() const { return std::max<qint64>(0, m_selected); }

QPointF BeamGraphView::nodePosition(qint64 candidateId) const
{
    const auto it = m_nodeOfId.constFind(candidateId);
    if (it == m_nodeOfId.constEnd() || m_nodes.at(*it).column < 0 || m_nodes.at(*it).row < 0)
        return {};
    return centerOf(m_nodes.at(*it));
}

void BeamGraphView::scaleBy(double factor)
{
    m_autoFit = false;
    const double current = transform().m11();
    const double target = std::clamp(current * factor, 0.01, 4.0);
    scale(target / current, target / current);
}

void BeamGraphView::zoomIn() { scaleBy(1.25); }

void BeamGraphView::zoomOut() { scaleBy(0.8); }

void BeamGraphView::fitAll()
{
    flushPendingUpdates();
    m_autoFit = true;
    if (m_nodes.isEmpty())
        return;
    fitInView(m_scene->sceneRect(), Qt::KeepAspectRatio);
    // A handful of nodes would be blown up to poster size; keep them at most a little above natural size. A big
    // graph is not shrunk past the id and score: it is scrolled instead, from the best candidate.
    const double fitted = transform().m11();
    const double scale = std::clamp(fitted, std::min(readableScale(), 1.2), 1.2);
    if (scale != fitted)
        setTransform(QTransform::fromScale(scale, scale));
    if (fitted >= scale || m_bestPath.isEmpty())
        centerOn(m_scene->sceneRect().center());
    else
        centerOn(nodePosition(m_bestPath.last()));
}

void BeamGraphView::wheelEvent(QWheelEvent *event)
{
    const int delta = event->angleDelta().y();
    if (delta == 0) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    scaleBy(std::pow(1.0015, delta));
    event->accept();
}

void BeamGraphView::keyPressEvent(QKeyEvent *event)
{
    if (event->key() == Qt::Key_L && event->modifiers() == Qt::NoModifier) {
        m_legendChosen = true;
        m_legendButton->toggle();
        event->accept();
        return;
    }
    if (event->key() == Qt::Key_F && event->modifiers() == Qt::NoModifier) {
        fitAll();
        return;
    }
    if (event->modifiers() == Qt::NoModifier || event->modifiers() == Qt::KeypadModifier) {
        if (const qint64 next = neighbour(event->key()); next != 0) {
            selectEntry(next);
            if (next > 0)
                Q_EMIT candidateSelected(next);
            event->accept();
            return;
        }
        if ((event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter) && m_selected != 0) {
            if (m_selected < 0)
                openGroup(-m_selected, true);
            else
                Q_EMIT candidateActivated(m_selected);
            event->accept();
            return;
        }
        if (event->key() == Qt::Key_C && m_selected != 0) {
            // On a count node: open it; on one of a group's candidates: collapse the group; on a parent: toggle its
            // group.
            if (m_selected < 0) {
                openGroup(-m_selected, true);
            } else if (const auto it = m_nodeOfId.constFind(m_selected); it != m_nodeOfId.constEnd()) {
                const Node &node = m_nodes.at(*it);
                if (node.groupParent != 0)
                    setGroupCollapsed(node.groupParent, true);
                else if (m_membersOf.value(node.id) >= 2)
                    setGroupCollapsed(node.id, !m_groupOfParent.contains(node.id));
            }
            event->accept();
            return;
        }
    }
    if (event->matches(QKeySequence::ZoomIn)
        || (event->modifiers() & Qt::ControlModifier && event->key() == Qt::Key_Equal)) {
        zoomIn();
        return;
    }
    if (event->matches(QKeySequence::ZoomOut)) {
        zoomOut();
        return;
    }
    QGraphicsView::keyPressEvent(event);
}

void BeamGraphView::resizeEvent(QResizeEvent *event)
{
    QGraphicsView::resizeEvent(event);
    placeButtons();
    if (m_autoFit)
        fitAll();
}

void BeamGraphView::placeButtons()
{
    // The legend takes a strip below the viewport, as high as its rows at this width; until the user chooses,
    // it is shown where it takes at most a sixth of the view's height (L shows it anywhere).
    if (!m_legendChosen) {
        const QSignalBlocker blocker(m_legendButton);
        m_legendButton->setChecked(legendLayout(width() - 2 * frameWidth()).frame.height() + 8 <= height() / 6);
    }
    const int legendHeight = m_legendButton->isChecked() ? legendLayout(width() - 2 * frameWidth()).frame.height() + 8
                                                         : 0;
    if (viewportMargins().bottom() != legendHeight)
        setViewportMargins(0, 0, 0, legendHeight);
    m_legend->setVisible(legendHeight > 0);
    if (legendHeight > 0) {
        const QRect area = viewport()->geometry();
        // The margin lies between the viewport and the horizontal scroll bar (when the graph is scrolled).
        m_legend->setGeometry(area.left(), area.bottom() + 1, area.width(), legendHeight);
        m_legend->raise();
        m_legend->update();
    }
    const int margin = 6;
    int x = viewport()->width() - margin + (viewport()->x());
    for (QToolButton *button :
         {m_fitButton, m_zoomInButton, m_zoomOutButton, m_exportButton, m_legendButton, m_collapseButton}) {
        button->adjustSize();
        x -= button->width();
        button->move(x, viewport()->y() + margin);
        button->raise();
        x -= 4;
    }
}

bool BeamGraphView::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::ContextMenu) {
        // A count node's own menu; a candidate's is the window's (customContextMenuRequested).
        auto *menuEvent = static_cast<QContextMenuEvent *>(event);
        if (const qint64 parent = groupAt(menuEvent->pos()); parent != 0) {
            selectEntry(-parent);
            QMenu menu(this);
            menu.addAction(tr("Expand %1").arg(groupLabel(parent)), this, [this, parent] { openGroup(parent, true); })
                ->setObjectName(QStringLiteral("graphExpandGroupAction"));
            menu.exec(menuEvent->globalPos());
            return true;
        }
    }
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        if (const int entry = entryAt(mapToScene(help->pos())); entry != NoEntry && entry < 0) {
            QToolTip::showText(help->globalPos(), groupTooltip(m_groups.at(~entry)), viewport());
            return true;
        }
        if (const int index = nodeAt(mapToScene(help->pos())); index >= 0) {
            QToolTip::showText(help->globalPos(), tooltipFor(m_nodes.at(index)), viewport());
            return true;
        }
        QToolTip::showText(help->globalPos(), toolTip(), viewport());
        return true;
    }
    return QGraphicsView::viewportEvent(event);
}

QString BeamGraphView::tooltipFor(const Node &node) const
{
    const NodeState state = stateOf(node);
    const QString word = state == NodeState::InBeam || state == NodeState::Pruned
        ? node.word + QStringLiteral(", ") + stateName(state)
        : node.word;
    QString text = tr("<b>Candidate %1</b> · iteration %2 · %3").arg(node.id).arg(node.iteration).arg(word);
    if (!node.menuItem.isEmpty())
        text += QLatin1String("<br>") + node.menuItem.toHtmlEscaped();
    if (node.status == CandidateStatus::Correct && node.score > 0) {
        text += QLatin1String("<br>") + tr("score %1").arg(ValueFormat::number(node.score));
        if (m_rootScore > 0)
            text += tr(", %1 vs the root").arg(ValueFormat::speedup(m_rootScore / node.score));
    }
    if (isWithinNoise(node))
        text += QLatin1String("<br>")
            + tr("≈ within noise of its parent #%1: their 95 % intervals overlap, so the "
                 "difference is no improvement")
                  .arg(node.parentId);
    if (isOnBestPath(node.id))
        text += QLatin1String("<br>") + tr("on the path to the best candidate");
    return text;
}

} // namespace autocomp
