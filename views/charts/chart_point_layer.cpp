#include "charts/chart_point_layer.h"

#include <QGraphicsSceneHoverEvent>
#include <QGraphicsSceneMouseEvent>
#include <QPainter>
#include <QtCharts/QAbstractSeries>
#include <QtCharts/QChart>

namespace autocomp {

namespace {

constexpr double s_hitRadius = 6;

} // namespace

ChartPointLayer::ChartPointLayer(QChart *chart) : QGraphicsItem(chart), m_chart(chart)
{
    setAcceptHoverEvents(true);
    setAcceptedMouseButtons(Qt::LeftButton);
    // Above the lines, below the selection ring (a scatter series) and the legend.
    setZValue(6.5);
    QObject::connect(chart, &QChart::plotAreaChanged, chart, [this] { invalidate(); });
}

void ChartPointLayer::setPointSets(const QList<PointSet> &sets)
{
    m_sets = sets;
    invalidate();
}

void ChartPointLayer::pointsAppended() { update(); }

void ChartPointLayer::invalidate()
{
    prepareGeometryChange();
    m_valid = false;
    update();
}

QRectF ChartPointLayer::boundingRect() const { return m_chart->plotArea().adjusted(-8, -8, 8, 8); }

void ChartPointLayer::drawPoints(QPainter &painter, int set, qsizetype from)
{
    const PointSet &points = m_sets.at(set);
    const QPointF origin = m_imageRect.topLeft();
    const QPointF half(points.marker.width() / 2.0, points.marker.height() / 2.0);
    for (qsizetype i = from; i < points.values->size(); ++i)
        painter.drawImage(m_chart->mapToPosition(points.values->at(i), points.series) - origin - half, points.marker);
    m_drawn[set] = points.values->size();
}

void ChartPointLayer::paint(QPainter *painter, const QStyleOptionGraphicsItem *, QWidget *)
{
    const QRectF area = boundingRect();
    const qreal ratio = painter->device() ? painter->device()->devicePixelRatioF() : 1.0;
    if (!m_valid || area != m_imageRect || m_image.devicePixelRatioF() != ratio) {
        m_imageRect = area;
        m_image = QImage((area.size() * ratio).toSize(), QImage::Format_ARGB32_Premultiplied);
        m_image.setDevicePixelRatio(ratio);
        m_image.fill(Qt::transparent);
        m_drawn = QList<qsizetype>(m_sets.size(), 0);
        m_valid = true;
    }
    bool behind = false;
    for (int set = 0; set < m_sets.size(); ++set)
        behind = behind || m_drawn.at(set) < m_sets.at(set).values->size();
    if (behind) {
        QPainter image(&m_image);
        for (int set = 0; set < m_sets.size(); ++set)
            drawPoints(image, set, m_drawn.at(set));
    }
    painter->save();
    painter->setClipRect(m_chart->plotArea().adjusted(-5, -5, 5, 5));
    painter->drawImage(m_imageRect.topLeft(), m_image);
    painter->restore();
}

std::pair<int, qsizetype> ChartPointLayer::pointAt(const QPointF &scenePos) const
{
    // Mapped afresh (not from the last paint): right even before the chart was first painted.
    const QPointF at = mapFromScene(scenePos);
    std::pair<int, qsizetype> best{-1, -1};
    double bestDistance = s_hitRadius * s_hitRadius;
    for (int set = 0; set < m_sets.size(); ++set) {
        const PointSet &points = m_sets.at(set);
        for (qsizetype i = 0; i < points.values->size(); ++i) {
            const QPointF d = m_chart->mapToPosition(points.values->at(i), points.series) - at;
            if (const double distance = d.x() * d.x() + d.y() * d.y(); distance <= bestDistance) {
                bestDistance = distance;
                best = {set, i};
            }
        }
    }
    return best;
}

void ChartPointLayer::hoverMoveEvent(QGraphicsSceneHoverEvent *event)
{
    const std::pair<int, qsizetype> hit = pointAt(event->scenePos());
    if (hit == m_hovered)
        return;
    if (m_hovered.first >= 0 && onHovered)
        onHovered(m_hovered.first, m_hovered.second, false);
    m_hovered = hit;
    if (hit.first >= 0 && onHovered)
        onHovered(hit.first, hit.second, true);
}

void ChartPointLayer::hoverLeaveEvent(QGraphicsSceneHoverEvent *)
{
    if (m_hovered.first >= 0 && onHovered)
        onHovered(m_hovered.first, m_hovered.second, false);
    m_hovered = {-1, -1};
}

void ChartPointLayer::mousePressEvent(QGraphicsSceneMouseEvent *event)
{
    const std::pair<int, qsizetype> hit = pointAt(event->scenePos());
    if (hit.first < 0) {
        event->ignore();
        return;
    }
    if (onClicked)
        onClicked(hit.first, hit.second);
}

} // namespace autocomp
