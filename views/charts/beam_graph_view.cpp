#include "charts/beam_graph_view.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <numeric>

#include "agents/prompt_builder.h"
#include "charts/image_export.h"
#include "common/status_palette.h"
#include "common/value_format.h"

#include <QApplication>
#include <QContextMenuEvent>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QHelpEvent>
#include <QImage>
#include <QKeyEvent>
#include <QMenu>
#include <QPainter>
#include <QPainterPath>
#include <QSet>
#include <QStyleOptionGraphicsItem>
#include <QTimer>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QToolButton>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <bit>
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
// Above this many edges in view they are drawn without antialiasing.
constexpr int s_maxAntialiasedEdges = 1000;
// The zoomed-out edge image is kept up to this size (about the area of two 4K screens, 64 MB).
constexpr qint64 s_maxEdgeImagePixels = 16'000'000;

bool isDarkPalette(const QPalette &palette) { return StatusPalette::isDark(palette); }

// A node's (or a collapsed group's) rounded box, with the dashed ring of the selection around it.
void drawNodeBox(QPainter *painter, const QRectF &box, const QPen &pen, const QColor &fill, bool selected,
                 const QColor &highlight)
{
    painter->setPen(pen);
    painter->setBrush(fill);
    painter->drawRoundedRect(box, 5, 5);
    if (selected) {
        painter->setPen(QPen(highlight, 2.5, Qt::DashLine));
        painter->setBrush(Qt::NoBrush);
        painter->drawRoundedRect(box.adjusted(-3, -3, 3, 3), 7, 7);
    }
}

} // namespace

// All nodes in one item. The layout is a grid, so the nodes in an exposed rectangle are found by arithmetic
// and a paint touches only those; 10,000 QGraphicsItems would cost memory and a sort of all of them per paint.
class BeamGraphNodes : public QGraphicsItem
{
public:
    explicit BeamGraphNodes(const BeamGraphView *view) : m_view(view) {}

    QRectF boundingRect() const override { return m_bounds; }

    void setBounds(const QRectF &bounds)
    {
        if (bounds != m_bounds) {
            prepareGeometryChange();
            m_bounds = bounds;
        }
        update();
    }

    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override
    {
        m_view->paintNodes(painter, option->exposedRect, option->levelOfDetailFromTransform(painter->worldTransform()),
                           widget ? widget->palette() : QApplication::palette());
    }

private:
    const BeamGraphView *m_view;
    QRectF m_bounds;
};

// The edges of a big graph seen zoomed out, drawn into an image: `drawn` edges of list `generation`, at `transform`.
struct EdgeImage
{
    QImage image;
    QTransform transform;
    QRect target; // where the image goes, in the view's coordinates
    QPen pen;
    qsizetype drawn = 0;
    quint64 generation = 0;

    bool fits(const QTransform &t, const QRect &r, const QPen &p, quint64 g) const
    {
        return !image.isNull() && transform == t && target == r && pen == p && generation == g;
    }

    static EdgeImage render(const QList<QLineF> &edges, const QTransform &transform, const QRect &target,
                            const QPen &pen, qreal ratio, quint64 generation)
    {
        EdgeImage out{QImage(target.size() * ratio, QImage::Format_ARGB32_Premultiplied),
                      transform,
                      target,
                      pen,
                      edges.size(),
                      generation};
        out.image.setDevicePixelRatio(ratio);
        out.image.fill(Qt::transparent);
        out.drawLines(edges, 0);
        return out;
    }

    void drawLines(const QList<QLineF> &edges, qsizetype from)
    {
        QPainter painter(&image);
        painter.setTransform(transform * QTransform::fromTranslate(-target.left(), -target.top()));
        painter.setPen(pen);
        painter.drawLines(edges.constData() + from, int(edges.size() - from));
        drawn = edges.size();
    }
};

// All edges in one item: thousands of line items would dominate memory and scene bookkeeping.
class BeamGraphEdges : public QGraphicsItem
{
public:
    explicit BeamGraphEdges(QObject *owner) : m_watcher(new QFutureWatcher<EdgeImage>(owner))
    {
        QObject::connect(m_watcher, &QFutureWatcher<EdgeImage>::finished, m_watcher, [this] {
            EdgeImage rendered = m_watcher->result();
            // Edges added meanwhile are drawn onto it at the next paint; an image of another list is dropped.
            if (rendered.generation == m_generation)
                m_image = std::move(rendered);
            update();
        });
    }

    ~BeamGraphEdges() override
    {
        m_watcher->disconnect();
        m_watcher->waitForFinished();
    }

    QRectF boundingRect() const override { return m_bounds; }

    void setEdges(QList<QLineF> edges, QList<QLineF> bestEdges)
    {
        // An image stays valid while the new list only adds to the old one (new candidates are laid out at the
        // ends of their columns); any other change makes a new list generation, to be drawn again.
        const qsizetype kept = std::min(m_image.drawn, m_edges.size());
        if (kept > edges.size() || !std::equal(m_edges.cbegin(), m_edges.cbegin() + kept, edges.cbegin()))
            ++m_generation;
        QRectF bounds;
        for (const QLineF &line : std::as_const(edges))
            bounds |= QRectF(line.p1(), line.p2()).normalized();
        bounds = bounds.adjusted(-4, -4, 4, 4);
        if (bounds != m_bounds)
            prepareGeometryChange();
        m_edges = std::move(edges);
        m_bestEdges = std::move(bestEdges);
        m_bounds = bounds;
        m_curved = m_edges.size() <= s_maxCurvedEdges;
        update();
    }

    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override
    {
        const QPalette &palette = widget ? widget->palette() : QApplication::palette();
        const bool dark = isDarkPalette(palette);
        const QRectF exposed = option->exposedRect;
        // Zoomed far out, thousands of antialiased strokes cost more than they show.
        const bool antialiased = option->levelOfDetailFromTransform(painter->worldTransform()) >= 0.2;
        painter->setRenderHint(QPainter::Antialiasing, antialiased);
        painter->setBrush(Qt::NoBrush);
        const QPen pen(dark ? QColor(0x6a, 0x70, 0x78) : QColor(0xa8, 0xae, 0xb6), 1.2);
        // Exports (no widget) are drawn line by line: an SVG gets lines, not an image of them.
        if (antialiased || m_curved || !widget || !paintImage(painter, pen)) {
            painter->setPen(pen);
            draw(painter, m_edges, exposed);
        }
        painter->setPen(QPen(QColor(0xff, 0x8f, 0x00), 3.5));
        draw(painter, m_bestEdges, exposed);
    }

private:
    // Zoomed out, every edge is in view: drawing them all was most of each repaint while a big run grows. They
    // are drawn into an image at the view's transform on the thread pool; a burst that only adds edges draws just
    // those onto it here. Until a new image is ready (zoom, pan, a graph that grew taller) the last one is shown
    // where its edges are, and the edges it lacks are drawn directly.
    bool paintImage(QPainter *painter, const QPen &pen)
    {
        const QTransform transform = painter->worldTransform();
        if (transform.type() > QTransform::TxScale)
            return false;
        const QRect target = transform.mapRect(m_bounds).toAlignedRect();
        const qreal ratio = painter->device() ? painter->device()->devicePixelRatioF() : 1.0;
        if (target.isEmpty() || qint64(target.width() * ratio) * qint64(target.height() * ratio) > s_maxEdgeImagePixels)
            return false;
        if (m_image.fits(transform, target, pen, m_generation)) {
            if (m_image.drawn < m_edges.size())
                m_image.drawLines(m_edges, m_image.drawn);
        } else {
            if (!m_watcher->isRunning())
                m_watcher->setFuture(
                    QtConcurrent::run(&EdgeImage::render, m_edges, transform, target, pen, ratio, m_generation));
            if (m_image.image.isNull() || m_image.generation != m_generation)
                return false;
        }
        painter->save();
        painter->setWorldTransform(QTransform());
        if (m_image.transform == transform) {
            painter->drawImage(target.topLeft(), m_image.image);
        } else {
            // The last image, stretched to where its edges are now.
            const QRectF scene = m_image.transform.inverted().mapRect(QRectF(m_image.target));
            painter->drawImage(transform.mapRect(scene), m_image.image);
        }
        painter->restore();
        if (m_image.drawn < m_edges.size()) {
            painter->setPen(pen);
            painter->drawLines(m_edges.constData() + m_image.drawn, int(m_edges.size() - m_image.drawn));
        }
        return true;
    }

    void draw(QPainter *painter, const QList<QLineF> &edges, const QRectF &exposed) const
    {
        if (!m_curved) {
            QList<QLineF> visible;
            for (const QLineF &line : edges)
                if (exposed.intersects(QRectF(line.p1(), line.p2()).normalized().adjusted(-1, -1, 1, 1)))
                    visible.append(line);
            // Thousands of long edges across a zoomed-in view (a big run read at label size): antialiasing each
            // would cost most of the paint.
            if (visible.size() > s_maxAntialiasedEdges)
                painter->setRenderHint(QPainter::Antialiasing, false);
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
    quint64 m_generation = 0; // of the edge list: a change other than an append makes a new one
    EdgeImage m_image;
    QFutureWatcher<EdgeImage> *m_watcher;
};

// The legend, below the graph's viewport (in the view's bottom margin), so it never covers a node.
class BeamGraphLegend : public QWidget
{
public:
    explicit BeamGraphLegend(BeamGraphView *view) : QWidget(view), m_view(view)
    {
        setObjectName(QStringLiteral("graphLegendPanel"));
        setAttribute(Qt::WA_OpaquePaintEvent);
    }

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter painter(this);
        painter.fillRect(rect(), palette().color(QPalette::Base));
        m_view->paintLegend(&painter);
    }

private:
    BeamGraphView *m_view;
};

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
    const bool dark = isDarkPalette(palette);
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

QList<int> BeamGraphView::columnOrder(const QList<LayoutKey> &nodes)
{
    // Within a column, children sit in the order of their parents so that edges cross as little as a
    // one-pass layout allows. Columns are iterations; the result lists node indexes column by column.
    QList<int> order(nodes.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&nodes](int a, int b) {
        const LayoutKey &x = nodes.at(a);
        const LayoutKey &y = nodes.at(b);
        return x.iteration != y.iteration ? x.iteration < y.iteration : x.id < y.id;
    });
    QHash<qint64, int> rowOfId;
    rowOfId.reserve(nodes.size());
    for (qsizetype begin = 0; begin < order.size();) {
        const int iteration = nodes.at(order.at(begin)).iteration;
        qsizetype end = begin;
        while (end < order.size() && nodes.at(order.at(end)).iteration == iteration)
            ++end;
        std::stable_sort(order.begin() + begin, order.begin() + end, [&](int a, int b) {
            return rowOfId.value(nodes.at(a).parentId, std::numeric_limits<int>::max())
                < rowOfId.value(nodes.at(b).parentId, std::numeric_limits<int>::max());
        });
        for (qsizetype i = begin; i < end; ++i)
            rowOfId.insert(nodes.at(order.at(i)).id, int(i - begin));
        begin = end;
    }
    return order;
}

void BeamGraphView::applyOrder(const QList<int> &order)
{
    for (Node &node : m_nodes)
        node.column = -1;
    m_columns.clear();
    placeAtEnds(order);
}

void BeamGraphView::placeAtEnds(const QList<int> &indexes)
{
    // Each node goes to the end of its iteration's column.
    for (int index : indexes) {
        Node &node = m_nodes[index];
        node.column = std::max(0, node.iteration);
        if (m_columns.size() <= node.column)
            m_columns.resize(node.column + 1);
        node.row = int(m_columns.at(node.column).size());
        m_columns[node.column].append(index);
    }
}

void BeamGraphView::relayout(bool full)
{
    m_latestBeamIteration = -1;
    for (const Node &node : std::as_const(m_nodes))
        if (node.inBeam)
            m_latestBeamIteration = std::max(m_latestBeamIteration, node.iteration);
    updateBestPath();

    if (m_layoutPending)
        return; // the full layout on the thread pool places everything when it is done
    if (full) {
        QList<LayoutKey> keys;
        keys.reserve(m_nodes.size());
        for (const Node &node : std::as_const(m_nodes))
            keys.append({node.id, node.parentId, node.iteration});
        if (m_nodes.size() >= AsyncLayoutNodes) {
            // A big run: its columns are sorted on the thread pool; until then the view stays as it is.
            m_layoutPending = true;
            const qint64 generation = m_layoutGeneration;
            auto *watcher = new QFutureWatcher<QList<int>>(this);
            connect(watcher, &QFutureWatcher<QList<int>>::finished, this, [this, watcher, generation] {
                watcher->deleteLater();
                if (generation != m_layoutGeneration)
                    return; // cleared meanwhile
                m_layoutPending = false;
                applyOrder(watcher->result());
                relayout(false); // nodes that arrived meanwhile go to the end of their columns
                Q_EMIT layoutFinished();
            });
            watcher->setFuture(QtConcurrent::run(&BeamGraphView::columnOrder, keys));
            return;
        }
        applyOrder(columnOrder(keys));
    }
    QList<int> fresh;
    for (int i = 0; i < m_nodes.size(); ++i)
        if (m_nodes.at(i).column < 0)
            fresh.append(i);
    placeAtEnds(fresh);

    arrange();
}

bool BeamGraphView::collapsible(NodeState state)
{
    switch (state) {
    case NodeState::Pruned:
    case NodeState::Failed:
    case NodeState::CompileError:
    case NodeState::Incorrect:
    case NodeState::Duplicate:
    case NodeState::Cancelled:
    case NodeState::NoHardware: return true;
    default: return false;
    }
}

bool BeamGraphView::collapsesByDefault() const
{
    return m_collapseChosen ? m_collapseButton->isChecked() : m_nodes.size() > CollapseAbove;
}

void BeamGraphView::setCollapseByDefault(bool collapse)
{
    m_collapseChosen = true;
    m_collapseChoice.clear();
    {
        const QSignalBlocker blocker(m_collapseButton);
        m_collapseButton->setChecked(collapse);
    }
    flushPendingUpdates();
    arrange();
}

bool BeamGraphView::groupCollapsed(qint64 parentId, int members) const
{
    return members >= 2 && m_collapseChoice.value(parentId, collapsesByDefault());
}

void BeamGraphView::setGroupCollapsed(qint64 parentId, bool collapsed)
{
    flushPendingUpdates();
    m_collapseChoice.insert(parentId, collapsed);
    arrange();
}

void BeamGraphView::arrange()
{
    if (!m_collapseChosen) {
        const QSignalBlocker blocker(m_collapseButton);
        m_collapseButton->setChecked(collapsesByDefault());
    }
    // Kept: a node that is not pruned or failed, on the best path, a root, or above a kept one. Columns are walked
    // from the last, so a child marks its parent before the parent's column is reached.
    QList<char> keep(m_nodes.size(), 0);
    for (qsizetype c = m_columns.size() - 1; c >= 0; --c)
        for (int index : m_columns.at(c)) {
            const Node &node = m_nodes.at(index);
            const auto parent = m_nodeOfId.constFind(node.parentId);
            if (node.parentId == 0 || parent == m_nodeOfId.constEnd() || !collapsible(stateOf(node))
                || m_onBestPath.contains(node.id))
                keep[index] = 1;
            if (keep[index] && parent != m_nodeOfId.constEnd())
                keep[*parent] = 1;
        }
    // Each node that is not kept belongs to the group of its nearest kept ancestor.
    m_membersOf.clear();
    for (const QList<int> &column : std::as_const(m_columns))
        for (int index : column) {
            Node &node = m_nodes[index];
            node.groupParent = 0;
            if (keep.at(index))
                continue;
            const int parent = m_nodeOfId.value(node.parentId);
            if (keep.at(parent)) {
                node.groupParent = node.parentId;
                ++m_membersOf[node.parentId];
            } else {
                node.groupParent = m_nodes.at(parent).groupParent;
            }
        }
    // What is drawn: a collapsed group takes the place of its first node.
    m_groups.clear();
    m_groupOfParent.clear();
    m_shown = QList<QList<int>>(m_columns.size());
    for (int c = 0; c < m_columns.size(); ++c)
        for (int index : m_columns.at(c)) {
            Node &node = m_nodes[index];
            if (node.groupParent != 0 && groupCollapsed(node.groupParent, m_membersOf.value(node.groupParent))) {
                auto group = m_groupOfParent.constFind(node.groupParent);
                if (group == m_groupOfParent.constEnd()) {
                    group = m_groupOfParent.insert(node.groupParent, int(m_groups.size()));
                    m_groups.append(Group{node.groupParent, c, int(m_shown.at(c).size()), 0, 0, index});
                    m_shown[c].append(~*group);
                }
                Group &g = m_groups[*group];
                ++g.count;
                if (stateOf(node) == NodeState::Pruned)
                    ++g.pruned;
                node.row = -1;
                continue;
            }
            node.row = int(m_shown.at(c).size());
            m_shown[c].append(index);
        }
    // A selected node that a group now hides: its count node is selected instead.
    if (const auto it = m_nodeOfId.constFind(m_selected);
        m_selected > 0 && it != m_nodeOfId.constEnd() && m_nodes.at(*it).row < 0)
        m_selected = -m_nodes.at(*it).groupParent;
    else if (m_selected < 0 && !m_groupOfParent.contains(-m_selected))
        m_selected = 0;

    // The edges to count nodes first: new candidates then only add edges at the end of the list, which keeps the
    // image of the edges of a big run valid (BeamGraphEdges).
    QList<QLineF> edges;
    QList<QLineF> bestEdges;
    edges.reserve(m_nodes.size());
    for (const Group &group : std::as_const(m_groups))
        if (const auto parent = m_nodeOfId.constFind(group.parentId);
            parent != m_nodeOfId.constEnd() && m_nodes.at(*parent).row >= 0)
            edges.append(QLineF(centerOf(m_nodes.at(*parent)) + QPointF(s_nodeWidth / 2, 0),
                                centerOfGroup(group) - QPointF(s_nodeWidth / 2, 0)));
    qsizetype rows = 0;
    for (const QList<int> &column : std::as_const(m_shown))
        rows = std::max(rows, column.size());
    for (const Node &node : std::as_const(m_nodes)) {
        const auto parent = m_nodeOfId.constFind(node.parentId);
        if (node.parentId == 0 || parent == m_nodeOfId.constEnd() || node.row < 0 || node.column < 0
            || m_nodes.at(*parent).row < 0)
            continue;
        const QLineF line(centerOf(m_nodes.at(*parent)) + QPointF(s_nodeWidth / 2, 0),
                          centerOf(node) - QPointF(s_nodeWidth / 2, 0));
        edges.append(line);
        if (m_onBestPath.contains(node.id) && m_onBestPath.contains(node.parentId))
            bestEdges.append(line);
    }
    m_edges->setEdges(std::move(edges), std::move(bestEdges));

    // A tall graph grows in steps of an eighth: the fitted zoom, and with it the image of the edges, changes only
    // at a step, not with every new candidate of the tallest column.
    if (rows >= 64)
        rows = (rows + (std::bit_floor(quint64(rows)) / 8) - 1) / (std::bit_floor(quint64(rows)) / 8)
            * (std::bit_floor(quint64(rows)) / 8);
    const QRectF bounds(-s_nodeWidth / 2 - 4, -s_nodeHeight / 2 - 4,
                        std::max<qsizetype>(0, m_columns.size() - 1) * s_columnPitch + s_nodeWidth + 8,
                        std::max<qsizetype>(0, rows - 1) * s_rowPitch + s_nodeHeight + 8);
    m_nodeLayer->setBounds(bounds);
    m_scene->setSceneRect(bounds.adjusted(-40, -40, 40, 40));
    if (m_autoFit && !m_nodes.isEmpty())
        fitAll();
}

QPointF BeamGraphView::centerOfGroup(const Group &group) const
{
    return QPointF(group.column * s_columnPitch, group.row * s_rowPitch);
}

QList<qint64> BeamGraphView::collapsedGroups() const
{
    QList<qint64> parents;
    for (const Group &group : m_groups)
        parents.append(group.parentId);
    return parents;
}

int BeamGraphView::hiddenCount(qint64 parentId) const
{
    const auto it = m_groupOfParent.constFind(parentId);
    return it == m_groupOfParent.constEnd() ? 0 : m_groups.at(*it).count;
}

QString BeamGraphView::groupLabel(qint64 parentId) const
{
    const auto it = m_groupOfParent.constFind(parentId);
    return it == m_groupOfParent.constEnd() ? QString() : groupText(m_groups.at(*it), false);
}

QPointF BeamGraphView::groupPosition(qint64 parentId) const
{
    const auto it = m_groupOfParent.constFind(parentId);
    return it == m_groupOfParent.constEnd() ? QPointF() : centerOfGroup(m_groups.at(*it));
}

bool BeamGraphView::isHidden(qint64 candidateId) const
{
    const auto it = m_nodeOfId.constFind(candidateId);
    return it != m_nodeOfId.constEnd() && m_nodes.at(*it).column >= 0 && m_nodes.at(*it).row < 0;
}

QString BeamGraphView::groupText(const Group &group, bool shortForm) const
{
    const QString count = QStringLiteral("+%1").arg(group.count);
    if (shortForm)
        return count;
    if (group.pruned == group.count)
        return tr("%1 pruned").arg(count);
    if (group.pruned == 0)
        return tr("%1 failed").arg(count);
    return tr("%1 pruned or failed").arg(count);
}

QString BeamGraphView::groupTooltip(const Group &group) const
{
    return tr("<b>%n candidate(s) collapsed</b> under #%1: %2 pruned, %3 failed (incorrect, compile error, crash, "
              "timeout, duplicate…)<br>Click or Enter expands them; C on one of them collapses them again.",
              nullptr, group.count)
        .arg(group.parentId)
        .arg(group.pruned)
        .arg(group.count - group.pruned);
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

double BeamGraphView::readableScale() const
{
    // The box as high as one line of the bold label and as wide as "#id  score" in the view's font.
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics metrics(bold);
    return std::max((metrics.height() + 2) / s_nodeHeight,
                    (metrics.horizontalAdvance(QStringLiteral("#000  00.00×")) + 16) / s_nodeWidth);
}

BeamGraphView::LabelDetail BeamGraphView::detailFor(const QRectF &deviceBox, const QFontMetrics &bold) const
{
    const int line = bold.height();
    if (deviceBox.height() < MinTextHeight)
        return LabelDetail::None;
    if (deviceBox.height() >= 2 * line + 2 && deviceBox.width() >= 10 * bold.averageCharWidth())
        return LabelDetail::Full;
    if (deviceBox.height() >= line)
        return LabelDetail::IdAndScore;
    return LabelDetail::ScoreOnly;
}

BeamGraphView::LabelDetail BeamGraphView::labelDetail() const
{
    QFont bold = font();
    bold.setBold(true);
    const double scale = transform().m11();
    return detailFor(QRectF(0, 0, s_nodeWidth * scale, s_nodeHeight * scale), QFontMetrics(bold));
}

QString BeamGraphView::scoreText(const Node &node) const
{
    if (node.status == CandidateStatus::Correct && node.score > 0 && m_rootScore > 0)
        return ValueFormat::speedup(m_rootScore / node.score);
    return glyphOf(node.word);
}

QStringList BeamGraphView::textOf(const Node &node, LabelDetail detail) const
{
    // The lines as drawn; the width of "#id  score" is checked where it is drawn (paintNodes, nodeText).
    switch (detail) {
    case LabelDetail::None: return {};
    case LabelDetail::ScoreOnly: return {scoreText(node)};
    case LabelDetail::IdAndScore:
    case LabelDetail::Full: {
        QString title = QLatin1Char('#') + QString::number(node.id);
        if (node.origin == CandidateOrigin::Root)
            title += QLatin1String(" root");
        if (node.status == CandidateStatus::Correct && node.score > 0 && m_rootScore > 0)
            title += QLatin1String("  ") + ValueFormat::speedup(m_rootScore / node.score);
        if (detail == LabelDetail::IdAndScore)
            return {title};
        return {title, subtitleOf(node)};
    }
    }
    return {};
}

QStringList BeamGraphView::nodeText(qint64 candidateId) const
{
    const auto it = m_nodeOfId.constFind(candidateId);
    if (it == m_nodeOfId.constEnd() || m_nodes.at(*it).row < 0 || m_nodes.at(*it).column < 0)
        return {};
    const Node &node = m_nodes.at(*it);
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics metrics(bold);
    return fitted(node, labelDetail(), s_nodeWidth * transform().m11() - 14, metrics);
}

QStringList BeamGraphView::fitted(const Node &node, LabelDetail detail, double width, const QFontMetrics &bold) const
{
    QStringList lines = textOf(node, detail);
    if (detail == LabelDetail::ScoreOnly || detail == LabelDetail::None
        || bold.horizontalAdvance(lines.first()) <= width + 4)
        return lines;
    // Too narrow: the root's word goes first, then the id (the score alone).
    if (node.origin == CandidateOrigin::Root) {
        lines.first().remove(QLatin1String(" root"));
        if (bold.horizontalAdvance(lines.first()) <= width + 4)
            return lines;
    }
    return textOf(node, LabelDetail::ScoreOnly);
}

void BeamGraphView::paintNodes(QPainter *painter, const QRectF &exposed, double lod, const QPalette &palette) const
{
    if (m_shown.isEmpty())
        return;
    painter->setRenderHint(QPainter::Antialiasing, lod >= 0.2);
    const bool dark = isDarkPalette(palette);
    const QColor best(0xff, 0x8f, 0x00);
    const QColor highlight = palette.color(QPalette::Highlight);
    const QPen plainPen(dark ? QColor(0x9a, 0xa0, 0xa8) : QColor(0x70, 0x76, 0x80), 1);
    const QPen beamPen(dark ? QColor(0x8a, 0xb4, 0xff) : QColor(0x1a, 0x4f, 0xb8), 2.5);
    const QPen bestPen(best, 3);
    const QPen groupPen(dark ? QColor(0x9a, 0xa0, 0xa8) : QColor(0x70, 0x76, 0x80), 1.2, Qt::DashLine);
    const int firstColumn = std::max(0, int(std::floor((exposed.left() - s_nodeWidth) / s_columnPitch)));
    const int lastColumn = std::min(int(m_shown.size()) - 1,
                                    int(std::ceil((exposed.right() + s_nodeWidth) / s_columnPitch)));
    const int firstRow = std::max(0, int(std::floor((exposed.top() - s_nodeHeight) / s_rowPitch)));
    const int lastRow = int(std::ceil((exposed.bottom() + s_nodeHeight) / s_rowPitch));
    // Labels are drawn in device pixels with the view's font: zoomed out they are left out, never shrunk to
    // an unreadable size (the score last).
    const QFont normal = painter->font();
    QFont bold = normal;
    bold.setBold(true);
    const QFontMetrics metrics(normal);
    const QFontMetrics boldMetrics(bold);
    const QTransform world = painter->worldTransform();
    const auto textColor = [](const QColor &fill) {
        return fill.lightness() < 110 ? QColor(Qt::white) : QColor(0x10, 0x14, 0x18);
    };
    for (int c = firstColumn; c <= lastColumn; ++c) {
        const QList<int> &column = m_shown.at(c);
        for (int r = firstRow; r <= std::min(lastRow, int(column.size()) - 1); ++r) {
            const int entry = column.at(r);
            const QRectF box(QPointF(c * s_columnPitch, r * s_rowPitch) - QPointF(s_nodeWidth / 2, s_nodeHeight / 2),
                             QSizeF(s_nodeWidth, s_nodeHeight));
            const QRectF device = world.mapRect(box);
            const LabelDetail detail = detailFor(device, boldMetrics);
            if (entry < 0) {
                // A count node: the pruned and failed subtrees of one parent.
                const Group &group = m_groups.at(~entry);
                const bool selected = m_selected == -group.parentId;
                painter->setOpacity(1.0);
                const QColor fill = stateColor(group.pruned == group.count ? NodeState::Pruned : NodeState::Failed,
                                               palette);
                if (lod < 0.2) {
                    painter->fillRect(box, selected ? highlight : fill);
                    continue;
                }
                drawNodeBox(painter, box, groupPen, fill, selected, highlight);
                if (detail == LabelDetail::None)
                    continue;
                painter->save();
                painter->resetTransform();
                painter->setPen(textColor(fill));
                painter->setFont(bold);
                const QRectF inner = device.adjusted(6, 1, -6, -1);
                const QString text = groupText(group,
                                               detail == LabelDetail::ScoreOnly
                                                   || boldMetrics.horizontalAdvance(groupText(group, false))
                                                       > inner.width());
                if (detail == LabelDetail::Full) {
                    // Pruned and failed on a line each; one kind: what a click does below it.
                    const int failed = group.count - group.pruned;
                    const QString first = group.pruned > 0 && failed > 0 ? tr("+%1 pruned").arg(group.pruned)
                                                                         : groupText(group, false);
                    const QString second = group.pruned > 0 && failed > 0 ? tr("+%1 failed").arg(failed)
                                                                          : tr("click to show");
                    painter->drawText(QRectF(inner.left(), inner.top(), inner.width(), inner.height() / 2),
                                      Qt::AlignLeft | Qt::AlignVCenter,
                                      boldMetrics.elidedText(first, Qt::ElideRight, int(inner.width())));
                    painter->setFont(group.pruned > 0 && failed > 0 ? bold : normal);
                    painter->drawText(QRectF(inner.left(), inner.center().y(), inner.width(), inner.height() / 2),
                                      Qt::AlignLeft | Qt::AlignVCenter,
                                      metrics.elidedText(second, Qt::ElideRight, int(inner.width())));
                } else {
                    if (detail == LabelDetail::ScoreOnly) {
                        QFont small = bold;
                        small.setPixelSize(std::max(6, std::min(boldMetrics.height(), int(device.height())) - 2));
                        painter->setFont(small);
                    }
                    painter->drawText(inner, Qt::AlignCenter, text);
                }
                painter->restore();
                continue;
            }
            const Node &node = m_nodes.at(entry);
            const NodeState state = stateOf(node);
            const QColor fill = stateColor(state, palette);
            const bool onBest = m_onBestPath.contains(node.id);
            const bool selected = node.id == m_selected;
            painter->setOpacity(isDimmed(node.id) && !selected ? 0.22 : 1.0);
            if (lod < 0.2) {
                // Far out: a colored block is all one can see; color only for what must stand out.
                painter->fillRect(box, selected ? highlight : onBest ? best : fill);
                continue;
            }
            drawNodeBox(painter, box, onBest ? bestPen : node.inBeam ? beamPen : plainPen, fill, selected, highlight);
            if (detail == LabelDetail::None)
                continue;
            const QRectF inner = device.adjusted(7, 1, -7, -1);
            const QStringList lines = fitted(node, detail, inner.width(), boldMetrics);
            const LabelDetail drawn = detail == LabelDetail::Full && lines.size() == 2 ? LabelDetail::Full
                : lines.size() == 1 && lines.first().startsWith(QLatin1Char('#'))      ? LabelDetail::IdAndScore
                                                                                       : LabelDetail::ScoreOnly;
            QString glyph = glyphOf(node.word);
            if (glyph.isEmpty() && isWithinNoise(node))
                glyph = QStringLiteral("≈");
            painter->save();
            painter->resetTransform();
            painter->setPen(textColor(fill));
            painter->setFont(bold);
            if (drawn == LabelDetail::ScoreOnly) {
                if (device.height() < boldMetrics.height()) {
                    QFont small = bold;
                    small.setPixelSize(std::max(6, int(device.height()) - 2));
                    painter->setFont(small);
                }
                painter->drawText(device, Qt::AlignCenter, lines.value(0));
            } else {
                const QRectF top = drawn == LabelDetail::Full
                    ? QRectF(inner.left(), inner.top(), inner.width(), inner.height() / 2)
                    : inner;
                if (!glyph.isEmpty())
                    painter->drawText(top, Qt::AlignRight | Qt::AlignVCenter, glyph);
                painter->drawText(top, Qt::AlignLeft | Qt::AlignVCenter, lines.first());
                if (drawn == LabelDetail::Full) {
                    painter->setFont(normal);
                    painter->drawText(QRectF(inner.left(), inner.center().y(), inner.width(), inner.height() / 2),
                                      Qt::AlignLeft | Qt::AlignVCenter,
                                      metrics.elidedText(lines.value(1), Qt::ElideRight, int(inner.width())));
                }
            }
            painter->restore();
        }
    }
    painter->setOpacity(1.0);
}

QString BeamGraphView::subtitleOf(const Node &node) const
{
    const NodeState state = stateOf(node);
    if (!node.shortName.isEmpty()
        && (state == NodeState::InBeam || state == NodeState::Correct || state == NodeState::Pruned))
        return node.shortName;
    const QString name = state == NodeState::Failed || state == NodeState::Cancelled ? node.word : stateName(state);
    return name + (node.shortName.isEmpty() ? QString() : QStringLiteral(" · ") + node.shortName);
}

QString BeamGraphView::nodeSubtitle(qint64 candidateId) const
{
    const auto it = m_nodeOfId.constFind(candidateId);
    return it == m_nodeOfId.constEnd() ? QString() : subtitleOf(m_nodes.at(*it));
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

BeamGraphView::LegendLayout BeamGraphView::legendLayout(int availableWidth) const
{
    LegendLayout layout;
    const QFontMetrics metrics(font());
    layout.line = metrics.height() + 2;
    layout.boxSize = metrics.height() - 4;
    // The states (a coloured box each), the best path and the beam border, then the glyphs that tell the kinds of
    // failure apart and mark a child within noise of its parent.
    for (int s = 0; s < NodeStateCount; ++s)
        layout.entries.append({s, {}, stateName(NodeState(s))});
    layout.entries.append({-1, QStringLiteral("best"), tr("best path")});
    layout.entries.append({-1, QStringLiteral("beam"), tr("beam member")});
    for (const char *word : {"crash", "timeout", "rejected", "error (machine)", "no code"})
        layout.entries.append({-1, glyphOf(QString::fromLatin1(word)), tr(word)});
    layout.entries.append({-1, QStringLiteral("≈"), tr("within noise of parent")});
    for (const LegendEntry &entry : std::as_const(layout.entries))
        layout.textWidth = std::max(layout.textWidth, metrics.horizontalAdvance(entry.text));
    // As many columns (up to four) as the view has room for.
    layout.columnWidth = layout.textWidth + layout.boxSize + 20;
    const int columns = std::clamp((availableWidth - 24) / layout.columnWidth, 1, 6);
    layout.rows = int((layout.entries.size() + columns - 1) / columns);
    layout.frame = QRect(4, 4, columns * layout.columnWidth + 8, layout.rows * layout.line + 8);
    return layout;
}

void BeamGraphView::paintLegend(QPainter *painter) const
{
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    const QFontMetrics metrics(font());
    painter->setFont(font());
    const LegendLayout layout = legendLayout(m_legend->width());
    const QList<LegendEntry> &entries = layout.entries;
    const int line = layout.line, boxSize = layout.boxSize, width = layout.textWidth, rows = layout.rows,
              columnWidth = layout.columnWidth;
    const QRect frame = layout.frame;
    QColor background = palette().color(QPalette::Base);
    background.setAlpha(225);
    painter->setPen(palette().color(QPalette::Mid));
    painter->setBrush(background);
    painter->drawRoundedRect(frame, 4, 4);
    // Entries fill the first column, then the next.
    const auto cell = [&](int entry) {
        return QPoint(frame.left() + 8 + (entry / rows) * columnWidth, frame.top() + 4 + (entry % rows) * line);
    };
    for (int i = 0; i < entries.size(); ++i) {
        const LegendEntry &entry = entries.at(i);
        const QPoint at = cell(i);
        const QRect box(at.x(), at.y() + 3, boxSize, boxSize);
        if (entry.state >= 0) {
            painter->setPen(palette().color(QPalette::Mid));
            painter->setBrush(stateColor(NodeState(entry.state), palette()));
            painter->drawRect(box);
        } else if (entry.glyph == QLatin1String("best")) {
            painter->setPen(QPen(QColor(0xff, 0x8f, 0x00), 3));
            painter->drawLine(at.x(), at.y() + line / 2, at.x() + boxSize, at.y() + line / 2);
        } else if (entry.glyph == QLatin1String("beam")) {
            painter->setBrush(Qt::NoBrush);
            painter->setPen(QPen(isDarkPalette(palette()) ? QColor(0x8a, 0xb4, 0xff) : QColor(0x1a, 0x4f, 0xb8), 2.5));
            painter->drawRect(box);
        } else {
            painter->setPen(palette().color(QPalette::Text));
            painter->drawText(QRect(at.x(), at.y(), boxSize + 4, line), Qt::AlignCenter, entry.glyph);
        }
        painter->setPen(palette().color(QPalette::Text));
        painter->drawText(QRect(at.x() + boxSize + 6, at.y(), width + 4, line), Qt::AlignVCenter, entry.text);
    }
    painter->restore();
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
