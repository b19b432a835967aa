#include "beam_graph_view.h"

#include "status_palette.h"
#include "value_format.h"

#include <QApplication>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QPainter>
#include <QPainterPath>
#include <QSet>
#include <QStyleOptionGraphicsItem>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace autocomp {

namespace {

constexpr double s_nodeWidth = 150;
constexpr double s_nodeHeight = 40;
constexpr double s_columnPitch = 230;
constexpr double s_rowPitch = 52;
// Above this many edges they are straight lines: curves cost too much to stroke when all are visible.
constexpr int s_maxCurvedEdges = 1500;
constexpr int s_relayoutDelayMs = 50;

bool isDarkPalette(const QPalette &palette)
{
    return StatusPalette::isDark(palette);
}

} // namespace

// One candidate. Cheap on purpose: no child items, no effects; text only when it is large enough to read.
class BeamGraphNode : public QGraphicsItem
{
public:
    explicit BeamGraphNode(qint64 id)
        : m_id(id)
    {
        setFlag(ItemIsSelectable);
        setCacheMode(NoCache);
    }

    enum { Type = UserType + 71 };
    int type() const override { return Type; }
    qint64 candidateId() const { return m_id; }

    QRectF boundingRect() const override
    {
        return QRectF(-s_nodeWidth / 2 - 3, -s_nodeHeight / 2 - 3, s_nodeWidth + 6, s_nodeHeight + 6);
    }

    // Returns whether anything visible changed.
    bool setLook(BeamGraphView::NodeState state, bool inBeam, bool onBestPath, const QString &title, const QString &subtitle)
    {
        if (state == m_state && inBeam == m_inBeam && onBestPath == m_onBestPath && title == m_title && subtitle == m_subtitle)
            return false;
        m_state = state;
        m_inBeam = inBeam;
        m_onBestPath = onBestPath;
        m_title = title;
        if (subtitle != m_subtitle) {
            m_subtitle = subtitle;
            m_elidedSubtitle.clear();
        }
        update();
        return true;
    }

    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override
    {
        const QPalette &palette = widget ? widget->palette() : QApplication::palette();
        const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
        const QRectF box(-s_nodeWidth / 2, -s_nodeHeight / 2, s_nodeWidth, s_nodeHeight);
        const QColor fill = BeamGraphView::stateColor(m_state, palette);
        const bool dark = isDarkPalette(palette);
        if (lod < 0.2) {
            // Far out: a colored block is all one can see; borders only for what must stand out.
            painter->fillRect(box, isSelected() ? palette.color(QPalette::Highlight)
                                   : m_onBestPath ? QColor(0xff, 0x8f, 0x00) : fill);
            return;
        }
        QPen pen(dark ? QColor(0x9a, 0xa0, 0xa8) : QColor(0x70, 0x76, 0x80), 1);
        if (m_inBeam)
            pen = QPen(dark ? QColor(0x8a, 0xb4, 0xff) : QColor(0x1a, 0x4f, 0xb8), 2.5);
        if (m_onBestPath)
            pen = QPen(QColor(0xff, 0x8f, 0x00), 3);
        painter->setPen(pen);
        painter->setBrush(fill);
        painter->drawRoundedRect(box, 5, 5);
        if (isSelected()) {
            QPen selection(palette.color(QPalette::Highlight), 2.5, Qt::DashLine);
            painter->setPen(selection);
            painter->setBrush(Qt::NoBrush);
            painter->drawRoundedRect(box.adjusted(-3, -3, 3, 3), 7, 7);
        }
        if (lod < 0.45)
            return;
        painter->setPen(fill.lightness() < 110 ? QColor(Qt::white) : QColor(0x10, 0x14, 0x18));
        QFont font = painter->font();
        font.setBold(true);
        painter->setFont(font);
        const QRectF top = box.adjusted(7, 3, -7, -s_nodeHeight / 2);
        painter->drawText(top, Qt::AlignLeft | Qt::AlignVCenter, m_title);
        font.setBold(false);
        painter->setFont(font);
        if (m_elidedSubtitle.isEmpty() && !m_subtitle.isEmpty())
            m_elidedSubtitle = QFontMetrics(font).elidedText(m_subtitle, Qt::ElideRight, int(box.width() - 14));
        painter->drawText(box.adjusted(7, s_nodeHeight / 2 - 2, -7, -3), Qt::AlignLeft | Qt::AlignVCenter, m_elidedSubtitle);
    }

private:
    qint64 m_id;
    BeamGraphView::NodeState m_state = BeamGraphView::NodeState::Planning;
    bool m_inBeam = false;
    bool m_onBestPath = false;
    QString m_title;
    QString m_subtitle;
    mutable QString m_elidedSubtitle;
};

// All edges in one item: thousands of line items would dominate memory and scene bookkeeping.
class BeamGraphEdges : public QGraphicsItem
{
public:
    QRectF boundingRect() const override { return m_bounds; }

    void setEdges(QList<QLineF> edges, QList<QLineF> bestEdges)
    {
        prepareGeometryChange();
        m_edges = std::move(edges);
        m_bestEdges = std::move(bestEdges);
        QRectF bounds;
        for (const QLineF &line : std::as_const(m_edges))
            bounds |= QRectF(line.p1(), line.p2()).normalized();
        m_bounds = bounds.adjusted(-4, -4, 4, 4);
        m_curved = m_edges.size() <= s_maxCurvedEdges;
        update();
    }

    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override
    {
        const QPalette &palette = widget ? widget->palette() : QApplication::palette();
        const bool dark = isDarkPalette(palette);
        const QRectF exposed = option->exposedRect;
        painter->setBrush(Qt::NoBrush);
        painter->setPen(QPen(dark ? QColor(0x6a, 0x70, 0x78) : QColor(0xa8, 0xae, 0xb6), 1.2));
        draw(painter, m_edges, exposed);
        painter->setPen(QPen(QColor(0xff, 0x8f, 0x00), 3.5));
        draw(painter, m_bestEdges, exposed);
    }

private:
    void draw(QPainter *painter, const QList<QLineF> &edges, const QRectF &exposed) const
    {
        if (!m_curved) {
            QList<QLineF> visible;
            for (const QLineF &line : edges)
                if (exposed.intersects(QRectF(line.p1(), line.p2()).normalized().adjusted(-1, -1, 1, 1)))
                    visible.append(line);
            painter->drawLines(visible);
            return;
        }
        for (const QLineF &line : edges) {
            QPainterPath path(line.p1());
            const double dx = (line.x2() - line.x1()) / 2;
            path.cubicTo(line.x1() + dx, line.y1(), line.x2() - dx, line.y2(), line.x2(), line.y2());
            painter->drawPath(path);
        }
    }

    QList<QLineF> m_edges;
    QList<QLineF> m_bestEdges;
    QRectF m_bounds;
    bool m_curved = true;
};

BeamGraphView::BeamGraphView(QWidget *parent)
    : QGraphicsView(parent)
    , m_scene(new QGraphicsScene(this))
    , m_edges(new BeamGraphEdges)
    , m_relayoutTimer(new QTimer(this))
    , m_fitButton(new QToolButton(this))
    , m_zoomInButton(new QToolButton(this))
    , m_zoomOutButton(new QToolButton(this))
{
    setObjectName(QStringLiteral("beamGraph"));
    // Items are added in bulk and repositioned together; a BSP index would be rebuilt on every burst.
    m_scene->setItemIndexMethod(QGraphicsScene::NoIndex);
    m_edges->setZValue(-1);
    m_scene->addItem(m_edges);
    setScene(m_scene);
    setRenderHint(QPainter::Antialiasing);
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setViewportUpdateMode(QGraphicsView::MinimalViewportUpdate);
    setOptimizationFlags(QGraphicsView::DontSavePainterState);
    setFocusPolicy(Qt::StrongFocus);
    setToolTip(tr("Wheel or Ctrl +/- to zoom, drag to pan, F to fit"));

    m_relayoutTimer->setSingleShot(true);
    m_relayoutTimer->setInterval(s_relayoutDelayMs);
    connect(m_relayoutTimer, &QTimer::timeout, this, &BeamGraphView::relayout);
    connect(m_scene, &QGraphicsScene::selectionChanged, this, &BeamGraphView::onSceneSelectionChanged);

    const auto setUpButton = [this](QToolButton *button, const QString &name, const QString &text, const QString &tip,
                                    void (BeamGraphView::*slot)()) {
        button->setObjectName(name);
        button->setText(text);
        button->setToolTip(tip);
        button->setAutoRaise(false);
        button->setCursor(Qt::ArrowCursor);
        connect(button, &QToolButton::clicked, this, slot);
    };
    setUpButton(m_fitButton, QStringLiteral("graphFit"), tr("Fit"), tr("Fit the whole graph (F)"), &BeamGraphView::fitAll);
    setUpButton(m_zoomInButton, QStringLiteral("graphZoomIn"), QStringLiteral("+"), tr("Zoom in (Ctrl++)"), &BeamGraphView::zoomIn);
    setUpButton(m_zoomOutButton, QStringLiteral("graphZoomOut"), QStringLiteral("−"), tr("Zoom out (Ctrl+-)"),
                &BeamGraphView::zoomOut);
    placeButtons();
}

BeamGraphView::~BeamGraphView()
{
    // The scene outlives this part of the object and reports its items' deselection while it goes.
    disconnect(m_scene, nullptr, this, nullptr);
}

QString BeamGraphView::stateName(NodeState state)
{
    switch (state) {
    case NodeState::Planning: return tr("planning");
    case NodeState::Coding: return tr("coding");
    case NodeState::Compiling: return tr("compiling");
    case NodeState::Testing: return tr("testing");
    case NodeState::Benchmarking: return tr("benchmarking");
    case NodeState::Failed: return tr("failed");
    case NodeState::Incorrect: return tr("incorrect");
    case NodeState::Correct: return tr("correct");
    case NodeState::InBeam: return tr("in beam");
    case NodeState::Pruned: return tr("pruned");
    }
    return {};
}

QColor BeamGraphView::stateColor(NodeState state, const QPalette &palette)
{
    const bool dark = isDarkPalette(palette);
    switch (state) {
    case NodeState::Planning: return dark ? QColor(0x3a, 0x4a, 0x66) : QColor(0xd6, 0xe2, 0xf5);
    case NodeState::Coding: return dark ? QColor(0x34, 0x52, 0x80) : QColor(0xb4, 0xcb, 0xf0);
    case NodeState::Compiling: return dark ? QColor(0x55, 0x43, 0x7a) : QColor(0xdc, 0xcf, 0xf3);
    case NodeState::Testing: return dark ? QColor(0x6b, 0x5e, 0x25) : QColor(0xf5, 0xe9, 0xb5);
    case NodeState::Benchmarking: return dark ? QColor(0x7a, 0x4e, 0x1c) : QColor(0xf8, 0xd3, 0xa4);
    case NodeState::Failed: return dark ? QColor(0x70, 0x2a, 0x40) : QColor(0xf0, 0xbf, 0xcd);
    case NodeState::Incorrect: return dark ? QColor(0x8a, 0x2f, 0x2a) : QColor(0xf4, 0xa4, 0x9a);
    case NodeState::Correct: return dark ? QColor(0x2f, 0x5e, 0x3a) : QColor(0xcd, 0xee, 0xcd);
    case NodeState::InBeam: return dark ? QColor(0x23, 0x8a, 0x3e) : QColor(0x7c, 0xd0, 0x88);
    case NodeState::Pruned: return dark ? QColor(0x45, 0x48, 0x4d) : QColor(0xe3, 0xe4, 0xe6);
    }
    return {};
}

void BeamGraphView::clear()
{
    m_relayoutTimer->stop();
    for (const Node &node : std::as_const(m_nodes))
        delete node.item;
    m_nodes.clear();
    m_nodeOfId.clear();
    m_bestPath.clear();
    m_explicitBest = 0;
    m_rootId = 0;
    m_rootScore = 0;
    m_latestBeamIteration = -1;
    m_edges->setEdges({}, {});
    m_scene->setSceneRect(QRectF());
    m_autoFit = true;
}

void BeamGraphView::setCandidates(const QList<Candidate> &candidates, qint64 bestCandidateId)
{
    clear();
    m_explicitBest = bestCandidateId;
    m_nodes.reserve(candidates.size());
    m_nodeOfId.reserve(candidates.size());
    for (const Candidate &candidate : candidates)
        store(candidate);
    relayout();
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
    if (m_relayoutTimer->isActive()) {
        m_relayoutTimer->stop();
        relayout();
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
    node.menuItem = candidate.menuItem;
    if (candidate.parentId == 0 && (m_rootId == 0 || candidate.origin == CandidateOrigin::Root)) {
        m_rootId = candidate.id;
        m_rootScore = node.score;
    }
}

void BeamGraphView::scheduleRelayout()
{
    if (!m_relayoutTimer->isActive())
        m_relayoutTimer->start();
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
    case CandidateStatus::CompileError:
    case CandidateStatus::Failed: return NodeState::Failed;
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
}

QList<qint64> BeamGraphView::bestPath() const
{
    return m_bestPath;
}

bool BeamGraphView::isOnBestPath(qint64 candidateId) const
{
    return m_bestPath.contains(candidateId);
}

void BeamGraphView::relayout()
{
    m_latestBeamIteration = -1;
    int lastIteration = 0;
    for (const Node &node : std::as_const(m_nodes)) {
        if (node.inBeam)
            m_latestBeamIteration = std::max(m_latestBeamIteration, node.iteration);
        lastIteration = std::max(lastIteration, node.iteration);
    }
    updateBestPath();

    // Columns by iteration; within a column, children sit in the order of their parents so that edges
    // cross as little as a one-pass layout allows.
    QList<QList<int>> columns(std::max(0, lastIteration) + 1);
    for (int i = 0; i < m_nodes.size(); ++i)
        columns[std::max(0, m_nodes.at(i).iteration)].append(i);
    QHash<qint64, int> rowOfId;
    rowOfId.reserve(m_nodes.size());
    for (QList<int> &column : columns) {
        QList<std::pair<qint64, int>> keys; // (parent row, node), then by id
        keys.reserve(column.size());
        for (int index : std::as_const(column))
            keys.append({rowOfId.value(m_nodes.at(index).parentId, std::numeric_limits<int>::max()), index});
        std::sort(keys.begin(), keys.end(), [this](const auto &a, const auto &b) {
            return a.first != b.first ? a.first < b.first : m_nodes.at(a.second).id < m_nodes.at(b.second).id;
        });
        for (int row = 0; row < keys.size(); ++row) {
            const int index = keys.at(row).second;
            column[row] = index;
            rowOfId.insert(m_nodes.at(index).id, row);
        }
    }

    QSet<qint64> onBest(m_bestPath.cbegin(), m_bestPath.cend());
    QList<QLineF> edges;
    QList<QLineF> bestEdges;
    edges.reserve(m_nodes.size());
    for (int c = 0; c < columns.size(); ++c) {
        const QList<int> &column = columns.at(c);
        for (int row = 0; row < column.size(); ++row) {
            Node &node = m_nodes[column.at(row)];
            const QPointF position(c * s_columnPitch, row * s_rowPitch);
            if (!node.item) {
                node.item = new BeamGraphNode(node.id);
                m_scene->addItem(node.item);
            }
            if (node.item->pos() != position)
                node.item->setPos(position);
            QString title = QLatin1Char('#') + QString::number(node.id);
            if (node.origin == CandidateOrigin::Root)
                title += QLatin1String(" root");
            if (node.status == CandidateStatus::Correct && node.score > 0 && m_rootScore > 0)
                title += QLatin1String("  ") + ValueFormat::speedup(m_rootScore / node.score);
            const NodeState state = stateOf(node);
            QString subtitle = node.menuItem;
            if (subtitle.isEmpty() || (state != NodeState::InBeam && state != NodeState::Correct && state != NodeState::Pruned))
                subtitle = stateName(state) + (node.menuItem.isEmpty() ? QString() : QStringLiteral(" · ") + node.menuItem);
            node.item->setLook(state, node.inBeam, onBest.contains(node.id), title, subtitle);
        }
    }
    for (const Node &node : std::as_const(m_nodes)) {
        const auto parent = m_nodeOfId.constFind(node.parentId);
        if (node.parentId == 0 || parent == m_nodeOfId.constEnd())
            continue;
        const BeamGraphNode *from = m_nodes.at(*parent).item;
        const QLineF line(from->pos() + QPointF(s_nodeWidth / 2, 0), node.item->pos() - QPointF(s_nodeWidth / 2, 0));
        if (onBest.contains(node.id) && onBest.contains(node.parentId))
            bestEdges.append(line);
        else
            edges.append(line);
    }
    edges += bestEdges; // bounds cover both; best edges are painted again on top
    m_edges->setEdges(std::move(edges), std::move(bestEdges));

    QRectF bounds = m_scene->itemsBoundingRect();
    if (bounds.isEmpty())
        bounds = QRectF(-s_nodeWidth, -s_nodeHeight, 2 * s_nodeWidth, 2 * s_nodeHeight);
    m_scene->setSceneRect(bounds.adjusted(-40, -40, 40, 40));
    if (m_autoFit && !m_nodes.isEmpty())
        fitAll();
}

void BeamGraphView::onSceneSelectionChanged()
{
    if (m_selecting)
        return;
    const QList<QGraphicsItem *> selected = m_scene->selectedItems();
    if (selected.size() != 1 || selected.first()->type() != BeamGraphNode::Type)
        return;
    Q_EMIT candidateSelected(static_cast<BeamGraphNode *>(selected.first())->candidateId());
}

bool BeamGraphView::selectCandidate(qint64 candidateId)
{
    flushPendingUpdates();
    const auto it = m_nodeOfId.constFind(candidateId);
    if (it == m_nodeOfId.constEnd() || !m_nodes.at(*it).item)
        return false;
    BeamGraphNode *item = m_nodes.at(*it).item;
    if (item->isSelected() && m_scene->selectedItems().size() == 1)
        return true;
    m_selecting = true;
    m_scene->clearSelection();
    item->setSelected(true);
    m_selecting = false;
    ensureVisible(item, 40, 40);
    return true;
}

qint64 BeamGraphView::selectedCandidate() const
{
    const QList<QGraphicsItem *> selected = m_scene->selectedItems();
    if (selected.size() != 1 || selected.first()->type() != BeamGraphNode::Type)
        return 0;
    return static_cast<BeamGraphNode *>(selected.first())->candidateId();
}

QPointF BeamGraphView::nodePosition(qint64 candidateId) const
{
    const auto it = m_nodeOfId.constFind(candidateId);
    if (it == m_nodeOfId.constEnd() || !m_nodes.at(*it).item)
        return {};
    return m_nodes.at(*it).item->pos();
}

void BeamGraphView::scaleBy(double factor)
{
    m_autoFit = false;
    const double current = transform().m11();
    const double target = std::clamp(current * factor, 0.01, 4.0);
    scale(target / current, target / current);
}

void BeamGraphView::zoomIn()
{
    scaleBy(1.25);
}

void BeamGraphView::zoomOut()
{
    scaleBy(0.8);
}

void BeamGraphView::fitAll()
{
    flushPendingUpdates();
    m_autoFit = true;
    if (m_nodes.isEmpty())
        return;
    fitInView(m_scene->sceneRect(), Qt::KeepAspectRatio);
    // A handful of nodes would be blown up to poster size; keep them at most a little above natural size.
    if (transform().m11() > 1.2)
        setTransform(QTransform::fromScale(1.2, 1.2));
    centerOn(m_scene->sceneRect().center());
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
    if (event->key() == Qt::Key_F && event->modifiers() == Qt::NoModifier) {
        fitAll();
        return;
    }
    if (event->matches(QKeySequence::ZoomIn) || (event->modifiers() & Qt::ControlModifier && event->key() == Qt::Key_Equal)) {
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
    const int margin = 6;
    int x = viewport()->width() - margin + (viewport()->x());
    for (QToolButton *button : {m_fitButton, m_zoomInButton, m_zoomOutButton}) {
        button->adjustSize();
        x -= button->width();
        button->move(x, viewport()->y() + margin);
        button->raise();
        x -= 4;
    }
}

void BeamGraphView::drawForeground(QPainter *painter, const QRectF &rect)
{
    Q_UNUSED(rect);
    if (m_nodes.isEmpty())
        return;
    // The legend stays put in the viewport's corner, whatever the zoom.
    painter->save();
    painter->resetTransform();
    painter->setRenderHint(QPainter::Antialiasing);
    const QFontMetrics metrics(font());
    painter->setFont(font());
    const int line = metrics.height() + 2;
    const int boxSize = metrics.height() - 4;
    QStringList names;
    int width = 0;
    for (int s = 0; s < NodeStateCount; ++s) {
        names.append(stateName(NodeState(s)));
        width = std::max(width, metrics.horizontalAdvance(names.last()));
    }
    const QString bestText = tr("best path");
    const QString beamText = tr("beam member");
    width = std::max({width, metrics.horizontalAdvance(bestText), metrics.horizontalAdvance(beamText)});
    const int rows = (NodeStateCount + 2 + 1) / 2;
    const int columnWidth = width + boxSize + 20;
    const QRect frame(8, viewport()->height() - 8 - rows * line - 8, 2 * columnWidth + 8, rows * line + 8);
    QColor background = palette().color(QPalette::Base);
    background.setAlpha(225);
    painter->setPen(palette().color(QPalette::Mid));
    painter->setBrush(background);
    painter->drawRoundedRect(frame, 4, 4);
    // Entries fill the first column, then the second: the states, then the best path and the beam border.
    const auto cell = [&](int entry) {
        return QPoint(frame.left() + 8 + (entry / rows) * columnWidth, frame.top() + 4 + (entry % rows) * line);
    };
    const auto label = [&](int entry, const QString &text) {
        const QPoint at = cell(entry);
        painter->setPen(palette().color(QPalette::Text));
        painter->drawText(QRect(at.x() + boxSize + 6, at.y(), width + 4, line), Qt::AlignVCenter, text);
    };
    for (int s = 0; s < NodeStateCount; ++s) {
        const QPoint at = cell(s);
        painter->setPen(palette().color(QPalette::Mid));
        painter->setBrush(stateColor(NodeState(s), palette()));
        painter->drawRect(QRect(at.x(), at.y() + 3, boxSize, boxSize));
        label(s, names.at(s));
    }
    painter->setBrush(Qt::NoBrush);
    QPoint at = cell(NodeStateCount);
    painter->setPen(QPen(QColor(0xff, 0x8f, 0x00), 3));
    painter->drawLine(at.x(), at.y() + line / 2, at.x() + boxSize, at.y() + line / 2);
    label(NodeStateCount, bestText);
    at = cell(NodeStateCount + 1);
    painter->setPen(QPen(isDarkPalette(palette()) ? QColor(0x8a, 0xb4, 0xff) : QColor(0x1a, 0x4f, 0xb8), 2.5));
    painter->drawRect(QRect(at.x(), at.y() + 3, boxSize, boxSize));
    label(NodeStateCount + 1, beamText);
    painter->restore();
}

bool BeamGraphView::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        for (QGraphicsItem *item : items(help->pos())) {
            if (item->type() != BeamGraphNode::Type)
                continue;
            const auto it = m_nodeOfId.constFind(static_cast<BeamGraphNode *>(item)->candidateId());
            if (it != m_nodeOfId.constEnd()) {
                QToolTip::showText(help->globalPos(), tooltipFor(m_nodes.at(*it)), viewport());
                return true;
            }
        }
        QToolTip::showText(help->globalPos(), toolTip(), viewport());
        return true;
    }
    return QGraphicsView::viewportEvent(event);
}

QString BeamGraphView::tooltipFor(const Node &node) const
{
    QString text = tr("<b>Candidate %1</b> · iteration %2 · %3").arg(node.id).arg(node.iteration).arg(stateName(stateOf(node)));
    if (!node.menuItem.isEmpty())
        text += QLatin1String("<br>") + node.menuItem.toHtmlEscaped();
    if (node.status == CandidateStatus::Correct && node.score > 0) {
        text += QLatin1String("<br>") + tr("score %1").arg(ValueFormat::number(node.score));
        if (m_rootScore > 0)
            text += tr(", %1 vs the root").arg(ValueFormat::speedup(m_rootScore / node.score));
    }
    if (isOnBestPath(node.id))
        text += QLatin1String("<br>") + tr("on the path to the best candidate");
    return text;
}

} // namespace autocomp
