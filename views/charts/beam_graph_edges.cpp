#include "charts/beam_graph_edges.h"

#include "common/status_palette.h"

#include <QApplication>
#include <QPainter>
#include <QPainterPath>
#include <QStyleOptionGraphicsItem>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace autocomp {

namespace {

// Above this many edges they are straight lines: curves cost too much to stroke when all are visible.
constexpr int s_maxCurvedEdges = 1500;
// Above this many edges in view they are drawn without antialiasing.
constexpr int s_maxAntialiasedEdges = 1000;
// The zoomed-out edge image is kept up to this size (about the area of two 4K screens, 64 MB).
constexpr qint64 s_maxEdgeImagePixels = 16'000'000;

} // namespace

EdgeImage EdgeImage::render(const QList<QLineF> &edges, const QTransform &transform, const QRect &target,
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

void EdgeImage::drawLines(const QList<QLineF> &edges, qsizetype from)
{
    QPainter painter(&image);
    painter.setTransform(transform * QTransform::fromTranslate(-target.left(), -target.top()));
    painter.setPen(pen);
    painter.drawLines(edges.constData() + from, int(edges.size() - from));
    drawn = edges.size();
}

BeamGraphEdges::BeamGraphEdges(QObject *owner) : m_watcher(new QFutureWatcher<EdgeImage>(owner))
{
    QObject::connect(m_watcher, &QFutureWatcher<EdgeImage>::finished, m_watcher, [this] {
        EdgeImage rendered = m_watcher->result();
        // Edges added meanwhile are drawn onto it at the next paint; an image of another list is dropped.
        if (rendered.generation == m_generation)
            m_image = std::move(rendered);
        update();
    });
}

BeamGraphEdges::~BeamGraphEdges()
{
    m_watcher->disconnect();
    m_watcher->waitForFinished();
}

void BeamGraphEdges::setEdges(QList<QLineF> edges, QList<QLineF> bestEdges)
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

void BeamGraphEdges::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget)
{
    const QPalette &palette = widget ? widget->palette() : QApplication::palette();
    const bool dark = StatusPalette::isDark(palette);
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

// Zoomed out, every edge is in view: drawing them all was most of each repaint while a big run grows. They
// are drawn into an image at the view's transform on the thread pool; a burst that only adds edges draws just
// those onto it here. Until a new image is ready (zoom, pan, a graph that grew taller) the last one is shown
// where its edges are, and the edges it lacks are drawn directly.
bool BeamGraphEdges::paintImage(QPainter *painter, const QPen &pen)
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

void BeamGraphEdges::draw(QPainter *painter, const QList<QLineF> &edges, const QRectF &exposed) const
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

} // namespace autocomp
